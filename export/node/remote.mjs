// A stream on a `speechattn serve` server from Node, with the local stream's push / finish (the protocol:
// docs/server.md, its messages: export/serve.schema.json).  Node 20 has no WebSocket without a flag, so this uses
// the `ws` package (npm ci here).
//
//   import { RemoteStream } from "./remote.mjs";
//   const stream = await RemoteStream.open("ws://127.0.0.1:8765/stream", { sampleRate: 8000, visemes: "rhubarb" });
//   const update = stream.push(samples);      // Float32Array in [-1, 1] or Int16Array; what arrived so far
//   await stream.finish();                    // the rest and the server's result
//   stream.result.segments, stream.result.cues; stream.segmentDicts(), stream.cueDicts(): across seams too
//   RemoteStream.open(url, { reconnect: true }): goes on in a new stream when the server shuts down (below)
//
// As a command (raw little-endian float32 mono samples in a file; the result's JSON on stdout):
//   node remote.mjs ws://127.0.0.1:8765/stream audio.f32 --rate 16000 [--token T] [--chunk-frames 4] [--piece 1600]
//                   [--realtime] [--reconnect]        (--realtime: the pieces at the audio's own pace, as a live source)
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
  // reconnect: when the server closes the stream because it is shutting down (1001, after the result of what it took
  // in), open a new stream at the same URL (behind a load balancer: another replica; up to `attempts` tries, waiting
  // 0.2 s, 0.4 s, ... between; a server full or draining, 1013 or HTTP 502/503/504, or not listening counts as a
  // try), send it the audio the old one did not take in (the "samples" count of its updates and result says how
  // much it did), and go on; times after a seam are offset by the audio before it, so they read as one stream's
  // (`seams`: where the streams meet, in seconds; `results`: each stream's result, offset); a follow-along stream's
  // new follower takes the reader up at the last position received (script_from).  `language`: the script's, an
  // espeak-ng language name (es, fr, pt-BR ...; the server's espeak-ng gives its words' phones).  As export/remote.py.
  static async open(url, { sampleRate = 16000, decoder, minFrames, chunkFrames, visemes, weights, script, language,
                           provisional, token, openTimeoutMs = 10000, reconnect = false, attempts = 5 } = {}) {
    const asked = { decoder, min_frames: minFrames, chunk_frames: chunkFrames, visemes, weights, script, language,
                    provisional };
    const options = Object.fromEntries(Object.entries(asked).filter(([, value]) => value !== undefined && value !== null));
    const stream = new RemoteStream(url, sampleRate, { token, openTimeoutMs, reconnect, attempts });
    stream.#start = { type: "start", sample_rate: sampleRate, format: "float32", options };
    await stream.#connect(1);
    return stream;
  }

  static RESEND_SAMPLES = 1 << 16; // resent audio goes in messages of at most this many samples (256 KiB)

  #start;
  #lastWord = null; // follow-along: the index of the last word made final
  #settings;
  #inbox = []; // the current stream's messages, their times already on the whole audio's clock
  #failure = null; // a RemoteError once the stream cannot go on
  #ending = false;
  #offsetSamples = 0; // samples of the audio heard by the streams before this one
  #sentSamples = 0; // samples sent on this stream
  #kept = []; // with reconnect: the audio sent on this stream that the server has not said it took in
  #keptFrom = 0; // this stream's sample index of the first kept sample
  #reconnecting = null; // the new stream being opened after a seam (audio pushed meanwhile waits in #kept)
  #settle;
  #settled = new Promise((resolve) => { this.#settle = resolve; }); // the last connection closed

  constructor(url, sampleRate, settings = {}) {
    this.url = url;
    this.sampleRate = sampleRate;
    this.reconnect = settings.reconnect ?? false;
    this.attempts = settings.attempts ?? 5;
    this.#settings = settings;
    this.segments = [];
    this.cues = [];
    this.words = [];
    this.result = null;
    this.results = [];
    this.seams = [];
    this.position = null; // follow-along: the reader's position last received
    this.takenUp = []; // follow-along: at each seam, the word the new stream's follower started at
  }

  async #connect(tries) {
    for (let attempt = 0; ; attempt++) {
      if (attempt) await new Promise((wake) => setTimeout(wake, 200 * 2 ** (attempt - 1)));
      try {
        return await this.#openOnce();
      } catch (error) {
        const passing = error.code === null || error.code === 1013 || [502, 503, 504].includes(error.code);
        if (!passing || attempt >= tries - 1) throw error;
      }
    }
  }

  #openOnce() {
    return new Promise((resolve, reject) => {
      const { token, openTimeoutMs } = this.#settings;
      const headers = token ? { Authorization: `Bearer ${token}` } : {};
      const ws = new WebSocket(this.url, { headers, handshakeTimeout: openTimeoutMs, maxPayload: 0 });
      let ready = false;
      this.ws = ws;
      ws.on("close", (code, reason) => {
        reason = reason.toString();
        if (!ready) reject(new RemoteError(code, `the server closed the stream: ${reason || "connection lost"}`));
        else if (ws === this.ws) this.#closed(code, reason);
      });
      ws.on("unexpected-response", (request, response) => {
        let body = "";
        response.on("data", (data) => { body += data; });
        response.on("end", () => reject(new RemoteError(response.statusCode,
          `${this.url}: refused with HTTP ${response.statusCode} (${body.trim().slice(0, 200)})`)));
      });
      ws.on("error", (error) => reject(new RemoteError(null, `${this.url}: ${error.message}`)));
      ws.on("open", () => ws.send(JSON.stringify(this.#start)));
      ws.on("message", (data, isBinary) => {
        const message = isBinary ? { type: "error", code: 1003, message: "a binary message from the server" }
          : JSON.parse(data.toString());
        if (ready) {
          if (ws === this.ws) this.#receive(message);
        } else if (message.type === "ready") {
          ready = true;
          this.ready = message;
          resolve();
        } else {
          reject(new RemoteError(message.code ?? null, message.message ?? `the server answered ${message.type}`));
        }
      });
    });
  }

  get chunkFrames() { return this.ready.chunk_frames; }

  push(samples) {
    // Audio at the rate the stream was opened with; returns what the server made final so far (never waits).
    if (this.#failure) return this.#collect(); // throws it, after what arrived before it
    if (this.result) throw new Error("this stream is finished; open a new RemoteStream");
    let floats = samples instanceof Int16Array ? Float32Array.from(samples, (v) => v / 32768) : samples;
    if (!(floats instanceof Float32Array)) throw new TypeError("audio must be a Float32Array in [-1, 1] or an Int16Array");
    if (this.reconnect) {
      floats = floats.slice(); // kept until the server has taken it in: the caller may reuse its buffer
      this.#kept.push(floats);
    }
    if (!this.#reconnecting) this.#send(floats);
    return this.#collect();
  }

  async finish() {
    // No more audio: the last updates and the server's result (this.result).
    if (this.#failure) return this.#collect();
    if (this.result) throw new Error("this stream is already finished");
    this.#ending = true;
    if (!this.#reconnecting && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: "end" }));
    await this.#settled;
    return this.#collect();
  }

  segmentDicts() {
    // Every final segment: the servers' results after finish(), else those received so far.
    return this.result ? this.results.flatMap((result) => result.segments) : [...this.segments];
  }

  cueDicts() {
    return this.result && "cues" in this.result ? this.results.flatMap((result) => result.cues ?? []) : [...this.cues];
  }

  #send(floats) {
    this.#sentSamples += floats.length;
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength)); // little-endian hosts
  }

  #receive(message) {
    const seconds = this.#offsetSamples / this.sampleRate;
    if (message.type === "update") {
      const shifted = { ...message };
      for (const key of ["segments", "cues", "words"]) if (key in message) shifted[key] = offset(message[key], seconds);
      if (message.provisional?.start != null && seconds) {
        shifted.provisional = { ...message.provisional, start: round6(message.provisional.start + seconds) };
      }
      this.#inbox.push(shifted);
      if (message.position) this.position = message.position;
      if (message.words?.length) this.#lastWord = message.words.at(-1).index;
      this.#forget(message.samples ?? 0);
    } else if (message.type === "result") {
      this.#streamEnded(message, seconds);
    } else {
      this.#inbox.push(message);
    }
  }

  #forget(takenSamples) {
    // The server took in this stream's first `takenSamples`: they need not be kept for a new stream.
    while (this.#kept.length && this.#keptFrom + this.#kept[0].length <= takenSamples) {
      this.#keptFrom += this.#kept.shift().length;
    }
  }

  #streamEnded(result, seconds) {
    // A result: the end of the whole stream, or (the server shutting down) a seam.
    const heard = result.samples ?? this.#sentSamples;
    const shifted = { ...result, segments: offset(result.segments, seconds) };
    if ("cues" in result) shifted.cues = offset(result.cues, seconds);
    this.results.push(shifted);
    if (this.#ending && heard >= this.#sentSamples) {
      this.result = { ...shifted, duration: Number((seconds + result.duration).toFixed(4)),
                      samples: this.#offsetSamples + heard };
      return;
    }
    if (!this.reconnect) {
      this.result = shifted;
      this.#failure = new RemoteError(1001, "the server closed the stream: it is shutting down (reconnect: true goes " +
        "on in a new stream)");
      return;
    }
    this.#forget(heard);
    const skip = heard - this.#keptFrom, old = this.ws;
    this.#offsetSamples += heard;
    this.seams.push(this.#offsetSamples / this.sampleRate);
    // follow-along: the new follower takes the reader up at the last position the old one sent (script_from)
    // (or the word after it where the reader was inside a word the old stream's end made final: reported once)
    if ("script" in this.#start.options && this.position) {
      const { index, inside } = this.position;
      this.#start.options.script_from = inside && this.#lastWord === index ? index + 1 : index;
      this.takenUp.push(this.#start.options.script_from);
    }
    this.#reconnecting = (async () => {
      old.close();
      await this.#connect(this.attempts);
      const kept = this.#kept, unheard = new Float32Array(kept.reduce((total, piece) => total + piece.length, 0) - skip);
      let at = -skip;
      for (const piece of kept) {
        unheard.set(piece.subarray(Math.max(0, -at)), Math.max(0, at));
        at += piece.length;
      }
      this.#kept = [];
      this.#keptFrom = 0;
      this.#sentSamples = 0;
      for (let begin = 0; begin < unheard.length; begin += RemoteStream.RESEND_SAMPLES) {
        const piece = unheard.slice(begin, begin + RemoteStream.RESEND_SAMPLES);
        this.#kept.push(piece);
        this.#send(piece);
      }
      if (this.#ending) this.ws.send(JSON.stringify({ type: "end" }));
    })().catch((error) => {
      this.#failure = error;
      this.#settle();
    }).finally(() => { this.#reconnecting = null; });
  }

  #closed(code, reason) {
    if (this.#reconnecting) return; // the old stream of a seam
    if (!this.result && !this.#failure) {
      this.#failure = new RemoteError(code, `the server closed the stream: ${reason || "connection lost"}`);
    }
    this.#settle();
  }

  #collect() {
    const update = { segments: [], cues: [], words: [], position: null, provisional: null };
    for (const message of this.#inbox.splice(0)) {
      if (message.type === "error") throw new RemoteError(message.code, message.message);
      if (message.type === "update") {
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
    if (this.#failure) throw this.#failure;
    return update;
  }

  close() { this.ws.close(); }
}

const round6 = (x) => Number(x.toFixed(6));

function offset(items, seconds) {
  // Segments, cues or words of a stream that began `seconds` into the audio, on the whole audio's clock.
  if (!seconds) return items;
  return items.map((item) => ({ ...item, start: round6(item.start + seconds), end: round6(item.end + seconds) }));
}

const USAGE = "usage: node remote.mjs ws://HOST:PORT/stream AUDIO.f32 [--rate HZ] [--token T] [--chunk-frames N] " +
  "[--piece N] [--realtime] [--reconnect] [--script TEXT [--language LANG]]";

function usageError(message) { // a wrong command line: one line on stderr, status 2 (an input that fails: 1)
  process.stderr.write(`remote.mjs: ${message}\n`);
  process.exit(2);
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: {
      rate: { type: "string", default: "16000" }, token: { type: "string" }, "chunk-frames": { type: "string" },
      piece: { type: "string", default: "1600" }, reconnect: { type: "boolean" }, realtime: { type: "boolean" },
      script: { type: "string" }, language: { type: "string" }, help: { type: "boolean", short: "h" } } });
  } catch (error) {
    usageError(error.message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (positionals.length !== 2) usageError(`give the server's URL and AUDIO.f32, not ${positionals.length} (${USAGE})`);
  const bytes = readFileSync(positionals[1]);
  const audio = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
  const chunkFrames = values["chunk-frames"] === undefined ? undefined : Number(values["chunk-frames"]);
  const rate = Number(values.rate);
  const stream = await RemoteStream.open(positionals[0], { sampleRate: rate, token: values.token, chunkFrames,
    reconnect: values.reconnect, script: values.script, language: values.language });
  const piece = Number(values.piece), began = Date.now();
  let fromUpdates = 0;
  for (let begin = 0; begin < audio.length; begin += piece) {
    if (values.realtime) { // each piece when a live source would have it
      await new Promise((wake) => setTimeout(wake, Math.max(0, began + 1000 * begin / rate - Date.now())));
    }
    fromUpdates += stream.push(audio.subarray(begin, begin + piece)).segments.length;
  }
  fromUpdates += (await stream.finish()).segments.length;
  process.stdout.write(JSON.stringify({ ...stream.result, segments: stream.segmentDicts(), seams: stream.seams,
    segments_from_updates: fromUpdates, ...(values.script ? { words: stream.words, taken_up: stream.takenUp } : {}) })
    + "\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`remote.mjs: ${error.message}\n`);
    process.exit(1);
  });
}
