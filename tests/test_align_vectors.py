"""The forced aligner in JavaScript (export/js/align.mjs) equal to the Python kit's (export/align.py): the shared
vectors (tests/align-vectors.json, written by tools/align_vectors.py) are what the Python aligner gives now, and
Node and the browser page's Chromium give the same alignments from the same frames.

Node needs Node.js; Chromium needs chromium, chromium-driver and `npm ci` in export/web (as tests/test_browser.py)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from test_browser import browser, call, server  # noqa: F401  (its fixtures: the same Chromium and page server)
from test_js_clients import json_differences, node

from speechattn_export.align import LIVE, AlignOptions

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from align_vectors import OUTPUT, decode, expected, refusal  # noqa: E402

RERUN = "the Python aligner changed: run python tools/align_vectors.py and bring export/js/align.mjs along"


def committed() -> dict:
    return json.loads(OUTPUT.read_text())


def test_the_vectors_carry_the_python_defaults_and_live_options():
    vectors = committed()
    assert vectors["defaults"] == dataclasses.asdict(AlignOptions()), RERUN
    assert vectors["live"] == dataclasses.asdict(LIVE), RERUN


def test_the_shared_vectors_are_what_the_python_aligner_gives_now():
    """Recomputed from the file's own inputs (its frames, words and options), so neither the model nor the lexicon
    can move them; frames and phones exactly, gop and confidence within the file's tolerance (numpy's exp may differ
    by an ulp across CPUs)."""
    vectors = committed()
    for case in vectors["cases"]:
        now = json.loads(json.dumps(expected(case, decode(vectors, case))))
        differences = json_differences(case["expected"], now, vectors["tolerance"])
        assert not differences, f"{case['name']}: {RERUN}; first differences: {differences[:3]}"
    for error in vectors["errors"]:
        assert refusal(error["words"], error["phones"]) == error["error"], RERUN


def test_the_vectors_cover_what_the_aligner_does():
    """Words not said, speech not in the script, jumps back (a word read twice), live re-reports, window moves."""
    vectors = committed()
    results = [c["expected"] for c in vectors["cases"]]
    assert len(vectors["cases"]) >= 15 and {c["options"]["prune"] for c in vectors["cases"]} == {True, False}
    assert sum(bool(r["not_heard"]) for r in results) >= 4 and sum(bool(r["unscripted"]) for r in results) >= 4
    assert any(len({w["index"] for w in r["words"]}) < len(r["words"]) for r in results)  # a word heard twice
    # taken up at a word (start_word): live and offline, and after the last word
    taken_up = [c for c in vectors["cases"] if c.get("start_word")]
    assert {c["options"]["prune"] for c in taken_up} == {True, False}
    assert any(c["start_word"] == len(c["words"]) for c in taken_up)
    assert all(w["index"] >= c["start_word"] for c in taken_up if "read again" not in c["name"]
               for w in c["expected"]["words"])  # nothing before the word taken up, unless the reader goes back
    # a live stream that ends inside the text: no word after the reader's position
    assert not any(c["options"]["end_at_script_end"] for c in vectors["cases"] if "stops inside" in c["name"])
    assert any(r["frames"] == 0 for r in results) and any(r["pushed"] for r in results)
    assert any(c["options"]["window_ahead_words"] < len(c["words"]) / 2 for c in vectors["cases"])  # windows move
    assert sum(c.get("prior_scale", 0) > 0 for c in vectors["cases"]) >= 3  # offline: the recording's prior


def test_node_aligns_the_shared_vectors_as_python_does():
    result = node("export/node/check-align-vectors.mjs")
    cases = len(committed()["cases"])
    assert result.returncode == 0 and f"{cases} of {cases} cases agree" in result.stdout, result.stderr[-3000:]


@pytest.mark.slow
def test_the_page_aligns_the_shared_vectors_as_python_does(browser, server):  # noqa: F811 (the fixtures)
    """The modules as the page loads them (/js/ and /tests/ from `speechattn web`), in headless Chromium."""
    browser.get(server)
    failures = call(browser, "import(new URL('../js/vectors.mjs', location.href)).then(async (m) => "
                             "m.checkAlignVectors(await (await fetch(new URL('../tests/align-vectors.json', "
                             "location.href))).json()))")
    assert failures == [], failures


def test_node_aligns_a_recording_as_speechattn_align_does(capsys):
    """The whole way in Node (onnxruntime-node, the JS lexicon, the aligner, alignmentDicts) against `speechattn align
    --format json`: words, phones and times exactly; gop and confidence within 2e-3 (the two onnxruntime builds
    round in the last bits; equal on the machine that wrote this)."""
    from speechattn.cli import main

    runtime = ROOT / "export" / "node" / "node_modules" / "onnxruntime-node"
    if not runtime.exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    sample = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"
    text = "This no longer appears to be the case, at all."
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import * as ort from {json.dumps(str(runtime / "dist" / "index.js"))};
        import {{ StreamingModel }} from "./export/js/speechattn.mjs";
        import {{ readWav }} from "./export/js/wav.mjs";
        import {{ align, alignmentDicts }} from "./export/js/align.mjs";
        import {{ loadBundledLexicon }} from "./export/node/lexicon.mjs";
        const model = await StreamingModel.create(ort, readFileSync("export/models/default.onnx"));
        const words = await (await loadBundledLexicon(ort)).words({json.dumps(text)});
        const {{ samples }} = readWav(readFileSync({json.dumps(str(sample))}));
        const stream = model.newStream(Math.max(...model.allowedChunkFrames));  // offline: the largest chunk, as align
        const pieces = [];
        for (let i = 0; i < samples.length; i += 4000) pieces.push(await stream.push(samples.subarray(i, i + 4000)));
        pieces.push(await stream.finish());
        const count = pieces.reduce((n, f) => n + f.count, 0), P = model.phones.length;
        const logProbs = new Float32Array(count * P);
        let at = 0;
        for (const f of pieces) {{ logProbs.set(f.logProbs.subarray(0, f.count * P), at); at += f.count * P; }}
        const alignment = align(logProbs, count, words, model.phones);  // the recording's prior, as speechattn align
        console.log(JSON.stringify({{ words: alignmentDicts(alignment, samples.length / 16000), notHeard: alignment.notHeard }}));
    """
    result = node("--input-type=module", "-e", script)
    assert result.returncode == 0, result.stderr[-2000:]
    ours = json.loads(result.stdout)
    # The JavaScript kit draws the neural aligner's boundaries (the HMM-GMM stage is the command line's alone).
    assert main(["align", str(sample), text, "--format", "json", "--model", "default", "--boundaries", "neural"]) == 0
    python = json.loads(capsys.readouterr().out)
    assert ours["notHeard"] == [w["index"] for w in python["not_heard"]] and len(python["words"]) >= 8

    def exact(words):
        return [(w["word"], w["index"], w["start"], w["end"], [(p["phone"], p["start"], p["end"]) for p in w["phones"]])
                for w in words]

    assert exact(ours["words"]) == exact(python["words"])
    assert json_differences(python["words"], ours["words"], 2e-3) == []
