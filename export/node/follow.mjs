#!/usr/bin/env node
// node export/node/follow.mjs AUDIO.wav TEXT [--model NAME|M.onnx] [--dictionary FILE]
//
// Follow-along on a recording: streams the WAV file (any rate: resampled to the model's; any channel count:
// averaged) through a speechattn ONNX model in 40 ms pieces, as a microphone would deliver it, and follows TEXT (a
// file, or the words themselves) with the kit's Follower (export/js/align.mjs: the live aligner, final 100 ms
// behind the newest frame).  Prints a JSON line per word as it becomes final, as `speechattn mic --script` does,
// {"type": "word", "index", "word", "start", "end", "gop", "not_heard": [positions passed over so far]}, then
// {"type": "summary", "words": W, "heard": H, "not_heard": [{"index", "word"}], "final_after_ms": {"p50", "max"}}:
// final_after_ms is how much audio had been streamed past a word's end when it became final (algorithmic, without
// compute time).  The same words and times as the Python kit's Model.follow (tests/test_js_clients.py).
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { StreamingModel } from "../js/speechattn.mjs";
import { Follower, wordEvent } from "../js/align.mjs";
import { sentenceStarts } from "../js/words.mjs";
import { loadBundledLexicon } from "./lexicon.mjs";
import { fail, openWav, readModel, registry, wavPieces, writeOut } from "./transcribe.mjs";
import { InputError, readUtf8 } from "./files.mjs";

const PIECE_MS = 40; // what a microphone delivers at a time

// TEXT is a file when one of that name exists (as `speechattn mic --script` and `align` read it), else the words.
// The file is read as they read it: at most 50 MB, UTF-8 or refused, a device or a pipe refused in one line.
// A TEXT ending in .txt or .lab, or one word with a / in it, names a file (as speechattn align and mic --script
// read it): when no such file exists that is an error, never words to follow.
function namesAFile(source) {
  const s = source.trim();
  return /\.(txt|lab)$/i.test(s) || (s.includes("/") && !/\s/.test(s));
}

function readText(source) {
  if (!source.trim()) return source;
  if (!existsSync(source)) {
    if (namesAFile(source)) {
      fail(`${source}: no such script file (a name ending in .txt or .lab, or one word with a /, is read as a ` +
        "file; give the words themselves in quotes)");
    }
    return source;
  }
  try {
    return readUtf8(source, "script");
  } catch (error) {
    if (error instanceof InputError) fail(error.message);
    throw error;
  }
}

async function main() {
  let args;
  try {
    args = parseArgs({ allowPositionals: true, options: {
      model: { type: "string", default: registry.default }, dictionary: { type: "string" },
      help: { type: "boolean", short: "h" } } });
  } catch (error) {
    fail(error.message, 2);
  }
  if (!args.values.help && args.positionals.length !== 2) {
    fail(`give AUDIO.wav and TEXT, not ${args.positionals.length} argument(s) (node follow.mjs --help)`, 2);
  }
  if (args.values.help) {
    console.log("usage: node follow.mjs AUDIO.wav TEXT [--model NAME|M.onnx] [--dictionary FILE]\n\nStreams the " +
      "recording in 40 ms pieces and prints a JSON line per word of TEXT (a file or the words) as it becomes final, " +
      "then a summary with the words not heard.");
    process.exit(0);
  }
  const [path, source] = args.positionals;
  const text = readText(source);
  const wav = openWav(path);
  if (wav.header.frames === 0) fail(`${path}: the file holds no audio samples`);
  let model, lexicon;
  const modelBytes = readModel(args.values.model);
  try {
    model = await StreamingModel.create(ort, modelBytes, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  } catch (error) {
    fail(`${args.values.model}: ${error.message}`);
  }
  try {
    lexicon = await loadBundledLexicon(ort, { userDictionary: args.values.dictionary });
  } catch (error) { // a dictionary that is no file, too big, not UTF-8, or a line that is no pronunciation
    fail(error.message);
  }
  const words = await lexicon.words(text);
  if (!words.length) fail("nothing to follow: the text has no word the lexicon can pronounce");
  let follower;
  try {
    follower = new Follower(words, model.phones, { sentenceStarts: sentenceStarts(text, words) });
  } catch (error) {
    fail(error.message);
  }
  const framesPerSecond = 1000 / model.frameShiftMs;
  const stream = model.newStream();
  const delays = []; // ms of audio streamed past each word's end when it became final
  let streamed = 0;
  const report = (made, notHeard = follower.notHeard(), timed = true) => {
    for (const word of made) {
      if (timed) delays.push(streamed / model.sampleRate * 1000 - word.endFrame * model.frameShiftMs);
      writeOut(`${JSON.stringify(wordEvent(word, notHeard, framesPerSecond))}\n`);
    }
  };
  for (const piece of wavPieces(wav, model.sampleRate, Math.round(model.sampleRate * PIECE_MS / 1000))) {
    const frames = await stream.push(piece);
    streamed += piece.length;
    report(follower.push(frames.logProbs, frames.count));
  }
  const end = await stream.finish(); // the audio has ended: what becomes final now is not timed
  const made = [...follower.push(end.logProbs, end.count), ...follower.finish()];
  report(made, follower.alignment.notHeard, false);
  delays.sort((a, b) => a - b);
  writeOut(`${JSON.stringify({ type: "summary", words: words.length, heard: follower.heard.size,
    not_heard: follower.alignment.notHeard.map((i) => ({ index: i, word: words[i].text })),
    final_after_ms: delays.length ? { p50: delays[Math.floor(delays.length / 2)], max: delays.at(-1) } : null })}\n`);
}

await main();
