// WAV bytes -> {samples: mono Float32Array in [-1, 1] (channels averaged in float32), rate, channels}.
// Shared by the Node.js transcriber and the browser page so both read a file's samples exactly alike.
export function readWav(bytes) {
  bytes = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a WAV file (RIFF/WAVE header missing)");
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
  if (!format || !data) throw new Error(`WAV file without ${format ? "a data" : "a fmt"} chunk`);
  const { code, channels, rate, bits } = format;
  const width = bits / 8;
  const read = {
    "1:16": (at) => view.getInt16(at, true) / 32768,
    "1:24": (at) => (view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getInt8(at + 2) << 16)) / 8388608,
    "1:32": (at) => view.getInt32(at, true) / 2147483648,
    "1:8": (at) => (view.getUint8(at) - 128) / 128,
    "3:32": (at) => view.getFloat32(at, true),
    "3:64": (at) => view.getFloat64(at, true),
  }[`${code}:${bits}`];
  if (!read) throw new Error(`WAV encoding ${code}/${bits} bits is not read here (PCM 8/16/24/32-bit or float 32/64 are)`);
  if (!channels) throw new Error("WAV file with 0 channels");
  if (!rate) throw new Error("WAV file with a sample rate of 0");
  const frames = Math.floor((data.end - data.start) / (width * channels));
  const samples = new Float32Array(frames);
  let nonfinite = 0, first = -1;
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum = Math.fround(sum + read(data.start + (i * channels + c) * width));
    if (!Number.isFinite(sum)) {
      nonfinite++;
      if (first < 0) first = i;
    }
    samples[i] = Math.fround(sum / channels);
  }
  if (nonfinite) { // as Python refuses such a file: NaN or infinite samples are corruption, not silence
    throw new Error(`${nonfinite} samples are NaN or infinite, the first at ${(first / rate).toFixed(3)} s; the file is corrupt`);
  }
  return { samples, rate, channels };
}
