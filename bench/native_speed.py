"""The C library (libspeechattn, export/c) beside the Python kit's PhoneStream: CPU per second of audio, same model,
same onnxruntime (the wheel's), one thread, same chunk and pushes, interleaved round by round in one process; and the
memory each extra C stream takes (RSS growth per stream opened and pushed a second of audio).

    cmake -S export/c -B build/c && cmake --build build/c -j2
    python bench/native_speed.py [--lib build/c/libspeechattn.so] [--model default-int8] [--rounds 5] [--streams 50]

The recording is the longer bundled sample at 16 kHz, pushed in 80 ms pieces (int16), decoded with the bigram
decoder and rhubarb cues in both.  Absolute times vary from run to run; compare the ratio.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"
PIECE = 1280


class StreamOptions(ctypes.Structure):
    _fields_ = [("decoder", ctypes.c_char_p), ("min_frames", ctypes.c_int32), ("chunk_frames", ctypes.c_int32),
                ("visemes", ctypes.c_char_p), ("cue_min_hold_frames", ctypes.c_int32),
                ("cue_bridge_frames", ctypes.c_int32), ("decoder_lookahead_frames", ctypes.c_int32),
                ("lm_weight", ctypes.c_double), ("insertion_penalty", ctypes.c_double), ("phases", ctypes.c_int32)]


class ModelOptions(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int32), ("bigram_path", ctypes.c_char_p)]


def rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default=str(ROOT / "build" / "c" / "libspeechattn.so"))
    parser.add_argument("--model", default="default-int8")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--streams", type=int, default=50)
    args = parser.parse_args()

    from speechattn_export import DecodingOptions, load_model
    from speechattn_export.registry import bundled_path

    lib = ctypes.CDLL(args.lib)
    lib.speechattn_default_stream_options.restype = StreamOptions
    lib.speechattn_last_error.restype = ctypes.c_char_p
    path = str(bundled_path(args.model))
    model = ctypes.c_void_p()
    if lib.speechattn_model_create(path.encode(), ctypes.byref(ModelOptions(1, None)), ctypes.byref(model)):
        raise SystemExit(lib.speechattn_last_error().decode())
    options = lib.speechattn_default_stream_options()
    options.visemes = b"rhubarb"
    audio, rate = sf.read(SAMPLE, dtype="int16")
    seconds = len(audio) / rate
    pieces = [np.ascontiguousarray(audio[i:i + PIECE]) for i in range(0, len(audio), PIECE)]
    kit = load_model(args.model, threads=1)

    def c_stream() -> None:
        stream = ctypes.c_void_p()
        assert lib.speechattn_stream_create(model, ctypes.byref(options), ctypes.byref(stream)) == 0
        for piece in pieces:
            assert lib.speechattn_stream_push_i16(stream, piece.ctypes.data_as(ctypes.c_void_p),
                                                  ctypes.c_int64(len(piece)), 1, rate, None) == 0
        assert lib.speechattn_stream_finish(stream, None) == 0
        lib.speechattn_stream_destroy(stream)

    def kit_stream() -> None:
        stream = kit.open(DecodingOptions(visemes="rhubarb"))
        for piece in pieces:
            stream.push(piece, sample_rate=rate)
        stream.finish()

    c_stream(), kit_stream()  # warm both
    times = {"C library": [], "Python kit": []}
    for _ in range(args.rounds):  # interleaved: machine noise hits both alike
        for name, run in (("C library", c_stream), ("Python kit", kit_stream)):
            started = time.process_time()
            run()
            times[name].append((time.process_time() - started) / seconds)
    print(f"{args.model}, 1 thread, chunk {kit.default_chunk_frames} frames, 80 ms int16 pushes, bigram + rhubarb cues, "
          f"{seconds:.2f} s recording, {args.rounds} rounds (median):")
    c, py = np.median(times["C library"]), np.median(times["Python kit"])
    print(f"  C library  (libspeechattn)  {c * 1000:7.2f} ms CPU per second of audio")
    print(f"  Python kit (PhoneStream)    {py * 1000:7.2f} ms CPU per second of audio")
    print(f"  C / kit                     {c / py:7.3f}")

    # memory per extra stream: N streams opened on one model, each pushed a second of audio, kept open
    second = np.ascontiguousarray(audio[:rate])
    streams, before = [], rss_bytes()
    for _ in range(args.streams):
        stream = ctypes.c_void_p()
        assert lib.speechattn_stream_create(model, ctypes.byref(options), ctypes.byref(stream)) == 0
        assert lib.speechattn_stream_push_i16(stream, second.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(rate), 1,
                                              rate, None) == 0
        streams.append(stream)
    grown = rss_bytes() - before
    for stream in streams:
        lib.speechattn_stream_destroy(stream)
    lib.speechattn_model_destroy(model)
    print(f"  memory per extra C stream   {grown / args.streams / 1024:7.1f} KiB (RSS growth over {args.streams} streams "
          "opened and pushed 1 s each)")


if __name__ == "__main__":
    main()
