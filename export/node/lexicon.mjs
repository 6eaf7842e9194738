// The kit's lexicon in Node.js: the bundled CMUdict (gunzipped with node:zlib) and g2p model read from disk.
//
//   import * as ort from "onnxruntime-node";
//   import { loadBundledLexicon } from "./lexicon.mjs";
//   const lexicon = await loadBundledLexicon(ort, { userDictionary: "names.dict" });   // the option is optional
//   console.log(await lexicon.words("Dr. Smith paid $5."));
//
// node export/node/lexicon.mjs "some text" [--user-dictionary FILE]: the words as JSON lines.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { Lexicon } from "../js/words.mjs";
import { readUtf8 } from "./files.mjs";

const kit = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const BUNDLED_LEXICON = resolve(kit, "lexicon", "cmudict.txt.gz");
export const G2P_MODEL = resolve(kit, "models", "g2p.onnx");

// userDictionary: a file's path, read as speechattn reads one (at most 50 MB, UTF-8; a device or a pipe refused);
// its errors name the file, in one line.
export async function loadBundledLexicon(ort, { userDictionary } = {}) {
  return Lexicon.load({
    ort,
    dictionaryText: gunzipSync(readFileSync(BUNDLED_LEXICON)).toString("utf8"),
    g2pBytes: readFileSync(G2P_MODEL),
    userDictionaryText: userDictionary == null ? undefined : readUtf8(userDictionary, "dictionary"),
    userDictionaryName: userDictionary,
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--user-dictionary");
  const userDictionary = at >= 0 ? args.splice(at, 2)[1] : undefined;
  try {
    const ort = await import("onnxruntime-node");
    const lexicon = await loadBundledLexicon(ort, { userDictionary });
    for (const word of await lexicon.words(args.join(" "))) console.log(JSON.stringify(word));
  } catch (error) {
    console.error(`error: ${error.message}`);
    process.exit(2);
  }
}
