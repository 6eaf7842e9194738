// Streaming sample-rate conversion, the same algorithm and numbers as export/resample.py: windowed-sinc
// interpolation (Blackman window, 48 zero crossings each side), low-passed at 98 % of the lower of the two Nyquist
// rates, as a rational polyphase filter: output k sits at input position k * M / L exactly (M / L the rate ratio in
// lowest terms), kept as an integer centre and phase, so every output of a phase uses the same tabulated weights in
// both languages.  Pieces of any size in, the same output as converting the whole signal at once.
export class Resampler {
  constructor(inputRate, outputRate, zeroCrossings = 48) {
    if (!(inputRate >= 1 && inputRate <= 768000 && outputRate >= 1 && outputRate <= 768000) ||
        !Number.isInteger(inputRate) || !Number.isInteger(outputRate)) {
      throw new Error(`sample rates must be whole numbers from 1 to 768000 Hz, not ${inputRate} and ${outputRate}`);
    }
    const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
    const g = gcd(inputRate, outputRate);
    this.M = inputRate / g; // input samples per L outputs
    this.L = outputRate / g; // phases
    this.cutoff = Math.min(1, outputRate / inputRate) * 0.98; // of the input Nyquist rate, with a small margin
    this.half = Math.ceil(zeroCrossings / this.cutoff); // taps each side, in input samples
    if (this.L * 2 * this.half > 50_000_000) throw new Error(`${inputRate} Hz to ${outputRate} Hz: too many phases`);
    this.base = -this.half; // absolute input index of buffer[0]; the signal starts after `half` zeros
    this.buffer = new Float32Array(this.half);
    this.centre = 0; // floor of the next output's input position
    this.phase = 0; // its fraction, in 1/L of an input sample
    // weights[phase][t]: the kernel at (phase / L) - (t - half + 1), for the taps n = centre - half + 1 ... centre + half
    const taps = 2 * this.half;
    this.weights = new Float64Array(this.L * taps);
    for (let p = 0; p < this.L; p++) {
      for (let t = 0; t < taps; t++) this.weights[p * taps + t] = this.kernel(p / this.L - (t - this.half + 1));
    }
  }

  kernel(x) {
    if (Math.abs(x) >= this.half) return 0;
    const c = this.cutoff, sinc = x === 0 ? 1 : Math.sin(Math.PI * c * x) / (Math.PI * c * x);
    const w = 0.42 + 0.5 * Math.cos(Math.PI * x / this.half) + 0.08 * Math.cos(2 * Math.PI * x / this.half);
    return c * sinc * w;
  }

  process(input) {
    const joined = new Float32Array(this.buffer.length + input.length);
    joined.set(this.buffer);
    joined.set(input, this.buffer.length);
    this.buffer = joined;
    const last = this.base + this.buffer.length - 1; // newest input index held
    const taps = 2 * this.half, out = [];
    while (this.centre + this.half <= last) {
      const first = this.centre - this.half + 1 - this.base, w = this.phase * taps;
      let sum = 0;
      for (let t = 0; t < taps; t++) sum += this.buffer[first + t] * this.weights[w + t];
      out.push(sum);
      this.phase += this.M;
      this.centre += Math.floor(this.phase / this.L);
      this.phase %= this.L;
    }
    const keep = this.centre - this.half; // oldest index any later output reads
    if (keep > this.base) {
      this.buffer = this.buffer.slice(keep - this.base);
      this.base = keep;
    }
    return Float32Array.from(out);
  }
}
