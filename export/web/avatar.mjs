// The avatar page: HeadAudio (the drop-in, ../js/headaudio.mjs) driven by the microphone or a recording, its
// onvalue values drawn as a mouth and as bars.  What changes on a TalkingHead page is marked "swap".
// Query parameters: ?visemes=vrm, ?model=default-int8.onnx, ?models=URL/, ?autostart (the microphone at once),
// ?record (keep every update's frame and values, speech start and end events, and the 16 kHz audio the node
// heard, for tests).
import * as ort from "./node_modules/onnxruntime-web/dist/ort.wasm.min.mjs";
import { HeadAudio, CAPTURE_WORKLET_URL, BLENDSHAPE_NAMES } from "../js/headaudio.mjs"; // swap: HeadAudio's import

const params = new URLSearchParams(location.search);
ort.env.wasm.wasmPaths = new URL("./node_modules/onnxruntime-web/dist/", import.meta.url).href;
ort.env.wasm.numThreads = 1;
const modelsUrl = new URL(params.get("models") ?? "../models/", location.href);
const record = params.has("record");
const visemes = params.get("visemes") ?? "oculus";
const $ = (id) => document.getElementById(id);
const page = { status: "loading", error: null, node: null, updates: [], events: [], startMicrophone, playSample, stop };
window.avatar = page;

function say(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
  if (error) Object.assign(page, { status: "error", error: text });
}

// the mouth from the values: how open and how wide each viseme makes it (a 2D sketch of a blendshape rig)
const OPEN = { viseme_aa: 1, viseme_E: 0.55, viseme_I: 0.35, viseme_O: 0.75, viseme_U: 0.45, viseme_RR: 0.3,
  viseme_CH: 0.3, viseme_SS: 0.15, viseme_TH: 0.25, viseme_DD: 0.3, viseme_kk: 0.35, viseme_nn: 0.2, viseme_FF: 0.1,
  aa: 1, ee: 0.55, ih: 0.35, oh: 0.75, ou: 0.45 };
const WIDE = { viseme_E: 0.25, viseme_I: 0.3, viseme_SS: 0.2, viseme_O: -0.2, viseme_U: -0.4, viseme_CH: -0.25,
  viseme_RR: -0.1, ee: 0.25, ih: 0.3, oh: -0.2, ou: -0.4 };
const values = {};

function drawMouth() {
  let open = 0, wide = 1;
  for (const [key, value] of Object.entries(values)) {
    open += (OPEN[key] ?? 0) * value;
    wide += (WIDE[key] ?? 0) * value;
  }
  open = Math.min(1, open);
  const cx = 100, cy = 160, half = 30 * wide, up = 2 + 8 * open, down = 2 + 30 * open;
  const mouth = $("mouth");
  mouth.setAttribute("d", `M${cx - half} ${cy} Q${cx} ${cy - up} ${cx + half} ${cy} Q${cx} ${cy + down} ${cx - half} ${cy} Z`);
  mouth.dataset.open = open.toFixed(3);
  mouth.dataset.width = wide.toFixed(3);
  $("teeth").setAttribute("height", String(Math.max(0, Math.min(6, up - 3))));
  $("teeth").setAttribute("y", String(cy - up / 2));
  for (const [key, value] of Object.entries(values)) {
    const bar = document.getElementById(`bar-${key}`);
    if (bar) bar.style.width = `${(100 * value).toFixed(1)}%`;
  }
}

function makeBars(names) {
  $("bars").textContent = "";
  for (const name of names) {
    const label = document.createElement("span");
    label.textContent = name;
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.innerHTML = `<span id="bar-${name}" style="width: 0"></span>`;
    $("bars").append(label, bar, document.createElement("span"));
  }
}

async function makeNode() {
  const context = new AudioContext();
  await context.audioWorklet.addModule(CAPTURE_WORKLET_URL); // swap: HeadAudio's "./modules/headworklet.mjs"
  const node = new HeadAudio(context, { ort, visemes, keepAudio: record });
  await node.loadModel(new URL(params.get("model") ?? "default.onnx", modelsUrl)); // swap: the model's URL
  let changed = false;
  Object.assign(values, node.values); // the rest shape, sent before onvalue was set
  node.onvalue = (key, value) => {
    values[key] = value;
    changed = true;
  };
  node.onerror = (error) => say(`the model failed: ${error.message}`, true);
  node.onstarted = node.onended = (data) => {
    page.speaking = data.event === "started";
    if (record) page.events.push(data);
  };
  let last = performance.now();
  const animate = (now) => {
    node.update(now - last); // HeadAudio's update(dt), from the render loop
    last = now;
    if (changed) {
      drawMouth();
      if (record) page.updates.push({ frame: node.frame, values: { ...values } });
      changed = false;
    }
    $("frame").textContent = node.frame;
    $("late").textContent = node.lateUpdates;
    if (page.node === node) requestAnimationFrame(animate);
  };
  makeBars(Object.values(node.names).filter((n) => n !== null));
  $("latency").textContent = `${node.latencyMs} ms`;
  page.node = node;
  page.context = context;
  requestAnimationFrame(animate);
  return node;
}

async function startMicrophone() {
  await stop();
  const media = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const node = await makeNode();
  const source = node.context.createMediaStreamSource(media);
  source.connect(node);
  page.media = media;
  page.status = "listening";
  buttons(true);
  say("listening: speak, and the mouth follows");
}

// a recording: to the node at once, to the speakers through a DelayNode of the node's latency (mouth and voice in sync)
async function playSample(name = "this-no-longer-appears-to-be-the-case.wav") {
  await stop();
  const node = await makeNode();
  const bytes = await (await fetch(new URL(`../samples/${name}`, location.href))).arrayBuffer();
  const source = new AudioBufferSourceNode(node.context, { buffer: await node.context.decodeAudioData(bytes) });
  const delay = new DelayNode(node.context, { delayTime: node.latencyMs / 1000, maxDelayTime: 1 });
  source.connect(node);
  source.connect(delay).connect(node.context.destination);
  source.onended = () => say(`played ${name}`);
  source.start();
  page.status = "playing";
  buttons(true);
  say(`playing ${name}, its voice ${node.latencyMs} ms late`);
}

async function stop() {
  const node = page.node;
  if (!node) return;
  page.node = null;
  node.stop();
  page.media?.getTracks().forEach((track) => track.stop());
  page.media = null;
  await page.context.close();
  page.status = "stopped";
  buttons(false);
}

function buttons(running) {
  $("mic").disabled = $("sample").disabled = running;
  $("stop").disabled = !running;
}

$("mic").onclick = () => startMicrophone().catch((error) => say(`microphone: ${error.message}`, true));
$("sample").onclick = () => playSample().catch((error) => say(error.message, true));
$("stop").onclick = () => stop().then(() => say("stopped"), (error) => say(error.message, true));
if (!Object.hasOwn(BLENDSHAPE_NAMES, visemes)) { // its own keys: ?visemes=constructor is no set
  $("mic").disabled = $("sample").disabled = $("stop").disabled = true;
  say(`?visemes=${visemes}: must be one of ${Object.keys(BLENDSHAPE_NAMES).join(", ")}`, true);
} else {
  page.status = "ready";
  buttons(false);
  say("ready");
  if (params.has("autostart")) startMicrophone().catch((error) => say(`microphone: ${error.message}`, true));
}
