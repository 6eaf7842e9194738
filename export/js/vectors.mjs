// Run tests/segmenter-vectors.json through this client's segmenters: returns one line per disagreement.
import { AlignOptions, alignmentDicts, LIVE, recordingPrior, ScriptAligner } from "./align.mjs";
import { newSegmenter } from "./speechattn.mjs";

export function checkVectors(vectors, bigram) {
  const failures = [];
  for (const c of vectors.cases) {
    const P = c.phones.length;
    const values = Float32Array.from(c.log_probs.flat());
    const segmenter = newSegmenter(c.decoder, c.phones, bigram, c.options);
    const got = [];
    let position = 0;
    for (const size of c.pushes) {
      const count = Math.min(size, values.length / P - position);
      got.push(...segmenter.push(values.subarray(position * P, (position + count) * P), count));
      position += count;
    }
    got.push(...segmenter.push(values.subarray(position * P), values.length / P - position));
    got.push(...segmenter.finish());
    if (got.length !== c.segments.length) {
      failures.push(`${c.name}: ${got.length} segments, expected ${c.segments.length}`);
      continue;
    }
    got.forEach((s, i) => {
      const e = c.segments[i];
      if (s.startFrame !== e.startFrame || s.endFrame !== e.endFrame || s.phone !== e.phone
          || Math.abs(s.confidence - e.confidence) > vectors.confidence_tolerance) {
        failures.push(`${c.name}: segment ${i} is ${JSON.stringify(s)}, expected ${JSON.stringify(e)}`);
      }
    });
  }
  return failures;
}

// Run tests/align-vectors.json through the forced aligner (align.mjs): returns one line per disagreement with the
// Python kit's alignment.  Frames, indices, texts and phones exactly; gop and confidence (rounded to 6 decimals
// in the file) within its tolerance.
export function checkAlignVectors(vectors) {
  const failures = [];
  const camel = (name) => name.replace(/_([a-z])/g, (_, letter) => letter.toUpperCase());
  const options = (fields) => new AlignOptions(Object.fromEntries(Object.entries(fields).map(([k, v]) => [camel(k), v])));
  for (const [name, ours, python] of [["defaults", new AlignOptions(), options(vectors.defaults)], ["LIVE", LIVE, options(vectors.live)]]) {
    if (JSON.stringify(ours) !== JSON.stringify(python)) failures.push(`${name}: ${JSON.stringify(ours)}, Python ${JSON.stringify(python)}`);
  }
  for (const c of vectors.cases) {
    const P = c.phones.length, encoded = c.log_probs ?? vectors.cases[c.log_probs_of_case].log_probs;
    const bytes = Uint8Array.from(atob(encoded), (ch) => ch.charCodeAt(0)), view = new DataView(bytes.buffer);
    const values = new Float32Array(bytes.length / 4).map((_, i) => view.getFloat32(4 * i, true));
    const got = { pushed: [], positions: [] };
    try {
      const prior = recordingPrior(values, c.frames, P, c.prior_scale ?? 0);
      const aligner = new ScriptAligner(c.words, c.phones, options(c.options), c.sentence_starts, prior, c.start_word ?? 0);
      let at = 0;
      c.pushes.forEach((size, number) => {
        for (const w of aligner.push(values.subarray(at * P, (at + size) * P), size)) got.pushed.push([number, w.index, w.startFrame, w.endFrame]);
        const { index, inside } = aligner.position;
        got.positions.push([index, inside]);
        at += size;
      });
      const a = aligner.finish();
      const stats = (x) => ({ gop: x.gop, confidence: x.confidence });
      Object.assign(got, {
        words: a.words.map((w) => ({ index: w.index, text: w.text, start_frame: w.startFrame, end_frame: w.endFrame, ...stats(w),
          phones: w.phones.map((p) => ({ phone: p.phone, start_frame: p.startFrame, end_frame: p.endFrame, ...stats(p) })) })),
        not_heard: a.notHeard, frames: a.frames, silences: a.silences, unscripted: a.unscripted, score: a.score,
        unalignable: a.unalignable,
        finished: aligner.lastWords.map((w) => [w.index, w.startFrame, w.endFrame]), json_words: alignmentDicts(a, c.duration_seconds, 100, c.words.map((w) => ({ startChar: w.start_char }))),
      });
    } catch (error) {
      failures.push(`${c.name}: ${error.stack}`);
      continue;
    }
    const expected = c.expected, keys = Object.keys(expected);
    const different = keys.filter((key) => !same(expected[key], got[key], vectors.tolerance));
    for (const key of different) failures.push(`${c.name}: ${key} is ${JSON.stringify(got[key]).slice(0, 600)}, Python ${JSON.stringify(expected[key]).slice(0, 600)}`);
  }
  for (const e of vectors.errors) { // scripts refused with Python's message
    let message = "accepted";
    try { new ScriptAligner(e.words, e.phones); } catch (error) { message = error.message; }
    if (message !== e.error) failures.push(`refusal: ${message}, Python ${e.error}`);
  }
  return failures;
}

function same(expected, actual, tolerance) { // numbers within tolerance (integers too: they differ by 1 or more)
  if (typeof expected === "number" && typeof actual === "number") return Math.abs(expected - actual) <= tolerance;
  if (Array.isArray(expected) || (expected !== null && typeof expected === "object")) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual) !== Array.isArray(expected)) return false;
    const keys = Object.keys(expected);
    return keys.length === Object.keys(actual).length && keys.every((k) => k in actual && same(expected[k], actual[k], tolerance));
  }
  return expected === actual;
}
