"""Real-time lip-sync tools run beside speechattn by bench/lipsync.py (--peers): each utterance -> the tool's mouth
per 10 ms frame, at the tool's own timestamps, and the CPU it took.

  headaudio  @met4citizen/headaudio 0.1.0: MFCC + Gaussian prototypes -> one of Oculus's 15 visemes per 16 ms hop;
             its AudioWorklet and bundled model (dist/model-en-mixed.bin), README defaults, in headless Chromium
  wlipsync   wlipsync 1.3.1 (uLipSync in WASM): MFCC vs a profile's vowels -> A I U E O (+ its S) and a volume per
             512-sample block; its AudioWorklet and the example profile its repository ships (data/peers/), in headless Chromium
  pylipsync  pylipsync 0.2.1 (uLipSync's algorithm in Python): aa ee ih oh ou silence per frame with the templates
             it ships (one female speaker), at its default 64 ms window and 60 frames per second

The browser tools run in an OfflineAudioContext at 16 kHz (no resampling), one context per utterance, held at 0 s
while the worklet instantiates; what their worklets post is collected with the time stamps they carry.  Install:
`cd bench/peers && npm ci` (and bench/peers/README.md for wLipSync's profile); `pip install pylipsync`.

A tool's output -> a shape of one of our sets, frame by frame (frame f: 10 ms from f * 10 ms): the newest output
stamped at or before the frame's start; VRM blendshape tools (wLipSync, pylipsync) show their vowel only while
the mouth is at least half open (volume factor >= 0.5, the weight their examples multiply the blendshape by),
else the closed mouth; HeadAudio shows its viseme between its `started` and `ended` events, sil otherwise.
"""

from __future__ import annotations

import base64
import functools
import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PEERS_DIR = Path(__file__).resolve().parent / "peers"
WLIPSYNC_PROFILE = PEERS_DIR.parents[1] / "data" / "peers" / "wlipsync-profile.bin"  # bench/peers/README.md
FRAME_SECONDS = 0.01  # our frames: the references' 10 ms
RUNS_PER_PAGE = 60  # utterance runs (each a context with a worklet) before the page is loaded afresh
OPEN_VOLUME = 0.5  # a vowel is shown while the tool's volume factor is at least this (mouth half open)

# Oculus viseme names as HeadAudio's node calls them -> ours (speechattn_export.visemes.OCULUS)
HEADAUDIO_OCULUS = {"viseme_aa": "aa", "viseme_E": "E", "viseme_I": "ih", "viseme_O": "oh", "viseme_U": "ou",
                    "viseme_PP": "PP", "viseme_SS": "SS", "viseme_TH": "TH", "viseme_DD": "DD", "viseme_FF": "FF",
                    "viseme_kk": "kk", "viseme_nn": "nn", "viseme_RR": "RR", "viseme_CH": "CH", "viseme_sil": "sil"}
WLIPSYNC_VRM = {"A": "A", "I": "I", "U": "U", "E": "E", "O": "O", "S": "sil"}  # the example profile's names
PYLIPSYNC_VRM = {"aa": "A", "ih": "I", "ou": "U", "ee": "E", "oh": "O", "silence": "sil"}

# The delay each imposes before a shape can be shown, from its code (not measured here).
LATENCY = {
    "headaudio": "512-sample window (32 ms) stamped at its centre, hop 16 ms: known 16 ms after its stamp; its "
                 "update() then eases a viseme in over 100 ms (half-way at 50 ms); README: 50-100 ms end to end",
    "wlipsync": "1024-sample window (64 ms) ending at its stamp, hop 512 samples (32 ms): known at its stamp; the "
                "node smooth-damps weights and volume with smoothness 0.05 s",
    "pylipsync": "64 ms window centred on each 16.7 ms frame: 24 ms of audio after the frame's end are needed "
                 "(offline tool; no smoothing)",
}


class PeerUnavailable(Exception):
    """The tool (or its model/profile, or the browser) is not installed: reported and skipped."""


@dataclass
class PeerOutput:
    shapes: dict[str, list[str]]  # viseme set name -> one shape per 10 ms frame
    cpu_seconds: float


def frames_from_events(times_s: list[float], shapes: list[str], num_frames: int, rest: str) -> list[str]:
    """Piecewise-constant outputs stamped at times_s -> one shape per 10 ms frame: the newest output stamped at or
    before the frame's start (rest before the first)."""
    starts = np.arange(num_frames) * FRAME_SECONDS + 1e-9
    index = np.searchsorted(np.asarray(times_s, dtype=np.float64), starts, side="right") - 1
    table = np.asarray(list(shapes) + [rest], dtype=object)  # index -1 -> rest
    return list(table[index])


def oculus_to_vrm() -> dict[str, str]:
    """Each Oculus viseme -> the VRM shape of the phones it covers (the tables make it one shape each; checked)."""
    from speechattn_export.visemes import OCULUS, VRM

    vrm = VRM.table
    out = {}
    for shape, phones in OCULUS.covers.items():
        targets = {vrm[p] for p in phones}
        if len(targets) != 1:
            raise ValueError(f"Oculus {shape} covers phones of VRM shapes {sorted(targets)}")
        out[shape] = targets.pop()
    return out


def _process_cpu_seconds(root_pid: int) -> float:
    """user + system CPU of a process and all its descendants (/proc; Linux), in seconds."""
    ticks = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parent[pid], cpu[pid] = int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks
    total, frontier = 0.0, [root_pid]
    while frontier:
        pid = frontier.pop()
        total += cpu.get(pid, 0.0)
        frontier.extend(child for child, up in parent.items() if up == pid)
    return total


class Browser:
    """One headless Chromium with bench/peers/page.html served from 127.0.0.1, shared by the browser tools."""

    def __init__(self) -> None:
        import http.server

        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError:
            raise PeerUnavailable("selenium is not installed") from None
        chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
        if not (chromium and driver):
            raise PeerUnavailable("chromium and chromedriver are not installed")

        class Handler(http.server.SimpleHTTPRequestHandler):
            extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                              ".js": "text/javascript", ".wasm": "application/wasm"}

            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(PEERS_DIR), **kwargs)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu"):
            options.add_argument(argument)
        self.driver = webdriver.Chrome(options=options, service=Service(driver))
        self.driver.set_script_timeout(300)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/page.html"
        self.wlipsync_profile: str | None = None  # base64, set again on every reload
        self.load()

    def load(self) -> None:
        """(Re)load the page: Chromium refused new AudioWorklet contexts after about 250 in one page, so the
        page is loaded afresh every RUNS_PER_PAGE runs."""
        self.driver.get(self.url)
        deadline = time.monotonic() + 30
        while not self.driver.execute_script("return window.peersReady === true"):
            if time.monotonic() > deadline:
                raise PeerUnavailable("bench/peers/page.html did not load (npm ci in bench/peers?)")
            time.sleep(0.1)
        self.runs = 0
        if self.wlipsync_profile:
            self.set_wlipsync_profile(self.wlipsync_profile)

    def set_wlipsync_profile(self, profile_base64: str) -> list[str]:
        self.wlipsync_profile = profile_base64
        return self.driver.execute_script("return window.setWLipSyncProfile(arguments[0])", profile_base64)

    def run(self, tool: str, audio: np.ndarray) -> tuple[dict, float]:
        """(what the page returned, CPU seconds of Chromium's processes meanwhile)."""
        pcm = np.clip(np.round(np.asarray(audio, dtype=np.float64) * 32768), -32768, 32767).astype("<i2")
        payload = base64.b64encode(pcm.tobytes()).decode("ascii")
        if self.runs >= RUNS_PER_PAGE:
            self.load()
        self.runs += 1
        for attempt in range(3):  # a fresh context each time
            before = _process_cpu_seconds(self.driver.service.process.pid)
            result = self.driver.execute_async_script(
                "window.runPeer(arguments[0], arguments[1]).then(arguments[2], e => arguments[2]({error: String(e)}))",
                tool, payload)
            cpu = _process_cpu_seconds(self.driver.service.process.pid) - before
            if "error" not in result:
                return result, cpu
            print(f"{tool} failed in the browser (attempt {attempt + 1} of 3): {result['error']}", file=sys.stderr)
        raise RuntimeError(f"{tool} failed in the browser three times on one utterance: {result['error']}")

    def baseline(self, audio: np.ndarray) -> float:
        """CPU seconds of the same page run without a tool, once per utterance (the last one asked about)."""
        key = (id(audio), len(audio))
        if getattr(self, "_baseline_key", None) != key:
            self._baseline_key, self._baseline = key, self.run("none", audio)[1]
        return self._baseline

    def close(self) -> None:
        self.driver.quit()
        self.server.shutdown()
        self.server.server_close()


@functools.lru_cache(maxsize=1)
def browser() -> Browser:
    return Browser()


class BrowserPeer:
    """Subtracts the same page's cost without the tool (decoding the audio, an empty render), measured per utterance
    in the same run, so cpu_seconds is the tool's own."""

    tool = ""
    needs: tuple[str, ...] = ()

    def __init__(self) -> None:
        missing = [path for path in self.needs if not (PEERS_DIR / path).exists()]
        if missing:
            raise PeerUnavailable(f"missing {', '.join('bench/peers/' + m for m in missing)} (bench/peers/README.md)")
        self.browser = browser()

    def run(self, audio: np.ndarray, num_frames: int) -> PeerOutput:
        result, cpu = self.browser.run(self.tool, audio)
        return PeerOutput(self.shapes(result["messages"], num_frames), max(0.0, cpu - self.browser.baseline(audio)))


class HeadAudioPeer(BrowserPeer):
    tool, sets = "headaudio", ("oculus", "vrm")
    needs = ("node_modules/@met4citizen/headaudio/dist/model-en-mixed.bin",)

    def shapes(self, messages: list[dict], num_frames: int) -> dict[str, list[str]]:
        times, shapes = [], []
        for m in messages:  # a viseme at its window's centre; silence from an `ended` event (the node's rule)
            if "viseme" in m:
                times.append(m["t"]), shapes.append(HEADAUDIO_OCULUS[m["viseme"]])
            elif m["event"] == "ended":
                times.append(m["t"]), shapes.append("sil")
        order = np.argsort(times, kind="stable")
        oculus = frames_from_events([times[i] for i in order], [shapes[i] for i in order], num_frames, "sil")
        to_vrm = oculus_to_vrm()
        return {"oculus": oculus, "vrm": [to_vrm[s] for s in oculus]}


class WLipSyncPeer(BrowserPeer):
    tool, sets = "wlipsync", ("vrm",)
    needs = ("node_modules/wlipsync/dist/wlipsync-single.js",)

    def __init__(self) -> None:
        if not WLIPSYNC_PROFILE.exists():
            raise PeerUnavailable("no profile at data/peers/wlipsync-profile.bin (its npm package has none; bench/peers/README.md)")
        super().__init__()
        names = self.browser.set_wlipsync_profile(base64.b64encode(WLIPSYNC_PROFILE.read_bytes()).decode("ascii"))
        unknown = set(names) - set(WLIPSYNC_VRM)
        if unknown:
            raise PeerUnavailable(f"{WLIPSYNC_PROFILE}: phonemes {sorted(unknown)} have no VRM shape here")

    def shapes(self, messages: list[dict], num_frames: int) -> dict[str, list[str]]:
        shapes = [WLIPSYNC_VRM[m["name"]] if m["volume"] >= OPEN_VOLUME else "sil" for m in messages]
        return {"vrm": frames_from_events([m["t"] for m in messages], shapes, num_frames, "sil")}


class PyLipSyncPeer:
    sets = ("vrm",)
    frames_per_second = 60  # its default

    def __init__(self) -> None:
        try:
            from pylipsync import PhonemeAnalyzer
        except ImportError:
            raise PeerUnavailable("pylipsync is not installed (pip install pylipsync)") from None
        self.analyzer = PhonemeAnalyzer()

    def run(self, audio: np.ndarray, num_frames: int) -> PeerOutput:
        analyzer = self.analyzer
        started = time.process_time()
        segments = analyzer.extract_phoneme_segments(np.asarray(audio, dtype=np.float32), 16000,
                                                     fps=self.frames_per_second, return_seconds=True)
        cpu = time.process_time() - started
        times, shapes = [], []
        for segment in segments:
            targets = {p.name: p.target for p in segment.phonemes}
            vowels = {name: target for name, target in targets.items() if name != analyzer.silence_phoneme}
            # speech: shares summing to 1 times the volume factor; silence gate met: every vowel 0
            volume = sum(targets.values()) if any(vowels.values()) else 0.0
            vowel = max(vowels, key=vowels.get)
            silent = volume < OPEN_VOLUME
            times.append(segment.start), shapes.append("sil" if silent else PYLIPSYNC_VRM[vowel])
        return PeerOutput({"vrm": frames_from_events(times, shapes, num_frames, "sil")}, cpu)


PEERS = {"headaudio": HeadAudioPeer, "wlipsync": WLipSyncPeer, "pylipsync": PyLipSyncPeer}


def load_peers(names: list[str]) -> dict:
    """name -> a ready peer; those that cannot run are printed with the reason and left out."""
    ready = {}
    for name in names:
        if name not in PEERS:
            raise SystemExit(f"--peers: unknown tool {name!r} (choose from {', '.join(PEERS)})")
        try:
            ready[name] = PEERS[name]()
        except PeerUnavailable as reason:
            print(f"peer {name} skipped: {reason}")
    return ready


def close_browser() -> None:
    if browser.cache_info().currsize:
        browser().close()
        browser.cache_clear()
