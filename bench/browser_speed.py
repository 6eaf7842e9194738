"""The browser page's real-time factor: headless Chromium runs the page (onnxruntime-web, WebAssembly with SIMD),
streams a recording through it in the page's 80 ms pushes, and reports compute time per second of audio, beside
the native onnxruntime client (Python, one thread) on the same audio in the same run.

Each model (fp32, int8) with 1 WebAssembly thread and, where the page is cross-origin isolated (`speechattn
web` serves it so), 2 threads; idle and under load (one busy process per CPU core beside it, as a test run or
a game would be).  The page keeps real time when its factor is below 1; the room to spare is 1 / factor.

    python bench/browser_speed.py [--seconds 30]
Needs chromium, chromium-driver and export/web's onnxruntime-web (the README's test command installs them).
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"
MODELS = ROOT / "export" / "models"


def burn(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def native_factor(model: Path, audio: np.ndarray) -> float:
    from speechattn_export.stream_client import StreamingModel

    client = StreamingModel(model, num_threads=1)
    stream = client.new_stream(client.default_chunk_frames)
    started = time.perf_counter()
    for at in range(0, len(audio), 1280):  # the page's 80 ms pushes
        stream.push(audio[at : at + 1280])
    stream.finish()
    return (time.perf_counter() - started) / (len(audio) / 16000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="audio streamed per measurement")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from speechattn.runtime.web import make_server

    audio, rate = sf.read(SAMPLE, dtype="float32")
    audio = np.tile(audio, int(np.ceil(args.seconds * rate / len(audio))))[: int(args.seconds * rate)]
    wav = io.BytesIO()
    sf.write(wav, audio, rate, format="WAV", subtype="FLOAT")
    payload = list(wav.getvalue())
    wav = io.BytesIO()
    sf.write(wav, audio[: 2 * rate], rate, format="WAV", subtype="FLOAT")
    warmup = list(wav.getvalue())
    server, url = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(argument)
    browser = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    browser.set_script_timeout(600)
    print(f"{args.seconds:.0f} s of speech in 80 ms pushes; {os.cpu_count()} CPU cores; "
          f"{browser.capabilities.get('browserVersion', '?')} Chromium, onnxruntime-web WebAssembly (SIMD)")
    print(f"{'model':<18} {'threads':>7} {'load':<6} {'page RTF':>9} {'native RTF':>11} {'page/native':>12}")
    rows = []
    for load in ("idle", "loaded"):
        stop, burners = multiprocessing.Event(), []
        if load == "loaded":
            burners = [multiprocessing.Process(target=burn, args=(stop,)) for _ in range(os.cpu_count() or 1)]
            for process in burners:
                process.start()
        try:
            for name in ("default.onnx", "default-int8.onnx"):
                native = native_factor(MODELS / name, audio)
                for threads in (1, 2):
                    browser.get(f"{url}?model={name}&threads={threads}")
                    deadline = time.monotonic() + 120
                    while browser.execute_script("return window.speechattn && window.speechattn.status") != "ready":
                        if time.monotonic() > deadline:
                            raise SystemExit(f"the page did not load: {browser.find_element('id', 'status').text}")
                        time.sleep(0.2)
                    used = browser.execute_script("return window.speechattn.threads")
                    if threads > 1 and used == 1:
                        print(f"{name:<18} {threads:>7} {load:<6} (the page is not cross-origin isolated: 1 thread)")
                        continue
                    # a short pass first, not timed: the first pass after a page load ran 1.5-2.5 x the later ones
                    # (the WebAssembly kernels' first calls), which put the first model of a run behind the second
                    for bytes_ in (warmup, payload):
                        result = browser.execute_async_script(
                            "const done = arguments[arguments.length - 1];"
                            "window.speechattn.transcribeBytes(new Uint8Array(arguments[0]).buffer, false)"
                            ".then(() => done({compute: window.speechattn.lastRun.compute, samples: window.speechattn.lastRun.samples}),"
                            " (e) => done({error: String(e)}))", bytes_)
                    if "error" in result:
                        raise SystemExit(result["error"])
                    page = result["compute"] / 1000 / (result["samples"] / 16000)
                    rows.append({"model": name, "threads": used, "load": load, "page_rtf": page, "native_rtf": native})
                    print(f"{name:<18} {used:>7} {load:<6} {page:>9.4f} {native:>11.4f} {page / native:>11.2f}x")
        finally:
            stop.set()
            for process in burners:
                process.join()
    browser.quit()
    server.shutdown()
    print("RTF: compute seconds per second of audio (below 1: real time; 1/RTF: the room to spare)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
