"""Streaming speed on one CPU thread, beside peers measured in the same run.

Prints:
  1. per-chunk latency through the ONNX graph (frontend included): each file interleaved call by call with
     silero-vad, so machine noise hits both alike, one file at a time (an app holds one model beside its VAD;
     timed together, the files evict each other's weights from the caches: that figure is printed too); p50/p99;
  2. real-time factor streaming a recording through the portable client;
  3. cost per second of audio vs the silero-vad ONNX model (from the silero-vad wheel), from the same pairs, and
     for every file (fp32 and each --baseline too) at the model's default chunk, each in a pair of its own;
  4. many streams at once (the client's StreamSet): throughput and p95 step latency for 1-128 streams;
  5. frontend throughput vs kaldi-native-fbank and librosa.

    python bench/streaming_speed.py [--fp32 F.onnx --int8 I.onnx] [--checkpoint M.pt] [--calls 2000]
                                    [--baseline OLD.onnx ...]   (earlier files, each timed beside silero-vad)
                                    [--cpu-time]   (calls timed by the thread's CPU time: a loaded machine)

Default: the shipped files (export/models/default.onnx, default-int8.onnx; speechattn/runtime/models/default.pt).
With --checkpoint alone it exports that checkpoint; --random measures the default-size model with
random weights (the int8 file of a random model is then built without the exporter's agreement check,
which random weights cannot pass).  Absolute times vary from run to run; compare the ratios.
"""

from __future__ import annotations

import os

for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

from speechattn.audio import HOP_SAMPLES, SAMPLE_RATE, speechlike_signal  # noqa: E402
from speechattn.model.export import (ExportError, _quantize, _trace, _write_metadata, build_metadata,  # noqa: E402
                                     export_onnx)
from speechattn.model.encoder import ModelConfig, PhoneTagger, load  # noqa: E402
from speechattn_export.stream_client import StreamingModel  # noqa: E402

CHUNK_FRAMES = 8  # 80 ms
# What times one call in sections 1 and 3: the wall clock, or with --cpu-time the calling thread's CPU time (one
# onnxruntime thread runs its kernels in the caller's), which leaves out the time other processes hold the core.
CALL_CLOCK = [time.perf_counter]
MODELS = Path(__file__).resolve().parent.parent / "export" / "models"
CHECKPOINTS = Path(__file__).resolve().parent.parent / "speechattn" / "runtime" / "models"


def session(path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def percentiles(seconds: list[float]) -> dict:
    ms = np.array(seconds) * 1000
    return {"p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)), "mean": float(ms.mean())}


class ChunkRunner:
    """One chunk (default 80 ms) per call through a streaming file, state carried, content varying."""

    def __init__(self, path, audio: np.ndarray, chunk_frames: int = CHUNK_FRAMES) -> None:
        self.sess = session(path)
        self.chunk_frames = chunk_frames
        self.states = json.loads(self.sess.get_modelmeta().custom_metadata_map["states"])
        self.state = {s["name"]: np.zeros([1 if d == "batch" else d for d in s["shape"]], s["dtype"]) for s in self.states}
        step = chunk_frames * HOP_SAMPLES
        self.pieces = [audio[i : i + step][None] for i in range(0, len(audio) - step, step)]
        self.calls = 0

    def __call__(self) -> float:
        feeds = {"audio": self.pieces[self.calls % len(self.pieces)], "chunk_frames": np.array(self.chunk_frames),
                 "flush": np.array(0), **self.state}
        start = CALL_CLOCK[0]()
        outputs = self.sess.run(None, feeds)
        elapsed = CALL_CLOCK[0]() - start
        self.state = {s["name"]: value for s, value in zip(self.states, outputs[1:])}
        self.calls += 1
        return elapsed


class SileroRunner:
    """silero-vad's ONNX model, as its own wrapper drives it: 512 new samples + 64 of context per call (32 ms)."""

    def __init__(self, audio: np.ndarray) -> None:
        try:
            import silero_vad
        except ImportError:  # the peer this bench measures beside: one line, not a traceback
            raise SystemExit("streaming_speed.py times the model beside silero-vad: pip install '.[bench]'") from None

        self.sess = session(Path(silero_vad.__file__).parent / "data" / "silero_vad.onnx")
        self.state = np.zeros((2, 1, 128), np.float32)
        self.context = np.zeros((1, 64), np.float32)
        self.audio, self.position = audio, 0

    def __call__(self) -> float:
        if self.position + 512 > len(self.audio):
            self.position = 0
        x = np.concatenate([self.context, self.audio[self.position : self.position + 512][None]], axis=1)
        start = CALL_CLOCK[0]()
        _, self.state = self.sess.run(None, {"input": x, "state": self.state, "sr": np.array(16000, np.int64)})
        elapsed = CALL_CLOCK[0]() - start
        self.context, self.position = x[:, -64:], self.position + 512
        return elapsed


def interleaved_latency(runners: dict, calls: int) -> dict[str, dict]:
    """Every runner called once per round, in turn, `calls` rounds after 100 of warm-up."""
    times = {name: [] for name in runners}
    for call in range(calls + 100):
        for name, runner in runners.items():
            elapsed = runner()
            if call >= 100:
                times[name].append(elapsed)
    return {name: percentiles(values) for name, values in times.items()}


def stream_set_throughput(path, audio: np.ndarray, counts=(1, 8, 32, 128), seconds: float = 4.0) -> list[dict]:
    """N streams of `seconds` each (different stretches of `audio`) pushed 80 ms at a time and stepped together:
    audio-seconds per CPU-second, and the p95 wall time of one step (every stream's chunk in one call)."""
    model = StreamingModel(path, num_threads=1)
    step = CHUNK_FRAMES * HOP_SAMPLES
    rows = []
    for count in counts:
        streams = model.new_stream_set(CHUNK_FRAMES)
        length = int(seconds * SAMPLE_RATE) // step * step
        offsets = [(i * 7919 * HOP_SAMPLES) % max(1, len(audio) - length) for i in range(count)]
        for i in range(count):
            streams.add(i)
        times, cpu_start = [], time.process_time()
        for position in range(0, length, step):
            for i, offset in enumerate(offsets):
                streams.push(i, audio[offset + position : offset + position + step])
            start = time.perf_counter()
            streams.step()
            times.append(time.perf_counter() - start)
        cpu = time.process_time() - cpu_start
        rows.append({"streams": count, "audio_s_per_cpu_s": count * length / SAMPLE_RATE / cpu,
                     "p95_ms": float(np.percentile(np.array(times) * 1000, 95))})
    return rows


def stream_rtf(path, audio: np.ndarray, push_samples: int | None) -> float:
    """Real-time factor of streaming `audio` through the portable client (None: the whole file in one push)."""
    model = StreamingModel(path, num_threads=1)
    stream = model.new_stream(CHUNK_FRAMES)
    start = time.perf_counter()
    if push_samples is None:
        stream.push(audio)
    else:
        for i in range(0, len(audio), push_samples):
            stream.push(audio[i : i + push_samples])
    stream.finish()
    return (time.perf_counter() - start) / (len(audio) / SAMPLE_RATE)


class FrontendGraph(torch.nn.Module):
    def __init__(self, model: PhoneTagger) -> None:
        super().__init__()
        self.frontend = model.frontend

    def forward(self, audio, audio_tail, *level):
        """(audio, audio_tail[, level_estimate]) -> (features, new_audio_tail[, new_level_estimate]): the level's
        state in and out only where the model normalises its level."""
        history = audio.new_zeros(audio.shape[0], 0, 0)
        outputs = self.frontend.step(audio, audio_tail, history, *level)
        return (outputs[0], outputs[1], *outputs[3:])


def frontend_throughput(model: PhoneTagger, audio: np.ndarray, workdir: Path) -> dict[str, float]:
    """Seconds of audio per second of compute for 80-bin log-mel features of `audio`."""
    import kaldi_native_fbank as knf
    import librosa

    seconds = len(audio) / SAMPLE_RATE
    results = {}

    path = workdir / "frontend.onnx"
    levelled = model.frontend.config.level_norm
    states = {"audio_tail": np.zeros((1, 240), np.float32)}
    if levelled:
        states["level_estimate"] = model.frontend.initial_level(1).numpy()
    with torch.no_grad():
        torch.onnx.export(FrontendGraph(model), (torch.zeros(1, 1280), *(torch.from_numpy(v) for v in states.values())),
                          str(path), dynamo=False, opset_version=17, input_names=["audio", *states],
                          output_names=["features", *(f"new_{name}" for name in states)],
                          dynamic_axes={"audio": {1: "n"}})
    sess = session(path)
    step = CHUNK_FRAMES * HOP_SAMPLES
    usable = len(audio) // step * step
    start = time.perf_counter()
    state = dict(states)
    for i in range(0, usable, step):
        _, *new = sess.run(None, {"audio": audio[None, i : i + step], **state})
        state = dict(zip(states, new))
    results["speechattn frontend, ONNX, 80 ms chunks"] = seconds / (time.perf_counter() - start)
    start = time.perf_counter()
    sess.run(None, {"audio": audio[None, :usable], **states})
    results["speechattn frontend, ONNX, whole file"] = seconds / (time.perf_counter() - start)

    with torch.no_grad():
        waveform = torch.from_numpy(audio)[None]
        start = time.perf_counter()
        model.frontend(waveform)
        results["speechattn frontend, torch, whole file"] = seconds / (time.perf_counter() - start)

    options = knf.FbankOptions()
    options.frame_opts.dither = 0
    options.mel_opts.num_bins = 80
    start = time.perf_counter()
    online = knf.OnlineFbank(options)
    for i in range(0, usable, step):
        online.accept_waveform(SAMPLE_RATE, audio[i : i + step])
    frames = [online.get_frame(i) for i in range(online.num_frames_ready)]
    results["kaldi-native-fbank, 80 ms chunks"] = seconds / (time.perf_counter() - start)
    assert len(frames) > 0

    librosa.feature.melspectrogram(y=audio[:16000], sr=SAMPLE_RATE)  # first call pays librosa's lazy imports
    start = time.perf_counter()
    mel = librosa.feature.melspectrogram(y=audio, sr=SAMPLE_RATE, n_fft=512, win_length=400, hop_length=160,
                                         n_mels=80, center=False, power=2.0)
    np.log(np.maximum(mel, 1e-10))
    results["librosa melspectrogram + log, whole file"] = seconds / (time.perf_counter() - start)
    return results


def optimized_node_count(path, workdir: Path) -> int:
    """Nodes in the graph onnxruntime runs (after its extended optimizations): each costs a kernel launch per call."""
    import onnx

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(workdir / f"optimized-{Path(path).name}")
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return len(onnx.load(options.optimized_model_filepath, load_external_data=False).graph.node)


def unverified_int8(model: PhoneTagger, int8: Path, traced: Path) -> None:
    """The int8 file of `model` without the exporter's agreement check: random weights have near-tied scores, so
    their int8 labels flip; speed is what is measured with them."""
    _trace(model, traced)
    _write_metadata(traced, build_metadata(model, CHUNK_FRAMES, "none"))
    _quantize(traced, int8)
    _write_metadata(int8, build_metadata(model, CHUNK_FRAMES, "int8-weights"))


def build_models(args, workdir: Path) -> tuple[PhoneTagger, Path, Path, str]:
    if args.random:
        torch.manual_seed(0)
        model, note = PhoneTagger(ModelConfig()).eval(), "default config, random weights"
    else:
        model, note = load(args.checkpoint), str(args.checkpoint)
    if args.fp32 and args.int8:
        return model, args.fp32, args.int8, f"{args.fp32} and {args.int8} (frontend section: {note})"
    fp32, int8 = workdir / "fp32.onnx", workdir / "int8.onnx"
    export_onnx(model, fp32)
    try:
        export_onnx(model, int8, int8=True)
    except ExportError:
        unverified_int8(model, int8, workdir / "traced.onnx")
        note += " (int8 built without the agreement check)"
    return model, fp32, int8, note


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fp32", type=Path, default=MODELS / "default.onnx", help="fp32 streaming file")
    parser.add_argument("--int8", type=Path, default=MODELS / "default-int8.onnx", help="int8 streaming file")
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINTS / "default.pt",
                        help="checkpoint for the frontend section (and exported when --fp32/--int8 are not given)")
    parser.add_argument("--random", action="store_true", help="the default-size model with random weights instead")
    parser.add_argument("--baseline", type=Path, action="append", default=[],
                        help="an earlier streaming file to time beside these in section 1 (repeatable), e.g. "
                             "git show REV:export/models/default.onnx > old.onnx")
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 8, 32, 128], help="stream counts for section 4")
    parser.add_argument("--calls", type=int, default=2000, help="timed 80 ms chunks per model (default 2000)")
    parser.add_argument("--seconds", type=float, default=60.0, help="audio length for RTF and throughput")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time sections 1 and 3's calls by the calling thread's CPU time, not the wall clock: on "
                             "a machine other jobs load, a call's wall time counts the time they held the core")
    return parser.parse_args()


def per_second(timing: dict, chunk_frames: int = CHUNK_FRAMES, of: str = "mean") -> float:
    return timing[of] / (chunk_frames * 10 / 1000)  # ms of compute per s of audio


def silero_per_second(timing: dict, of: str = "mean") -> float:
    return timing[of] / (512 / SAMPLE_RATE)



def latency_pairs(files: dict, fp32: Path, int8: Path, audio: np.ndarray, calls: int) -> tuple[dict, dict]:
    """Section 1: each file's 80 ms calls beside silero-vad's, and the three together; (pairs, together)."""
    # Each file is timed beside silero-vad alone, call by call: an app holds one model file next to its VAD.
    # Timing the files together, as this bench did before, let the fp32 file's 11 MB of weights evict the
    # others' from the caches on every round (int8 p50 0.44 ms alone, 0.46 beside silero-vad, 0.75-0.85 beside
    # the fp32 file; silero-vad 0.11 alone, 0.14 beside int8, 0.27 beside both): that figure is kept below for
    # comparison, but the pairs are the measure.
    pairs = {name: interleaved_latency({name: ChunkRunner(path, audio), "silero": SileroRunner(audio)}, calls)
             for name, path in files.items()}
    together = interleaved_latency({"fp32": ChunkRunner(fp32, audio), "int8": ChunkRunner(int8, audio),
                                    "silero": SileroRunner(audio)}, calls)
    targets = {"fp32": "p50 <= 0.8, p99 <= 2", "int8": "p50 <= 0.5, p99 <= 2"}
    print(f"1. one 80 ms chunk (C = {CHUNK_FRAMES}) through the ONNX graph, frontend included, {calls} calls "
          "each; each file interleaved call by call with silero-vad (one 32 ms call), one pair at a time")
    print("| model | p50 ms | p99 ms | mean ms | silero-vad p50 / mean ms, same pair | target |")
    print("|---|---|---|---|---|---|")
    for name, pair in pairs.items():
        label = f"speechattn {name}" if name in targets else name
        print(f"| {label} | {pair[name]['p50']:.2f} | {pair[name]['p99']:.2f} | {pair[name]['mean']:.2f} | "
              f"{pair['silero']['p50']:.3f} / {pair['silero']['mean']:.3f} | {targets.get(name, 'earlier file')} |")
    print(f"all three interleaved together (the earlier method: each evicts the others from the caches): p50 fp32 "
          f"{together['fp32']['p50']:.2f}, int8 {together['int8']['p50']:.2f}, silero-vad "
          f"{together['silero']['p50']:.3f} ms")

    return pairs, together


def cost_rows(pairs: dict, together: dict, files: dict, int8: Path, audio: np.ndarray, calls: int) -> None:
    """Section 3: compute per second of audio against silero-vad, at 80 ms and at other chunks."""
    print("\n3. compute per second of audio (streaming) vs silero-vad, each from the pair it was timed in")
    # The ratio of the medians beside the ratio of the means: on a loaded machine the means carry the calls
    # another process preempted (p99 10-30 times p50), which fall on the two files unevenly.
    print("| model | ms per s of audio | silero-vad ms per s, same pair | x silero-vad | x silero-vad, p50s | "
          "target |")
    print("|---|---|---|---|---|---|")
    rows = [(f"speechattn {name}", pairs[name][name], CHUNK_FRAMES, pairs[name]["silero"],
             "<= 1.0" if name == "int8" else "") for name in ("fp32", "int8")]
    # Larger chunks spread each call's fixed cost over more audio, at the price of latency (the chunk size is
    # the caller's choice at run time): the same measure at 160 and 320 ms, again beside silero-vad.
    default_chunk = int(ort.InferenceSession(str(int8)).get_modelmeta().custom_metadata_map["default_chunk_frames"])
    for chunk in sorted({default_chunk, 16, 32} - {CHUNK_FRAMES}):
        pair = interleaved_latency({"int8": ChunkRunner(int8, audio, chunk), "silero": SileroRunner(audio)},
                                   calls // 2)
        target = "<= 10 ms per s (the model's default chunk)" if chunk == default_chunk else ""
        rows.append((f"speechattn int8, C = {chunk} ({chunk * 10} ms chunks)", pair["int8"], chunk, pair["silero"],
                     target))
    # fp32 and every earlier file at the default chunk too, each beside silero-vad in its own pair
    for name, path in files.items():
        if name == "int8" or default_chunk == CHUNK_FRAMES:
            continue
        pair = interleaved_latency({name: ChunkRunner(path, audio, default_chunk), "silero": SileroRunner(audio)},
                                   calls // 2)
        label = f"speechattn {name}" if name == "fp32" else name
        rows.append((f"{label}, C = {default_chunk} ({default_chunk * 10} ms chunks)", pair[name], default_chunk,
                     pair["silero"], ""))
    for label, ours, chunk, silero, target in rows:
        mean, silero_mean = per_second(ours, chunk), silero_per_second(silero)
        medians = per_second(ours, chunk, "p50") / silero_per_second(silero, "p50")
        print(f"| {label} | {mean:.2f} | {silero_mean:.2f} | {mean / silero_mean:.2f} | {medians:.2f} | {target} |")
    # The same file with nothing called between its calls (an app without a VAD beside it): whether the
    # detector's calls, evicting its weights from the caches, are what raise its cost.
    alone = interleaved_latency({"int8": ChunkRunner(int8, audio, default_chunk)}, calls // 2)["int8"]
    print(f"| speechattn int8, C = {default_chunk}, alone (no detector between its calls) | "
          f"{per_second(alone, default_chunk):.2f} | | | | |")
    print(f"all three together (the earlier method): fp32 "
          f"{per_second(together['fp32']) / silero_per_second(together['silero']):.2f} x, int8 "
          f"{per_second(together['int8']) / silero_per_second(together['silero']):.2f} x")



def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    if args.cpu_time:
        CALL_CLOCK[0] = time.thread_time

    audio = speechlike_signal(args.seconds, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.random or args.checkpoint != MODELS / "default.pt":
            args.fp32 = args.int8 = None  # export what is measured
        model, fp32, int8, note = build_models(args, workdir)
        print(f"model: {note}; {model.num_parameters():,} parameters; fp32 file {fp32.stat().st_size / 1e6:.1f} MB, "
              f"int8 file {int8.stat().st_size / 1e6:.1f} MB")
        print(f"graph nodes after onnxruntime's optimizer: fp32 {optimized_node_count(fp32, workdir)}, "
              f"int8 {optimized_node_count(int8, workdir)}")
        print(f"onnxruntime {ort.__version__}, torch {torch.__version__}, one thread everywhere\n")

        files = {"fp32": fp32, "int8": int8, **{f"baseline {path}": path for path in args.baseline}}
        pairs, together = latency_pairs(files, fp32, int8, audio, args.calls)

        print(f"\n2. real-time factor through the portable client ({args.seconds:.0f} s of audio; target <= 0.01 fp32, whole file)")
        print("| model | pushes of 80 ms | whole file in one push |")
        print("|---|---|---|")
        for name, path in (("fp32", fp32), ("int8", int8)):
            print(f"| speechattn {name} | {stream_rtf(path, audio, 1280):.4f} | {stream_rtf(path, audio, None):.4f} |")


        cost_rows(pairs, together, files, int8, audio, args.calls)

        print("\n4. many streams at once: the client's StreamSet, every stream pushed 80 ms per step, one thread")
        print("| model | streams | audio-s per CPU-s | p95 ms per step (all streams' chunks) |")
        print("|---|---|---|---|")
        for name, path in (("fp32", fp32), ("int8", int8)):
            for row in stream_set_throughput(path, audio, args.streams):
                print(f"| speechattn {name} | {row['streams']} | {row['audio_s_per_cpu_s']:,.0f} | {row['p95_ms']:.2f} |")

        print("\n5. frontend throughput, 80-bin log-mel (x real time; higher is faster)")
        throughput = frontend_throughput(model, audio, workdir)
        reference = throughput["kaldi-native-fbank, 80 ms chunks"]
        print("| frontend | x real time | vs kaldi-native-fbank |")
        print("|---|---|---|")
        for name, value in throughput.items():
            print(f"| {name} | {value:,.0f} | {value / reference:.2f} |")


if __name__ == "__main__":
    main()
