"""Write tests/segmenter-vectors.json: frame log-probabilities in, segments out, for every segmenter setting
the runtimes offer.  The Python runtime (tests/test_js_clients.py), the Node.js client and the browser
page (export/js/speechattn.mjs) are each tested against this file, which keeps the three equal.

    python tools/segmenter_vectors.py            # rewrite the file after a change to the Python segmenters
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from speechattn_export.decoder import DecoderConfig, new_segmenter  # noqa: E402
from speechattn.phones import PHONES  # noqa: E402

OUTPUT = ROOT / "tests" / "segmenter-vectors.json"
CASES = [  # (name, decoder, options as the JS client names them)
    ("bigram default", "bigram", {}),
    ("bigram, no look-ahead, min 1", "bigram", {"lookaheadFrames": 0, "minFrames": 1}),
    ("bigram, look-ahead 3, min 2, lm weight 0.5, penalty 1", "bigram",
     {"lookaheadFrames": 3, "minFrames": 2, "lmWeight": 0.5, "insertionPenalty": 1.0}),
    ("hysteresis default", "hysteresis", {}),
    ("hysteresis, min 1", "hysteresis", {"minFrames": 1}),
    ("hysteresis, min 5", "hysteresis", {"minFrames": 5}),
]


def log_probs(frames: int, seed: int) -> np.ndarray:
    """Posteriors with runs, like a tagger's: a phone sequence with durations, noisy logits."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(rng.integers(0, len(PHONES), size=frames), rng.integers(2, 15, size=frames))[:frames]
    logits = rng.normal(0, 1.5, size=(frames, len(PHONES)))
    logits[np.arange(frames), labels] += rng.uniform(1, 7, size=frames)
    out = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return np.round(out, 3).astype(np.float32)  # 3 decimals: a JSON number each runtime reads as the same float32


def segmenter(decoder: str, options: dict):
    if decoder == "hysteresis":
        return new_segmenter("hysteresis", list(PHONES), options.get("minFrames"))
    names = {"minFrames": "min_frames", "lookaheadFrames": "lookahead_frames", "lmWeight": "lm_weight",
             "insertionPenalty": "insertion_penalty"}
    config = DecoderConfig(**{names[k]: v for k, v in options.items()})
    return new_segmenter("bigram", list(PHONES), config=config)


def run(decoder: str, options: dict, values: np.ndarray, pushes: list[int]) -> list[dict]:
    s, segments, position = segmenter(decoder, options), [], 0
    for size in pushes:
        segments += s.push(values[position : position + size])
        position += size
    segments += s.push(values[position:]) + s.finish()
    return [{"startFrame": g.start_frame, "endFrame": g.end_frame, "phone": g.phone, "confidence": g.confidence}
            for g in segments]


def build() -> dict:
    cases = []
    for number, (name, decoder, options) in enumerate(CASES):
        values = log_probs(150, seed=number)
        pushes = np.random.default_rng(100 + number).integers(0, 20, size=20).tolist()
        cases.append({"name": name, "decoder": decoder, "options": options, "phones": list(PHONES),
                      "pushes": pushes, "log_probs": [[round(float(x), 3) for x in row] for row in values],
                      "segments": run(decoder, options, values, pushes)})
    return {"about": __doc__.split("\n")[0], "bigram": "export/models/phone-bigram.json",
            "confidence_tolerance": 1e-9, "cases": cases}


if __name__ == "__main__":
    OUTPUT.write_text(json.dumps(build()) + "\n")
    print(f"wrote {OUTPUT}")
