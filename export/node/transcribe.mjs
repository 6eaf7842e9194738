#!/usr/bin/env node
// node export/node/transcribe.mjs AUDIO.wav [--model NAME|M.onnx] [--decoder bigram|hysteresis] [--chunk-frames C]
//                                            [--visemes rhubarb|oculus|vrm] [--phases N]
//
// Streams a WAV file (any rate: resampled to the model's; any channel count: averaged) through a speechattn ONNX
// model with onnxruntime-node, in 80 ms pushes, and prints the phone segments as JSON, the same layout as
// `speechattn transcribe --format json` (export/transcript.schema.json).  NaN/Inf samples are refused, as in Python.
// With --visemes SET it prints the mouth instead, as `speechattn transcribe --format visemes-json --visemes SET`
// does: a row of shape weights per 10 ms frame and the mouth cues (export/js/visemes.mjs).
import { createHash } from "node:crypto";
import { closeSync, fstatSync, readFileSync, readSync, writeSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { DECODERS, PREROLL_SEARCH_SECONDS, StreamingModel, filePreroll, newSegmenter, segmentDicts } from "../js/speechattn.mjs";
import { decodeWavFrames, nonfiniteError, readWavHeader } from "../js/wav.mjs";
import { Resampler } from "../js/resample.mjs";
import { CueMaker, VISEME_SETS, cueDicts, frameWeights } from "../js/visemes.mjs";
import { InputError, MAX_MODEL_BYTES, openRegular, readBounded, readUtf8 } from "./files.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const models = resolve(root, "export", "models");
// the bundled models' table, shared with the Python CLI and the web page: a name there (its own keys only: not
// "constructor"), or a path
export const registry = JSON.parse(readFileSync(resolve(models, "models.json"), "utf8"));
export const modelPath = (name) => (Object.hasOwn(registry.models, name) ? resolve(models, registry.models[name].file)
  : name);

// One line on stderr and the exit status: 1 when an input (the audio, the model, the bigram) fails, 2 for a usage
// error (an option), as `speechattn` exits.
export function fail(message, status = 1) {
  console.error(`error: ${message}`);
  process.exit(status);
}
const usage = (message) => fail(message, 2);

// Standard output, written whole or reported: closed (>&-) or full (> /dev/full) is a failure (exit 1), a reader
// that stops early (a pipe closed by `head`) is not ours (exit 0, as `speechattn` does).
export function writeOut(text) {
  const bytes = Buffer.from(text, "utf8");
  for (let at = 0; at < bytes.length;) {
    try {
      at += writeSync(1, bytes, at);
    } catch (error) {
      if (error.code === "EAGAIN") { // a non-blocking pipe that is full for now: wait for the reader
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (error.code === "EPIPE") process.exit(0);
      fail(`cannot write standard output (${error.code === "EBADF" ? "standard output is closed"
        : error.code === "ENOSPC" ? "No space left on device" : error.code ?? error.message})`);
    }
  }
}

// Mouth-shape weights in thousandths (what the JSON prints: 3 decimals), 2 bytes a number in one growing array: an
// hour of oculus weights is 11 MB here, where arrays of numbers took several hundred.
class WeightRows {
  constructor(shapes) {
    this.shapes = shapes;
    this.rows = 0;
    this.values = new Uint16Array(shapes * 1024);
  }

  add(weights, count) {
    const needed = (this.rows + count) * this.shapes;
    if (needed > this.values.length) {
      const grown = new Uint16Array(Math.max(needed, 2 * this.values.length));
      grown.set(this.values.subarray(0, this.rows * this.shapes));
      this.values = grown;
    }
    for (let i = 0; i < count * this.shapes; i++) {
      this.values[this.rows * this.shapes + i] = Math.round(Number(weights[i].toFixed(3)) * 1000);
    }
    this.rows += count;
  }

  // the rows as JSON.stringify writes them (k / 1000 is the double nearest the decimal, as Number("0.kkk")), in
  // pieces of `per` rows
  *json(per = 1000) {
    for (let start = 0; start < this.rows; start += per) {
      const pieces = [];
      for (let t = start; t < Math.min(start + per, this.rows); t++) {
        pieces.push(JSON.stringify(Array.from(this.values.subarray(t * this.shapes, (t + 1) * this.shapes),
          (k) => k / 1000)));
      }
      yield (start ? "," : "") + pieces.join(",");
    }
  }
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

// The model's bytes (--model: a bundled model's name or a file; a device or a pipe refused, at most 2 GB), or one
// line and exit 1.
export function readModel(name) {
  try {
    return readBounded(modelPath(name), "model", MAX_MODEL_BYTES);
  } catch (error) {
    if (error.code !== "ENOENT") fail(error.message);
    fail(`${name}: no such model file (or bundled model name: ${Object.keys(registry.models).join(", ")})`);
  }
}

// Any rate to the model's, in blocks, with the kit's streaming resampler; the tail is flushed with zeros and the
// output cut to round(n * out / in) samples for n input samples, as soxr does for `speechattn transcribe`.
export class CutResampler {
  constructor(inputRate, outputRate, inputLength) {
    this.resampler = new Resampler(inputRate, outputRate);
    this.remaining = Math.round(inputLength * outputRate / inputRate);
  }

  process(block) {
    return this.take(this.resampler.process(block));
  }

  flush() {
    return this.take(this.resampler.process(new Float32Array(2 * this.resampler.half + 2)));
  }

  take(out) {
    const kept = out.subarray(0, Math.min(out.length, this.remaining));
    this.remaining -= kept.length;
    return kept;
  }
}

export function resampleWhole(samples, inputRate, outputRate) {
  const resampler = new CutResampler(inputRate, outputRate, samples.length);
  const out = new Float32Array(resampler.remaining);
  const body = resampler.process(samples);
  out.set(body);
  out.set(resampler.flush(), body.length);
  return out;
}

// The file's audio at `outputRate` in pieces of `size` samples however its blocks fall (resampled in blocks), then
// the rest, if any: what a client pushes, the same for any file layout.
export function* wavPieces(wav, outputRate, size) {
  const { rate, frames } = wav.header;
  const resampler = rate === outputRate ? null : new CutResampler(rate, outputRate, frames);
  let queued = new Float32Array(0);
  function* cut(audio) {
    const joined = new Float32Array(queued.length + audio.length);
    joined.set(queued);
    joined.set(audio, queued.length);
    let at = 0;
    for (; at + size <= joined.length; at += size) yield joined.subarray(at, at + size);
    queued = joined.slice(at);
  }
  for (const block of wav.blocks()) yield* cut(resampler ? resampler.process(block) : block);
  if (resampler) yield* cut(resampler.flush());
  if (queued.length) yield queued;
}

// The WAV file's format, then its samples in blocks of about a second (mono, at the file's rate): memory stays
// bounded however long the file.  Errors name the file in one line.
export function openWav(path) {
  let descriptor, header;
  try {
    descriptor = openRegular(path, "audio"); // a FIFO or /dev/zero refused, not waited on or read forever
    const readAt = (at, count) => {
      const buffer = Buffer.alloc(count);
      return buffer.subarray(0, readSync(descriptor, buffer, 0, count, at));
    };
    header = readWavHeader(readAt, fstatSync(descriptor).size);
  } catch (error) {
    fail(error instanceof InputError ? error.message : `${path}: ${error.code ? `cannot read (${error.code})` : error.message}`);
  }
  function* blocks() {
    const frames = Math.max(1, header.rate); // about a second
    const buffer = Buffer.alloc(frames * header.frameBytes);
    try {
      for (let done = 0; done < header.frames;) {
        const count = Math.min(frames, header.frames - done);
        const got = readSync(descriptor, buffer, 0, count * header.frameBytes, header.dataStart + done * header.frameBytes);
        if (got < header.frameBytes) return; // the file shrank while being read
        const { samples, nonfinite, first } = decodeWavFrames(buffer.subarray(0, got), header);
        if (nonfinite) fail(`${path}: ${nonfiniteError(nonfinite, (done + first) / header.rate).message}`);
        done += samples.length;
        yield samples;
      }
    } finally {
      closeSync(descriptor);
    }
  }
  return { header, blocks };
}

async function main() {
  let args;
  try {
    args = parseArgs({
      allowPositionals: true,
      options: {
        model: { type: "string" },
        decoder: { type: "string", default: "bigram" },
        "chunk-frames": { type: "string" },
        bigram: { type: "string", default: resolve(models, registry.bigram) },
        visemes: { type: "string" },
        phases: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    usage(error.message);
  }
  if (!args.values.help && args.positionals.length !== 1) {
    usage(`give one AUDIO.wav, not ${args.positionals.length} (node transcribe.mjs --help)`);
  }
  if (args.values.help) {
    console.log("usage: node transcribe.mjs AUDIO.wav [--model NAME|M.onnx] [--decoder bigram|hysteresis] " +
      "[--chunk-frames C] [--bigram phone-bigram.json] [--visemes rhubarb|oculus|vrm] [--phases N]\n\nStreams a WAV " +
      "file (any rate, resampled) through the model in 80 ms pushes and prints its phone segments as JSON; with " +
      "--visemes, its mouth-shape weights per frame and mouth cues. --chunk-frames defaults to the largest the model " +
      "serves, as `speechattn transcribe` streams a file (the live clients use the model's default). --phases N " +
      "(1, 2 or 4 for the bundled models): the posteriors averaged over N evenly spaced shifts of the audio, as " +
      "`speechattn transcribe --phases N` (default, as there: 2 at the largest chunk, 1 with --chunk-frames).");
    process.exit(0);
  }
  const path = args.positionals[0];
  const { decoder } = args.values;
  if (!DECODERS.includes(decoder)) usage(`--decoder must be one of ${DECODERS.join(", ")}, not ${decoder}`);
  const visemes = args.values.visemes;
  if (visemes !== undefined && !Object.hasOwn(VISEME_SETS, visemes)) {
    usage(`--visemes must be one of ${Object.keys(VISEME_SETS).join(", ")}, not ${visemes}`);
  }
  // a file's own model (registry.files, trained at full context), as `speechattn transcribe`; with --chunk-frames
  // (a live chunk) the default
  args.values.model ??= args.values["chunk-frames"] ? registry.default : (registry.files ?? registry.default);
  const wav = openWav(path);
  const { rate, channels } = wav.header;
  if (wav.header.frames === 0) fail(`${path}: the file holds no audio samples`);
  const modelBytes = readModel(args.values.model);
  let model;
  try {
    model = await StreamingModel.create(ort, modelBytes, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  } catch (error) {
    fail(`${args.values.model}: ${error.message}`);
  }
  // a file: the largest chunk the model serves, as `speechattn transcribe` (nobody waits for its labels)
  const chunkFrames = args.values["chunk-frames"] ? Number(args.values["chunk-frames"]) : Math.max(...model.allowedChunkFrames);
  if (!model.allowedChunkFrames.includes(chunkFrames)) {
    usage(`--chunk-frames ${args.values["chunk-frames"]}: this model allows ${model.allowedChunkFrames.join(", ")}`);
  }
  let bigram = null;
  if (decoder === "bigram") {
    try {
      bigram = JSON.parse(readUtf8(args.values.bigram, "bigram"));
      if (!Array.isArray(bigram?.phones) || !Array.isArray(bigram?.log_probs)) throw new Error("no phones and log_probs");
    } catch (error) { // the parser's message quotes the file: say what it is instead
      if (error instanceof InputError) fail(error.message);
      fail(`${args.values.bigram}: not a phone bigram file (${error.code ?? (error instanceof SyntaxError ? "not JSON" : error.message)})`);
    }
  }
  // a file at its largest chunk: two phases, as `speechattn transcribe` (FILE_PHASES); a live chunk: one
  args.values.phases ??= !args.values["chunk-frames"] && model.phaseCounts.includes(2) ? "2" : "1";
  const phases = Number(args.values.phases);
  if (!/^[0-9]{1,2}$/.test(args.values.phases) || !model.phaseCounts.includes(phases)) {
    usage(`--phases ${args.values.phases.slice(0, 20)}: give ${model.phaseCounts.join(" or ")} for this model ` +
      "(evenly spaced shifts within its encoder's step)");
  }
  const stream = model.newStream(chunkFrames, phases);
  const segmenter = newSegmenter(decoder, model.phones, bigram);
  const segments = [];
  const weights = visemes ? new WeightRows(VISEME_SETS[visemes].shapes.length) : null;
  const take = (frames) => {
    segments.push(...segmenter.push(frames.logProbs, frames.count));
    if (visemes) weights.add(frameWeights(frames.logProbs, frames.count, visemes, model.phones), frames.count);
  };
  let streamed = 0;
  const pieces = wavPieces(wav, model.sampleRate, 8 * model.hopSamples); // 80 ms pushes
  const head = []; // the first PREROLL_SEARCH_SECONDS, read ahead for a model that wants a pre-roll
  let headSamples = 0;
  if (model.startsEmpty) {
    for (let next = pieces.next(); !next.done; next = pieces.next()) { // not for-of: its break would close `pieces`
      head.push(next.value);
      headSamples += next.value.length;
      if (headSamples >= PREROLL_SEARCH_SECONDS * model.sampleRate) break;
    }
    const joined = new Float32Array(headSamples);
    let at = 0;
    for (const piece of head) {
      joined.set(piece, at);
      at += piece.length;
    }
    await stream.prime(filePreroll(model, joined.map((x) => Math.min(1, Math.max(-1, x)))));
  }
  const rest = function* () { // the pieces read ahead, then the rest as they are read (never the whole file at once)
    yield* head;
    yield* pieces;
  };
  for (const piece of rest()) {
    streamed += piece.length;
    take(await stream.push(piece));
  }
  take(await stream.finish());
  segments.push(...segmenter.finish());
  const duration = streamed / model.sampleRate;
  const identity = { name: basename(modelPath(args.values.model)), sha256: sha256(modelBytes) };
  if (visemes) {
    const maker = new CueMaker(visemes, model.phones);
    const cues = [...maker.push(segments), ...maker.finish()];
    const head = JSON.stringify({
      format_version: 1, file: path, duration: Number(duration.toFixed(4)), model: identity, visemes,
      shapes: VISEME_SETS[visemes].shapes, frame_shift_ms: model.frameShiftMs,
    });
    writeOut(`${head.slice(0, -1)},"weights":[`);
    for (const piece of weights.json()) writeOut(piece);
    writeOut(`],"cues":${JSON.stringify(cueDicts(cues, visemes, duration, 1000 / model.frameShiftMs))}}\n`);
    return;
  }
  writeOut(JSON.stringify({
    format_version: 2, file: path, sample_rate: rate, channels, duration: Number(duration.toFixed(4)),
    frame_shift_ms: model.frameShiftMs, model: identity,
    chunk_frames: chunkFrames, output_delay_frames: model.outputDelayFrames, phases,
    segments: segmentDicts(segments, model.phones, duration, 1000 / model.frameShiftMs),
  }) + "\n");
}

if (basename(process.argv[1] ?? "") === "transcribe.mjs") await main();
