// The page: the model, the microphone (AudioWorklet -> resampler -> 80 ms pushes), a dropped file, the display.
// Everything about the model comes from its metadata (export/js/speechattn.mjs reads it from the file).
import * as ort from "./node_modules/onnxruntime-web/dist/ort.wasm.min.mjs";
import { StreamingModel, newSegmenter, segmentDicts } from "../js/speechattn.mjs";
import { checkVectors } from "../js/vectors.mjs";
import { readWav } from "../js/wav.mjs";
import { Resampler } from "../js/resample.mjs";
import { CueMaker, VISEME_SETS, frameWeights } from "../js/visemes.mjs";
import { Follower, wordEvent } from "../js/align.mjs";
import { Lexicon, sentenceStarts } from "../js/words.mjs";

const params = new URLSearchParams(location.search);
ort.env.wasm.wasmPaths = new URL("./node_modules/onnxruntime-web/dist/", import.meta.url).href;
// ?threads=N: threaded WebAssembly, possible where the page is cross-origin isolated (`speechattn web` serves it so)
const threads = params.get("threads") ?? "1", threadsValid = /^[1-9][0-9]{0,2}$/.test(threads);
ort.env.wasm.numThreads = crossOriginIsolated && threadsValid ? Number(threads) : 1;

const modelsUrl = new URL(params.get("models") ?? "../models/", location.href);
// ?server=ws://HOST:PORT/stream: the audio goes to a `speechattn serve` and the page shows its updates; the model
// does not run here (docs/server.md, the protocol; ?server=...?token=T where the server asks for a token)
const serverUrl = params.get("server");
const $ = (id) => document.getElementById(id);
const page = {
  status: "loading", error: null, model: null, bigram: null, run: null,
  mouth: { shape: "X", changes: 0, seen: {} }, // lip sync: the shape shown, how often it changed, frames per shape
  // for tests and for apps that embed the page
  transcribeBytes, runVectors, startMicrophone, stop,
  server: null, // with ?server=: the server's ready message (model, phones, chunk frames, mouth shapes)
};
window.speechattn = page;

function say(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
  if (error) {
    page.status = "error";
    page.error = text;
  }
}

// The model menu comes from the bundled models' table (export/models/models.json), shared with the CLI and Node.
async function fillModelMenu() {
  const response = await fetch(new URL("models.json", modelsUrl));
  if (!response.ok) throw new Error(`models.json: HTTP ${response.status} (the models' table beside the models)`);
  const registry = await response.json();
  for (const entry of Object.values(registry.models)) {
    if (entry.live !== false) $("model").add(new Option(entry.label, entry.file)); // a model for files is not offered here
  }
  $("model").value = registry.models[registry.default].file;
  page.bigramFile = registry.bigram;
}

async function loadModel() {
  const name = params.get("model") ?? $("model").value;
  $("model").value = name;
  say(`loading ${name} ...`);
  const response = await fetch(new URL(name, modelsUrl));
  if (!response.ok) {
    const named = params.has("model") ? `?model=${name}` : name;
    throw new Error(`${named}: ${response.status === 404 ? "no such model (HTTP 404)" : `HTTP ${response.status}`}`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  page.model = await StreamingModel.create(ort, bytes, { executionProviders: ["wasm"] });
  page.bigram = await (await fetch(new URL(page.bigramFile ?? "phone-bigram.json", modelsUrl))).json();
  const m = page.model;
  page.threads = ort.env.wasm.numThreads;
  say(`${name}: ${m.phones.length} phones, ${m.metadata.quantization === "none" ? "fp32" : m.metadata.quantization}, ` +
    `chunks of ${m.defaultChunkFrames * m.frameShiftMs} ms, ${(bytes.length / 1e6).toFixed(1)} MB`);
  page.status = "ready";
  $("start").disabled = false;
}

// The follow-along box: the pasted text's words (the kit's lexicon: CMUdict and the g2p model, loaded when first
// needed), the kit's Follower on the run's frames, and the text with each word marked read, being read or skipped.
async function loadLexicon() {
  if (!page.lexicon) {
    const [dictionary, g2p] = await Promise.all([fetch(new URL("../lexicon/cmudict.txt.gz", location.href)),
      fetch(new URL("g2p.onnx", modelsUrl))]);
    if (!dictionary.ok || !g2p.ok) throw new Error(`the lexicon: HTTP ${dictionary.ok ? g2p.status : dictionary.status}`);
    page.lexicon = await Lexicon.load({ ort, dictionaryBytes: await dictionary.arrayBuffer(),
      g2pBytes: new Uint8Array(await g2p.arrayBuffer()) });
  }
  return page.lexicon;
}

async function newFollow() { // a Follow of the box's text, or null when it is empty
  const text = $("script").value;
  if (!text.trim()) return null;
  say("loading the lexicon ...");
  const words = await (await loadLexicon()).words(text);
  if (!words.length) throw new Error("nothing to follow: the text has no word the lexicon can pronounce");
  return new Follow(text, words);
}

class Follow {
  constructor(text, words) {
    this.words = words;
    this.follower = new Follower(words, page.model.phones, { sentenceStarts: sentenceStarts(text, words) });
    this.events = []; // the words made final, as `speechattn mic --script` prints them
    this.delays = []; // ms of audio the page had pushed past each word's end when it became final
    const box = $("text");
    box.textContent = "";
    this.spans = []; // per word, its written token's span (the spoken words of "$5" share one)
    let at = 0;
    for (const w of words) {
      if (w.startChar >= at) {
        box.append(text.slice(at, w.startChar));
        const span = document.createElement("span");
        span.textContent = text.slice(w.startChar, w.endChar);
        box.append(span);
        at = w.endChar;
      }
      this.spans.push(box.lastChild);
    }
    box.append(text.slice(at));
  }

  push(frames, final, pushedMs) {
    const f = this.follower, made = f.push(frames.logProbs, frames.count);
    if (final) made.push(...f.finish());
    const notHeard = final ? f.alignment.notHeard : f.notHeard();
    for (const w of made) {
      this.events.push(wordEvent(w, notHeard));
      if (!final) this.delays.push(pushedMs - w.endFrame * page.model.frameShiftMs);
    }
    this.show(new Set(notHeard), final);
  }

  show(notHeard, final) {
    const { index, inside } = this.follower.position, rank = ["", "skipped", "read", "current"], marks = new Map();
    this.words.forEach((w, i) => {
      const mark = inside && i === index && !final ? 3 : this.follower.heard.has(i) ? 2 : notHeard.has(i) ? 1 : 0;
      marks.set(this.spans[i], Math.max(marks.get(this.spans[i]) ?? 0, mark));
    });
    for (const [span, mark] of marks) span.className = rank[mark];
    $("readcount").textContent = `${this.follower.heard.size} of ${this.words.length} words`;
    const recent = this.delays.slice(-20).sort((a, b) => a - b);
    if (recent.length) $("wordlatency").textContent = `${recent[Math.floor(recent.length / 2)].toFixed(0)} ms (p50)`;
  }

  // the mouth follows the aligned phone at the newest frame (null in speech that is not in the text)
  get shape() {
    const phone = this.follower.phone;
    if (phone === null) return null;
    return Object.entries(VISEME_SETS.rhubarb.covers).find(([, phones]) => phones.includes(phone))[0];
  }
}

// One run over one audio source: stream, segmenter, display; with a Follow, the text followed too.
class Run {
  constructor(display = true, follow = null) {
    const m = page.model;
    this.follow = follow;
    this.stream = m.newStream();
    this.segmenter = newSegmenter($("decoder").value, m.phones, page.bigram);
    this.segments = [];
    this.samples = 0;
    this.compute = 0;
    this.latencies = [];
    this.display = display;
    this.captured = [];
    this.cueMaker = new CueMaker("rhubarb", m.phones); // final mouth cues, as `speechattn transcribe --format rhubarb-json`
    this.cues = [];
    if (display) {
      $("final").textContent = "";
      $("provisional").textContent = "";
    }
  }

  async push(samples, final = false) {
    const start = performance.now();
    const frames = final ? await this.stream.finish() : await this.stream.push(samples);
    const elapsed = performance.now() - start;
    this.compute += elapsed;
    this.samples += samples.length;
    if (!final) this.latencies.push(elapsed);
    const done = this.segmenter.push(frames.logProbs, frames.count);
    if (final) done.push(...this.segmenter.finish());
    this.segments.push(...done);
    this.cues.push(...this.cueMaker.push(done), ...(final ? this.cueMaker.finish() : []));
    if (this.follow) this.follow.push(frames, final, this.samples / page.model.sampleRate * 1000);
    if (this.display) this.show(frames, done, final);
    return frames;
  }

  show(frames, done, final) {
    const m = page.model;
    const words = done.map((s) => m.phones[s.phone]).filter((p) => p !== "sil");
    if (words.length) $("final").textContent += (($("final").textContent ? " " : "") + words.join(" "));
    const provisional = final ? -1 : this.segmenter.runPhone;
    $("provisional").textContent = provisional >= 0 && m.phones[provisional] !== "sil" ? m.phones[provisional] : "";
    drawColumns(frames.logProbs, frames.count, m.phones.length);
    if (frames.count) showMouth(frames, this.follow?.shape);
    const recent = this.latencies.slice(-50).sort((a, b) => a - b);
    if (recent.length) {
      const p50 = recent[Math.floor(recent.length / 2)];
      $("latency").textContent = `${p50.toFixed(2)} ms (p50)`;
      // the audio waits for the page's 80 ms push (or the model's chunk, if longer), then the output delay
      const algorithmic = (Math.max(8, m.defaultChunkFrames) + m.outputDelayFrames) * m.frameShiftMs;
      $("mouthlatency").textContent = `${algorithmic} ms + ${p50.toFixed(1)} ms`;
    }
    const seconds = this.samples / m.sampleRate;
    if (seconds > 0) $("rtf").textContent = (this.compute / 1000 / seconds).toFixed(4);
    $("seconds").textContent = `${seconds.toFixed(1)} s`;
  }

  labels() {
    const out = [];
    for (const s of this.segments) for (let f = s.startFrame; f < s.endFrame; f++) out[f] = page.model.phones[s.phone];
    return out;
  }
}

// A run whose model is on a `speechattn serve` (?server=): push / finish as Run, the audio sent as float32 binary
// frames at `rate`, the server's updates shown as Run shows its own (final and provisional phones, the mouth from
// the server's Rhubarb weights; no posteriorgram: the server sends no log-probabilities).
class RemoteRun {
  static async open(rate, display = true) {
    const run = new RemoteRun(rate, display);
    await run.opened;
    return run;
  }

  constructor(rate, display) {
    this.rate = rate;
    this.display = display;
    this.segments = []; // the server's segments, as `speechattn transcribe --format json` writes them
    this.cues = [];
    this.samples = 0;
    this.captured = [];
    this.result = null;
    if (display) {
      $("final").textContent = "";
      $("provisional").textContent = "";
      $("latency").textContent = "on the server";
    }
    const ws = new WebSocket(serverUrl);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.opened = new Promise((resolve, reject) => { this.onReady = resolve; this.onRefused = reject; });
    this.ended = new Promise((resolve, reject) => { this.onResult = resolve; this.onLost = reject; });
    this.ended.catch(() => {}); // reported by finish(), or on the page while streaming
    ws.onopen = () => ws.send(JSON.stringify({ type: "start", sample_rate: rate, format: "float32", options: {
      decoder: $("decoder").value, visemes: "rhubarb", weights: true, provisional: true } }));
    ws.onmessage = (event) => this.receive(JSON.parse(event.data));
    ws.onclose = (event) => this.closed(event);
  }

  receive(message) {
    if (message.type === "ready") {
      this.ready = message;
      this.onReady(message);
    } else if (message.type === "error") {
      this.error = `the server refused: ${message.message} (code ${message.code})`;
    } else if (message.type === "update") {
      this.segments.push(...(message.segments ?? []));
      this.cues.push(...(message.cues ?? []));
      if (this.display) this.show(message);
    } else if (message.type === "result") {
      this.result = message;
      this.segments = message.segments;
      this.cues = message.cues ?? this.cues;
    }
  }

  closed(event) {
    const why = this.error ?? (event.code === 1006 ? `${serverUrl}: no speechattn server answered (nothing listens ` +
      "there, or it refused the connection: a wrong or missing ?token=)"
      : `the server closed the stream: ${event.reason || "no reason given"} (code ${event.code})`);
    if (!this.ready) this.onRefused(new Error(why));
    else if (this.result && event.code === 1000) this.onResult(this.result);
    else { // a server shutting down (1001) sends the result of what it heard first: shown, but not the whole run
      this.onLost(new Error(why));
      if (this.display) say(why, true);
    }
  }

  async push(samples, final = false) {
    if (final) return this.finish();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(samples.slice()); // a copy: the view may be of a larger buffer
    this.samples += samples.length;
  }

  async finish() {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: "end" }));
    const result = await this.ended;
    if (this.display) $("provisional").textContent = "";
    return result;
  }

  show(update) {
    const words = (update.segments ?? []).map((s) => s.phone).filter((p) => p !== "sil");
    if (words.length) $("final").textContent += (($("final").textContent ? " " : "") + words.join(" "));
    const open = update.provisional?.open;
    $("provisional").textContent = open && open !== "sil" ? open : "";
    if (update.weights?.length) showShape(update.weights.reduce((sum, row) => sum.map((v, k) => v + row[k])),
      this.ready.shapes, update.weights.length);
    $("seconds").textContent = `${(this.samples / this.rate).toFixed(1)} s`;
  }

  labels() {
    const out = [], framesPerSecond = 1000 / this.ready.frame_shift_ms;
    for (const s of this.segments) {
      for (let f = Math.round(s.start * framesPerSecond); f < Math.round(s.end * framesPerSecond); f++) out[f] = s.phone;
    }
    return out;
  }
}

// The run for a source at `rate`: here, or on the server with ?server=
async function newRun(rate, display = true) {
  if (serverUrl) {
    if ($("script").value.trim()) throw new Error("following a text runs in the page only: clear the text box, or open the page without ?server=");
    return RemoteRun.open(rate, display);
  }
  return new Run(display, await newFollow());
}

const modelRate = () => page.model?.sampleRate ?? page.server.model_sample_rate;

// The mouth: the Rhubarb shape with the most posterior mass over this push's frames (80 ms: smooth enough to
// look at, with no hold beyond the push), or, following a text, the shape of the aligned phone (`aligned`).
function showMouth(frames, aligned = null) {
  const shapes = VISEME_SETS.rhubarb.shapes, S = shapes.length;
  const weights = frameWeights(frames.logProbs, frames.count, "rhubarb", page.model.phones);
  const total = new Float64Array(S);
  for (let t = 0; t < frames.count; t++) for (let k = 0; k < S; k++) total[k] += weights[t * S + k];
  showShape(total, shapes, frames.count, aligned);
}

// `total`: each shape's weight summed over `count` frames; the heaviest is shown (or `aligned`, following a text)
function showShape(total, shapes, count, aligned = null) {
  let best = 0;
  for (let k = 1; k < shapes.length; k++) if (total[k] > total[best]) best = k;
  const shape = aligned ?? shapes[best], mouth = page.mouth;
  mouth.seen[shape] = (mouth.seen[shape] ?? 0) + count;
  if (shape !== mouth.shape) {
    mouth.changes++;
    mouth.shape = shape;
    $("mouth").dataset.shape = shape;
    $("shape").textContent = shape;
  }
}

function drawColumns(logProbs, count, classes) {
  const canvas = $("gram"), g = canvas.getContext("2d");
  const width = 2, rowHeight = canvas.height / classes;
  for (let t = 0; t < count; t++) {
    g.drawImage(canvas, -width, 0);
    for (let p = 0; p < classes; p++) {
      const v = Math.exp(logProbs[t * classes + p]);
      const shade = Math.round(255 * Math.sqrt(v));
      g.fillStyle = `rgb(${shade}, ${Math.round(shade * 0.8)}, ${Math.round(40 + 180 * (1 - v) * v)})`;
      g.fillRect(canvas.width - width, p * rowHeight, width, Math.ceil(rowHeight));
    }
  }
}

// The same samples in as `speechattn transcribe` and the Node.js client: 16 kHz WAV, 80 ms pushes.
async function transcribeBytes(bytes, display = true) {
  const { samples, rate } = readWav(new Uint8Array(bytes));
  if (serverUrl) { // the server reads any rate exactly as `speechattn transcribe` does (its resampler)
    const run = await RemoteRun.open(rate, display);
    for (let at = 0; at < samples.length; at += 1280) await run.push(samples.subarray(at, at + 1280));
    await run.finish();
    page.lastRun = run;
    return run.segments;
  }
  const m = page.model;
  if (rate !== m.sampleRate) throw new Error(`the file is ${rate} Hz; transcribeBytes takes ${m.sampleRate} Hz WAV`);
  const run = new Run(display, await newFollow());
  const push = 8 * m.hopSamples;
  for (let at = 0; at < samples.length; at += push) await run.push(samples.subarray(at, at + push));
  await run.push(new Float32Array(0), true);
  page.lastRun = run; // its compute time and cues, for bench/browser_speed.py and apps
  return segmentDicts(run.segments, m.phones, samples.length / m.sampleRate, 1000 / m.frameShiftMs);
}

async function transcribeDropped(file) {
  const bytes = await file.arrayBuffer();
  let exact = false;
  try {
    exact = serverUrl !== null || readWav(new Uint8Array(bytes)).rate === page.model.sampleRate;
  } catch { /* not a WAV file: the browser decodes it */ }
  if (exact) {
    page.dropped = await transcribeBytes(bytes);
    say(`${file.name}: ${page.dropped.length} segments (${serverUrl ? "WAV, read exactly by the server" : "16 kHz WAV, read exactly"})`);
    return;
  }
  const decoded = await new AudioContext().decodeAudioData(bytes.slice(0));
  const offline = new OfflineAudioContext(1, Math.ceil(decoded.duration * modelRate()), modelRate());
  const source = offline.createBufferSource();
  source.buffer = decoded;
  source.connect(offline.destination);
  source.start();
  const samples = (await offline.startRendering()).getChannelData(0);
  const run = await newRun(modelRate());
  for (let at = 0; at < samples.length; at += 1280) await run.push(samples.subarray(at, at + 1280));
  await run.push(new Float32Array(0), true);
  page.dropped = serverUrl ? run.segments : segmentDicts(run.segments, page.model.phones, samples.length / page.model.sampleRate,
    1000 / page.model.frameShiftMs);
  say(`${file.name}: ${run.segments.length} segments (decoded and resampled to 16 kHz by the browser)`);
}

async function startMicrophone() {
  const run = await newRun(modelRate()); // before the microphone opens: the lexicon or the server may take a moment
  const media = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  }).catch((error) => {
    run.ws?.close(); // with a server: its stream, not left open until its idle timeout
    throw error;
  });
  const context = new AudioContext();
  await context.audioWorklet.addModule(new URL("../js/capture-worklet.mjs", import.meta.url));
  const source = context.createMediaStreamSource(media);
  const node = new AudioWorkletNode(context, "speechattn-capture");
  const resampler = new Resampler(context.sampleRate, modelRate());
  const push = 8 * (page.model?.hopSamples ?? page.server.frame_shift_ms * modelRate() / 1000); // 80 ms
  let pending = new Float32Array(0), queue = Promise.resolve();
  node.port.onmessage = (event) => {
    const converted = resampler.process(event.data.samples);
    if (params.has("keep-audio")) run.captured.push(converted);
    const joined = new Float32Array(pending.length + converted.length);
    joined.set(pending);
    joined.set(converted, pending.length);
    let at = 0;
    for (; at + push <= joined.length; at += push) {
      const piece = joined.slice(at, at + push);
      queue = queue.then(() => run.push(piece)).catch((error) => say(`streaming failed: ${error.message}`, true));
    }
    pending = joined.slice(at);
  };
  source.connect(node);
  page.run = run;
  page.microphone = { media, context, node, source, flush: () => queue };
  page.status = "listening";
  $("rate").textContent = `${context.sampleRate} Hz -> ${modelRate()} Hz${serverUrl ? " (to the server)" : ""}`;
  $("start").disabled = true;
  $("stop").disabled = false;
  say("listening: speak (phones appear as you talk)");
}

async function stop() {
  const mic = page.microphone;
  if (!mic) return;
  mic.node.port.onmessage = null;
  mic.source.disconnect();
  mic.media.getTracks().forEach((track) => track.stop());
  await mic.context.close();
  await mic.flush();
  try {
    await page.run.push(new Float32Array(0), true); // with a server gone, rejects: the page says why
  } finally {
    page.microphone = null;
    $("start").disabled = false;
    $("stop").disabled = true;
  }
  page.status = "stopped";
  say("stopped");
}

async function runVectors() {
  const vectors = await (await fetch(new URL("../tests/segmenter-vectors.json", location.href))).json();
  return checkVectors(vectors, page.bigram);
}

if (params.has("script")) $("script").value = params.get("script"); // for tests and links
$("start").onclick = () => startMicrophone().catch((error) => say(`microphone: ${error.message}`, true));
$("stop").onclick = () => stop().catch((error) => say(error.message, true));
$("model").onchange = () => {
  params.set("model", $("model").value);
  loadModel().catch((error) => say(error.message, true));
};
const drop = $("drop");
drop.ondragover = (event) => {
  event.preventDefault();
  drop.className = "over";
};
drop.ondragleave = () => (drop.className = "");
drop.ondrop = (event) => {
  event.preventDefault();
  drop.className = "";
  const file = event.dataTransfer.files[0];
  if (file) {
    page.dropped = null;
    transcribeDropped(file).catch((error) => say(`${file.name}: ${error.message}`, true));
  }
};

// With ?server=: one stream opened and ended at once says whether the server is there and what it runs
async function connectServer() {
  $("server").value = serverUrl;
  $("model").disabled = true;
  let url;
  try {
    url = new URL(serverUrl);
  } catch {
    throw new Error(`?server=${serverUrl}: not a URL (give ws://HOST:PORT/stream)`);
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new Error(`?server=${serverUrl}: not a WebSocket URL (give ws://HOST:PORT/stream, or wss:// behind TLS)`);
  }
  say(`connecting to ${serverUrl} ...`);
  const probe = await RemoteRun.open(16000, false);
  await probe.finish();
  page.server = probe.ready;
  const chunkMs = probe.ready.chunk_frames * probe.ready.frame_shift_ms;
  say(`${probe.ready.model.name ?? "the model"} on ${serverUrl}: ${probe.ready.phones.length} phones, chunks of ` +
    `${chunkMs} ms (the model runs on the server)`);
  page.status = "ready";
  $("start").disabled = false;
}

$("server").onchange = () => { // a server typed in the settings: the page again, with or without ?server=
  const typed = $("server").value.trim();
  if (typed) params.set("server", typed);
  else params.delete("server");
  location.search = params.toString();
};

if (!threadsValid) say(`?threads=${threads}: must be a whole number from 1 to 999`, true); // not NaN threads
else if (serverUrl !== null) {
  connectServer()
    .then(() => (params.has("autostart") ? startMicrophone() : null))
    .catch((error) => say(error.message, true));
} else {
  fillModelMenu()
    .then(loadModel)
    .then(() => (params.has("autostart") ? startMicrophone() : null))
    .catch((error) => say(error.message, true));
}
