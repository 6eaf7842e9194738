// speechattn streaming client for JavaScript: onnxruntime-node or onnxruntime-web, no other dependency.
//
// The same client as export/stream_client.py, written from the model's metadata alone (CONTRACT.md):
// sample rate, hop, chunk sizes, phone names, state names, shapes and dtypes all come from the file.
// The segmenters are ports of the Python runtime's (speechattn/decoder.py, speechattn/segments.py);
// tests/segmenter-vectors.json keeps the implementations equal.
//
//   import * as ort from "onnxruntime-node";            // or "onnxruntime-web"
//   const model = await StreamingModel.create(ort, modelBytes);
//   const stream = model.newStream();
//   const segmenter = newSegmenter("bigram", model.phones, bigramTable);
//   for (const piece of pieces) {                        // Float32Array, 16 kHz, any length
//     const frames = await stream.push(piece);            // {frameIndices, logProbs (R x P, row-major), count}
//     for (const s of segmenter.push(frames.logProbs, frames.count)) console.log(s);
//   }
//   const last = await stream.finish();

// the contract versions this client reads (CONTRACT.md): 2 holds a cache a layer (kv_cache_0 ..), 1 all layers' in one
// tensor (kv_cache); nothing below depends on which, every state is generic
export const CONTRACT_VERSIONS = ["1", "2"];
export const MAX_CALL_FRAMES = 256; // largest piece of audio (in hops) handed to one graph call
// A file's pre-roll (filePreroll; stream_client.py's file_preroll, the same samples): a model whose streams start
// from empty caches (metadata stream_start "empty", such as the bundled file-int8) first hears the file's loudest
// second of its first four, then 0.2 s of digital silence; its frames are dropped (Stream.prime).
export const PREROLL_SECONDS = 1.0;
export const PREROLL_SEARCH_SECONDS = 4.0;
export const PREROLL_GAP_SECONDS = 0.2;

// ---------------------------------------------------------------------------------------------------------
// ONNX metadata: onnxruntime's JavaScript API does not expose a model's metadata_props, so read them from the
// file itself (ModelProto field 14: repeated StringStringEntryProto {key = 1, value = 2}).

function readVarint(bytes, position) {
  let value = 0, shift = 0, byte;
  do {
    byte = bytes[position++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, position];
}

function fields(bytes, start = 0, end = bytes.length) {
  const out = [];
  let position = start;
  while (position < end) {
    let tag;
    [tag, position] = readVarint(bytes, position);
    if (position > end) throw new Error("not an ONNX file (truncated or not protobuf)");
    const number = Math.floor(tag / 8), wire = tag % 8;
    if (wire === 0) {
      [, position] = readVarint(bytes, position);
    } else if (wire === 1) {
      position += 8;
    } else if (wire === 5) {
      position += 4;
    } else if (wire === 2) {
      let length;
      [length, position] = readVarint(bytes, position);
      if (position + length > end) throw new Error("not an ONNX file (truncated or not protobuf)");
      out.push({ number, start: position, end: position + length });
      position += length;
    } else {
      throw new Error(`not an ONNX file (protobuf wire type ${wire})`);
    }
  }
  return out;
}

export function readMetadata(bytes) {
  const decoder = new TextDecoder();
  const metadata = {};
  for (const entry of fields(bytes).filter((f) => f.number === 14)) {
    let key = "", value = "";
    for (const f of fields(bytes, entry.start, entry.end)) {
      const text = decoder.decode(bytes.subarray(f.start, f.end));
      if (f.number === 1) key = text;
      else if (f.number === 2) value = text;
    }
    metadata[key] = value;
  }
  return metadata;
}

// ---------------------------------------------------------------------------------------------------------
// The model and its streams.

export class StreamingModel {
  static async create(ort, bytes, sessionOptions = {}) {
    bytes = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const metadata = readMetadata(bytes);
    if (metadata.model_type !== "speechattn-streaming-tagger") {
      throw new Error("not a speechattn streaming model (metadata model_type is missing)");
    }
    if (!CONTRACT_VERSIONS.includes(metadata.contract_version)) {
      throw new Error(`contract version ${metadata.contract_version} but this client reads ${CONTRACT_VERSIONS.join(" and ")}`);
    }
    const session = await ort.InferenceSession.create(bytes, sessionOptions);
    const model = new StreamingModel(ort, session, metadata);
    model.check();
    await model.probe();
    return model;
  }

  constructor(ort, session, metadata) {
    this.ort = ort;
    this.session = session;
    this.metadata = metadata;
    this.sampleRate = Number(metadata.sample_rate);
    this.hopSamples = Number(metadata.hop_samples);
    this.frameShiftMs = Number(metadata.frame_shift_ms);
    this.phones = metadata.phones.split(",");
    this.allowedChunkFrames = metadata.allowed_chunk_frames.split(",").map(Number);
    this.defaultChunkFrames = Number(metadata.default_chunk_frames);
    // Look-ahead by output delay: the graph's output at frame t labels frame t - R.  Streams drop the first R
    // outputs and flush R frames of silence at the end, so frame i is the audio's hop i (0 for older files).
    this.outputDelayFrames = Number(metadata.output_delay_frames ?? 0);
    this.finalLatencyMs = metadata.final_latency_ms === undefined ? null : Number(metadata.final_latency_ms);
    this.startsEmpty = metadata.stream_start === "empty"; // a file gets a pre-roll (filePreroll)
    this.provisionalLatencyMs = metadata.provisional_latency_ms === undefined ? null : Number(metadata.provisional_latency_ms);
    this.states = JSON.parse(metadata.states);
    const io = JSON.parse(metadata.inputs);
    this.audioInput = io.audio;
    this.chunkInput = io.chunk_frames;
    this.flushInput = io.flush;
    this.logProbsOutput = JSON.parse(metadata.outputs).log_probs;
    // the encoder's step in frames (S) and PhaseStream's choices, the counts that divide it (stream_client.py's)
    let config = {};
    try { config = JSON.parse(metadata.model_config ?? "{}"); } catch { config = {}; }
    const S = config?.frame_subsampling;
    this.frameSubsampling = Number.isInteger(S) && S >= 1 && S <= 64 ? S : 1;
    this.phaseCounts = [];
    for (let n = 1; n <= this.frameSubsampling; n++) if (this.frameSubsampling % n === 0) this.phaseCounts.push(n);
  }

  // Every value the client relies on, against sane bounds and the graph itself (as the Python client does), so a
  // file whose metadata lies fails here with one message instead of looping forever or allocating gigabytes.
  check() {
    const bad = (why) => { throw new Error(`its metadata does not describe this graph (${why})`); };
    const within = (name, value, low, high) => {
      if (!(Number.isFinite(value) && value >= low && value <= high)) bad(`${name} = ${value} is outside ${low}..${high}`);
    };
    const whole = (name, value, low, high) => {
      within(name, value, low, high);
      if (!Number.isInteger(value)) bad(`${name} = ${value} is not an integer`);
    };
    whole("sample_rate", this.sampleRate, 1000, 192000);
    whole("hop_samples", this.hopSamples, 1, 48000);
    within("frame_shift_ms", this.frameShiftMs, 0.1, 1000);
    whole("output_delay_frames", this.outputDelayFrames, 0, 1000);
    const rate = this.hopSamples * 1000 / this.frameShiftMs;
    if (Math.abs(rate - this.sampleRate) > 0.5) { // Python refuses them too: both clients agree
      bad(`sample_rate = ${this.metadata.sample_rate}, hop_samples = ${this.metadata.hop_samples} and frame_shift_ms = ` +
        `${this.metadata.frame_shift_ms} disagree (${this.hopSamples} samples every ${this.frameShiftMs} ms is ${rate} Hz)`);
    }
    if (new Set(this.phones).size !== this.phones.length || !this.phones.every((p) => /^[^\s\p{C}]+$/u.test(p))) {
      // a space or newline breaks CTM and text output
      bad(`phones = ${JSON.stringify(this.metadata.phones.slice(0, 80))} must be distinct names without spaces or newlines`);
    }
    const lookahead = this.metadata.decoder_lookahead_frames;
    if (lookahead !== undefined) { // mic reads it: as Python says it
      if (!/^\s*[-+]?\d+\s*$/.test(lookahead)) bad(`decoder_lookahead_frames = '${lookahead}' is not an integer`);
      within("decoder_lookahead_frames", Number(lookahead), 0, 1000);
    }
    for (const [name, value] of [["final_latency_ms", this.finalLatencyMs], ["provisional_latency_ms", this.provisionalLatencyMs]]) {
      if (value !== null) within(name, value, 0, 1e6);
    }
    if (!this.allowedChunkFrames.length || !this.allowedChunkFrames.every((c) => Number.isInteger(c) && c >= 1 && c <= 4096)) {
      bad(`allowed_chunk_frames = ${this.metadata.allowed_chunk_frames} must be sizes from 1 to 4096`);
    }
    if (!this.allowedChunkFrames.includes(this.defaultChunkFrames)) bad(`default_chunk_frames ${this.defaultChunkFrames} is not allowed`);
    const inputs = new Set(this.session.inputNames), outputs = new Set(this.session.outputNames);
    const stateOutputs = new Set(this.states.map((s) => s.output));
    if (!outputs.has(this.logProbsOutput) || stateOutputs.has(this.logProbsOutput)) {
      bad(`log_probs output ${this.logProbsOutput} is not the graph's log-probabilities`);
    }
    for (const name of [this.audioInput, this.chunkInput, this.flushInput]) if (!inputs.has(name)) bad(`input ${name} is not in the graph`);
    let elements = 0;
    for (const spec of this.states) {
      if (!inputs.has(spec.name) || !outputs.has(spec.output)) bad(`state ${spec.name} / ${spec.output} is not in the graph`);
      if (!["float32", "int64"].includes(spec.dtype)) bad(`state ${spec.name} has dtype ${spec.dtype} (float32 or int64)`);
      const sizes = spec.shape.filter((d) => d !== "batch");
      if (spec.shape.length - sizes.length !== 1 || !sizes.every((d) => Number.isInteger(d) && d >= 0 && d <= 1 << 20)) {
        bad(`state ${spec.name} has shape ${JSON.stringify(spec.shape)}`);
      }
      elements += sizes.reduce((a, b) => a * b, 1);
    }
    if (elements > 1 << 26) bad(`the states hold ${elements} values per stream`);
  }

  // One chunk of silence through the graph: it must give a frame per hopSamples samples and a log-probability per
  // phone, or the metadata's hop or phone list is not this graph's (as the Python client checks).
  async probe() {
    const bad = (why) => { throw new Error(`its metadata does not describe this graph (${why})`); };
    const chunk = Math.min(...this.allowedChunkFrames), samples = chunk * this.hopSamples;
    if (samples > 1 << 20) bad(`a chunk of ${chunk} frames is ${samples} samples (hop_samples = ${this.hopSamples})`);
    const feeds = {
      [this.audioInput]: new this.ort.Tensor("float32", new Float32Array(samples), [1, samples]),
      [this.chunkInput]: new this.ort.Tensor("int64", BigInt64Array.from([BigInt(chunk)]), []),
      [this.flushInput]: new this.ort.Tensor("int64", BigInt64Array.from([0n]), []),
      ...this.initialState(),
    };
    let dims;
    try {
      dims = (await this.session.run(feeds, { logSeverityLevel: 4 }))[this.logProbsOutput].dims;
    } catch (error) {
      const detail = String(error.message ?? error).split("Status Message:").pop().trim().split("\n")[0].slice(0, 120);
      bad(`hop_samples = ${this.hopSamples}: a chunk of ${chunk} frames (${samples} samples) does not run through the graph (${detail})`);
    }
    if (dims.length !== 3 || dims[1] !== chunk) {
      bad(`hop_samples = ${this.hopSamples}: ${samples} samples gave output of shape [${dims.join(", ")}], not [1, ${chunk}, ${this.phones.length}]`);
    }
    if (dims[2] !== this.phones.length) {
      bad(`${this.phones.length} phones in the metadata, ${dims[2]} classes in the graph's '${this.logProbsOutput}'`);
    }
  }

  // A Stream; with phases other than 1, a PhaseStream (its frames averaged over that many shifts of the audio).
  newStream(chunkFrames, phases = 1) {
    if (phases !== 1) return new PhaseStream(this, chunkFrames ?? this.defaultChunkFrames, phases);
    return new Stream(this, chunkFrames ?? this.defaultChunkFrames);
  }

  initialState() {
    const state = {};
    for (const spec of this.states) {
      const dims = spec.shape.map((d) => (d === "batch" ? 1 : d));
      const size = dims.reduce((a, b) => a * b, 1);
      state[spec.name] = spec.dtype === "int64"
        ? new this.ort.Tensor("int64", new BigInt64Array(size), dims)
        : new this.ort.Tensor(spec.dtype, new Float32Array(size), dims);
    }
    return state;
  }

  async run(audio, chunkFrames, final, state) {
    const feeds = {
      [this.audioInput]: new this.ort.Tensor("float32", audio, [1, audio.length]),
      [this.chunkInput]: new this.ort.Tensor("int64", BigInt64Array.from([BigInt(chunkFrames)]), []),
      [this.flushInput]: new this.ort.Tensor("int64", BigInt64Array.from([final ? 1n : 0n]), []),
      ...state,
    };
    const results = await this.session.run(feeds);
    const newState = {};
    for (const spec of this.states) newState[spec.name] = results[spec.output];
    const logProbs = results[this.logProbsOutput];
    return { logProbs: logProbs.data, count: logProbs.dims[1], state: newState };
  }
}

// The pre-roll of a file whose first samples (16 kHz mono, at least its first PREROLL_SEARCH_SECONDS where it is
// that long) are `head`: empty for a model whose streams start from a silence's caches; else the loudest
// PREROLL_SECONDS of the first PREROLL_SEARCH_SECONDS (energy in float64 over windows starting every hop, the first of
// equals; all of a shorter head, cut to whole hops), then PREROLL_GAP_SECONDS of zeros.
export function filePreroll(model, head) {
  const hop = model.hopSamples;
  const rate = model.sampleRate;
  if (!model.startsEmpty) return new Float32Array(0);
  const n = Math.min(head.length, Math.trunc(PREROLL_SEARCH_SECONDS * rate));
  const clean = new Float32Array(n);
  for (let i = 0; i < n; i++) clean[i] = Number.isFinite(head[i]) ? head[i] : 0;
  const window = Math.trunc(Math.trunc(PREROLL_SECONDS * rate) / hop) * hop;
  let start = 0;
  let length = Math.trunc(n / hop) * hop;
  if (n > window) {
    const energy = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) energy[i + 1] = energy[i] + clean[i] * clean[i];
    let best = -Infinity;
    for (let at = 0; at + window <= n; at += hop) {
      const sum = energy[at + window] - energy[at];
      if (sum > best) {
        best = sum;
        start = at;
      }
    }
    length = window;
  }
  if (!length) return new Float32Array(0);
  const gap = Math.trunc(Math.trunc(PREROLL_GAP_SECONDS * rate) / hop) * hop;
  const out = new Float32Array(length + gap);
  out.set(clean.subarray(start, start + length));
  return out;
}

export class Stream {
  constructor(model, chunkFrames) {
    if (!model.allowedChunkFrames.includes(chunkFrames)) {
      throw new Error(`chunk size ${chunkFrames} is not one the model was trained for: ${model.allowedChunkFrames}`);
    }
    this.model = model;
    this.chunkFrames = chunkFrames;
    this.state = model.initialState();
    this.leftover = new Float32Array(0);
    this.framesEmitted = 0;
    this.outputsToDrop = model.outputDelayFrames; // graph outputs that label frames before the audio
    this.nonfiniteSamples = 0;
    this.finished = false;
    this.busy = Promise.resolve(); // pushes run one after another even if the caller does not await them
  }

  // Audio heard before the stream's start (filePreroll's): it sets the model's state and labels no frame; frame 0
  // is still the first hop pushed after it. Whole hops; before the first push, once.
  prime(samples) {
    if (this.primed || this.pushed || this.finished) throw new Error("prime() comes before the stream's first push, once");
    if (samples.length % this.model.hopSamples) {
      throw new Error(`a pre-roll is whole hops of ${this.model.hopSamples} samples, not ${samples.length}`);
    }
    this.primed = true;
    const result = this.busy.then(async () => {
      this.outputsToDrop += samples.length / this.model.hopSamples; // whenever the graph gives them out
      if (samples.length) await this._push(samples, false);
    });
    this.busy = result.catch(() => {});
    return result;
  }

  push(samples) {
    this.pushed = true;
    const result = this.busy.then(() => this._push(samples, false));
    this.busy = result.catch(() => {});
    return result;
  }

  finish() {
    const result = this.busy.then(() => this._push(new Float32Array(0), true));
    this.busy = result.catch(() => {});
    return result;
  }

  async _push(samples, final) {
    if (this.finished) throw new Error("this stream is finished; start a new one with model.newStream()");
    const hop = this.model.hopSamples;
    const audio = new Float32Array(this.leftover.length + samples.length);
    audio.set(this.leftover);
    for (let i = 0; i < samples.length; i++) {
      const x = samples[i];
      if (Number.isFinite(x)) audio[this.leftover.length + i] = x;
      else this.nonfiniteSamples++; // the graph reads non-finite samples as 0
    }
    let usable = Math.floor(audio.length / hop) * hop;
    let work = audio.subarray(0, usable);
    this.leftover = audio.slice(usable);
    if (final) { // the last partial hop zero-padded, then the output delay's frames of silence
      const padded = new Float32Array(usable + (this.leftover.length ? hop : 0) + this.model.outputDelayFrames * hop);
      padded.set(audio);
      work = padded;
      this.leftover = new Float32Array(0);
    }
    const step = Math.max(this.chunkFrames, Math.floor(MAX_CALL_FRAMES / this.chunkFrames) * this.chunkFrames) * hop;
    const starts = [];
    for (let i = 0; i < work.length; i += step) starts.push(i);
    if (!starts.length) starts.push(0);
    const parts = [];
    let count = 0;
    for (let n = 0; n < starts.length; n++) {
      const piece = work.subarray(starts[n], Math.min(work.length, starts[n] + step));
      const last = final && n === starts.length - 1;
      if (piece.length === 0 && !last) continue;
      const out = await this.model.run(piece, this.chunkFrames, last, this.state);
      this.state = out.state;
      parts.push(out.logProbs);
      count += out.count;
    }
    if (final) this.finished = true;
    const classes = this.model.phones.length;
    const all = new Float32Array(count * classes);
    let offset = 0;
    for (const part of parts) {
      all.set(part, offset);
      offset += part.length;
    }
    const dropped = Math.min(this.outputsToDrop, count);
    this.outputsToDrop -= dropped;
    count -= dropped;
    const logProbs = all.subarray(dropped * classes);
    const first = this.framesEmitted;
    this.framesEmitted += count;
    return { firstFrame: first, count, logProbs, classes };
  }
}

// stream_client.py's PhaseStream: the frames averaged over `phases` shifts of the audio by whole hops within the
// encoder's step (phases divides model.frameSubsampling): phase k is its own Stream, primed with k * S / phases hops
// of silence (labelled by no frame); each frame's row is log(mean of the phases' posteriors), given once every phase
// has it. The same prime / push / finish and results as Stream (for files: alignment, recognition).
export class PhaseStream {
  constructor(model, chunkFrames, phases = 1) {
    if (!Number.isInteger(phases) || !model.phaseCounts.includes(phases)) {
      throw new Error(`phases must be ${model.phaseCounts.join(" or ")} for this model (the counts that divide its ` +
        `encoder's step of ${model.frameSubsampling} frames evenly), not '${String(phases).slice(0, 20)}'`);
    }
    this.model = model;
    this.chunkFrames = chunkFrames;
    this.classes = model.phones.length;
    const step = model.frameSubsampling / phases;
    this.shifts = Array.from({ length: phases }, (_, k) => k * step);
    this.streams = this.shifts.map(() => new Stream(model, chunkFrames));
    this.rows = this.shifts.map(() => []); // each phase's rows not given yet, as Float32Arrays of one frame
    this.framesEmitted = 0;
    this.started = false;
  }

  get finished() { return this.streams[0].finished; }

  get nonfiniteSamples() { return this.streams[0].nonfiniteSamples; }

  async prime(samples) {
    if (this.started || this.finished) throw new Error("prime() comes before the stream's first push, once");
    await this._start(samples);
  }

  async _start(head) {
    this.started = true;
    for (let k = 0; k < this.streams.length; k++) {
      if (!this.shifts[k] && !head.length) continue;
      const primed = new Float32Array(head.length + this.shifts[k] * this.model.hopSamples);
      primed.set(head);
      await this.streams[k].prime(primed);
    }
  }

  async push(samples) {
    if (!this.started && !this.finished) await this._start(new Float32Array(0));
    for (let k = 0; k < this.streams.length; k++) this._keep(k, await this.streams[k].push(samples));
    return this._ready();
  }

  async finish() {
    if (!this.started && !this.finished) await this._start(new Float32Array(0));
    for (let k = 0; k < this.streams.length; k++) this._keep(k, await this.streams[k].finish());
    return this._ready();
  }

  _keep(k, frames) {
    for (let t = 0; t < frames.count; t++) {
      this.rows[k].push(frames.logProbs.subarray(t * this.classes, (t + 1) * this.classes));
    }
  }

  _ready() {
    const P = this.classes, N = this.streams.length;
    const count = Math.min(...this.rows.map((r) => r.length));
    const logProbs = new Float32Array(count * P);
    for (let t = 0; t < count; t++) {
      for (let p = 0; p < P; p++) {
        let top = -Infinity;
        for (let k = 0; k < N; k++) top = Math.max(top, this.rows[k][t][p]);
        let sum = 0;
        for (let k = 0; k < N; k++) sum += Math.exp(this.rows[k][t][p] - top);
        logProbs[t * P + p] = N === 1 ? this.rows[0][t][p] : top + Math.log(sum / N);
      }
    }
    for (let k = 0; k < N; k++) this.rows[k] = this.rows[k].slice(count);
    const first = this.framesEmitted;
    this.framesEmitted += count;
    return { firstFrame: first, count, logProbs, classes: P };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Segmenters: frame log-probabilities in (count rows of P), final segments {startFrame, endFrame, phone,
// confidence} out.  Both have push(logProbs, count), finish(), and phone / runPhone for live displays.

export const DEFAULT_MIN_FRAMES = 3; // the hysteresis rule's
export const DECODER_DEFAULTS = { minFrames: 4, lookaheadFrames: 10, lmWeight: 1.0, insertionPenalty: 0.0 };

export class HysteresisSegmenter {
  // speechattn/segments.py: a new phone starts when it has been the argmax for minFrames frames in a row.
  constructor(classes, minFrames = DEFAULT_MIN_FRAMES) {
    if (minFrames < 1) throw new Error("minFrames must be at least 1");
    this.classes = classes;
    this.minFrames = minFrames;
    this.frame = 0;
    this.phone = -1;
    this.start = 0;
    this.posteriorSum = 0;
    this.runPhone = -1;
    this.runStart = 0;
    this.runPosteriors = [];
  }

  push(logProbs, count) {
    const P = this.classes, done = [];
    for (let t = 0; t < count; t++) {
      const row = new Float64Array(P);
      let best = 0;
      for (let p = 0; p < P; p++) {
        row[p] = Math.exp(logProbs[t * P + p]);
        if (row[p] > row[best]) best = p;
      }
      if (this.phone < 0) {
        this.phone = best;
        this.start = this.frame;
      }
      if (best === this.runPhone) {
        this.runPosteriors.push(row);
      } else {
        this._absorbRun();
        this.runPhone = best;
        this.runStart = this.frame;
        this.runPosteriors = [row];
      }
      this.frame++;
      if (this.runPhone === this.phone) {
        this._absorbRun();
      } else if (this.runPosteriors.length >= this.minFrames) {
        done.push(this._close(this.runStart));
        this.phone = this.runPhone;
        this.start = this.runStart;
        this._absorbRun();
      }
    }
    return done;
  }

  finish() {
    if (this.phone < 0 || this.frame === this.start) return [];
    this._absorbRun();
    const segment = this._close(this.frame);
    this.phone = -1;
    return [segment];
  }

  _absorbRun() {
    for (const row of this.runPosteriors) this.posteriorSum += row[this.phone];
    this.runPhone = -1;
    this.runPosteriors = [];
  }

  _close(end) {
    const segment = { startFrame: this.start, endFrame: end, phone: this.phone,
      confidence: this.posteriorSum / Math.max(1, end - this.start) };
    this.posteriorSum = 0;
    return segment;
  }
}

export function bigramForPhones(bigram, phones) {
  // bigram: the parsed phone-bigram.json {phones, log_probs}; returns a P x P Float64Array in `phones` order
  const order = phones.map((p) => {
    const index = bigram.phones.indexOf(p);
    if (index < 0) throw new Error(`the phone bigram has no row for ${p}`);
    return index;
  });
  const P = phones.length, table = new Float64Array(P * P);
  for (let a = 0; a < P; a++) for (let b = 0; b < P; b++) table[a * P + b] = bigram.log_probs[order[a]][order[b]];
  return table;
}

export class PhoneDecoder {
  // speechattn/decoder.py: Viterbi over a phone loop with minimum durations and a phone bigram; a frame's
  // label is final lookaheadFrames frames after it arrives.
  constructor(table, classes, config = {}, silence = 0) {
    const c = { ...DECODER_DEFAULTS, ...config };
    if (c.minFrames < 1 || c.lookaheadFrames < 0) throw new Error("minFrames must be >= 1 and lookaheadFrames >= 0");
    const P = classes, D = c.minFrames;
    this.config = c;
    this.P = P;
    this.D = D;
    this.transitions = new Float64Array(P * P);
    for (let i = 0; i < P * P; i++) this.transitions[i] = c.lmWeight * table[i] - c.insertionPenalty;
    for (let p = 0; p < P; p++) this.transitions[p * P + p] = -Infinity;
    // a stream starts as if after a long silence: entering a phone, or still in that silence, its minimum
    // duration met (free to leave at once)
    this.initial = Float64Array.from(this.transitions.subarray(silence * P, silence * P + P));
    this.silence = silence;
    this.scores = null;
    this.back = []; // at most lookahead + 1 entries
    this.rows = [];
    this.frame = 0;
    this.final = 0;
    this.phone = -1;
    this.start = 0;
    this.posteriorSum = 0;
    this.runPhone = -1;
  }

  push(logProbs, count) {
    const done = [];
    for (let t = 0; t < count; t++) {
      this._step(logProbs.subarray(t * this.P, (t + 1) * this.P));
      const pending = this.frame - this.final;
      if (pending > this.config.lookaheadFrames) {
        done.push(...this._finalise([Math.floor(this._commit(pending) / this.D)]));
      }
    }
    return done;
  }

  finish() {
    const done = this.frame > this.final ? this._finalise(this._trace(this.frame - this.final)) : [];
    if (this.phone >= 0 && this.final > this.start) {
      done.push({ startFrame: this.start, endFrame: this.final, phone: this.phone,
        confidence: this.posteriorSum / (this.final - this.start) });
    }
    this.phone = -1;
    return done;
  }

  _step(row) {
    const P = this.P, D = this.D, back = new Int32Array(P * D), next = new Float64Array(P * D);
    if (this.scores === null) {
      next.fill(-Infinity);
      for (let p = 0; p < P; p++) next[p * D] = this.initial[p];
      next[this.silence * D + D - 1] = 0;
      back.fill(-1);
    } else {
      const old = this.scores;
      for (let to = 0; to < P; to++) { // entering a phone: the best predecessor's last duration state
        let source = 0, best = old[D - 1] + this.transitions[to]; // ties go to the first, as numpy's argmax
        for (let from = 1; from < P; from++) {
          const score = old[from * D + D - 1] + this.transitions[from * P + to];
          if (score > best) {
            best = score;
            source = from;
          }
        }
        next[to * D] = best;
        back[to * D] = source * D + D - 1;
      }
      for (let p = 0; p < P; p++) {
        if (D > 1) {
          for (let d = 1; d < D; d++) {
            next[p * D + d] = old[p * D + d - 1];
            back[p * D + d] = p * D + d - 1;
          }
          const stay = old[p * D + D - 1] >= old[p * D + D - 2];
          next[p * D + D - 1] = stay ? old[p * D + D - 1] : old[p * D + D - 2];
          back[p * D + D - 1] = stay ? p * D + D - 1 : p * D + D - 2;
        } else {
          const stay = old[p] >= next[p];
          if (stay) {
            next[p] = old[p];
            back[p] = p;
          }
        }
      }
    }
    let top = -Infinity;
    for (let i = 0; i < P * D; i++) {
      next[i] += row[Math.floor(i / D)];
      if (next[i] > top) top = next[i];
    }
    let arg = 0;
    for (let i = 0; i < P * D; i++) {
      next[i] -= top;
      if (next[i] > next[arg]) arg = i;
    }
    this.scores = next;
    this.back.push(back);
    const posteriors = new Float64Array(P);
    for (let p = 0; p < P; p++) posteriors[p] = Math.exp(row[p]);
    this.rows.push(posteriors);
    const keep = this.config.lookaheadFrames + 1;
    if (this.back.length > keep) this.back.shift();
    if (this.rows.length > keep) this.rows.shift();
    this.frame++;
    this.runPhone = Math.floor(arg / D);
  }

  _argmax(values) {
    let arg = 0;
    for (let i = 1; i < values.length; i++) if (values[i] > values[arg]) arg = i;
    return arg;
  }

  _trace(count) {
    let state = this._argmax(this.scores);
    const phones = [];
    for (let k = this.back.length - 1; k >= this.back.length - count; k--) {
      phones.push(Math.floor(state / this.D));
      state = this.back[k][state];
    }
    return phones.reverse();
  }

  _commit(count) {
    // the best path's state at the oldest pending frame (count frames back), which becomes final; every path
    // that leaves it is dropped, so the final labels are one path of the loop (decoder.py's _commit)
    const states = new Int32Array(this.P * this.D);
    for (let i = 0; i < states.length; i++) {
      let state = i;
      for (let k = this.back.length - 1; k > this.back.length - count; k--) state = this.back[k][state];
      states[i] = state;
    }
    const kept = states[this._argmax(this.scores)];
    for (let i = 0; i < states.length; i++) if (states[i] !== kept) this.scores[i] = -Infinity;
    return kept;
  }

  _finalise(phones) {
    const done = [];
    const rows = this.rows.slice(this.rows.length - (this.frame - this.final));
    for (let i = 0; i < phones.length && i < rows.length; i++) {
      const phone = phones[i];
      if (phone !== this.phone) {
        if (this.phone >= 0) {
          done.push({ startFrame: this.start, endFrame: this.final, phone: this.phone,
            confidence: this.posteriorSum / (this.final - this.start) });
        }
        this.phone = phone;
        this.start = this.final;
        this.posteriorSum = 0;
      }
      this.posteriorSum += rows[i][phone];
      this.final++;
    }
    return done;
  }
}

export const DECODERS = ["bigram", "hysteresis"];

export function newSegmenter(kind, phones, bigram = null, options = {}) {
  if (kind === "hysteresis") return new HysteresisSegmenter(phones.length, options.minFrames ?? DEFAULT_MIN_FRAMES);
  if (kind !== "bigram") throw new Error(`decoder must be one of ${DECODERS.join(", ")}, not ${kind}`);
  if (!bigram) throw new Error("the bigram decoder needs the phone bigram (phone-bigram.json)");
  const config = options.minFrames ? { ...options, minFrames: options.minFrames } : options;
  return new PhoneDecoder(bigramForPhones(bigram, phones), phones.length, config, phones.indexOf("sil"));
}

// What `speechattn transcribe --format json` prints for each segment: times in seconds (3 decimals, the end
// clipped to the audio's duration), the phone's name, the confidence to 4 decimals.
export function segmentDicts(segments, phones, durationSeconds, framesPerSecond = 100) {
  const round = (x, digits) => Number(x.toFixed(digits));
  const out = [];
  for (const s of segments) {
    const start = s.startFrame / framesPerSecond, end = Math.min(s.endFrame / framesPerSecond, durationSeconds);
    if (round(end, 3) > round(start, 3)) {
      out.push({ start: round(start, 3), end: round(end, 3), phone: phones[s.phone], confidence: round(s.confidence, 4) });
    }
  }
  return out;
}
