#!/usr/bin/env node
// node export/node/transcribe.mjs AUDIO.wav [--model NAME|M.onnx] [--decoder bigram|hysteresis] [--chunk-frames C]
//                                            [--visemes rhubarb|oculus|vrm]
//
// Streams a WAV file (any rate: resampled to the model's; any channel count: averaged) through a speechattn ONNX
// model with onnxruntime-node, in 80 ms pushes, and prints the phone segments as JSON, the same layout as
// `speechattn transcribe --format json` (export/transcript.schema.json).  NaN/Inf samples are refused, as in Python.
// With --visemes SET it prints the mouth instead, as `speechattn transcribe --format visemes-json --visemes SET`
// does: a row of shape weights per 10 ms frame and the mouth cues (export/js/visemes.mjs).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { DECODERS, StreamingModel, newSegmenter, segmentDicts } from "../js/speechattn.mjs";
import { readWav } from "../js/wav.mjs";
import { Resampler } from "../js/resample.mjs";
import { CueMaker, VISEME_SETS, cueDicts, frameWeights } from "../js/visemes.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const models = resolve(root, "export", "models");
// the bundled models' table, shared with the Python CLI and the web page: a name there, or a path
const registry = JSON.parse(readFileSync(resolve(models, "models.json"), "utf8"));
const modelPath = (name) => (name in registry.models ? resolve(models, registry.models[name].file) : name);

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(2);
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

// Any rate to the model's, with the streaming windowed-sinc resampler the page uses; the tail is flushed with
// zeros and the output cut to round(n * out / in) samples, as soxr does for `speechattn transcribe`.
export function resampleWhole(samples, inputRate, outputRate) {
  const resampler = new Resampler(inputRate, outputRate);
  const body = resampler.process(samples);
  const tail = resampler.process(new Float32Array(2 * resampler.half + 2));
  const length = Math.round(samples.length * outputRate / inputRate);
  const out = new Float32Array(length);
  out.set(body.subarray(0, length));
  if (body.length < length) out.set(tail.subarray(0, length - body.length), body.length);
  return out;
}

export function readWavFile(path) {
  let bytes;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    fail(`${path}: cannot read (${error.code ?? error.message})`);
  }
  try {
    return readWav(bytes);
  } catch (error) {
    fail(`${path}: ${error.message}`);
  }
}

async function main() {
  let args;
  try {
    args = parseArgs({
      allowPositionals: true,
      options: {
        model: { type: "string", default: registry.default },
        decoder: { type: "string", default: "bigram" },
        "chunk-frames": { type: "string" },
        bigram: { type: "string", default: resolve(models, registry.bigram) },
        visemes: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    fail(error.message);
  }
  if (args.values.help || args.positionals.length !== 1) {
    console.log("usage: node transcribe.mjs AUDIO.wav [--model NAME|M.onnx] [--decoder bigram|hysteresis] " +
      "[--chunk-frames C] [--bigram phone-bigram.json] [--visemes rhubarb|oculus|vrm]\n\nStreams a WAV file (any " +
      "rate, resampled) through the model in 80 ms pushes and prints its phone segments as JSON; with --visemes, " +
      "its mouth-shape weights per frame and mouth cues.");
    process.exit(args.values.help ? 0 : 2);
  }
  const path = args.positionals[0];
  const { decoder } = args.values;
  if (!DECODERS.includes(decoder)) fail(`--decoder must be one of ${DECODERS.join(", ")}, not ${decoder}`);
  const visemes = args.values.visemes;
  if (visemes !== undefined && !(visemes in VISEME_SETS)) {
    fail(`--visemes must be one of ${Object.keys(VISEME_SETS).join(", ")}, not ${visemes}`);
  }
  const { samples, rate, channels } = readWavFile(path);
  let modelBytes;
  try {
    modelBytes = readFileSync(modelPath(args.values.model));
  } catch (error) {
    fail(`${args.values.model}: cannot read the model (${error.code ?? error.message})`);
  }
  let model;
  try {
    model = await StreamingModel.create(ort, modelBytes, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  } catch (error) {
    fail(`${args.values.model}: ${error.message}`);
  }
  const audio = rate === model.sampleRate ? samples : resampleWhole(samples, rate, model.sampleRate);
  const chunkFrames = args.values["chunk-frames"] ? Number(args.values["chunk-frames"]) : model.defaultChunkFrames;
  if (!model.allowedChunkFrames.includes(chunkFrames)) {
    fail(`--chunk-frames ${args.values["chunk-frames"]}: this model allows ${model.allowedChunkFrames.join(", ")}`);
  }
  let bigram = null;
  if (decoder === "bigram") {
    try {
      bigram = JSON.parse(readFileSync(args.values.bigram, "utf8"));
      if (!Array.isArray(bigram?.phones) || !Array.isArray(bigram?.log_probs)) throw new Error("no phones and log_probs");
    } catch (error) { // the parser's message quotes the file: say what it is instead
      fail(`${args.values.bigram}: not a phone bigram file (${error.code ?? (error instanceof SyntaxError ? "not JSON" : error.message)})`);
    }
  }
  const stream = model.newStream(chunkFrames);
  const segmenter = newSegmenter(decoder, model.phones, bigram);
  const segments = [], weights = [];
  const shapes = visemes ? VISEME_SETS[visemes].shapes.length : 0;
  const take = (frames) => {
    segments.push(...segmenter.push(frames.logProbs, frames.count));
    if (!visemes) return;
    const rows = frameWeights(frames.logProbs, frames.count, visemes, model.phones);
    for (let t = 0; t < frames.count; t++) {
      weights.push(Array.from(rows.subarray(t * shapes, (t + 1) * shapes), (w) => Number(w.toFixed(3))));
    }
  };
  const push = 8 * model.hopSamples; // 80 ms
  for (let at = 0; at < audio.length; at += push) take(await stream.push(audio.subarray(at, at + push)));
  take(await stream.finish());
  segments.push(...segmenter.finish());
  if (samples.length === 0) fail(`${path}: the file holds no audio samples`);
  const duration = audio.length / model.sampleRate;
  const identity = { name: basename(modelPath(args.values.model)), sha256: sha256(modelBytes) };
  if (visemes) {
    const maker = new CueMaker(visemes, model.phones);
    const cues = [...maker.push(segments), ...maker.finish()];
    console.log(JSON.stringify({
      format_version: 1, file: path, duration: Number(duration.toFixed(4)), model: identity, visemes,
      shapes: VISEME_SETS[visemes].shapes, frame_shift_ms: model.frameShiftMs, weights,
      cues: cueDicts(cues, visemes, duration, 1000 / model.frameShiftMs),
    }));
    return;
  }
  console.log(JSON.stringify({
    format_version: 2, file: path, sample_rate: rate, channels, duration: Number(duration.toFixed(4)),
    frame_shift_ms: model.frameShiftMs, model: identity,
    chunk_frames: chunkFrames, output_delay_frames: model.outputDelayFrames,
    segments: segmentDicts(segments, model.phones, duration, 1000 / model.frameShiftMs),
  }));
}

if (basename(process.argv[1] ?? "") === "transcribe.mjs") await main();
