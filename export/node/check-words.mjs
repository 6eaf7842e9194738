// node export/node/check-words.mjs [--web] [tests/words-vectors.json]: the JavaScript lexicon (export/js/words.mjs)
// against the shared vectors that the Python kit wrote; exit status 1 and one line per disagreement if they differ.
// Default: onnxruntime-node and the dictionary gunzipped by node:zlib (loadBundledLexicon); --web: onnxruntime-web
// (export/web/node_modules) and the gzip bytes through DecompressionStream, the page's code path.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { fold, Lexicon, parseUserDictionary, PHONES, TOKEN_PATTERN } from "../js/words.mjs";
import { BUNDLED_LEXICON, G2P_MODEL, loadBundledLexicon } from "./lexicon.mjs";
import { readJsonOrExit } from "./files.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);
const web = args.includes("--web");
const vectors = readJsonOrExit(args.find((a) => a !== "--web") ?? resolve(root, "tests", "words-vectors.json"), "words vectors");

let ort, plain, withUser;
if (web) {
  ort = await import(resolve(root, "export", "web", "node_modules", "onnxruntime-web", "dist", "ort.node.min.mjs"));
  const load = (userDictionaryText) => Lexicon.load({
    ort, dictionaryBytes: readFileSync(BUNDLED_LEXICON), g2pBytes: readFileSync(G2P_MODEL), userDictionaryText, userDictionaryName: "user.dict",
  });
  [plain, withUser] = [await load(undefined), await load(vectors.user_dictionary)];
} else {
  ort = await import("onnxruntime-node");
  plain = await loadBundledLexicon(ort);
  withUser = new Lexicon(plain.entries, parseUserDictionary(vectors.user_dictionary, "user.dict"), plain.g2p);
}

const failures = [];
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
if (TOKEN_PATTERN !== vectors.token_pattern) failures.push("token pattern: differs from Python's");
if (!same(PHONES, vectors.phones)) failures.push("phones: differ from Python's");
const folded = [...vectors.fold.input].map(fold);
folded.forEach((f, i) => { if (f !== vectors.fold.output[i]) failures.push(`fold: ${vectors.fold.input[i]} -> ${f}, Python ${vectors.fold.output[i]}`); });
let agree = 0;
for (const [i, c] of vectors.cases.entries()) {
  const words = await (c.user_dictionary ? withUser : plain).words(c.text);
  const ours = words.map(({ text, spoken, pronunciations, source, startChar, endChar }) =>
    ({ text, spoken, pronunciations, source, start_char: startChar, end_char: endChar }));
  if (same(ours, c.words)) agree++;
  else {
    const at = ours.findIndex((w, k) => !same(w, c.words[k]));
    failures.push(`case ${i} ${JSON.stringify(c.text.slice(0, 40))}: word ${at} ${JSON.stringify(ours[at])}, Python ${JSON.stringify(c.words[at])}` +
      (ours.length !== c.words.length ? ` (${ours.length} words, Python ${c.words.length})` : ""));
  }
}
for (const p of vectors.pronunciations) {
  const ours = await (p.user_dictionary ? withUser : plain).pronunciations(p.word);
  if (!same(ours, p.pronunciations)) failures.push(`pronunciations(${JSON.stringify(p.word)}): ${JSON.stringify(ours)}, Python ${JSON.stringify(p.pronunciations)}`);
}
for (const e of vectors.user_dictionary_errors) {
  let message = "accepted";
  try { parseUserDictionary(e.text, "user.dict"); } catch (error) { message = error.message; }
  if (message !== e.error) failures.push(`user dictionary ${JSON.stringify(e.text)}: ${message}, Python ${e.error}`);
}
for (const line of failures) console.error(line);
console.log(`${agree} of ${vectors.cases.length} texts agree${web ? " (onnxruntime-web)" : ""}`);
process.exit(failures.length ? 1 : 0);
