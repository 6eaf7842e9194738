// A stream on a `speechattn serve` server from Node, with the local stream's push / finish (the protocol:
// docs/server.md, its messages: export/serve.schema.json).  Node 20 has no WebSocket without a flag, so this uses
// the `ws` package (npm ci here).
//
//   import { RemoteStream } from "./remote.mjs";
//   const stream = await RemoteStream.open("ws://127.0.0.1:8765/stream", { sampleRate: 8000, visemes: "rhubarb" });
//   const update = stream.push(samples);      // Float32Array in [-1, 1] or Int16Array; what arrived so far
//   await stream.finish();                    // the rest and the server's result
//   stream.result.segments, stream.result.cues
//
// As a command (raw little-endian float32 mono samples in a file; the result's JSON on stdout):
//   node remote.mjs ws://127.0.0.1:8765/stream audio.f32 --rate 16000 [--token T] [--chunk-frames 4] [--piece 1600]
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import WebSocket from "ws";

export class RemoteError extends Error {
  // The server refused or closed the stream: `code` the WebSocket close code (or HTTP status), `reason` its line.
  constructor(code, reason) {
    super(code ? `${reason} (code ${code})` : reason);
    this.code = code;
    this.reason = reason;
  }
}

export class RemoteStream {
  static async open(url, { sampleRate = 16000, decoder, minFrames, chunkFrames, visemes, weights, script,
                           provisional, token, openTimeoutMs = 10000 } = {}) {
    const asked = { decoder, min_frames: minFrames, chunk_frames: chunkFrames, visemes, weights, script, provisional };
    const options = Object.fromEntries(Object.entries(asked).filter(([, value]) => value !== undefined && value !== null));
    const stream = new RemoteStream(url, sampleRate);
    await stream.#open({ type: "start", sample_rate: sampleRate, format: "float32", options }, token, openTimeoutMs);
    return stream;
  }

  #inbox = [];
  #closed = null; // {code, reason} once the connection closed
  #whenClosed;

  constructor(url, sampleRate) {
    this.url = url;
    this.sampleRate = sampleRate;
    this.segments = [];
    this.cues = [];
    this.words = [];
    this.result = null;
  }

  #open(start, token, openTimeoutMs) {
    return new Promise((resolve, reject) => {
      const headers = token ? { Authorization: `Bearer ${token}` } : {};
      this.ws = new WebSocket(this.url, { headers, handshakeTimeout: openTimeoutMs, maxPayload: 0 });
      this.#whenClosed = new Promise((done) => {
        this.ws.on("close", (code, reason) => {
          this.#closed = { code, reason: reason.toString() };
          reject(new RemoteError(code, `the server closed the stream: ${reason.toString() || "connection lost"}`));
          done();
        });
      });
      this.ws.on("unexpected-response", (request, response) => {
        let body = "";
        response.on("data", (data) => { body += data; });
        response.on("end", () => reject(new RemoteError(response.statusCode,
          `${this.url}: refused with HTTP ${response.statusCode} (${body.trim().slice(0, 200)})`)));
      });
      this.ws.on("error", (error) => reject(new RemoteError(null, `${this.url}: ${error.message}`)));
      this.ws.on("open", () => this.ws.send(JSON.stringify(start)));
      this.ws.on("message", (data, isBinary) => {
        const message = isBinary ? { type: "error", code: 1003, message: "a binary message from the server" }
          : JSON.parse(data.toString());
        if (message.type === "ready" && !this.ready) {
          this.ready = message;
          resolve();
        } else if (message.type === "error" && !this.ready) {
          reject(new RemoteError(message.code, message.message));
        } else {
          this.#inbox.push(message);
        }
      });
    });
  }

  get chunkFrames() { return this.ready.chunk_frames; }

  push(samples) {
    // Audio at the rate the stream was opened with; returns what the server made final so far (never waits).
    if (this.result) throw new Error("this stream is finished; open a new RemoteStream");
    const floats = samples instanceof Int16Array ? Float32Array.from(samples, (v) => v / 32768) : samples;
    if (!(floats instanceof Float32Array)) throw new TypeError("audio must be a Float32Array in [-1, 1] or an Int16Array");
    if (!this.#closed) this.ws.send(Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength)); // little-endian hosts
    return this.#collect();
  }

  async finish() {
    // No more audio: the last updates and the server's result (this.result).
    if (this.result) throw new Error("this stream is already finished");
    if (!this.#closed) this.ws.send(JSON.stringify({ type: "end" }));
    await this.#whenClosed;
    return this.#collect();
  }

  #collect() {
    const update = { segments: [], cues: [], words: [], position: null, provisional: null };
    for (const message of this.#inbox.splice(0)) {
      if (message.type === "error") throw new RemoteError(message.code, message.message);
      if (message.type === "result") {
        this.result = message;
      } else if (message.type === "update") {
        update.segments.push(...(message.segments ?? []));
        update.cues.push(...(message.cues ?? []));
        update.words.push(...(message.words ?? []));
        update.position = message.position ?? update.position;
        update.provisional = message.provisional ?? update.provisional;
      }
    }
    this.segments.push(...update.segments);
    this.cues.push(...update.cues);
    this.words.push(...update.words);
    if (!this.result && this.#closed && this.#closed.code !== 1000) {
      throw new RemoteError(this.#closed.code, `the server closed the stream: ${this.#closed.reason || "connection lost"}`);
    }
    return update;
  }

  close() { this.ws.close(); }
}

async function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: {
    rate: { type: "string", default: "16000" }, token: { type: "string" }, "chunk-frames": { type: "string" },
    piece: { type: "string", default: "1600" } } });
  if (positionals.length !== 2) {
    throw new Error("usage: node remote.mjs ws://HOST:PORT/stream AUDIO.f32 [--rate HZ] [--token T] [--chunk-frames N] [--piece N]");
  }
  const bytes = readFileSync(positionals[1]);
  const audio = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
  const chunkFrames = values["chunk-frames"] === undefined ? undefined : Number(values["chunk-frames"]);
  const stream = await RemoteStream.open(positionals[0], { sampleRate: Number(values.rate), token: values.token, chunkFrames });
  const piece = Number(values.piece);
  let fromUpdates = 0;
  for (let begin = 0; begin < audio.length; begin += piece) {
    fromUpdates += stream.push(audio.subarray(begin, begin + piece)).segments.length;
  }
  fromUpdates += (await stream.finish()).segments.length;
  process.stdout.write(JSON.stringify({ ...stream.result, segments_from_updates: fromUpdates }) + "\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`remote.mjs: ${error.message}\n`);
    process.exit(1);
  });
}
