"""Check that `speechattn web` serves its page from this install: the page, onnxruntime-web's runtime and the
bundled model all answer over HTTP.  Exit status 0 if they do, 1 with the reason if not.

    python tools/web_answers.py        # what .ci/run runs in a venv with a non-editable install
"""

from __future__ import annotations

import sys
import threading
import urllib.request

from speechattn.errors import SpeechattnError
from speechattn.runtime.web import ORT_WEB, make_server

PATHS = ("/web/", f"/web/{ORT_WEB.as_posix()}/ort-wasm-simd-threaded.wasm", "/models/default-int8.onnx")


def main() -> int:
    try:
        server, url = make_server("127.0.0.1", 0)
    except SpeechattnError as error:
        print(f"speechattn web does not start: {error}", file=sys.stderr)
        return 1
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = url.removesuffix("/web/")
    try:
        for path in PATHS:
            with urllib.request.urlopen(base + path, timeout=30) as response:
                size = len(response.read())
            print(f"{path}: {response.status}, {size} bytes")
    except OSError as error:
        print(f"speechattn web does not serve {path}: {error}", file=sys.stderr)
        return 1
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
