"""Streaming sample-rate conversion, the same algorithm and numbers as js/resample.mjs, so an app gets the same
16 kHz audio, hence the same phones, from the same file in Python, Node.js and the browser.

Windowed-sinc interpolation: a Blackman window, 48 zero crossings each side, low-passed at 98 % of the lower of the
two Nyquist rates, as a rational polyphase filter: output k sits at input position k * M / L exactly (M / L the rate
ratio in lowest terms), kept as an integer centre and phase, so the outputs of one phase share one row of tabulated
weights in both languages (each output a float64 dot product of 2 x half samples, rounded to float32; the two
languages add in another order, so they agree within a float32 rounding).  Pieces of any size in, the same output
as converting the whole signal at once.  numpy only.

    resampler = Resampler(44100, 16000)
    out = resampler.process(piece)          # float32, as many samples as the input so far allows
    out = resampler.flush()                 # the end of the signal: the last outputs, as if zeros followed
"""

from __future__ import annotations

from math import gcd

import numpy as np

BLOCK_OUTPUTS = 4096  # outputs per matrix product: bounds the (outputs, taps) gather


class Resampler:
    def __init__(self, input_rate: int, output_rate: int, zero_crossings: int = 48) -> None:
        if not (isinstance(input_rate, (int, np.integer)) and isinstance(output_rate, (int, np.integer))) or \
                not 1 <= input_rate <= 768_000 or not 1 <= output_rate <= 768_000:
            raise ValueError(f"sample rates must be whole numbers from 1 to 768000 Hz, not {input_rate} and "
                             f"{output_rate}")
        g = gcd(int(input_rate), int(output_rate))
        self.M, self.L = int(input_rate) // g, int(output_rate) // g  # input samples per L outputs; phases
        self.cutoff = min(1.0, output_rate / input_rate) * 0.98  # of the input Nyquist rate, with a small margin
        self.half = int(np.ceil(zero_crossings / self.cutoff))  # taps each side, in input samples
        if self.L * 2 * self.half > 50_000_000:
            raise ValueError(f"{input_rate} Hz to {output_rate} Hz: too many phases")
        self.base = -self.half  # absolute input index of buffer[0]; the signal starts after `half` zeros
        self.buffer = np.zeros(self.half, dtype=np.float32)
        self.centre, self.phase = 0, 0  # the next output's input position: centre + phase / L
        self.taps = np.arange(-self.half + 1, self.half + 1)  # n - centre for the 2 x half taps of an output
        x = np.arange(self.L)[:, None] / self.L - self.taps[None, :]
        self.weights = self._kernel(x)  # (L phases, 2 x half taps)

    def _kernel(self, x: np.ndarray) -> np.ndarray:
        c, half = self.cutoff, self.half
        with np.errstate(invalid="ignore", divide="ignore"):
            sinc = np.where(x == 0, 1.0, np.sin(np.pi * c * x) / (np.pi * c * x))
        window = 0.42 + 0.5 * np.cos(np.pi * x / half) + 0.08 * np.cos(2 * np.pi * x / half)
        return np.where(np.abs(x) >= half, 0.0, c * sinc * window)

    def process(self, samples) -> np.ndarray:
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        self.buffer = np.concatenate([self.buffer, samples])
        last = self.base + len(self.buffer) - 1  # newest input index held
        # outputs whose centre + half <= last: the k-th from now sits at centre + (phase + k M) // L
        available = last - self.half - self.centre  # how far the centre may still move, in input samples
        count = 0 if available < 0 else (available * self.L + self.L - 1 - self.phase) // self.M + 1
        count = max(0, count)
        while count and self.centre + (self.phase + (count - 1) * self.M) // self.L + self.half > last:
            count -= 1
        out = np.empty(count, dtype=np.float32)
        for start in range(0, count, BLOCK_OUTPUTS):
            k = np.arange(start, min(count, start + BLOCK_OUTPUTS), dtype=np.int64)
            steps = self.phase + k * self.M
            centres, phases = self.centre + steps // self.L, steps % self.L
            n = centres[:, None] + self.taps[None, :] - self.base  # (outputs, taps) buffer indices
            out[start:start + len(k)] = np.einsum("ij,ij->i", self.buffer[n].astype(np.float64),
                                                  self.weights[phases])
        steps = self.phase + count * self.M
        self.centre, self.phase = self.centre + steps // self.L, steps % self.L
        keep = self.centre - self.half  # oldest index any later output reads
        if keep > self.base:
            self.buffer = self.buffer[keep - self.base:]
            self.base = keep
        return out

    def flush(self) -> np.ndarray:
        """The outputs the end of the signal still owes (zeros after it, as export/node/transcribe.mjs appends)."""
        return self.process(np.zeros(2 * self.half + 2, dtype=np.float32))


def resample(samples, input_rate: int, output_rate: int) -> np.ndarray:
    """A whole signal at once, cut to round(n * out / in) samples: what export/node/transcribe.mjs's resampleWhole
    gives."""
    samples = np.asarray(samples, dtype=np.float32).reshape(-1)
    resampler = Resampler(input_rate, output_rate)
    out = np.concatenate([resampler.process(samples), resampler.flush()])
    return out[:int(round(len(samples) * output_rate / input_rate))]
