"""The JavaScript client (export/js/) against the Python runtime: the shared segmenter test vector, and the
Node.js transcriber's segments equal to `speechattn transcribe`'s on the same recording.

Needs Node.js and `npm ci` in export/node (the README's test command does both)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"


def node(*args: str) -> subprocess.CompletedProcess:
    if not NODE:
        pytest.skip("Node.js is not installed (the README's test command installs it: apt-get install nodejs)")
    return subprocess.run([NODE, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_shared_vector_is_what_the_python_segmenters_give_now():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from segmenter_vectors import OUTPUT, build

    committed = json.loads(OUTPUT.read_text())
    # Frames and phones exactly; confidences within the vector's own stated tolerance (1e-9): the vector was
    # written on one CPU, and numpy's exp/log differ by an ulp (1.1e-16) across CPUs and builds.
    differences = json_differences(committed, json.loads(json.dumps(build())), committed["confidence_tolerance"])
    assert not differences, ("the Python segmenters changed: run python tools/segmenter_vectors.py and check the "
                             f"JavaScript port; first differences: {differences[:3]}")


def json_differences(expected, actual, tolerance: float, where: str = "") -> list[str]:
    """Where two JSON values differ: numbers that are not both integers may differ by `tolerance` (absolute)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return [f"{where}: keys {sorted(expected)} != {sorted(actual)}"]
        return [d for key in expected for d in json_differences(expected[key], actual[key], tolerance, f"{where}.{key}")]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(expected)} items != {len(actual)}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in json_differences(e, a, tolerance, f"{where}[{i}]")]
    if isinstance(expected, float) or isinstance(actual, float):
        if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool) \
                and abs(expected - actual) <= tolerance:
            return []
    elif expected == actual:
        return []
    return [f"{where}: {expected!r} != {actual!r}"]


def test_json_differences_allows_an_ulp_in_floats_and_nothing_else():
    assert json_differences({"c": [0.1, 2]}, {"c": [0.1 + 1.1e-16, 2]}, 1e-9) == []
    assert json_differences({"c": [0.1, 2]}, {"c": [0.1 + 1e-6, 2]}, 1e-9)
    assert json_differences({"c": [0.1, 2]}, {"c": [0.1, 3]}, 1e-9)  # integers (frames) exactly
    assert json_differences({"p": "AA"}, {"p": "AE"}, 1e-9) and json_differences([1], [1, 2], 1e-9)


def test_the_javascript_segmenters_pass_the_shared_vector():
    result = node("export/node/check-vectors.mjs")
    assert result.returncode == 0, result.stderr
    assert "6 of 6 cases agree" in result.stdout


@pytest.mark.parametrize("options", [[], ["--decoder", "hysteresis"], ["--chunk-frames", "4"], ["--model", "default"],
                                     ["--phases", "1"], ["--phases", "4", "--model", "default"],
                                     ["--chunk-frames", "400", "--model", "file-int8"]])
def test_node_transcribes_a_recording_exactly_as_python_does(options, capsys):
    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    result = node("export/node/transcribe.mjs", str(SAMPLE), *options)
    assert result.returncode == 0, result.stderr
    assert main(["transcribe", str(SAMPLE), "--format", "json", *options]) == 0
    python = json.loads(capsys.readouterr().out)
    ours = json.loads(result.stdout)
    assert len(python["segments"]) > 5
    # Phones and boundaries exactly; confidences (printed to 4 decimals) within 1e-3: onnxruntime-node 1.30 and
    # Python's onnxruntime 1.31 round MultiHeadAttention differently in the last bits (measured: one confidence of
    # ~40 one unit apart in the 4th decimal at C = 4, none at C = 8).
    assert [(s["start"], s["end"], s["phone"]) for s in ours["segments"]] == [
        (s["start"], s["end"], s["phone"]) for s in python["segments"]]
    assert max(abs(a["confidence"] - b["confidence"]) for a, b in zip(ours["segments"], python["segments"])) < 1e-3
    assert ours["duration"] == python["duration"] and ours["chunk_frames"] == python["chunk_frames"]
    assert ours["phases"] == python["phases"] and list(ours) == list(python)  # the same keys, in the same order


def test_node_says_what_is_wrong_in_one_line(tmp_path):
    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    garbage = tmp_path / "x.wav"
    garbage.write_bytes(b"not audio at all")
    import numpy as np
    import soundfile as sf

    nan = tmp_path / "nan.wav"
    sf.write(nan, np.array([0.1, np.nan, 0.2] * 800, np.float32), 16000, subtype="FLOAT")
    for args, expected, status in (([str(garbage)], "not a WAV file", 1),
                                   ([str(nan)], "800 samples are NaN or infinite, the first at 0.000 s; the file is "
                                    "corrupt", 1),
                                   ([str(SAMPLE), "--decoder", "viterbi"], "--decoder must be one of bigram, hysteresis", 2),
                                   ([str(SAMPLE), "--model", str(garbage)], "not an ONNX file", 1)):
        result = node("export/node/transcribe.mjs", *args)
        assert result.returncode == status and expected in result.stderr and \
            len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)


def test_node_resamples_any_rate_as_python_does(capsys):
    """The 8 kHz bundled sample: Python resamples with soxr, Node with the page's windowed-sinc resampler, so the
    audio differs by a little and near ties may fall either way: nine 10 ms frames in ten carry the same phone, the
    phone sequences are at most one edit in ten apart, the same duration (measured: round 15, all 37 phones the
    same; round 16, 26 of 27, EH against AH on a near tie; round 17, 28 against 29 phones, one AW inserted between
    AE and N on Python's side, 96.6 % of frames the same; over two phases, the files' default since: 29 phones each,
    K against P at the first, 97.9 % of frames the same).  At 16 kHz (the test above) nothing is resampled and
    segments are exact."""
    from rapidfuzz.distance import Levenshtein

    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    sample = ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav"
    result = node("export/node/transcribe.mjs", str(sample))
    assert result.returncode == 0, result.stderr
    assert main(["transcribe", str(sample), "--format", "json"]) == 0
    python, ours = json.loads(capsys.readouterr().out), json.loads(result.stdout)
    assert ours["sample_rate"] == python["sample_rate"] == 8000 and ours["duration"] == python["duration"]

    def frames(transcript):  # the phone of every 10 ms frame (from each segment's start and end frame: rounding
        # each segment's length instead could add a frame or lose one)
        return [s["phone"] for s in transcript["segments"] for _ in range(round(100 * s["start"]), round(100 * s["end"]))]

    theirs, mine = frames(python), frames(ours)
    assert len(theirs) == len(mine)
    assert sum(a == b for a, b in zip(theirs, mine)) >= 0.9 * len(theirs)
    phones = [[s["phone"] for s in t["segments"]] for t in (python, ours)]
    assert Levenshtein.distance(*phones) <= max(1, len(phones[0]) // 10), phones
    assert ours["model"] == python["model"] and ours["format_version"] == python["format_version"]


@pytest.mark.parametrize("rates", [(8000, 16000), (44100, 16000), (48000, 16000), (22050, 16000), (16000, 44100)])
def test_the_kits_resamplers_give_the_same_samples_in_python_and_node(rates, tmp_path):
    """export/resample.py and export/js/resample.mjs: the same rational polyphase filter, sample for sample (both
    add float64 products; a difference would be one float32 rounding), and pieces of any size give the whole."""
    from speechattn_export.resample import Resampler, resample

    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    source, target = rates
    signal = (np.random.default_rng(source).standard_normal(source) * 0.2).astype("<f4")
    signal.tofile(tmp_path / "in.f32")
    script = (f"import {{ readFileSync, writeFileSync }} from 'node:fs';"
              f"import {{ resampleWhole }} from {json.dumps(str(ROOT / 'export/node/transcribe.mjs'))};"
              f"const x = new Float32Array(readFileSync({json.dumps(str(tmp_path / 'in.f32'))}).buffer.slice(0));"
              f"writeFileSync({json.dumps(str(tmp_path / 'out.f32'))}, Buffer.from(resampleWhole(x, {source}, "
              f"{target}).buffer));")
    result = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    javascript, python = np.fromfile(tmp_path / "out.f32", dtype="<f4"), resample(signal, source, target)
    assert len(python) == len(javascript) == round(len(signal) * target / source)
    np.testing.assert_allclose(python, javascript, rtol=0, atol=1e-7)
    resampler = Resampler(source, target)
    pieces = [resampler.process(signal[i:i + 333]) for i in range(0, len(signal), 333)] + [resampler.flush()]
    np.testing.assert_array_equal(np.concatenate(pieces)[:len(python)], python)


def test_the_python_kit_and_node_give_the_same_segments_on_every_bundled_sample(capsys):
    """An app gets the same phones from the same file in every client: the Python kit (PhoneStream, given the
    file's own rate, at the largest chunk and over two phases as files stream) and the Node transcriber, the 8 kHz
    sample included; and
    with no model named, Node's transcriber and `speechattn transcribe` alike (the file model after its pre-roll)."""
    import soundfile as sf

    from speechattn_export import DecodingOptions, load_model

    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    model = load_model("default")
    samples = sorted((ROOT / "speechattn" / "runtime" / "samples").glob("*.wav"))
    assert {sf.info(str(s)).samplerate for s in samples} == {8000, 16000}
    for sample in samples:
        result = node("export/node/transcribe.mjs", str(sample), "--model", "default")
        assert result.returncode == 0, result.stderr
        audio, rate = sf.read(sample, dtype="float32")
        stream = model.open(DecodingOptions(chunk_frames=max(model.allowed_chunk_frames)), phases=2)  # as files
        for start in range(0, len(audio), 1111):
            stream.push(audio[start:start + 1111], sample_rate=rate)
        stream.finish()
        assert stream.segment_dicts() == json.loads(result.stdout)["segments"], sample.name
        files = node("export/node/transcribe.mjs", str(sample))
        assert files.returncode == 0, files.stderr
        assert main(["transcribe", str(sample), "--format", "json"]) == 0
        ours, theirs = json.loads(files.stdout), json.loads(capsys.readouterr().out)
        assert ours["model"]["name"] == theirs["model"]["name"] == "file-int8.onnx"
        if rate != 16000:  # `transcribe` resamples a file with soxr, the kits with their own filter: near ties may
            continue  # fall either way (test_node_resamples_any_rate_as_python_does); at 16 kHz, exact
        assert [(s["start"], s["end"], s["phone"]) for s in ours["segments"]] == [
            (s["start"], s["end"], s["phone"]) for s in theirs["segments"]], sample.name


def test_node_refuses_a_model_whose_metadata_lies_and_a_bad_bigram_in_one_line(tmp_path, tiny_onnx):
    """The same checks as the Python client: hop_samples = 0 used to loop forever; a bad --bigram file printed a
    stack trace quoting the file's first line."""
    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    import onnx

    proto = onnx.load(str(tiny_onnx))
    for prop in proto.metadata_props:
        if prop.key == "hop_samples":
            prop.value = "0"
    onnx.save(proto, str(tmp_path / "lying.onnx"))
    (tmp_path / "bigram.json").write_text("secret first line of a private file\n")
    for args, expected in (([str(SAMPLE), "--model", str(tmp_path / "lying.onnx")], "hop_samples = 0 is outside"),
                           ([str(SAMPLE), "--bigram", str(tmp_path / "bigram.json")], "not a phone bigram file")):
        result = node("export/node/transcribe.mjs", *args)
        assert result.returncode == 1 and expected in result.stderr, result.stderr  # an input failed: 1, as Python
        assert len(result.stderr.strip().splitlines()) == 1 and "secret" not in result.stderr


def test_the_javascript_client_packs_installs_and_runs_as_an_npm_package(tmp_path):
    """`npm pack` in export/js gives a tarball that installs (no dependencies; onnxruntime is the user's) and whose
    entry points import and transcribe with onnxruntime-node."""
    npm = shutil.which("npm")
    if not npm or not NODE:
        pytest.skip("Node.js and npm are not installed (apt-get install nodejs)")
    runtime = ROOT / "export" / "node" / "node_modules" / "onnxruntime-node"
    if not runtime.exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    packed = subprocess.run([npm, "pack", "--pack-destination", str(tmp_path)], cwd=ROOT / "export" / "js",
                            capture_output=True, text=True, timeout=120)
    assert packed.returncode == 0, packed.stderr
    tarball = next(tmp_path.glob("speechattn-*.tgz"))
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"name": "app", "version": "1.0.0", "type": "module"}')
    installed = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--offline", str(tarball)], cwd=app,
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import * as ort from {json.dumps(str(runtime / "dist" / "index.js"))};
        import {{ StreamingModel, newSegmenter }} from "speechattn";
        import {{ readWav }} from "speechattn/wav";
        import {{ Resampler }} from "speechattn/resample";
        const model = await StreamingModel.create(ort, readFileSync({json.dumps(str(ROOT / "export/models/default-int8.onnx"))}));
        let {{ samples, rate }} = readWav(readFileSync({json.dumps(str(ROOT / "speechattn/runtime/samples/please-enter-your-password.wav"))}));
        samples = new Resampler(rate, model.sampleRate).process(samples);
        const stream = model.newStream();
        const segmenter = newSegmenter("hysteresis", model.phones, null);
        const a = await stream.push(samples), b = await stream.finish();
        const segments = [...segmenter.push(a.logProbs, a.count), ...segmenter.push(b.logProbs, b.count), ...segmenter.finish()];
        console.log(segments.map((s) => model.phones[s.phone]).filter((p) => p !== "sil").length);
    """
    (app / "run.mjs").write_text(script)
    result = subprocess.run([NODE, "run.mjs"], cwd=app, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) > 10  # phones of "please enter your password ..."


def test_the_javascript_viseme_tables_are_pythons():
    from speechattn_export.visemes import SETS

    script = "import { VISEME_SETS } from './export/js/visemes.mjs'; console.log(JSON.stringify(VISEME_SETS));"
    result = node("--input-type=module", "-e", script)
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    assert set(ours) == set(SETS)
    for name, visemes in SETS.items():
        assert ours[name]["shapes"] == list(visemes.shapes)
        assert (ours[name]["rest"], ours[name]["closedLips"]) == (visemes.rest, visemes.closed_lips)
        assert {shape: sorted(phones) for shape, phones in ours[name]["covers"].items()} == {
            shape: sorted(phones) for shape, phones in visemes.covers.items()}


def test_the_javascript_cue_rules_are_pythons_on_random_segments():
    """The same segment streams (random phones and lengths, split into random pushes) through both CueMakers."""
    import random

    from speechattn.phones import PHONES
    from speechattn_export.segments import Segment
    from speechattn_export.visemes import SETS, CueRules, make_cues

    rng = random.Random(0)
    cases = []
    for _ in range(60):
        at, segments = 0, []
        for _ in range(rng.randint(1, 30)):
            length = rng.randint(1, 25)
            segments.append(Segment(at, at + length, rng.randrange(len(PHONES)), 0.5))
            at += length
        rules = CueRules(rng.randint(1, 9), rng.randint(0, 15))
        name = rng.choice(list(SETS))
        cuts = sorted(rng.randint(0, len(segments)) for _ in range(3))
        expected = [[c.start_frame, c.end_frame, c.shape] for c in make_cues(segments, SETS[name], PHONES, rules=rules)]
        cases.append({"set": name, "rules": [rules.min_hold_frames, rules.bridge_frames], "cuts": cuts,
                      "segments": [[s.start_frame, s.end_frame, s.phone] for s in segments], "expected": expected})
    script = """
import { CueMaker } from './export/js/visemes.mjs';
import { readFileSync } from 'node:fs';
const { phones, cases } = JSON.parse(readFileSync(0, 'utf8'));
let agree = 0;
for (const c of cases) {
  const maker = new CueMaker(c.set, phones, { minHoldFrames: c.rules[0], bridgeFrames: c.rules[1] });
  const segments = c.segments.map(([startFrame, endFrame, phone]) => ({ startFrame, endFrame, phone }));
  const cues = [];
  let at = 0;
  for (const cut of [...c.cuts, segments.length]) { cues.push(...maker.push(segments.slice(at, Math.max(at, cut)))); at = Math.max(at, cut); }
  cues.push(...maker.finish());
  if (JSON.stringify(cues.map((q) => [q.startFrame, q.endFrame, q.shape])) === JSON.stringify(c.expected)) agree++;
  else console.error(JSON.stringify(c));
}
console.log(`${agree} of ${cases.length} agree`);
"""
    if not NODE:
        pytest.skip("Node.js is not installed (the README's test command installs it: apt-get install nodejs)")
    result = subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, input=json.dumps({"phones": list(PHONES), "cases": cases}))
    assert result.returncode == 0 and result.stdout.strip() == "60 of 60 agree", result.stdout + result.stderr[:2000]


@pytest.mark.parametrize("visemes", ["rhubarb", "vrm"])
def test_node_prints_the_same_mouth_as_python(visemes, capsys):
    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    result = node("export/node/transcribe.mjs", str(SAMPLE), "--visemes", visemes)
    assert result.returncode == 0, result.stderr
    assert main(["transcribe", str(SAMPLE), "--format", "visemes-json", "--visemes", visemes]) == 0
    python, ours = json.loads(capsys.readouterr().out), json.loads(result.stdout)
    import jsonschema

    jsonschema.validate(ours, json.loads((ROOT / "export" / "visemes.schema.json").read_text()))
    assert len(python["cues"]) > 5
    assert ours["cues"] == python["cues"]  # cue times and shapes exactly
    assert ours["shapes"] == python["shapes"] and len(ours["weights"]) == len(python["weights"])
    # weights printed to 3 decimals; summed in another order and rounded on another runtime: within 2e-3
    assert max(abs(a - b) for x, y in zip(ours["weights"], python["weights"]) for a, b in zip(x, y)) <= 2e-3


def node_runtime_installed() -> None:
    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")


def wav_bytes(rate: int = 16000, seconds: float = 1.0) -> bytes:
    import io

    import numpy as np
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, np.zeros(int(16000 * seconds), np.float32), 16000, format="WAV", subtype="PCM_16")
    header = bytearray(buffer.getvalue())
    header[24:28] = rate.to_bytes(4, "little")  # the fmt chunk's sample rate
    return bytes(header)


@pytest.mark.parametrize("case", ["header cut inside fmt", "1 Hz", "4294967295 Hz", "fifo", "/dev/zero", "directory",
                                  "missing", "model fifo", "model /dev/zero", "bigram /dev/zero"])
def test_node_refuses_what_would_hang_or_fill_memory_in_one_line_with_status_1(tmp_path, case):
    """A 4,294,967,295 Hz header was resampled whole (2.25 GB and rising), a 1 Hz one made 16,000 samples of each, a
    header cut inside its fmt chunk was a RangeError, a FIFO or /dev/zero was read whole forever."""
    import os

    node_runtime_installed()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    wav = tmp_path / "a.wav"
    wav.write_bytes({"header cut inside fmt": wav_bytes()[:30], "1 Hz": wav_bytes(1),
                     "4294967295 Hz": wav_bytes(4_294_967_295)}.get(case, wav_bytes()))
    before = wav.read_bytes()
    args, expected = {
        "header cut inside fmt": ([wav], "a.wav: WAV header cut short inside its fmt chunk"),
        "1 Hz": ([wav], "a.wav: the file says its sample rate is 1 Hz; 1000 to 768000 Hz are read"),
        "4294967295 Hz": ([wav], "a.wav: the file says its sample rate is 4294967295 Hz; 1000 to 768000 Hz are read"),
        "fifo": ([fifo], f"{fifo}: a pipe, not a file; give the audio as a file"),
        "/dev/zero": (["/dev/zero"], "/dev/zero: a device, not a file; give the audio as a file"),
        "directory": ([tmp_path], f"{tmp_path}: a directory, not a WAV file"),
        "missing": ([tmp_path / "none.wav"], "none.wav: no such file"),
        "model fifo": ([wav, "--model", fifo], f"{fifo}: a pipe, not a file; give the model as a file"),
        "model /dev/zero": ([wav, "--model", "/dev/zero"], "/dev/zero: a device, not a file; give the model as a file"),
        "bigram /dev/zero": ([wav, "--bigram", "/dev/zero"], "/dev/zero: a device, not a file; give the bigram as a file"),
    }[case]
    result = subprocess.run([NODE, "export/node/transcribe.mjs", *map(str, args)], cwd=ROOT, capture_output=True,
                            text=True, timeout=30)  # a hang fails here
    assert result.returncode == 1 and result.stdout == "", result.stderr
    assert result.stderr.startswith("error: ") and expected in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1  # no stack trace
    assert wav.read_bytes() == before and fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["a.wav", "fifo"]


@pytest.mark.parametrize("args, expected", [
    (["--decoder", "x"], "--decoder must be one of bigram, hysteresis, not x"),
    (["--chunk-frames", "5"], "--chunk-frames 5: this model allows"),
    (["--visemes", "x"], "--visemes must be one of"),
    (["--phases", "3"], "--phases 3: give 1 or 2 or 4 for this model"),
    (["--phases", "2x"], "--phases 2x: give 1 or 2 or 4"),
    (["--bogus"], "Unknown option '--bogus'"),
])
def test_node_usage_errors_exit_2_and_input_failures_1(args, expected):
    node_runtime_installed()
    result = node("export/node/transcribe.mjs", str(SAMPLE), *args)
    assert result.returncode == 2 and expected in result.stderr and len(result.stderr.strip().splitlines()) == 1, \
        result.stderr


def test_node_reads_a_long_wav_in_blocks(tmp_path, tiny_onnx):
    """Five minutes take about the memory ten seconds take (read whole, the file, its samples and their resampled
    copy added some 30 MB; 30 minutes took 277 MB against 111 MB in blocks), and the segments are those the whole
    file gave (the same 80 ms pushes, the resampler streaming)."""
    import numpy as np
    import soundfile as sf

    from speechattn.audio import speechlike_signal

    node_runtime_installed()
    sf.write(tmp_path / "ten.wav", speechlike_signal(10.0, seed=3), 16000, subtype="PCM_16")
    sf.write(tmp_path / "five.wav", np.tile(speechlike_signal(30.0, seed=3), 10), 16000, subtype="PCM_16")
    measure = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL);"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    peaks = {}
    for name in ("ten", "five"):
        result = subprocess.run([sys.executable, "-c", measure, NODE, "export/node/transcribe.mjs",
                                 str(tmp_path / f"{name}.wav"), "--model", str(tiny_onnx)],
                                cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        peaks[name] = int(result.stdout.strip())  # KiB
    assert peaks["five"] < peaks["ten"] + 15 * 1024, peaks


def test_node_keeps_an_hour_of_mouth_weights_in_bounded_memory_and_prints_the_same_json(tmp_path, tiny_onnx):
    """--visemes kept each frame's weights as an array of numbers until the end (half an hour of oculus weights: 290
    MB against 173 MB for the segments alone); now 2 bytes a number and written in pieces (196 MB), byte for byte
    what JSON.stringify of the whole document gave."""
    import numpy as np
    import soundfile as sf

    from speechattn.audio import speechlike_signal

    node_runtime_installed()
    sf.write(tmp_path / "long.wav", np.tile(speechlike_signal(30.0, seed=3), 40), 16000, subtype="PCM_16")  # 20 min
    measure = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=open(sys.argv[-1] + "
               "'.json', 'w')); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    peaks = {}
    for options in ((), ("--visemes", "oculus")):
        result = subprocess.run([sys.executable, "-c", measure, NODE, "export/node/transcribe.mjs", "--model",
                                 str(tiny_onnx), *options, str(tmp_path / "long.wav")],
                                cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        peaks[options] = int(result.stdout.strip())  # KiB
    document = json.loads((tmp_path / "long.wav.json").read_text())
    assert len(document["weights"]) == 120_000 and len(document["weights"][0]) == 15
    # 120,000 rows of 15 weights: 3.6 MB as 2-byte thousandths; as arrays of numbers they took over 60 MB more
    assert peaks[("--visemes", "oculus")] < peaks[()] + 25 * 1024, peaks


def test_node_reports_a_full_or_closed_standard_output_and_not_a_reader_that_stops_early():
    node_runtime_installed()
    with open("/dev/full", "w") as full:
        result = subprocess.run([NODE, "export/node/transcribe.mjs", str(SAMPLE)], cwd=ROOT, stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 1 and result.stderr.strip() == \
        "error: cannot write standard output (No space left on device)", result.stderr
    piped = subprocess.run(f"{NODE} export/node/transcribe.mjs --visemes oculus {SAMPLE} | head -c 5", shell=True,
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert piped.stdout == '{"for' and piped.stderr == ""


def test_node_refuses_a_model_whose_metadata_disagrees_with_its_graph_as_python_does(tmp_path, tiny_onnx, capsys):
    """The same lies (a hop, a phone list, a rate or frame shift the graph does not have, a look-ahead that is no
    number, phone names with a space or a newline), the same refusal in both clients: one line naming the file, exit
    1 (Python used to ignore a lying sample rate where Node obeyed it)."""
    from test_bad_input_one_line import LIES, with_metadata

    node_runtime_installed()
    for number, (changes, message) in enumerate(LIES):
        lying = with_metadata(tiny_onnx, tmp_path / f"lying{number}.onnx", **changes)
        result = node("export/node/transcribe.mjs", str(SAMPLE), "--model", str(lying))
        assert result.returncode == 1 and result.stdout == "", (changes, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (changes, result.stderr)
        assert f"error: {lying}: its metadata does not describe this graph (" in result.stderr, result.stderr
        assert message in result.stderr, (changes, result.stderr)
        assert main(["transcribe", str(SAMPLE), "--model", str(lying)]) == 1
        python = capsys.readouterr().err.strip()
        assert python.split(": its metadata does not describe this graph (")[1] == \
            result.stderr.strip().split(": its metadata does not describe this graph (")[1], (python, result.stderr)


FOLLOW_TEXTS = {"please-enter-your-password.wav": "Please enter your password, followed by the pound key.",
                "this-no-longer-appears-to-be-the-case.wav": "This no longer appears to be the case."}


@pytest.mark.parametrize("name", sorted(FOLLOW_TEXTS))
def test_node_follows_a_text_read_aloud_as_the_python_kit_does(name):
    """node export/node/follow.mjs (40 ms pieces, the JS Follower) and the Python kit's Model.follow give the same
    words made final, in the same order, at the same times (stated tolerance: one frame; measured: equal), and the
    same words not heard (a line the recording does not read)."""
    import soundfile as sf

    from speechattn_export import load_model

    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")
    sample = ROOT / "speechattn" / "runtime" / "samples" / name
    text = FOLLOW_TEXTS[name] + "\nDo not say this line."
    result = node("export/node/follow.mjs", str(sample), text)
    assert result.returncode == 0, result.stderr
    *words, summary = [json.loads(line) for line in result.stdout.splitlines()]
    audio, rate = sf.read(sample, dtype="float32")
    stream = load_model("default").follow(text)
    expected = []
    for start in range(0, len(audio), rate // 25):
        expected += stream.word_events(stream.push(audio[start:start + rate // 25], sample_rate=rate).words)
    update = stream.finish()
    expected += stream.word_events(update.words, update.not_heard)
    assert [(w["index"], w["word"]) for w in words] == [(w["index"], w["word"]) for w in expected]
    assert [w["not_heard"] for w in words] == [w["not_heard"] for w in expected]
    for ours, theirs in zip(words, expected):
        assert abs(ours["start"] - theirs["start"]) <= 0.01 and abs(ours["end"] - theirs["end"]) <= 0.01, (ours, theirs)
    spoken = len(FOLLOW_TEXTS[name].rstrip(".").split())
    assert sorted({w["index"] for w in words}) == list(range(spoken))
    assert [w["index"] for w in summary["not_heard"]] == update.not_heard == list(range(spoken, spoken + 5))
    assert summary["heard"] == spoken and summary["final_after_ms"]["max"] <= 200  # chunk 40 + delay 60 + lag 100 ms


def test_javascript_sentence_starts_are_pythons():
    from speechattn_export.words import Lexicon, sentence_starts

    texts = ["Dr. Smith paid $5; then left.\nNew line here! And? done", "One. Two three.", "no marks at all",
             "Line one\nline two\r\nline three...  four"]
    script = ("import * as ort from 'onnxruntime-node'; import { loadBundledLexicon } from './lexicon.mjs';"
              "import { sentenceStarts } from '../js/words.mjs'; const lexicon = await loadBundledLexicon(ort);"
              f"for (const text of {json.dumps(texts)}) "
              "console.log(JSON.stringify(sentenceStarts(text, await lexicon.words(text))));")
    if not NODE or not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("Node.js and onnxruntime-node are needed: (cd export/node && npm ci)")
    result = subprocess.run([NODE, "--input-type=module", "-e", script], cwd=ROOT / "export" / "node",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lexicon = Lexicon.load()
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        sentence_starts(text, lexicon.words(text)) for text in texts]
