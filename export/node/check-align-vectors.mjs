// node export/node/check-align-vectors.mjs [tests/align-vectors.json]: the JavaScript forced aligner
// (export/js/align.mjs) against the shared vectors that the Python kit wrote; exit status 1 and one line per
// disagreement if they differ.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkAlignVectors } from "../js/vectors.mjs";
import { readJsonOrExit } from "./files.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const vectors = readJsonOrExit(process.argv[2] ?? resolve(root, "tests", "align-vectors.json"), "align vectors");
const failures = checkAlignVectors(vectors);
for (const line of failures) console.error(line);
const agree = vectors.cases.filter((c) => !failures.some((f) => f.startsWith(`${c.name}: `))).length;
console.log(`${agree} of ${vectors.cases.length} cases agree`);
process.exit(failures.length ? 1 : 0);
