// node export/node/check-vectors.mjs [tests/segmenter-vectors.json]: the JavaScript segmenters against the
// shared test vector; exit status 1 and one line per disagreement if they differ from the Python runtime's.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkVectors } from "../js/vectors.mjs";
import { readJsonOrExit } from "./files.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const vectors = readJsonOrExit(process.argv[2] ?? resolve(root, "tests", "segmenter-vectors.json"), "segmenter vectors");
const bigram = readJsonOrExit(resolve(root, vectors.bigram), "bigram");
const failures = checkVectors(vectors, bigram);
for (const line of failures) console.error(line);
console.log(`${vectors.cases.length - new Set(failures.map((f) => f.split(":")[0])).size} of ${vectors.cases.length} cases agree`);
process.exit(failures.length ? 1 : 0);
