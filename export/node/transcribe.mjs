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

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const models = resolve(root, "speechattn", "runtime", "models");

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(2);
}

// A WAV file's samples as mono float32 in [-1, 1] (channels averaged), its rate and channel count.
export function readWav(path) {
  let bytes;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    fail(`${path}: cannot read (${error.code ?? error.message})`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at) => bytes.toString("latin1", at, at + 4);
  if (bytes.length < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") fail(`${path}: not a WAV file (RIFF/WAVE header missing)`);
  let format = null, data = null;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = tag(at), size = view.getUint32(at + 4, true), body = at + 8;
    if (id === "fmt ") {
      let code = view.getUint16(body, true);
      if (code === 0xfffe && size >= 26) code = view.getUint16(body + 24, true); // WAVE_FORMAT_EXTENSIBLE
      format = { code, channels: view.getUint16(body + 2, true), rate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true) };
    } else if (id === "data") {
      data = { start: body, end: Math.min(bytes.length, body + size) }; // a header may promise more than is there
    }
    at = body + size + (size % 2);
  }
  if (!format || !data) fail(`${path}: WAV file without ${format ? "a data" : "a fmt"} chunk`);
  const { code, channels, rate, bits } = format;
  const width = bits / 8;
  const read = {
    "1:16": (at) => view.getInt16(at, true) / 32768,
    "1:24": (at) => ((view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getInt8(at + 2) << 16))) / 8388608,
    "1:32": (at) => view.getInt32(at, true) / 2147483648,
    "1:8": (at) => (view.getUint8(at) - 128) / 128,
    "3:32": (at) => view.getFloat32(at, true),
    "3:64": (at) => view.getFloat64(at, true),
  }[`${code}:${bits}`];
  if (!read) fail(`${path}: WAV encoding ${code}/${bits} bits is not read here (PCM 8/16/24/32-bit or float 32/64 are)`);
  if (!channels) fail(`${path}: WAV file with 0 channels`);
  const frames = Math.floor((data.end - data.start) / (width * channels));
  const samples = new Float32Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum = Math.fround(sum + read(data.start + (i * channels + c) * width));
    samples[i] = Math.fround(sum / channels);
  }
  return { samples, rate, channels };
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
  const { samples, rate, channels } = readWav(path);
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
