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
const $ = (id) => document.getElementById(id);
const page = {
  status: "loading", error: null, model: null, bigram: null, run: null,
  mouth: { shape: "X", changes: 0, seen: {} }, // lip sync: the shape shown, how often it changed, frames per shape
  // for tests and for apps that embed the page
  transcribeBytes, runVectors, startMicrophone, stop,
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
  for (const entry of Object.values(registry.models)) $("model").add(new Option(entry.label, entry.file));
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

// The mouth: the Rhubarb shape with the most posterior mass over this push's frames (80 ms: smooth enough to
// look at, with no hold beyond the push), or, following a text, the shape of the aligned phone (`aligned`).
function showMouth(frames, aligned = null) {
  const shapes = VISEME_SETS.rhubarb.shapes, S = shapes.length;
  const weights = frameWeights(frames.logProbs, frames.count, "rhubarb", page.model.phones);
  const total = new Float64Array(S);
  for (let t = 0; t < frames.count; t++) for (let k = 0; k < S; k++) total[k] += weights[t * S + k];
  let best = 0;
  for (let k = 1; k < S; k++) if (total[k] > total[best]) best = k;
  const shape = aligned ?? shapes[best], mouth = page.mouth;
  mouth.seen[shape] = (mouth.seen[shape] ?? 0) + frames.count;
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
    exact = readWav(new Uint8Array(bytes)).rate === page.model.sampleRate;
  } catch { /* not a WAV file: the browser decodes it */ }
  if (exact) {
    page.dropped = await transcribeBytes(bytes);
    say(`${file.name}: ${page.dropped.length} segments (16 kHz WAV, read exactly)`);
    return;
  }
  const decoded = await new AudioContext().decodeAudioData(bytes.slice(0));
  const offline = new OfflineAudioContext(1, Math.ceil(decoded.duration * page.model.sampleRate), page.model.sampleRate);
  const source = offline.createBufferSource();
  source.buffer = decoded;
  source.connect(offline.destination);
  source.start();
  const samples = (await offline.startRendering()).getChannelData(0);
  const run = new Run(true, await newFollow());
  for (let at = 0; at < samples.length; at += 1280) await run.push(samples.subarray(at, at + 1280));
  await run.push(new Float32Array(0), true);
  page.dropped = segmentDicts(run.segments, page.model.phones, samples.length / page.model.sampleRate,
    1000 / page.model.frameShiftMs);
  say(`${file.name}: ${run.segments.length} segments (decoded and resampled to 16 kHz by the browser)`);
}

async function startMicrophone() {
  const follow = await newFollow(); // before the microphone opens: the lexicon may take a moment to load
  const media = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext();
  await context.audioWorklet.addModule(new URL("../js/capture-worklet.mjs", import.meta.url));
  const source = context.createMediaStreamSource(media);
  const node = new AudioWorkletNode(context, "speechattn-capture");
  const resampler = new Resampler(context.sampleRate, page.model.sampleRate);
  const run = new Run(true, follow);
  const push = 8 * page.model.hopSamples;
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
  $("rate").textContent = `${context.sampleRate} Hz -> ${page.model.sampleRate} Hz`;
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
  await page.run.push(new Float32Array(0), true);
  page.microphone = null;
  page.status = "stopped";
  $("start").disabled = false;
  $("stop").disabled = true;
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

if (!threadsValid) say(`?threads=${threads}: must be a whole number from 1 to 999`, true); // not NaN threads
else {
  fillModelMenu()
    .then(loadModel)
    .then(() => (params.has("autostart") ? startMicrophone() : null))
    .catch((error) => say(error.message, true));
}
