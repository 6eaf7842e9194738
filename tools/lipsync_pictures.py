"""docs/lipsync-shapes.png: the browser page's nine mouth shapes (Rhubarb's A-H and X), drawn by the real page in
headless Chromium, each with the phones it covers.  (The page itself, mouth moving: tools/web_screenshot.py.)

    python tools/lipsync_pictures.py
Needs chromium, chromium-driver and export/web's onnxruntime-web (the README's test command installs them).
"""

from __future__ import annotations

import io
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from speechattn.files import atomic_path
    from speechattn.runtime.web import make_server
    from speechattn_export.visemes import RHUBARB

    server, url = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,760"):
        options.add_argument(argument)
    browser = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    try:
        browser.get(url)
        deadline = time.monotonic() + 60
        while browser.execute_script("return window.speechattn && window.speechattn.status") != "ready":
            if time.monotonic() > deadline:
                raise SystemExit(f"the page did not load: {browser.find_element('id', 'status').text}")
            time.sleep(0.2)
        mouth = browser.find_element("id", "mouth")
        images = []
        for shape in RHUBARB.shapes:
            browser.execute_script("document.getElementById('mouth').dataset.shape = arguments[0]", shape)
            images.append(Image.open(io.BytesIO(mouth.screenshot_as_png)))
    finally:
        browser.quit()
        server.shutdown()
    figure, axes = plt.subplots(1, len(images), figsize=(1.55 * len(images), 2.2))
    for axis, shape, image in zip(axes, RHUBARB.shapes, images):
        axis.imshow(image)
        axis.set_axis_off()
        phones = " ".join(p for p in RHUBARB.covers[shape] if p != "sil") or "pause"
        if len(phones) > 14:
            phones = phones[:12].rsplit(" ", 1)[0] + " …"
        axis.set_title(f"{shape}\n{phones}", fontsize=9)
    figure.tight_layout()
    with atomic_path(ROOT / "docs" / "lipsync-shapes.png") as target:
        figure.savefig(target, dpi=110, format="png", bbox_inches="tight")
    print("wrote docs/lipsync-shapes.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
