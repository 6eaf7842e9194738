#!/usr/bin/env node
// node export/node/transcribe.mjs AUDIO.wav [--model M.onnx] [--decoder bigram|hysteresis] [--chunk-frames C]
//
// Streams a 16 kHz WAV file through a speechattn ONNX model with onnxruntime-node, in 80 ms pushes, and prints
// the phone segments as JSON, the same as `speechattn transcribe --format json`.
import { readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { DECODERS, StreamingModel, newSegmenter, segmentDicts } from "../js/speechattn.mjs";
import { readWav } from "../js/wav.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const models = resolve(root, "speechattn", "runtime", "models");

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(2);
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
        model: { type: "string", default: resolve(models, "default.onnx") },
        decoder: { type: "string", default: "bigram" },
        "chunk-frames": { type: "string" },
        bigram: { type: "string", default: resolve(models, "phone-bigram.json") },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    fail(error.message);
  }
  if (args.values.help || args.positionals.length !== 1) {
    console.log("usage: node transcribe.mjs AUDIO.wav [--model M.onnx] [--decoder bigram|hysteresis] " +
      "[--chunk-frames C] [--bigram phone-bigram.json]\n\nStreams a 16 kHz WAV file through the model in 80 ms " +
      "pushes and prints its phone segments as JSON.");
    process.exit(args.values.help ? 0 : 2);
  }
  const path = args.positionals[0];
  const { decoder } = args.values;
  if (!DECODERS.includes(decoder)) fail(`--decoder must be one of ${DECODERS.join(", ")}, not ${decoder}`);
  const { samples, rate, channels } = readWavFile(path);
  let modelBytes;
  try {
    modelBytes = readFileSync(args.values.model);
  } catch (error) {
    fail(`${args.values.model}: cannot read the model (${error.code ?? error.message})`);
  }
  let model;
  try {
    model = await StreamingModel.create(ort, modelBytes, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  } catch (error) {
    fail(`${args.values.model}: ${error.message}`);
  }
  if (rate !== model.sampleRate) {
    fail(`${path} is ${rate} Hz; this client takes ${model.sampleRate} Hz WAV files ` +
      `(resample first, e.g. sox IN.wav -r ${model.sampleRate} OUT.wav, or use speechattn transcribe, which resamples)`);
  }
  const chunkFrames = args.values["chunk-frames"] ? Number(args.values["chunk-frames"]) : model.defaultChunkFrames;
  if (!model.allowedChunkFrames.includes(chunkFrames)) {
    fail(`--chunk-frames ${args.values["chunk-frames"]}: this model allows ${model.allowedChunkFrames.join(", ")}`);
  }
  const bigram = decoder === "bigram" ? JSON.parse(readFileSync(args.values.bigram, "utf8")) : null;
  const stream = model.newStream(chunkFrames);
  const segmenter = newSegmenter(decoder, model.phones, bigram);
  const segments = [];
  const push = 8 * model.hopSamples; // 80 ms
  for (let at = 0; at < samples.length; at += push) {
    const frames = await stream.push(samples.subarray(at, at + push));
    segments.push(...segmenter.push(frames.logProbs, frames.count));
  }
  const last = await stream.finish();
  segments.push(...segmenter.push(last.logProbs, last.count), ...segmenter.finish());
  if (samples.length === 0) fail(`${path}: the file holds no audio samples`);
  const duration = samples.length / model.sampleRate;
  console.log(JSON.stringify({
    file: path, sample_rate: rate, channels, duration: Number(duration.toFixed(4)),
    frame_shift_ms: model.frameShiftMs, model: args.values.model, chunk_frames: chunkFrames,
    segments: segmentDicts(segments, model.phones, duration, 1000 / model.frameShiftMs),
  }));
}

if (basename(process.argv[1] ?? "") === "transcribe.mjs") await main();
