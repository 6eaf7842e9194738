// WAV bytes -> {samples: mono Float32Array in [-1, 1] (channels averaged in float32), rate, channels}.
// Shared by the Node.js transcriber and the browser page so both read a file's samples exactly alike; the Node.js
// transcriber reads a file in blocks with readWavHeader and decodeWavFrames, the page whole with readWav.

export const WAV_RATES_HZ = [1000, 768000]; // as speechattn transcribe: a 1 Hz header made 16,000 samples of each one

const DECODERS = {
  "1:16": (view, at) => view.getInt16(at, true) / 32768,
  "1:24": (view, at) => (view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getInt8(at + 2) << 16)) / 8388608,
  "1:32": (view, at) => view.getInt32(at, true) / 2147483648,
  "1:8": (view, at) => (view.getUint8(at) - 128) / 128,
  "3:32": (view, at) => view.getFloat32(at, true),
  "3:64": (view, at) => view.getFloat64(at, true),
};

// The format and where the samples are, from the chunks of a file of `length` bytes; readAt(position, count) gives
// up to `count` bytes there (a Uint8Array), so a file is never read whole for its header.
export function readWavHeader(readAt, length) {
  const head = readAt(0, 12);
  const tag = (bytes, at) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (head.length < 12 || tag(head, 0) !== "RIFF" || tag(head, 8) !== "WAVE") {
    throw new Error("not a WAV file (RIFF/WAVE header missing)");
  }
  let format = null, data = null;
  for (let at = 12; at + 8 <= length;) {
    const chunk = readAt(at, 8);
    if (chunk.length < 8) break;
    const id = tag(chunk, 0), size = new DataView(chunk.buffer, chunk.byteOffset, 8).getUint32(4, true), body = at + 8;
    if (id === "fmt ") {
      const fmt = readAt(body, Math.min(size, 40));
      if (size < 16 || fmt.length < 16) throw new Error("WAV header cut short inside its fmt chunk");
      const view = new DataView(fmt.buffer, fmt.byteOffset, fmt.length);
      let code = view.getUint16(0, true);
      if (code === 0xfffe && fmt.length >= 26) code = view.getUint16(24, true); // WAVE_FORMAT_EXTENSIBLE
      format = { code, channels: view.getUint16(2, true), rate: view.getUint32(4, true), bits: view.getUint16(14, true) };
    } else if (id === "data") {
      data = { start: body, bytes: Math.max(0, Math.min(length, body + size) - body) }; // a header may promise more
    }
    at = body + size + (size % 2);
  }
  if (!format || !data) throw new Error(`WAV file without ${format ? "a data" : "a fmt"} chunk`);
  const { code, channels, rate, bits } = format;
  if (!DECODERS[`${code}:${bits}`]) {
    throw new Error(`WAV encoding ${code}/${bits} bits is not read here (PCM 8/16/24/32-bit or float 32/64 are)`);
  }
  if (!channels) throw new Error("WAV file with 0 channels");
  if (!rate) throw new Error("WAV file with a sample rate of 0");
  const [low, high] = WAV_RATES_HZ;
  if (rate < low || rate > high) {
    throw new Error(`the file says its sample rate is ${rate} Hz; ${low} to ${high} Hz are read (a damaged header?)`);
  }
  const frameBytes = (bits / 8) * channels;
  return { code, channels, rate, bits, frameBytes, dataStart: data.start, frames: Math.floor(data.bytes / frameBytes) };
}

// Whole frames of the data chunk (bytes) -> {samples: mono Float32Array, nonfinite: count, first: the first
// non-finite frame's index within these bytes, or -1}.
export function decodeWavFrames(bytes, header) {
  const { code, bits, channels, frameBytes } = header;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const read = DECODERS[`${code}:${bits}`], width = bits / 8;
  const frames = Math.floor(bytes.length / frameBytes);
  const samples = new Float32Array(frames);
  let nonfinite = 0, first = -1;
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum = Math.fround(sum + read(view, (i * channels + c) * width));
    if (!Number.isFinite(sum)) {
      nonfinite++;
      if (first < 0) first = i;
    }
    samples[i] = Math.fround(sum / channels);
  }
  return { samples, nonfinite, first };
}

export function nonfiniteError(nonfinite, firstSeconds) {
  // as Python refuses such a file: NaN or infinite samples are corruption, not silence
  return new Error(`${nonfinite} samples are NaN or infinite, the first at ${firstSeconds.toFixed(3)} s; the file is corrupt`);
}

export function readWav(bytes) {
  bytes = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const header = readWavHeader((at, count) => bytes.subarray(at, at + count), bytes.length);
  const start = header.dataStart;
  const { samples, nonfinite, first } = decodeWavFrames(bytes.subarray(start, start + header.frames * header.frameBytes), header);
  if (nonfinite) throw nonfiniteError(nonfinite, first / header.rate);
  return { samples, rate: header.rate, channels: header.channels };
}
