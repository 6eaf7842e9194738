// Run tests/segmenter-vectors.json through this client's segmenters: returns one line per disagreement.
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
