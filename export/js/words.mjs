// Words to phones for JavaScript (the browser and Node.js): text normalisation, the bundled pronunciation lexicon
// (CMUdict, every variant, stress removed) and the grapheme-to-phoneme fallback (models/g2p.onnx) for words it
// lacks.  A port of export/words.py, whose docstring states the rules; tests/words-vectors.json keeps the two equal.
// No Node.js import here, so the page can load it; Node's helper is export/node/lexicon.mjs.
//
//   import * as ort from "onnxruntime-web";                  // or "onnxruntime-node"
//   const lexicon = await Lexicon.load({
//     ort,
//     dictionaryBytes: await (await fetch("lexicon/cmudict.txt.gz")).arrayBuffer(),   // or dictionaryText
//     g2pBytes: await (await fetch("models/g2p.onnx")).arrayBuffer(),
//     userDictionaryText: "NGUYEN N W IH N\n",              // optional: CMUdict/MFA lines that win
//   });
//   for (const w of await lexicon.words("Dr. Smith paid $5.")) console.log(w.text, w.spoken, w.pronunciations[0], w.source);
//
// Spans (startChar, endChar) count UTF-16 code units, as JavaScript strings do (text.slice(startChar, endChar) is
// the written token); Python counts code points.  They agree on text without characters beyond U+FFFF: each emoji
// before a word puts the JavaScript span one further on.

import { readMetadata } from "./speechattn.mjs";

export const PHONES = ("AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG " +
  "OW OY P R S SH T TH UH UW V W Y Z ZH").split(" ");

// ---------------------------------------------------------------------------------------------------------
// The tables (export/words.py has the same ones, with their reasons).

export const LETTER = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f";
export const FOLD = {
  "æ": "ae", "ð": "d", "ø": "o", "þ": "th", "ß": "ss", "đ": "d", "ħ": "h", "ı": "i", "ĳ": "ij", "ĸ": "k",
  "ŀ": "l", "ł": "l", "ŉ": "n", "ŋ": "ng", "œ": "oe", "ŧ": "t", "ſ": "s", "’": "'",
};
export const ABBREVIATIONS = {
  mr: "mister", mrs: "missus", dr: "doctor", st: "street", mt: "mount", vs: "versus",
  etc: "et cetera", "e.g": "for example", "i.e": "that is", jr: "junior", sr: "senior", prof: "professor",
};
export const BEFORE_A_NAME = { st: "saint" };
export const SYMBOLS = { "&": "and", "%": "percent", "+": "plus", "=": "equals", "@": "at" };
export const CURRENCIES = {
  "$": ["dollar", "dollars", "cent", "cents"],
  "£": ["pound", "pounds", "penny", "pence"],
  "€": ["euro", "euros", "cent", "cents"],
};
const ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " +
  "seventeen eighteen nineteen").split(" ");
const TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split(" ");
const SCALES = [[1e12, "trillion"], [1e9, "billion"], [1e6, "million"], [1e3, "thousand"]];
const ORDINALS = { one: "first", two: "second", three: "third", five: "fifth", eight: "eighth", nine: "ninth", twelve: "twelfth" };
const PLURALS = { six: "sixes" };
const MAX_CARDINAL_DIGITS = 15; // below 2 ** 53: exact as a Number
const VOWELS = "aeiouy";
const MAX_SPELT_CAPITALS = 3;

const INTEGER = "[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+";
const NUMBER = `(?:${INTEGER})(?:\\.[0-9]+)?|\\.[0-9]+`;
export const TOKEN_PATTERN = [
  `[$£€](?:${NUMBER})`, // money
  `(?:${INTEGER})(?:[sS][tT]|[nN][dD]|[rR][dD]|[tT][hH])(?![${LETTER}0-9])`, // ordinal
  `(?:[0-9]{4}|[0-9]{2})['’]?s(?![${LETTER}0-9])`, // decade
  "(?:[01]?[0-9]|2[0-3]):[0-5][0-9](?![0-9])", // clock time
  `(?:${NUMBER})%?`, // number
  `['’]?[${LETTER}]+(?:[-'’.][${LETTER}]+)*['’.]?`, // word
  "[&%+=@]", // symbol
].join("|");
const TOKEN = new RegExp(TOKEN_PATTERN, "g");
const ONE_LETTER = new RegExp(`^[${LETTER}]$`);
const LETTER_AFTER_SPACES = new RegExp(` *([${LETTER}])`, "y");
const APOSTROPHES = "'’";
const has = (table, key) => Object.prototype.hasOwnProperty.call(table, key);

// ---------------------------------------------------------------------------------------------------------
// Letters and numbers.

export function fold(word) {
  let out = "";
  for (const c of word.toLowerCase().normalize("NFD")) if (c < "\u0300" || c > "\u036f") out += has(FOLD, c) ? FOLD[c] : c;
  return out;
}

function cardinal(n) {
  if (n === 0) return ["zero"];
  const words = [];
  for (const [size, name] of SCALES) {
    if (n >= size) {
      words.push(...belowThousand((n - (n % size)) / size), name);
      n %= size;
    }
  }
  return n ? [...words, ...belowThousand(n)] : words;
}

function belowThousand(n) {
  const words = n >= 100 ? [ONES[Math.floor(n / 100)], "hundred"] : [];
  n %= 100;
  if (n >= 20) {
    words.push(TENS[Math.floor(n / 10)]);
    n %= 10;
  }
  return n ? [...words, ONES[n]] : words;
}

const digitWords = (digits) => [...digits].map((d) => ONES[Number(d)]);

function integerWords(digits) {
  if ((digits.length > 1 && digits[0] === "0") || digits.length > MAX_CARDINAL_DIGITS) return digitWords(digits);
  return cardinal(Number(digits));
}

function yearWords(digits) {
  const n = Number(digits);
  if (!/^[0-9]{4}$/.test(digits) || !((n >= 1100 && n <= 1999) || (n >= 2010 && n <= 2099))) return null;
  const high = Math.floor(n / 100), low = n % 100;
  return [...cardinal(high), ...(low === 0 ? ["hundred"] : low < 10 ? ["oh", ONES[low]] : cardinal(low))];
}

function partition(written) {
  const plain = written.replaceAll(",", ""), point = plain.indexOf(".");
  return point < 0 ? [plain, ""] : [plain.slice(0, point), plain.slice(point + 1)];
}

function numberWords(written) {
  const [integer, fraction] = partition(written);
  return [...(integer ? integerWords(integer) : []), ...(fraction ? ["point", ...digitWords(fraction)] : [])];
}

const ordinal = (word) => ORDINALS[word] ?? (word.endsWith("y") ? word.slice(0, -1) + "ieth" : word + "th");
const plural = (word) => PLURALS[word] ?? (word.endsWith("y") ? word.slice(0, -1) + "ies" : word + "s");

function moneyWords(symbol, written) {
  const [one, many, oneHundredth, hundredths] = CURRENCIES[symbol];
  const [integer, fraction] = partition(written);
  if (fraction && fraction.length !== 2) return [...numberWords(written), many];
  const units = Number(integer || "0"), cents = Number(fraction || "0");
  let words = [];
  if (units || !cents) words = [...integerWords(integer || "0"), units === 1 ? one : many];
  if (cents) words = [...words, ...(words.length ? ["and"] : []), ...cardinal(cents), cents === 1 ? oneHundredth : hundredths];
  return words;
}

function numericWords(token) {
  if (has(CURRENCIES, token[0])) return moneyWords(token[0], token.slice(1));
  if (token.includes(":")) { // 3:30 three thirty, 7:00 seven o'clock, 12:05 twelve oh five
    const [hours, minutes] = token.split(":");
    const said = minutes === "00" ? ["o'clock"] : [...(minutes[0] === "0" ? ["oh"] : []), ...cardinal(Number(minutes))];
    return [...cardinal(Number(hours)), ...said];
  }
  if (["st", "nd", "rd", "th"].includes(token.slice(-2).toLowerCase())) {
    const words = integerWords(token.slice(0, -2).replaceAll(",", ""));
    return [...words.slice(0, -1), ordinal(words[words.length - 1])];
  }
  if (token.endsWith("s")) {
    const digits = token.slice(0, -1).replace(/['’]$/, "");
    const words = yearWords(digits) ?? integerWords(digits);
    return [...words.slice(0, -1), plural(words[words.length - 1])];
  }
  if (token.endsWith("%")) return [...numberWords(token.slice(0, -1)), "percent"];
  return yearWords(token) ?? numberWords(token);
}

// ---------------------------------------------------------------------------------------------------------
// Text -> spoken words with spans: [startChar, endChar, spoken] each.

export function normalise(text, known) {
  const spans = [];
  for (const match of text.matchAll(TOKEN)) {
    const token = match[0], start = match.index, end = start + token.length;
    if (token.length === 1 && has(SYMBOLS, token)) spans.push([start, end, SYMBOLS[token]]);
    else if (has(CURRENCIES, token[0]) || "0123456789.".includes(token[0])) {
      for (const word of numericWords(token)) spans.push([start, end, word]);
    } else spans.push(...wordSpans(text, start, end, known));
  }
  return spans;
}

const isCapital = (c) => c.toLowerCase() !== c;

function wordSpans(text, start, end, known) {
  const token = text.slice(start, end);
  const key = (token.endsWith(".") ? token.slice(0, -1) : token).toLowerCase();
  if (has(ABBREVIATIONS, key)) {
    LETTER_AFTER_SPACES.lastIndex = end;
    const following = LETTER_AFTER_SPACES.exec(text);
    const spoken = following && isCapital(following[1]) && has(BEFORE_A_NAME, key) ? BEFORE_A_NAME[key] : ABBREVIATIONS[key];
    return spoken.split(" ").map((word) => [start, end, word]);
  }
  const letters = (token.endsWith(".") ? token.slice(0, -1) : token).split(".");
  if (letters.every((letter) => ONE_LETTER.test(letter)) && (letters.length > 1 || token.endsWith("."))) {
    return letters.map((letter) => [start, end, fold(letter) + "."]);
  }
  if (token.endsWith(".")) end -= 1;
  if (APOSTROPHES.includes(text[start]) && !known(fold(text.slice(start, end)))) start += 1;
  if (APOSTROPHES.includes(text[end - 1]) && !known(fold(text.slice(start, end)))) end -= 1;
  return spokenParts(text.slice(start, end), known).map((word) => [start, end, word]);
}

function spokenParts(written, known) {
  const word = fold(written);
  if (known(word)) return [word];
  if (written.includes("-") || written.includes(".")) return written.split(/[-.]/).flatMap((part) => spokenParts(part, known));
  const letters = [...written];
  if (letters.every((c) => ONE_LETTER.test(c)) && (![...word].some((c) => VOWELS.includes(c)) ||
      (letters.length >= 2 && letters.length <= MAX_SPELT_CAPITALS && letters.every(isCapital)))) {
    return letters.map((letter) => fold(letter) + ".");
  }
  return [word];
}

export const SENTENCE_MARKS = ".!?;"; // between two words, one of these or a line break: the second starts a sentence

// The positions of the words (this text's, in order: {startChar, endChar}) that start a sentence or a line, 0 first:
// where the aligner lets a reader jump back or ahead to (words.py's sentence_starts).
export function sentenceStarts(text, words) {
  const starts = [0];
  let previousEnd = 0;
  words.forEach((word, i) => {
    const between = text.slice(previousEnd, word.startChar);
    if (i && (between.includes("\n") || [...SENTENCE_MARKS].some((mark) => between.includes(mark)))) starts.push(i);
    previousEnd = word.endChar;
  });
  return starts;
}

// ---------------------------------------------------------------------------------------------------------
// The grapheme-to-phoneme fallback: letters (1, L) int64 -> log_probs (1, L*S, C), alphabet and symbols from the
// file's metadata; the session is made when the first unknown word needs it.

export class G2P {
  constructor(ort, bytes) {
    this.ort = ort;
    this.bytes = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const metadata = readMetadata(this.bytes);
    if (metadata.model_type !== "speechattn-g2p") throw new Error("not a speechattn g2p model (metadata model_type is missing)");
    this.letterIds = new Map([...metadata.letters].map((letter, i) => [letter, 1 + i]));
    this.symbols = metadata.symbols.split(",");
    this.blank = this.symbols.indexOf(metadata.blank);
    this.session = null;
    this.cache = new Map();
  }

  async phones(word) {
    if (!this.cache.has(word)) {
      const ids = [...word].filter((c) => this.letterIds.has(c)).map((c) => this.letterIds.get(c));
      if (!ids.length) return [];
      if (!this.ort) throw new Error(`"${word}" is in no dictionary and no ort was given for the g2p model`);
      this.session ??= this.ort.InferenceSession.create(this.bytes); // a promise, shared by concurrent calls
      const session = await this.session;
      const letters = new this.ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]);
      const output = (await session.run({ letters })).log_probs; // (1, L*S, C)
      const [, slots, classes] = output.dims;
      const best = [];
      for (let slot = 0; slot < slots; slot++) {
        let top = 0;
        for (let k = 1; k < classes; k++) if (output.data[slot * classes + k] > output.data[slot * classes + top]) top = k;
        best.push(top); // the first of equal maxima, as numpy's argmax
      }
      if (this.cache.size > 10000) this.cache.clear();
      this.cache.set(word, ctcGreedy(best, this.symbols, this.blank));
    }
    return this.cache.get(word);
  }
}

export function ctcGreedy(best, symbols, blank) {
  return best.filter((k, i) => k !== blank && (i === 0 || best[i - 1] !== k)).map((k) => symbols[k]);
}

// ---------------------------------------------------------------------------------------------------------
// Dictionaries and the lexicon.

export function parseUserDictionary(text, name) {
  const variants = new Map();
  const lines = (text.startsWith("\ufeff") ? text.slice(1) : text).split("\n");
  lines.forEach((line, index) => {
    const fields = line.split("#")[0].match(/[^ \t\r]+/g) ?? [];
    if (!fields.length || fields[0].startsWith(";;;")) return;
    if (/[,;]/.test(fields[0].slice(1))) { // CSV-like "password,P AE S": the word would be "password,p"
      throw new Error(`${name}:${index + 1}: "${fields[0]}" holds a comma or semicolon: separate the word ` +
        "and its phones with spaces or a tab (WORD PH1 PH2 ...)");
    }
    const word = fold(fields[0].replace(/\([0-9]+\)$/, ""));
    let symbols = fields.slice(1);
    while (symbols.length && /^[0-9.]+$/.test(symbols[0])) symbols = symbols.slice(1);
    if (!symbols.length) throw new Error(`${name}:${index + 1}: "${fields[0]}" has no phones (expected WORD PH1 PH2 ...)`);
    const phones = symbols.map((symbol) => symbol.toUpperCase().replace(/[012]$/, ""));
    phones.forEach((phone, i) => {
      if (!PHONES.includes(phone)) {
        throw new Error(`${name}:${index + 1}: "${symbols[i]}" is not a phone (${PHONES.join(" ")}; stress digits allowed)`);
      }
    });
    if (!variants.has(word)) variants.set(word, []);
    if (!variants.get(word).some((v) => v.join(" ") === phones.join(" "))) variants.get(word).push(phones);
  });
  return variants;
}

export function parseBundledDictionary(text) {
  const entries = new Map();
  for (const line of text.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab > 0) entries.set(line.slice(0, tab), line.slice(tab + 1));
  }
  return entries;
}

async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

function possessive(variant) {
  const last = variant[variant.length - 1];
  if (["S", "Z", "SH", "ZH", "CH", "JH"].includes(last)) return [...variant, "IH", "Z"];
  return [...variant, ...(["P", "T", "K", "F", "TH"].includes(last) ? ["S"] : ["Z"])];
}

export class Lexicon {
  // dictionaryText (the bundled file, gunzipped) or dictionaryBytes (gzip, as the kit ships it); g2pBytes: the g2p
  // ONNX file; userDictionaryText: CMUdict/MFA lines whose words override the bundled ones (errors name
  // userDictionaryName:line).
  static async load({ ort, dictionaryText, dictionaryBytes, g2pBytes, userDictionaryText, userDictionaryName = "user dictionary" }) {
    if (dictionaryText == null) {
      if (dictionaryBytes == null) throw new Error("Lexicon.load needs dictionaryText or dictionaryBytes");
      dictionaryText = await gunzip(dictionaryBytes instanceof Uint8Array ? dictionaryBytes : new Uint8Array(dictionaryBytes));
    }
    const user = userDictionaryText == null ? new Map() : parseUserDictionary(userDictionaryText, userDictionaryName);
    return new Lexicon(parseBundledDictionary(dictionaryText), user, g2pBytes == null ? null : new G2P(ort, g2pBytes));
  }

  constructor(entries, user, g2p) {
    this.entries = entries;
    this.user = user;
    this.g2p = g2p;
  }

  // [{text, spoken, pronunciations, source, startChar, endChar}] for every spoken word of the text.
  async words(text) {
    const words = [];
    for (const [start, end, spoken] of normalise(text, (word) => this.lookup(word) !== null)) {
      const [pronunciations, source] = this.lookup(spoken) ?? (await this.guess(spoken));
      words.push({ text: text.slice(start, end), spoken, pronunciations, source, startChar: start, endChar: end });
    }
    return words;
  }

  async pronunciations(word) {
    const spoken = fold(word);
    return (this.lookup(spoken) ?? (await this.guess(spoken)))[0];
  }

  lookup(spoken) {
    if (this.user.has(spoken)) return [this.user.get(spoken), "user"];
    if (this.entries.has(spoken)) return [this.entries.get(spoken).split("\t").map((v) => v.split(" ")), "cmudict"];
    if (spoken.endsWith("'s") && spoken.length > 2) {
      const base = this.lookup(spoken.slice(0, -2));
      if (base) {
        const variants = new Map(base[0].map((v) => possessive(v)).map((v) => [v.join(" "), v]));
        return [[...variants.values()], base[1]];
      }
    }
    return null;
  }

  async guess(spoken) {
    if (!this.g2p) throw new Error(`"${spoken}" is in no dictionary and no g2pBytes were given`);
    return [[await this.g2p.phones(spoken)], "g2p"];
  }
}
