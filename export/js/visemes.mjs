// Lip sync in JavaScript: the port of speechattn/visemes.py (the same tables, weights and cue rules; the Python
// tests check that the tables are equal and that Node's cues equal Python's on a recording).
//
//   frameWeights(logProbs, count, set, phones) -> Float64Array(count * S): phone posteriors summed per shape,
//                                                  each frame's row summing to 1 (3D blendshapes, VRM)
//   new CueMaker(set, phones).push(segments) -> final cues {startFrame, endFrame, shape}; finish() -> the rest;
//                                                  .current: the shape of the newest final frames
//
// Cue rules (CUE_RULES): a shape shorter than minHoldFrames joins the shape before it; closed lips for P, B, M
// are kept however short and lengthened to the minimum hold with frames from the shape before; a pause shorter
// than bridgeFrames inside speech holds the shape before it; the pause that ends a stream is kept.

const BILABIALS = ["P", "B", "M"];

export const VISEME_SETS = {
  rhubarb: {
    name: "rhubarb", shapes: ["A", "B", "C", "D", "E", "F", "G", "H", "X"], rest: "X", closedLips: "A",
    covers: {
      A: ["P", "B", "M"],
      B: ["K", "G", "NG", "T", "D", "N", "S", "Z", "SH", "ZH", "CH", "JH", "TH", "DH", "Y", "HH", "IY", "IH"],
      C: ["EH", "AE", "AH", "EY"], D: ["AA", "AY", "AW"], E: ["AO", "ER", "OY", "R"], F: ["UW", "UH", "OW", "W"],
      G: ["F", "V"], H: ["L"], X: ["sil"],
    },
  },
  oculus: {
    name: "oculus", shapes: ["sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "ih", "oh", "ou"],
    rest: "sil", closedLips: "PP",
    covers: {
      sil: ["sil"], PP: ["P", "B", "M"], FF: ["F", "V"], TH: ["TH", "DH"], DD: ["T", "D"], kk: ["K", "G", "NG", "HH"],
      CH: ["CH", "JH", "SH", "ZH"], SS: ["S", "Z"], nn: ["N", "L"], RR: ["R", "ER"], aa: ["AA", "AE", "AH", "AY", "AW"],
      E: ["EH", "EY"], ih: ["IH", "IY", "Y"], oh: ["AO", "OW", "OY"], ou: ["UW", "UH", "W"],
    },
  },
  vrm: {
    name: "vrm", shapes: ["sil", "A", "I", "U", "E", "O"], rest: "sil", closedLips: "sil",
    covers: {
      sil: ["sil", "P", "B", "M"], A: ["AA", "AE", "AH", "AY", "AW", "HH", "K", "G", "NG"],
      I: ["IY", "IH", "Y", "S", "Z", "T", "D", "N", "TH", "DH", "F", "V", "L"], U: ["UW", "UH", "W", "SH", "ZH", "CH", "JH"],
      E: ["EH", "EY"], O: ["AO", "OW", "OY", "ER", "R"],
    },
  },
};

export const CUE_RULES = { minHoldFrames: 7, bridgeFrames: 10 };

// a set's name (the table's own keys only: "constructor" is no set) or a set itself
function visemeSet(set) {
  const found = typeof set === "string" ? (Object.hasOwn(VISEME_SETS, set) ? VISEME_SETS[set] : null) : set;
  if (!found) throw new Error(`viseme set must be one of ${Object.keys(VISEME_SETS).join(", ")}, not ${set}`);
  return found;
}

// phone index -> shape index of the set, for the model's phone order
export function shapeColumns(set, phones) {
  const s = visemeSet(set), table = new Map(); // a Map: a model's phone named "toString" is no shape's
  for (const [shape, covered] of Object.entries(s.covers)) for (const phone of covered) table.set(phone, shape);
  return phones.map((phone) => {
    if (!table.has(phone)) throw new Error(`the ${s.name} viseme set has no shape for ${phone}`);
    return s.shapes.indexOf(table.get(phone));
  });
}

export function frameWeights(logProbs, count, set, phones) {
  const s = visemeSet(set), P = phones.length, S = s.shapes.length, columns = shapeColumns(s, phones);
  const out = new Float64Array(count * S);
  for (let t = 0; t < count; t++) {
    let total = 0;
    for (let p = 0; p < P; p++) {
      const posterior = Math.exp(logProbs[t * P + p]);
      out[t * S + columns[p]] += posterior;
      total += posterior;
    }
    total = Math.max(total, 1e-12);
    for (let k = 0; k < S; k++) out[t * S + k] /= total;
  }
  return out;
}

export class CueMaker {
  constructor(set, phones, rules = CUE_RULES) {
    this.set = visemeSet(set);
    this.rules = { ...CUE_RULES, ...rules };
    if (this.rules.minHoldFrames < 1 || this.rules.bridgeFrames < 0) {
      throw new Error("minHoldFrames must be >= 1 and bridgeFrames >= 0");
    }
    const columns = shapeColumns(this.set, phones);
    this.shapeOf = columns.map((k) => this.set.shapes[k]);
    this.bilabial = phones.map((p) => BILABIALS.includes(p));
    this.open = null; // the run segments still extend
    this.pending = null; // the run before it
  }

  get current() {
    return this.open ? this.open.shape : this.set.rest;
  }

  push(segments) {
    const done = [];
    for (const s of segments) {
      if (s.endFrame <= s.startFrame) continue;
      const shape = this.shapeOf[s.phone], bilabial = this.bilabial[s.phone];
      if (this.open && this.open.shape === shape) {
        this.open.end = s.endFrame;
        this.open.bilabial ||= bilabial;
        continue;
      }
      if (this.open) done.push(...this._close(this.open, false));
      this.open = { start: s.startFrame, end: s.endFrame, shape, bilabial };
    }
    return done;
  }

  finish() {
    const done = this.open ? this._close(this.open, true) : [];
    if (this.pending) done.push(this._emit(this.pending));
    this.open = this.pending = null;
    return done;
  }

  _close(run, last) {
    const previous = this.pending, { minHoldFrames, bridgeFrames } = this.rules;
    if (!previous) {
      this.pending = run;
      return [];
    }
    const pause = run.shape === this.set.rest && !run.bilabial;
    if (pause && !last && run.end - run.start < bridgeFrames) {
      previous.end = run.end;
      return [];
    }
    if (run.end - run.start < minHoldFrames && !(last && pause)) {
      if (!run.bilabial) {
        previous.end = run.end;
        return [];
      }
      const give = Math.min(minHoldFrames - (run.end - run.start),
        Math.max(0, previous.end - previous.start - minHoldFrames));
      previous.end -= give;
      run.start -= give;
    }
    if (previous.shape === run.shape) {
      previous.end = run.end;
      previous.bilabial ||= run.bilabial;
      return [];
    }
    this.pending = run;
    return [this._emit(previous)];
  }

  _emit(run) {
    return { startFrame: run.start, endFrame: run.end, shape: run.shape };
  }
}

// What `speechattn transcribe --format visemes-json` writes for the cues: seconds, the last cue cut at the
// duration truncated to 10 ms (as Rhubarb does); an empty stream is one cue of the rest shape.
export function cueDicts(cues, set, durationSeconds, framesPerSecond = 100) {
  const s = visemeSet(set), endOfFile = Math.floor(durationSeconds * framesPerSecond + 1e-9), out = [];
  for (const cue of cues) {
    const end = Math.min(cue.endFrame, endOfFile);
    if (end > cue.startFrame) out.push({ start: cue.startFrame / framesPerSecond, end: end / framesPerSecond, value: cue.shape });
  }
  if (out.length === 0 && endOfFile > 0) out.push({ start: 0, end: endOfFile / framesPerSecond, value: s.rest });
  return out;
}
