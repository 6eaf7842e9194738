// A drop-in for HeadAudio (@met4citizen/headaudio 0.1.0), the audio driver of TalkingHead pages: an AudioWorkletNode
// with HeadAudio's constructor, loadModel, update(dt), start/stop and events, whose onvalue(key, value) gives
// TalkingHead's Oculus blendshape names (viseme_aa ... viseme_sil) from a speechattn model's phone posteriors, or
// three-vrm's expression names (aa ih ou ee oh) with { visemes: "vrm" }.
//
//   await audioCtx.audioWorklet.addModule(CAPTURE_WORKLET_URL);    // HeadAudio: ".../headworklet.mjs"
//   const node = new HeadAudio(audioCtx, { ort });                   // ort: onnxruntime-web (default globalThis.ort)
//   await node.loadModel(".../default.onnx");                        // HeadAudio: ".../model-en-mixed.bin"
//   source.connect(node);
//   node.onvalue = (key, value) => ...;                               // called from update(), for values that changed
//   requestAnimationFrame loop: node.update(dt);
//
// Where the work happens: the worklet (capture-worklet.mjs) only copies the input to the main thread every 10 ms;
// resampling, the model (onnxruntime-web) and the weights run on the main thread.  onnxruntime-web cannot run in
// an AudioWorkletGlobalScope (no fetch, no dynamic import, no Worker for its WebAssembly), and one 40 ms chunk
// takes milliseconds of compute, more than the render thread's 2.7 ms per 128-sample quantum; set
// ort.env.wasm.proxy = true to move it off the main thread into onnxruntime-web's own worker.
//
// Timing: frame f (10 ms) of the model's output describes the audio the node received f * 10 ms after its first
// sample.  update() shows the frame for the audio heard latencyMs ago on the AudioContext's clock (one frame per
// 10 ms, whatever the display rate), so delaying the voice by latencyMs with a DelayNode puts mouth and voice in
// sync.  latencyMs defaults to the model's chunk (40 ms) + its output delay (60 ms) + LATENCY_MARGIN_MS for the
// compute; a frame not computed yet in time is replaced by the newest one (counted in lateUpdates).
import { StreamingModel } from "./speechattn.mjs";
import { Resampler } from "./resample.mjs";
import { VISEME_SETS, frameWeights } from "./visemes.mjs";

// our shape name -> the blendshape name onvalue gives; a shape not named (VRM's sil: every expression 0) is not sent
export const BLENDSHAPE_NAMES = {
  oculus: { // TalkingHead's and Ready Player Me's morph targets, as HeadAudio names them
    sil: "viseme_sil", PP: "viseme_PP", FF: "viseme_FF", TH: "viseme_TH", DD: "viseme_DD", kk: "viseme_kk",
    CH: "viseme_CH", SS: "viseme_SS", nn: "viseme_nn", RR: "viseme_RR", aa: "viseme_aa", E: "viseme_E",
    ih: "viseme_I", oh: "viseme_O", ou: "viseme_U",
  },
  vrm: { A: "aa", I: "ih", U: "ou", E: "ee", O: "oh" }, // VRM 1.0 presets (three-vrm's expressionManager)
};
export const CAPTURE_WORKLET_URL = new URL("./capture-worklet.mjs", import.meta.url).href;
// the worklet's 10 ms blocks (the resampler holds back 3 ms, so a chunk completes a block later) and a chunk's
// compute (2.6 ms p50, 5.2 ms p95 in headless Chromium on 2 shared cores): a frame's weights arrived 115 ms
// (p50; 117 p95, 127 max) after its audio began, so 1-3 % of updates showed the frame before (README.md)
export const LATENCY_MARGIN_MS = 20;
const CAPTURE_BLOCK_MS = 10;
const SPEECH_HOLD_FRAMES = 3; // onstarted/onended after 30 ms of speech/silence (the phone sil's posterior vs 0.5)

// Node.js has no AudioWorkletNode: the module still imports there (for its tables); constructing needs a browser
const Base = globalThis.AudioWorkletNode ?? class {};

export class HeadAudio extends Base {
  // options: HeadAudio's processorOptions and parameterData are accepted and ignored (no VAD or calibration here);
  // ort (onnxruntime-web; default globalThis.ort), visemes ("oculus" or "vrm"), gain (values times gain, default
  // 1: HeadAudio peaks at 0.65-0.75), latencyMs, sessionOptions (onnxruntime's), keepAudio (keep the 16 kHz audio
  // fed to the model in .captured, for tests).
  constructor(audioCtx, options = {}) {
    super(audioCtx, "speechattn-capture", {
      numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1, channelCountMode: "explicit",
      channelInterpretation: "speakers", processorOptions: { blockMs: CAPTURE_BLOCK_MS },
    });
    const o = options ?? {};
    this.audioCtx = audioCtx;
    this.ort = o.ort ?? globalThis.ort ?? null;
    this.visemes = o.visemes ?? "oculus";
    if (typeof this.visemes !== "string" || !Object.hasOwn(BLENDSHAPE_NAMES, this.visemes)) { // not "constructor"
      throw new Error(`visemes must be one of ${Object.keys(BLENDSHAPE_NAMES).join(", ")}, not ${this.visemes}`);
    }
    this.gain = o.gain ?? 1;
    this.requestedLatencyMs = o.latencyMs ?? null;
    this.latencyMs = null; // known once the model is loaded
    this.sessionOptions = o.sessionOptions ?? { executionProviders: ["wasm"] };
    this.keepAudio = !!o.keepAudio;
    this.model = null;
    // HeadAudio's events (onframe, onvad, onfeature, onviseme are never called: no such stages here) and onerror
    this.onvalue = this.onstarted = this.onended = this.oncalibrated = null;
    this.onframe = this.onvad = this.onfeature = this.onviseme = null;
    this.onerror = null;
    this.isRunning = true;
    this.generation = 0; // results of a stream reset meanwhile are dropped
    this.port.onmessage = (event) => this._onaudio(event.data);
  }

  // url: the ONNX model (or its bytes).  reset: as HeadAudio's, a new stream (there is only ever one model).
  async loadModel(url, reset = true) {
    if (!this.ort) throw new Error("HeadAudio needs onnxruntime-web: new HeadAudio(audioCtx, { ort }) or a global ort");
    let bytes = url;
    if (typeof url === "string" || url instanceof URL) {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
      bytes = await response.arrayBuffer();
    }
    const model = await StreamingModel.create(this.ort, bytes, this.sessionOptions);
    const set = VISEME_SETS[this.visemes];
    this.model = model;
    this.names = set.shapes.map((shape) => BLENDSHAPE_NAMES[this.visemes][shape] ?? null);
    this.restValues = set.shapes.map((shape) => (shape === "sil" ? 1 : 0));
    this.silPhone = model.phones.indexOf("sil");
    this.chunkSamples = model.defaultChunkFrames * model.hopSamples;
    this.latencyMs = this.requestedLatencyMs ??
      (model.defaultChunkFrames + model.outputDelayFrames) * model.frameShiftMs + LATENCY_MARGIN_MS;
    if (reset || !this.stream) this._reset();
  }

  // HeadAudio's animation step: call it from the render loop.  dt is not needed (the AudioContext's clock is).
  update(dt) { // eslint-disable-line no-unused-vars
    if (!this.model || this.firstContextFrame === null || !this.rows.length) return;
    const ctx = this.audioCtx, m = this.model;
    const heardSeconds = ctx.currentTime - this.firstContextFrame / ctx.sampleRate - this.latencyMs / 1000;
    const target = Math.floor((heardSeconds * 1000) / m.frameShiftMs + 1e-9);
    if (target < this.rowsStart || target <= this.frame) return;
    const newest = this.rowsStart + this.rows.length - 1;
    if (target > newest) this.lateUpdates++;
    const shown = Math.min(target, newest);
    for (let f = Math.max(this.frame + 1, this.rowsStart); f <= shown; f++) this._speech(f);
    this.rows.splice(0, shown - this.rowsStart);
    this.rowsStart = shown;
    this.frame = shown;
    this._emit(this.rows[0].weights);
  }

  start() {
    if (!this.isRunning) this._reset();
    this.isRunning = true;
  }

  stop() {
    this.isRunning = false;
    this._reset();
  }

  calibrate() { // nothing to calibrate: the model was trained with noise and silence
    setTimeout(() => this.oncalibrated?.({ event: "calibrated", t: this._seconds(this.frame) }), 0);
  }

  resetAll() {
    this._reset();
  }

  resetTimer() {}

  _reset() {
    if (this.isSpeaking) this.onended?.({ event: "ended", t: this._seconds(this.frame) });
    this.generation++;
    this.isSpeaking = false;
    this.speechRun = 0; // frames in a row that disagree with isSpeaking
    this.firstContextFrame = null;
    this.rows = []; // {weights, silence} of frames rowsStart, rowsStart + 1, ...
    this.rowsStart = 0;
    this.frame = -1; // the frame update() showed last
    this.lateUpdates = 0;
    this.captured = [];
    this.pending = new Float32Array(0);
    this.queue = Promise.resolve();
    if (this.model) {
      this.stream = this.model.newStream();
      this.resampler = new Resampler(this.audioCtx.sampleRate, this.model.sampleRate);
      this.values = {};
      this._emit(this.restValues);
    }
  }

  _onaudio({ samples, frame }) {
    if (!this.model || !this.isRunning) return;
    if (this.firstContextFrame === null) this.firstContextFrame = frame;
    const converted = this.resampler.process(samples);
    if (this.keepAudio) this.captured.push(converted);
    const joined = new Float32Array(this.pending.length + converted.length);
    joined.set(this.pending);
    joined.set(converted, this.pending.length);
    let at = 0;
    const stream = this.stream, generation = this.generation;
    for (; at + this.chunkSamples <= joined.length; at += this.chunkSamples) {
      const piece = joined.slice(at, at + this.chunkSamples);
      this.queue = this.queue
        .then(() => stream.push(piece))
        .then((frames) => generation === this.generation && this._frames(frames))
        .catch((error) => (this.onerror ? this.onerror(error) : console.error(error)));
    }
    this.pending = joined.slice(at);
  }

  _frames({ logProbs, count }) {
    const m = this.model, P = m.phones.length, S = this.names.length;
    const weights = frameWeights(logProbs, count, this.visemes, m.phones);
    for (let t = 0; t < count; t++) {
      this.rows.push({ weights: weights.subarray(t * S, (t + 1) * S), silence: Math.exp(logProbs[t * P + this.silPhone]) });
    }
  }

  _speech(f) {
    const speaking = this.rows[f - this.rowsStart].silence < 0.5;
    this.speechRun = speaking === this.isSpeaking ? 0 : this.speechRun + 1;
    if (this.speechRun < SPEECH_HOLD_FRAMES) return;
    this.isSpeaking = speaking;
    this.speechRun = 0;
    const data = { event: speaking ? "started" : "ended", t: this._seconds(f + 1 - SPEECH_HOLD_FRAMES) };
    (speaking ? this.onstarted : this.onended)?.(data);
  }

  _emit(weights) {
    for (let k = 0; k < this.names.length; k++) {
      const name = this.names[k];
      if (name === null) continue;
      const value = this.gain * weights[k];
      if (this.values[name] === value) continue;
      this.values[name] = value;
      this.onvalue?.(name, value);
    }
  }

  _seconds(frame) { // stream time of a frame, as HeadAudio's t
    return this.model ? (Math.max(frame, 0) * this.model.frameShiftMs) / 1000 : 0;
  }
}
