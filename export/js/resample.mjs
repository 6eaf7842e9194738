// Streaming sample-rate conversion for the microphone path: windowed-sinc interpolation (Blackman window,
// 48 zero crossings each side), low-passed below the lower of the two Nyquist rates.  Pieces of any size in,
// the same output as converting the whole signal at once.
export class Resampler {
  constructor(inputRate, outputRate, zeroCrossings = 48) {
    this.step = inputRate / outputRate; // input samples per output sample
    this.cutoff = Math.min(1, outputRate / inputRate) * 0.98; // of the input Nyquist rate, with a small margin
    this.half = Math.ceil(zeroCrossings / this.cutoff); // taps each side, in input samples
    this.base = -this.half; // absolute input index of buffer[0]; the signal starts after `half` zeros
    this.buffer = new Float32Array(this.half);
    this.next = 0; // absolute input time of the next output sample
    // the kernel tabulated at 1/512 of an input sample, read with linear interpolation
    this.resolution = 512;
    this.table = new Float64Array(this.half * this.resolution + 2);
    for (let i = 0; i < this.table.length; i++) this.table[i] = this.exactKernel(i / this.resolution);
  }

  exactKernel(x) {
    if (Math.abs(x) >= this.half) return 0;
    const c = this.cutoff, sinc = x === 0 ? 1 : Math.sin(Math.PI * c * x) / (Math.PI * c * x);
    const w = 0.42 + 0.5 * Math.cos(Math.PI * x / this.half) + 0.08 * Math.cos(2 * Math.PI * x / this.half);
    return c * sinc * w;
  }

  kernel(x) {
    const position = Math.abs(x) * this.resolution, i = Math.floor(position);
    if (i >= this.table.length - 1) return 0;
    const f = position - i;
    return this.table[i] * (1 - f) + this.table[i + 1] * f;
  }

  process(input) {
    const joined = new Float32Array(this.buffer.length + input.length);
    joined.set(this.buffer);
    joined.set(input, this.buffer.length);
    this.buffer = joined;
    const last = this.base + this.buffer.length - 1; // newest input index held
    const out = [];
    while (this.next + this.half <= last) {
      const centre = Math.floor(this.next);
      let sum = 0;
      for (let n = centre - this.half + 1; n <= centre + this.half; n++) {
        sum += this.buffer[n - this.base] * this.kernel(this.next - n);
      }
      out.push(sum);
      this.next += this.step;
    }
    const keep = Math.floor(this.next) - this.half; // oldest index any later output reads
    if (keep > this.base) {
      this.buffer = this.buffer.slice(keep - this.base);
      this.base = keep;
    }
    return Float32Array.from(out);
  }
}
