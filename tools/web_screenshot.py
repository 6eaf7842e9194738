"""docs/web-page.png: the browser page in headless Chromium, its fake microphone fed a bundled recording.

    python tools/web_screenshot.py [--seconds 5] [--model default-int8.onnx] [-o docs/web-page.png]
Needs what tests/test_browser.py needs: chromium, chromium-driver, selenium, (cd export/web && npm ci).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long the page listens")
    parser.add_argument("--model", default="default-int8.onnx")
    parser.add_argument("--audio", type=Path,
                        default=ROOT / "speechattn/runtime/samples/this-no-longer-appears-to-be-the-case.wav")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "web-page.png")
    args = parser.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from speechattn.runtime.web import make_server

    server, url = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,700",
                     "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                     f"--use-file-for-fake-audio-capture={args.audio.resolve()}",
                     "--autoplay-policy=no-user-gesture-required"):
        options.add_argument(argument)
    browser = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        browser.get(f"{url}?model={args.model}&autostart")
        deadline = time.monotonic() + 60
        while browser.execute_script("return window.speechattn && window.speechattn.status") != "listening":
            if time.monotonic() > deadline or browser.execute_script("return window.speechattn.status") == "error":
                raise SystemExit(f"the page did not start: {browser.find_element('id', 'status').text}")
            time.sleep(0.2)
        time.sleep(args.seconds)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(args.output))
        print(f"wrote {args.output}: {browser.find_element('id', 'final').text[:120]} ...")
    finally:
        browser.quit()
        server.shutdown()


if __name__ == "__main__":
    main()
