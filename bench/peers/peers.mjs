// Runs a real-time lip-sync tool's own AudioWorklet over one utterance in an OfflineAudioContext and returns what
// its worklet posted, with the tool's own timestamps.  Driven by bench/lipsync_peers.py through headless Chromium.
import { HeadAudio } from "./node_modules/@met4citizen/headaudio/dist/headaudio.min.mjs";
import { createWLipSyncNode, parseBinaryProfile } from "./node_modules/wlipsync/dist/wlipsync-single.js";

const SAMPLE_RATE = 16000;  // the dev sets' rate: both tools analyse 16 kHz, so neither resamples
const READY_WAIT_MS = 50;  // rendering is held at 0 while the worklet instantiates its WASM / takes its model

let wlipsyncProfile = null;  // set by window.setWLipSyncProfile (the file lives outside this folder: data/peers/)

function decode(base64) {  // int16 little-endian -> float32 in [-1, 1)
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const pcm = new Int16Array(bytes.buffer);
  const samples = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 32768;
  return samples;
}

async function settle(messages) {  // worklet messages arrive after rendering resolves: wait until none come
  let count = -1;
  while (count !== messages.length) {
    count = messages.length;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

async function makeNode(tool, context, messages) {
  if (tool === "headaudio") {
    await context.audioWorklet.addModule("./node_modules/@met4citizen/headaudio/dist/headworklet.min.mjs");
    const node = new HeadAudio(context, { processorOptions: {}, parameterData: {} });  // the README's defaults
    await node.loadModel("./node_modules/@met4citizen/headaudio/dist/model-en-mixed.bin");
    node.port.onmessage = (m) => {
      const d = m.data;
      if (d.event === "viseme") messages.push({ t: d.t, d: d.d, viseme: node.visemeNames[d.viseme] });
      else if (d.event === "ended" || d.event === "started") messages.push({ t: d.t, event: d.event });
    };
    return node;
  }
  if (tool === "wlipsync") {
    if (!wlipsyncProfile) throw new Error("no wLipSync profile given (bench/peers/README.md)");
    const node = await createWLipSyncNode(context, wlipsyncProfile);
    const seen = node.onMessage.bind(node);  // keep the node's own smoothing running, and record each block
    node.port.onmessage = (m) => {
      seen(m);
      const level = Math.log10(Number.isNaN(m.data.volume) ? 0 : m.data.volume);
      const volume = Math.max(0, Math.min(1, (level - node.minVolume) / (node.maxVolume - node.minVolume)));
      messages.push({ t: m.data.timestamp, name: m.data.name, volume });
    };
    return node;
  }
  if (tool === "none") return null;  // the same graph without a tool: what the rest of the run costs
  throw new Error(`unknown tool ${tool}`);
}

window.runPeer = async (tool, base64) => {
  const samples = decode(base64);
  const context = new OfflineAudioContext(1, samples.length, SAMPLE_RATE);
  const buffer = context.createBuffer(1, samples.length, SAMPLE_RATE);
  buffer.copyToChannel(samples, 0);
  const source = new AudioBufferSourceNode(context, { buffer });
  const messages = [];
  const node = await makeNode(tool, context, messages);
  source.connect(node || context.destination);
  source.start(0);
  context.suspend(0).then(async () => {
    await new Promise((resolve) => setTimeout(resolve, READY_WAIT_MS));
    context.resume();
  });
  const started = performance.now();
  await context.startRendering();
  const renderMs = performance.now() - started - READY_WAIT_MS;
  await settle(messages);
  return { messages, renderMs, blockSize: tool === "wlipsync" ? node.blockSize : null };
};
window.setWLipSyncProfile = (base64) => {
  wlipsyncProfile = parseBinaryProfile(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)).buffer);
  return wlipsyncProfile.mfccs.map((m) => m.name);
};
window.peersReady = true;
