// Forced alignment of known words on the model's frame log-posteriors, offline or live, tolerant of a script the
// speaker departed from: a port of export/align.py (its docstring draws the graph), no dependency.  The same
// Viterbi in float64 with the same tie-breaking (numpy's first argmax, the same >= and >), the same window and
// commits, so the results are the Python kit's, frame for frame; tests/align-vectors.json keeps the two equal.
//
//   import { ScriptAligner, LIVE } from "./align.mjs";
//   const words = [{ text: "hello", pronunciations: [["HH", "AH", "L", "OW"], ["HH", "EH", "L", "OW"]] }, ...];
//   const aligner = new ScriptAligner(words, model.phones);           // or (words, model.phones, LIVE)
//   for (...) for (const w of aligner.push(frames.logProbs, frames.count)) console.log(w.text, w.startFrame);
//   const { words: aligned, notHeard, silences, unscripted } = aligner.finish();
//
// Each alignment has a score (align.py's Alignment.score: how well the script explains the speech, nats per frame, 0
// at best) and `unalignable` (the score below options.minScore: the script does not match the speech).
//
// Shapes and names as in align.py: P phones (the model's, in output order), W words, n window chain states, nb
// window boundaries; a window's local layout is its chain states, then its boundaries' silences, then their
// garbages.  Frames and states are integers; scores are float64.

export const SILENCE = "sil";

const DEFAULTS = Object.freeze({
  minFrames: 3, // states per phone: the shortest phone, in 10 ms frames
  skipPenalty: 20.0, // log score of leaving a word of the script out
  garbagePenalty: 1.5, // per frame of speech that is not the script, against the best phone
  garbageEntryPenalty: 10.0, // per stretch of such speech
  jumpPenalty: 200.0, // going back to or ahead to a sentence's start (offline a transcript is read in order)
  nearJumpPenalty: 200.0, // where lower than jumpPenalty, a jump ahead to the next sentence's start
  backJumpPenalty: 200.0, // where lower than jumpPenalty, a jump back to the start of the sentence being read or of
  //                         the one just finished
  jumpStepPenalty: 0.0, // added to jumpPenalty for each sentence past the first a jump moves, either way
  lagFrames: 300, // commit this far behind the newest frame (3 s)
  commitEvery: 300, // frames between commits (1: live)
  windowBackWords: 4,
  windowAheadWords: 48,
  prune: true, // drop the paths that do not pass through each commit (one consistent path)
  endAtScriptEnd: true, // finish(): the best path that reaches the end of the script (offline); false (LIVE): the best
  //                       path at the last frame, wherever the reader stopped (align.py's end_at_script_end)
  minScore: -1.375, // an alignment scoring below this is unalignable (align.py's min_score: its measurement)
});

// the alignment score's terms (align.py's): a frame of speech not in the script, a script with no word heard
export const UNSCRIPTED_SCORE = -2.5;
export const NOT_HEARD_SCORE = -1.5;

export class AlignOptions {
  // align.py's AlignOptions: new AlignOptions({ lagFrames: 20 }) overrides the defaults; frozen; the same checks
  static DEFAULTS = DEFAULTS;

  constructor(overrides = {}) {
    for (const key of Object.keys(overrides)) {
      if (!Object.hasOwn(DEFAULTS, key)) throw new Error(`unknown align option ${key} (one of ${Object.keys(DEFAULTS).join(", ")})`);
    }
    Object.assign(this, DEFAULTS, overrides);
    const integer = (value, low, high) => Number.isInteger(value) && value >= low && value <= high;
    if (!integer(this.minFrames, 1, 20)) throw new Error(`minFrames must be from 1 to 20, not ${this.minFrames}`);
    if (!integer(this.lagFrames, 1, 10000) || !integer(this.commitEvery, 1, 10000)) {
      throw new Error("lagFrames and commitEvery must be from 1 to 10000");
    }
    if (!integer(this.windowBackWords, 0, 1000) || !integer(this.windowAheadWords, 1, 10000)) {
      throw new Error("windowBackWords must be 0..1000 and windowAheadWords 1..10000");
    }
    for (const name of ["skipPenalty", "garbagePenalty", "garbageEntryPenalty", "jumpPenalty", "nearJumpPenalty",
      "backJumpPenalty", "jumpStepPenalty"]) {
      if (!(typeof this[name] === "number" && this[name] >= 0 && this[name] < Infinity)) {
        throw new Error(`${name} must be a finite number >= 0`);
      }
    }
    if (typeof this.prune !== "boolean" || typeof this.endAtScriptEnd !== "boolean") {
      throw new Error("prune and endAtScriptEnd must be true or false");
    }
    if (!(typeof this.minScore === "number" && this.minScore >= -1000 && this.minScore <= 0)) {
      throw new Error(`minScore must be a number from -1000 to 0, not ${this.minScore}`);
    }
    Object.freeze(this);
  }
}

// follow-along: final 100 ms behind the newest frame, each frame committed without dropping the other paths, so a
// later frame may leave the committed path and the follower recovers; a reader may skip or go back, to a sentence
// start up to 32 words back, a jump priced by how far it goes: 20 to the next sentence, 15 back to the start of the
// present or the last one, 40 and 20 more for each sentence past the next otherwise (align.py's LIVE)
export const LIVE = new AlignOptions({ lagFrames: 10, commitEvery: 1, prune: false, jumpPenalty: 40.0,
  nearJumpPenalty: 20.0, backJumpPenalty: 15.0, jumpStepPenalty: 20.0, windowBackWords: 32, endAtScriptEnd: false });

// numpy's mean of float64 values: its pairwise sum (8 accumulators up to 128 values, halves above), then / n, so a
// mean of more than 7 values rounds as Python's does
function pairwiseSum(values, start, n) {
  if (n < 8) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[start + i];
    return sum;
  }
  if (n <= 128) {
    const r = values.slice(start, start + 8);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += values[start + i + j];
    let sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) sum += values[start + i];
    return sum;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return pairwiseSum(values, start, half) + pairwiseSum(values, start + half, n - half);
}

function mean(values) {
  return pairwiseSum(values, 0, values.length) / values.length;
}

const at = (array, i) => array[i < 0 ? array.length + i : i]; // numpy's (and Python's) negative index

function argmax(values) { // the first of the largest, as numpy's
  let arg = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[arg]) arg = i;
  return arg;
}

function quoted(text) { // Python's repr of a plain string, for the same messages
  return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replaceAll("'", "\\'")}'`;
}

class Script {
  // The word graph's layout: every chain state of every word, word by word, as flat arrays (global ids).
  // Unified ids: chain states [0, N), silence of boundary b: N + b, garbage of boundary b: N + W + 1 + b.
  constructor(words, phones, minFrames, sentenceStarts) {
    const index = new Map(phones.map((p, i) => [p, i]));
    if (!index.has(SILENCE)) throw new Error(`the model has no '${SILENCE}' phone`);
    this.phones = [...phones];
    this.silence = index.get(SILENCE);
    this.texts = words.map((w) => (w !== null && typeof w === "object" && "text" in w ? w.text : String(w)));
    this.W = words.length;
    const D = minFrames, phoneOf = [], wordOf = [], first = [], loop = [], last = [], phoneStart = [];
    this.wordStart = new Int32Array(this.W + 1); // first chain state of each word (N after the last)
    words.forEach((word, w) => {
      this.wordStart[w] = phoneOf.length;
      let variants = 0;
      for (const pronunciation of word.pronunciations ?? []) {
        const unknown = pronunciation.filter((p) => !index.has(p) || p === SILENCE);
        if (unknown.length || !pronunciation.length) {
          throw new Error(`word ${w} (${quoted(this.texts[w])}): pronunciation ${pronunciation.join(" ")} has phones the model ` +
            `lacks: ${unknown.join(" ") || "(empty)"}`);
        }
        pronunciation.forEach((p, k) => {
          for (let d = 0; d < D; d++) {
            phoneStart.push(phoneOf.length - d);
            phoneOf.push(index.get(p));
            wordOf.push(w);
            first.push(k === 0 && d === 0 ? 1 : 0);
            loop.push(d === D - 1 ? 1 : 0);
            last.push(k === pronunciation.length - 1 && d === D - 1 ? 1 : 0);
          }
        });
        variants++;
      }
      if (!variants) throw new Error(`word ${w} (${quoted(this.texts[w])}) has no pronunciation`);
    });
    this.N = phoneOf.length;
    this.wordStart[this.W] = this.N;
    this.phoneOf = Int32Array.from(phoneOf);
    this.wordOf = Int32Array.from(wordOf);
    this.first = Uint8Array.from(first);
    this.loop = Uint8Array.from(loop);
    this.last = Uint8Array.from(last);
    this.phoneStart = Int32Array.from(phoneStart); // the first state of each state's phone
    this.sentenceStart = new Uint8Array(this.W + 1);
    for (const s of [0, ...(sentenceStarts ?? [])]) if (Number.isInteger(s) && s >= 0 && s <= this.W) this.sentenceStart[s] = 1;
  }
}

class Window {
  // The searched part of the graph: words [wa, wb) with boundaries wa .. wb.
  constructor(script, wa, wb) {
    const s = script;
    this.wa = wa;
    this.wb = wb;
    this.a = s.wordStart[wa];
    this.b = s.wordStart[wb];
    this.n = this.b - this.a;
    this.nb = wb - wa + 1;
    this.size = this.n + 2 * this.nb;
    this.N = s.N;
    this.W = s.W;
    this.phoneOf = s.phoneOf.subarray(this.a, this.b);
    this.first = s.first.subarray(this.a, this.b);
    this.loop = s.loop.subarray(this.a, this.b);
    this.wordLocal = new Int32Array(this.n); // the boundary a word state is entered from
    const lasts = [];
    for (let i = 0; i < this.n; i++) {
      this.wordLocal[i] = s.wordOf[this.a + i] - wa;
      if (s.last[this.a + i]) lasts.push(i);
    }
    this.lastLocal = Int32Array.from(lasts); // every variant's exit, word by word
    this.lastWordStart = new Int32Array(this.nb); // per word of the window its first entry in lastLocal (+ the end)
    for (let j = lasts.length - 1; j >= 0; j--) this.lastWordStart[this.wordLocal[lasts[j]]] = j;
    this.lastWordStart[this.nb - 1] = lasts.length;
    this.globalIds = new Int32Array(this.size);
    for (let i = 0; i < this.n; i++) this.globalIds[i] = this.a + i;
    for (let k = 0; k < this.nb; k++) {
      this.globalIds[this.n + k] = s.N + wa + k;
      this.globalIds[this.n + this.nb + k] = s.N + s.W + 1 + wa + k;
    }
    const sentence = [];
    for (let k = 0; k < this.nb; k++) if (s.sentenceStart[wa + k]) sentence.push(k);
    this.sentence = Int32Array.from(sentence);
    // jumps to the next sentence: each boundary's sentence, counted from the one the window starts in, and each
    // sentence's best boundary of a frame (scratch)
    this.block = new Int32Array(this.nb);
    for (let k = 1; k < this.nb; k++) this.block[k] = this.block[k - 1] + s.sentenceStart[wa + k];
    this.blockTop = new Float64Array(this.block[this.nb - 1] + 1);
    this.blockFirst = new Int32Array(this.block[this.nb - 1] + 1);
    this.jumpValue = new Float64Array(sentence.length);
    this.jumpCosts = null; // align.py's _jump_costs: (blocks x starts), made once per window
    this.jumpSource = new Int32Array(sentence.length);
    // scratch for the boundaries of one frame: B (nb), B's source (local index) and each boundary's own source
    this.B = new Float64Array(this.nb);
    this.Bsource = new Int32Array(this.nb);
    this.source = new Int32Array(this.nb);
  }

  localOne(state) { // a unified global id -> its local index (-1 outside the window)
    if (state >= this.a && state < this.b) return state - this.a;
    if (state >= this.N) {
      let b = state - this.N, kind = 0;
      if (b > this.W) {
        b -= this.W + 1;
        kind = 1;
      }
      if (b >= this.wa && b <= this.wb) return this.n + kind * this.nb + b - this.wa;
    }
    return -1;
  }
}

export class ScriptAligner {
  // push(logProbs, count) -> the words made final; finish() -> the whole alignment; `position` is the provisional
  // reading position {index, inside} (the best path's word, or the boundary before it, at the newest frame).
  // words: [{text, pronunciations: [[phone names], ...]}]; phones: the model's phone names in output order.
  // logPrior (Float64Array(P), or null): subtracted from each frame's log posteriors for the search
  // (recordingPrior); GOP and confidence are the posteriors' own.
  // startWord: the path starts on the boundary before this word (W: after the last), not before the first (a
  // follow-along stream taken up where another left off: the words before it are neither heard nor not heard).
  constructor(words, phones, options = new AlignOptions(), sentenceStarts = null, logPrior = null, startWord = 0) {
    this.options = options instanceof AlignOptions ? options : new AlignOptions(options);
    const o = this.options;
    this.onePrice = o.nearJumpPenalty >= o.jumpPenalty && o.backJumpPenalty >= o.jumpPenalty && !o.jumpStepPenalty;
    this.script = new Script(words, phones, this.options.minFrames, sentenceStarts);
    this.P = phones.length;
    this.logPrior = logPrior;
    this.scoredRow = logPrior === null ? null : new Float64Array(this.P); // a frame's row less the prior, reused
    if (!(Number.isInteger(startWord) && startWord >= 0 && startWord <= this.script.W)) {
      throw new Error(`startWord ${startWord} is not a word of the script, nor the end after its last (0 to ${this.script.W})`);
    }
    this.startWord = startWord;
    this.window = this._windowAround(startWord);
    this.scores = new Float64Array(this.window.size).fill(-Infinity);
    this.spare = null; // the other score buffer (steps alternate between two)
    this.start = true; // before the first frame the path stands on boundary startWord (0)
    // per pending frame: {window, back (local index of each state's predecessor), translation (for the first frame
    // after the window moved: its local indices -> the previous frame's window's, -1 none; else null)}
    this.backs = [];
    this.translation = null;
    this.rows = []; // log posteriors of pending frames (Float64Array(P) each)
    this.frame = 0;
    this.finalPath = []; // unified state per final frame
    this.finalGop = []; // per final frame: log p(its phone) - log p(best other)
    this.finalPosterior = []; // per final frame: p(its phone)
    // the alignment score's sums over the final frames (frame by frame, as align.py adds them): log p(word phone) -
    // log max p, the frames of words and of speech not in the script
    this.ratioSum = 0;
    this.wordFrames = 0;
    this.unscriptedFrames = 0;
    this.doneWords = [];
    this.scan = 0; // the frame of finalPath where the next word run may start
    this.lastWords = [];
  }

  _windowAround(word) {
    const [wa, wb] = this._windowBounds(word);
    return new Window(this.script, wa, wb);
  }

  _windowBounds(word) { // [first word, end word) of the window around a word
    const o = this.options, W = this.script.W;
    const wa = Math.max(0, word - o.windowBackWords);
    return [wa, Math.min(W, Math.max(word + o.windowAheadWords, wa + 1))];
  }

  // --- Viterbi -------------------------------------------------------------------------------------------------
  _boundaries(scores, w) {
    // into w.B and w.Bsource: the best score of standing on each boundary after the frame `scores` belong to, and
    // the local index of the state that path was in at that frame
    const o = this.options, n = w.n, nb = w.nb, B = w.B, Bsource = w.Bsource, source = w.source;
    let running = -Infinity, origin = 0;
    for (let b = 0; b < nb; b++) {
      let best = -Infinity, from = -1;
      if (b > 0) { // the word before the boundary: its best variant's exit, the first of equals
        const j0 = w.lastWordStart[b - 1], j1 = w.lastWordStart[b];
        from = w.lastLocal[j0];
        best = scores[from];
        for (let j = j0 + 1; j < j1; j++) {
          if (scores[w.lastLocal[j]] > best) {
            from = w.lastLocal[j];
            best = scores[from];
          }
        }
      }
      if (!(best >= scores[n + b])) {
        best = scores[n + b];
        from = n + b;
      }
      if (scores[n + nb + b] > best) {
        best = scores[n + nb + b];
        from = n + nb + b;
      }
      source[b] = from;
      // skips: B[b] = max over b' <= b of base[b'] - (b - b') skipPenalty (the last b' of equals)
      const lifted = best + b * o.skipPenalty;
      if (b === 0 || lifted > running) running = lifted;
      if (lifted >= running) origin = b;
      B[b] = running - b * o.skipPenalty;
      Bsource[b] = source[origin];
    }
    if (w.sentence.length && B.some(Number.isFinite)) {
      if (this.onePrice) { // every start from the best boundary
        const jumper = argmax(B), jump = B[jumper] - o.jumpPenalty;
        for (const s of w.sentence) {
          if (B[s] < jump) {
            B[s] = jump;
            Bsource[s] = Bsource[jumper];
          }
        }
      } else { // each start from each sentence's best boundary at the price of their distance (_jumpCosts)
        const top = w.blockTop, first = w.blockFirst, block = w.block, blocks = top.length, starts = w.sentence.length;
        top.fill(-Infinity);
        first.fill(-1);
        for (let b = 0; b < nb; b++) {
          if (first[block[b]] < 0 || B[b] > top[block[b]]) {
            top[block[b]] = B[b];
            first[block[b]] = b;
          }
        }
        const costs = this._jumpCosts(w);
        for (let j = 0; j < starts; j++) { // every value from this frame's B before any changes
          let value = top[0] - costs[j], from = 0;
          for (let k = 1; k < blocks; k++) {
            const v = top[k] - costs[k * starts + j];
            if (v > value) {
              value = v;
              from = k;
            }
          }
          w.jumpValue[j] = value;
          w.jumpSource[j] = Bsource[first[from]];
        }
        for (let j = 0; j < starts; j++) {
          const s = w.sentence[j];
          if (B[s] < w.jumpValue[j]) {
            B[s] = w.jumpValue[j];
            Bsource[s] = w.jumpSource[j];
          }
        }
      }
    }
  }

  _jumpCosts(w) {
    // the price of a jump from each sentence of the window (its best boundary) to each sentence start, by the
    // distance d in sentences (align.py's _jump_costs)
    if (w.jumpCosts === null) {
      const o = this.options, starts = w.sentence.length, blocks = w.blockTop.length;
      w.jumpCosts = new Float64Array(blocks * starts);
      for (let k = 0; k < blocks; k++) {
        for (let j = 0; j < starts; j++) {
          const d = w.block[w.sentence[j]] - k;
          let cost = o.jumpPenalty + o.jumpStepPenalty * Math.max(Math.abs(d) - 1, 0);
          if (d === 1) cost = Math.min(cost, o.nearJumpPenalty);
          if (d === 0 || d === -1) cost = Math.min(cost, o.backJumpPenalty);
          w.jumpCosts[k * starts + j] = cost;
        }
      }
    }
    return w.jumpCosts;
  }

  _step(row) {
    const w = this.window, o = this.options, s = this.script, n = w.n, nb = w.nb;
    const B = w.B, Bsource = w.Bsource;
    if (this.start) { // the stream starts on boundary startWord (0): as if leaving a silence there
      const k = this.startWord - w.wa;
      for (let b = 0; b < nb; b++) {
        B[b] = b >= k ? k * o.skipPenalty - b * o.skipPenalty : -Infinity;
        Bsource[b] = -1;
      }
      this.start = false;
    } else {
      this._boundaries(this.scores, w);
    }
    const old = this.scores;
    let scored = row;
    if (this.logPrior !== null) {
      scored = this.scoredRow;
      for (let p = 0; p < row.length; p++) scored[p] = row[p] - this.logPrior[p];
    }
    const next = this.spare !== null && this.spare.length === w.size ? this.spare : new Float64Array(w.size);
    const back = new Int32Array(w.size);
    // chain states: stay (last state of a phone), advance from the state before, or enter from the boundary
    const first = w.first, wordLocal = w.wordLocal, loop = w.loop, phoneOf = w.phoneOf;
    for (let i = 0; i < n; i++) {
      let advance, from;
      if (first[i]) {
        advance = B[wordLocal[i]];
        from = Bsource[wordLocal[i]];
      } else {
        advance = old[i - 1];
        from = i - 1;
      }
      const stay = loop[i] ? old[i] : -Infinity;
      if (stay >= advance) {
        next[i] = stay + scored[phoneOf[i]];
        back[i] = i;
      } else {
        next[i] = advance + scored[phoneOf[i]];
        back[i] = from;
      }
    }
    // silence and garbage of each boundary: stay, or come from the boundary
    let bestSpeech = -Infinity; // the best non-silence phone's score: garbage's emission
    for (let p = 0; p < scored.length; p++) if (p !== s.silence && scored[p] > bestSpeech) bestSpeech = scored[p];
    const silence = scored[s.silence], garbage = bestSpeech - o.garbagePenalty;
    for (let k = 0; k < nb; k++) {
      const i = n + k, enter = B[k];
      if (old[i] >= enter) {
        next[i] = old[i];
        back[i] = i;
      } else {
        next[i] = enter;
        back[i] = Bsource[k];
      }
      next[i] += silence;
    }
    for (let k = 0; k < nb; k++) {
      const i = n + nb + k, enter = B[k] - o.garbageEntryPenalty;
      if (old[i] >= enter) {
        next[i] = old[i];
        back[i] = i;
      } else {
        next[i] = enter;
        back[i] = Bsource[k];
      }
      next[i] += garbage;
    }
    let top = -Infinity;
    for (let i = 0; i < w.size; i++) if (next[i] > top) top = next[i];
    if (Number.isFinite(top)) for (let i = 0; i < w.size; i++) next[i] -= top; // bounded over hours; no decision changes
    this.spare = old;
    this.scores = next;
    this.backs.push({ window: w, back, translation: this.translation });
    this.translation = null;
    this.rows.push(row);
    this.frame++;
  }

  // --- commits -------------------------------------------------------------------------------------------------
  _bestNow() {
    return this.window.globalIds[argmax(this.scores)];
  }

  _trace(local, count) {
    // unified ids of the path ending in local state `local` at the newest frame, for the last `count` frames,
    // oldest first
    const path = new Array(count);
    for (let j = count - 1, k = this.backs.length - 1; j >= 0; j--, k--) {
      const { window, back, translation } = this.backs[k];
      path[j] = at(window.globalIds, local);
      local = at(back, local);
      if (translation !== null && local >= 0) local = translation[local];
    }
    return path;
  }

  _commit() {
    // the best path's states of every pending frame but the last lagFrames become final; paths that do not pass
    // through the newest final state are dropped (prune); the window moves to where the path is
    const count = this.backs.length - this.options.lagFrames;
    const path = this._trace(argmax(this.scores), this.backs.length);
    this._finalise(path.slice(0, count));
    const anchor = path[count - 1];
    if (this.options.prune) {
      // each current state traced back to the newest final frame: only those that pass through the anchor stay
      const states = new Int32Array(this.scores.length);
      for (let i = 0; i < states.length; i++) states[i] = i;
      for (let k = this.backs.length - 1; k >= count; k--) {
        const { back, translation } = this.backs[k];
        for (let i = 0; i < states.length; i++) {
          let state = states[i];
          if (state >= 0) {
            state = back[state];
            if (translation !== null && state >= 0) state = translation[state];
          }
          states[i] = state;
        }
      }
      const oldest = this.backs[count - 1].window.globalIds;
      for (let i = 0; i < states.length; i++) {
        if ((states[i] >= 0 ? oldest[states[i]] : -1) !== anchor) this.scores[i] = -Infinity;
      }
    }
    this.backs = this.backs.slice(count);
    this.rows = this.rows.slice(count);
    this._moveWindow();
  }

  _moveWindow() {
    const s = this.script, best = this._bestNow();
    const word = best < s.N ? s.wordOf[best] : (best - s.N) % (s.W + 1);
    const [wa, wb] = this._windowBounds(word), old = this.window;
    if (wa === old.wa && wb === old.wb) return; // (live: most frames) no window built to be thrown away
    const window = new Window(this.script, wa, wb);
    const scores = new Float64Array(window.size).fill(-Infinity);
    for (let i = 0; i < old.size; i++) {
      const j = window.localOne(old.globalIds[i]);
      if (j >= 0) scores[j] = this.scores[i];
    }
    this.translation = new Int32Array(window.size); // new local -> old local, for the traces
    for (let j = 0; j < window.size; j++) this.translation[j] = old.localOne(window.globalIds[j]);
    this.window = window;
    this.scores = scores;
    this.spare = null;
  }

  _finalise(path) {
    // frames become final: their states, and each one's goodness of pronunciation and posterior
    const s = this.script;
    for (let t = 0; t < path.length; t++) {
      const state = path[t], row = this.rows[t];
      const phone = state < s.N ? s.phoneOf[state] : state < s.N + s.W + 1 ? s.silence : -1;
      let gop = 0, posterior = 0;
      if (phone >= 0) {
        let best = -Infinity, second = -Infinity; // the largest two values, equal ones counted twice
        for (let p = 0; p < row.length; p++) {
          if (row[p] > best) {
            second = best;
            best = row[p];
          } else if (row[p] > second) {
            second = row[p];
          }
        }
        const own = row[phone];
        gop = own >= best ? own - second : own - best;
        posterior = Math.exp(own);
        if (state < s.N) {
          this.ratioSum += own - best;
          this.wordFrames++;
        }
      } else {
        this.unscriptedFrames++;
      }
      this.finalGop.push(gop);
      this.finalPosterior.push(posterior);
      this.finalPath.push(state);
    }
  }

  // --- the stream ----------------------------------------------------------------------------------------------
  push(logProbs, count) {
    // count frames in (logProbs: count x P, row-major, as a stream's push gives them); the words whose alignment
    // became final (their end is final and the path has left them)
    const P = this.P, o = this.options;
    if (!(Number.isInteger(count) && count >= 0 && logProbs.length >= count * P)) {
      throw new Error(`push takes count rows of ${P} log-probabilities: ${logProbs.length} values for ${count} rows`);
    }
    for (let t = 0; t < count; t++) {
      const row = new Float64Array(P);
      for (let p = 0; p < P; p++) row[p] = logProbs[t * P + p];
      this._step(row);
      if (this.backs.length >= o.lagFrames + o.commitEvery) this._commit();
    }
    return this._newWords(false);
  }

  finish() {
    // end of stream: the best path that reaches the end of the script, the words after it skipped (with
    // endAtScriptEnd; else the best path at the last frame)
    if (this.backs.length) {
      const w = this.window;
      this._boundaries(this.scores, w);
      const end = w.nb - 1;
      let local = this.options.endAtScriptEnd && w.wb === this.script.W && Number.isFinite(w.B[end]) && w.Bsource[end] >= 0
        ? w.Bsource[end] : argmax(this.scores);
      if (this.translation !== null) { // the last frame's commit moved the window: the trace starts in the window
        // that frame was scored in; a state that window lacked (no path reaches it): its best one
        local = this.translation[local];
        if (local < 0) {
          let best = -1;
          for (let j = 0; j < this.translation.length; j++) {
            if (this.translation[j] >= 0 && (best < 0 || this.scores[j] > this.scores[best])) best = j;
          }
          local = this.translation[best];
        }
      }
      this._finalise(this._trace(local, this.backs.length));
      this.backs = [];
      this.rows = [];
    }
    this.lastWords = this._newWords(true); // what this call made final (push returns its own)
    return this.alignment();
  }

  get position() {
    // {index, inside} of the best path at the newest frame: inside = reading that word; otherwise at the boundary
    // before it (a pause, or speech that is not in the script)
    if (this.frame === 0) return { index: this.startWord, inside: false };
    const s = this.script, best = this._bestNow();
    if (best < s.N) return { index: s.wordOf[best], inside: true };
    return { index: (best - s.N) % (s.W + 1), inside: false };
  }

  _newWords(final) {
    // the words of the final frames not reported yet (a word still open at the newest final frame only when
    // `final`); the scan goes on from where the last one stopped, so each frame is read once
    const s = this.script, path = this.finalPath, T = path.length, words = [];
    let t = this.scan;
    while (t < T) {
      const state = path[t];
      if (state >= s.N) {
        t++;
        continue;
      }
      const word = s.wordOf[state];
      let end = t;
      while (end < T && path[end] < s.N && s.wordOf[path[end]] === word
             && !(end > t && s.first[path[end]] && path[end - 1] !== path[end])) end++;
      if (end === T && !final) break;
      if (end < T && !this._goesOn(word, s.last[path[end - 1]] === 1, path[end])) {
        // live: left to where no path goes from there (broken off inside the word, or back to a word that does not
        // start a sentence): a path given up for a better one (a moment's jump), not the word read
        t = end;
        continue;
      }
      words.push(this._alignedWord(word, t, end));
      t = end;
    }
    this.scan = t;
    this.doneWords.push(...words);
    return words;
  }

  _goesOn(word, exited, state) {
    // whether a path can go from word `word` (from its exit, or else from inside it) to `state` (a word's state or a
    // boundary's silence or garbage, both reached from a boundary b): from inside only to the next word or
    // boundary; from the exit to any boundary after it (skips) or a sentence's start (jumps) (align.py's _goes_on)
    const s = this.script;
    const b = state < s.N ? s.wordOf[state] : (state - s.N) % (s.W + 1);
    if (!exited) return b === word + 1;
    return b > word || s.sentenceStart[b] === 1;
  }

  _alignedWord(word, start, end) {
    const s = this.script, phones = [];
    let t = start;
    while (t < end) {
      const state = this.finalPath[t], phoneStart = s.phoneStart[state];
      let stop = t;
      while (stop < end && s.phoneStart[this.finalPath[stop]] === phoneStart) stop++;
      phones.push({ phone: s.phones[s.phoneOf[state]], startFrame: t, endFrame: stop,
        gop: mean(this.finalGop.slice(t, stop)), confidence: mean(this.finalPosterior.slice(t, stop)) });
      t = stop;
    }
    return wordOf(word, s.texts[word], start, end, phones);
  }

  alignment() {
    // {words (in time order; a word read twice appears twice), notHeard (script positions no path went through),
    // frames, silences and unscripted ([start, end) frame pairs)}
    const s = this.script, path = this.finalPath, words = [];
    for (let word of this.doneWords) { // a word the live path left and re-entered (no pruning) is one word;
      const last = words.at(-1); // offline (one pruned path) a word that follows itself was read twice
      if (!this.options.prune && last && last.index === word.index && last.endFrame === word.startFrame) {
        words.pop();
        word = wordOf(word.index, word.text, last.startFrame, word.endFrame, [...last.phones, ...word.phones]);
      }
      words.push(word);
    }
    const heard = new Set(words.map((w) => w.index)), silences = [], unscripted = [];
    let t = 0;
    while (t < path.length) {
      const state = path[t];
      if (state < s.N) {
        t++;
        continue;
      }
      let end = t;
      while (end < path.length && path[end] === state) end++;
      (state < s.N + s.W + 1 ? silences : unscripted).push([t, end]);
      t = end;
    }
    const notHeard = [];
    for (let w = this.startWord; w < s.W; w++) if (!heard.has(w)) notHeard.push(w);
    const score = alignmentScore(this.ratioSum, this.wordFrames, this.unscriptedFrames, notHeard.length,
      s.W - this.startWord);
    return { words, notHeard, frames: path.length, silences, unscripted, score, unalignable: score < this.options.minScore };
  }
}

// align.py's alignment_score: the mean over word and unscripted frames of log p(aligned phone) - log max p, each
// unscripted frame counting UNSCRIPTED_SCORE (0 with no such frame), plus NOT_HEARD_SCORE x the share not heard
export function alignmentScore(ratioSum, wordFrames, unscriptedFrames, notHeard, words) {
  const frames = wordFrames + unscriptedFrames;
  const fit = frames ? (ratioSum + UNSCRIPTED_SCORE * unscriptedFrames) / frames : 0.0;
  return fit + (words ? NOT_HEARD_SCORE * notHeard / words : 0.0);
}

function wordOf(index, text, startFrame, endFrame, phones) {
  return { index, text, startFrame, endFrame, phones, gop: mean(phones.map((p) => p.gop)),
    confidence: mean(phones.map((p) => p.confidence)) };
}

// offline alignment divides the posteriors by the recording's phone prior to this power (align.py's PRIOR_SCALE)
export const PRIOR_SCALE = 0.6;
const PRIOR_FLOOR = 1e-4;

export function recordingPrior(logProbs, count, P, scale = PRIOR_SCALE) {
  // scale x the log of one recording's mean posterior per phone (Float64Array(P)); null for scale 0 or no frames
  if (!scale || !count) return null;
  const sums = new Float64Array(P);
  for (let t = 0; t < count; t++) for (let p = 0; p < P; p++) sums[p] += Math.exp(logProbs[t * P + p]);
  const prior = new Float64Array(P);
  for (let p = 0; p < P; p++) prior[p] = scale * Math.log(sums[p] / count + PRIOR_FLOOR);
  return prior;
}

export function align(logProbs, count, words, phones, options = new AlignOptions(), sentenceStarts = null,
  priorScale = PRIOR_SCALE) {
  // the alignment of one recording's log-posteriors (count x P) to its words, the posteriors divided by the
  // recording's phone prior to the power priorScale (0: not)
  const aligner = new ScriptAligner(words, phones, options, sentenceStarts,
    recordingPrior(logProbs, count, phones.length, priorScale));
  aligner.push(logProbs, count);
  return aligner.finish();
}

// Python's round(x, digits): the nearest decimal, an exact tie (a binary fraction ending in 5 there) to even
export function pyRound(x, digits) {
  if (!Number.isFinite(x)) return x;
  const extra = 30, exact = x.toFixed(Math.min(100, digits + extra)); // toFixed writes the exact binary value
  if (/^50*$/.test(exact.slice(-extra))) {
    const kept = exact.slice(0, -extra), lastDigit = Number(kept.replace(".", "").at(-1));
    if (lastDigit % 2 === 0) return Number(kept);
  }
  return Number(x.toFixed(digits));
}

// What `speechattn align --format json` writes for the words (speechattn/runtime/align.py's word_dicts): times in
// seconds (3 decimals, clipped to the audio's duration), gop to 3 decimals, confidence to 4.
export function alignmentDicts(alignment, durationSeconds, framesPerSecond = 100, words = null) {
  // `words` (the script's, optional): where they carry their place in the text (startChar), the spoken words of one
  // written token ("$5": five dollars), heard one after the other with no speech outside the script between them,
  // are one entry, as align.py's AlignedFile.word_dicts: its index the first's, its gop their frame-weighted mean,
  // its confidence the least of theirs
  const seconds = (frame) => pyRound(Math.min(frame / framesPerSecond, durationSeconds), 3);
  const token = (index) => (words && words[index] && words[index].startChar !== undefined ? words[index].startChar : null);
  const unscripted = alignment.unscripted || [];
  const out = [], merged = []; // each entry's [next index, end frame, gop x frames, frames]
  for (const w of alignment.words) {
    const phones = w.phones.map((p) => ({ phone: p.phone, start: seconds(p.startFrame), end: seconds(p.endFrame),
      gop: pyRound(p.gop, 3), confidence: pyRound(p.confidence, 4) }));
    const frames = w.endFrame - w.startFrame, at = token(w.index);
    const last = out[out.length - 1], before = merged[merged.length - 1];
    if (last && at !== null && w.index === before[0] && at === token(last.index) &&
        !unscripted.some(([a, b]) => a < w.startFrame && b > before[1])) {
      const [, , total, count] = before;
      merged[merged.length - 1] = [w.index + 1, w.endFrame, total + w.gop * frames, count + frames];
      Object.assign(last, { end: seconds(w.endFrame), confidence: Math.min(last.confidence, pyRound(w.confidence, 4)),
        gop: pyRound((total + w.gop * frames) / Math.max(count + frames, 1), 3) });
      last.phones.push(...phones);
      continue;
    }
    out.push({ word: w.text, index: w.index, start: seconds(w.startFrame), end: seconds(w.endFrame), gop: pyRound(w.gop, 3),
      confidence: pyRound(w.confidence, 4), phones });
    merged.push([w.index + 1, w.endFrame, w.gop * frames, frames]);
  }
  return out;
}

// --- follow-along ------------------------------------------------------------------------------------------------

// Where a reader is in a known text, live: align.py's Follower.  A ScriptAligner with LIVE options (final 100 ms
// behind the newest frame; a reader may pause, repeat, skip or start again) and what a display needs: `position`
// {index, inside}, the aligned `phone` there, the words `heard` (each script position's latest reading) and the words
// passed over.  push(logProbs, count) -> the words made final (in time order; a word read again comes again);
// finish() -> the last ones, and `alignment` is the whole alignment.
export class Follower {
  constructor(words, phones, { sentenceStarts = null, options = LIVE, startWord = 0 } = {}) {
    this.words = words;
    this.aligner = new ScriptAligner(words, phones, options, sentenceStarts, null, startWord);
    this.heard = new Map(); // script position -> its latest reading
    this.furthest = startWord - 1; // the furthest script position heard
    this.alignment = null; // after finish()
  }

  push(logProbs, count) {
    return this._heard(this.aligner.push(logProbs, count));
  }

  finish() {
    this.alignment = this.aligner.finish();
    return this._heard(this.aligner.lastWords);
  }

  _heard(words) {
    for (const word of words) {
      this.heard.set(word.index, word);
      this.furthest = Math.max(this.furthest, word.index);
    }
    return words;
  }

  get position() {
    return this.aligner.position;
  }

  get phone() {
    // the best path's phone at the newest frame: the word's aligned phone, "sil" between words, null in speech that
    // is not in the script (and before the first frame)
    const a = this.aligner;
    if (a.frame === 0) return null;
    const s = a.script, best = a._bestNow();
    return best < s.N ? s.phones[s.phoneOf[best]] : best < s.N + s.W + 1 ? SILENCE : null;
  }

  notHeard() {
    // positions before the furthest word heard that no reading went through (passed over so far; after finish(),
    // alignment.notHeard has the words after it too)
    const out = [];
    for (let i = this.aligner.startWord; i < this.furthest; i++) if (!this.heard.has(i)) out.push(i);
    return out;
  }
}

// A word made final as `speechattn mic --script` and export/node/follow.mjs print it (align.py's word_event): times
// in seconds (3 decimals), gop to 3 decimals, the positions passed over so far.
export function wordEvent(word, notHeard, framesPerSecond = 100) {
  return { type: "word", index: word.index, word: word.text, start: pyRound(word.startFrame / framesPerSecond, 3),
    end: pyRound(word.endFrame / framesPerSecond, 3), gop: pyRound(word.gop, 3), not_heard: [...notHeard] };
}
