"""`speechattn web`: serve the browser page (export/web/) with the bundled models, on this machine.

URL layout, all from local folders (no CDN): /web/ the page and onnxruntime-web (its npm install beside the
page), /js/ the JavaScript client, /models/ the bundled models, their table (models.json), the phone bigram and the
g2p model, /lexicon/ the pronunciation lexicon (the follow-along box), /samples/ the bundled recordings, /tests/ the
shared segmenter test vector (in a source checkout).
"""

from __future__ import annotations

import functools
import http.server
import logging
import posixpath
import urllib.parse
from pathlib import Path

from speechattn.errors import SpeechattnError, UsageError

log = logging.getLogger(__name__)
SAMPLES = Path(__file__).resolve().parent / "samples"
IDLE_TIMEOUT_SECONDS = 30
ORT_WEB = Path("node_modules") / "onnxruntime-web" / "dist"  # where the page imports it from (URL and checkout)
VENDORED_ORT_WEB = Path("ort-web")  # beside the page in an installed wheel: the runtime files setup.py copies
ORT_WEB_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")


def export_dir() -> Path:
    import speechattn_export

    return Path(speechattn_export.__file__).resolve().parent


def routes() -> dict[str, Path]:
    export = export_dir()
    web = export / "web"
    if not (web / "index.html").exists():
        raise SpeechattnError(f"{web}: the browser page is not there (it ships in a source checkout of speechattn)")
    runtime = next((folder for folder in (web / VENDORED_ORT_WEB, web / ORT_WEB)
                    if all((folder / name).exists() for name in ORT_WEB_FILES)), None)
    if runtime is None:
        raise SpeechattnError(f"onnxruntime-web is not installed beside the page: install speechattn again where "
                              f"the npm registry answers (the build fetches the version it pins), or (cd {web} && npm ci)")
    # the more specific prefix first: the page imports the runtime from ./node_modules/onnxruntime-web/dist/
    table = {f"/web/{ORT_WEB.as_posix()}/": runtime, "/web/": web, "/js/": export / "js",
             "/models/": export / "models", "/lexicon/": export / "lexicon", "/samples/": SAMPLES}
    tests = export.parent / "tests"
    if (tests / "segmenter-vectors.json").exists():
        table["/tests/"] = tests
    return table


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                      ".js": "text/javascript", ".wasm": "application/wasm", ".onnx": "application/octet-stream",
                      ".json": "application/json"}

    timeout = IDLE_TIMEOUT_SECONDS  # an idle or stalled connection gives its thread back

    def __init__(self, *args, table: dict[str, Path], **kwargs) -> None:
        self.table = table
        super().__init__(*args, **kwargs)

    def send_head(self):
        if "\x00" in urllib.parse.unquote(urllib.parse.urlsplit(self.path).path):  # os calls refuse NUL
            self.send_error(400, "bad path")
            return None
        if urllib.parse.urlsplit(self.path).path in ("", "/"):
            self.send_response(302)
            self.send_header("Location", "/web/")
            self.end_headers()
            return None
        return super().send_head()

    def translate_path(self, path: str) -> str:
        path = posixpath.normpath(urllib.parse.unquote(urllib.parse.urlsplit(path).path))
        for prefix, folder in self.table.items():
            if path.startswith(prefix) or path + "/" == prefix:
                relative = path[len(prefix):].lstrip("/")
                target = (folder / relative).resolve()
                if target == folder or folder in target.parents:  # nothing outside the folder
                    return str(target)
        return str(Path("/nonexistent") / "speechattn")

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        # cross-origin isolation: lets onnxruntime-web run threaded WebAssembly (SharedArrayBuffer); every file
        # comes from this server, so nothing the page loads is blocked by it
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def copyfile(self, source, destination) -> None:
        try:
            super().copyfile(source, destination)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):  # the browser left mid-download
            log.info("%s left before %s was sent", self.address_string(), self.path)
            self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """One line for a connection that failed (a client hanging up, a timeout), never a traceback."""
        import sys

        error = sys.exc_info()[1]
        log.info("%s: connection ended (%s)", client_address[0], type(error).__name__ if error else "unknown")


def make_server(host: str = "127.0.0.1", port: int = 8000) -> tuple[Server, str]:
    """The server (not yet serving) and the page's URL."""
    if not host.strip():
        raise UsageError("--host is empty (it would listen on every interface while the page's address says "
                         "localhost): give 127.0.0.1, or 0.0.0.0 for every interface")
    table = routes()
    try:
        server = Server((host, port), functools.partial(Handler, table=table))
    except OSError as error:
        raise SpeechattnError(f"cannot listen on {host}:{port} ({error.strerror or error})") from None
    return server, f"http://{host if host not in ('0.0.0.0', '') else 'localhost'}:{server.server_address[1]}/web/"


def _interrupted(*_) -> None:
    raise KeyboardInterrupt


def serve(host: str = "127.0.0.1", port: int = 8000, ready=None) -> None:
    """Serve until interrupted (Ctrl-C, or SIGTERM as a service manager stops it: both end it cleanly, exit 0);
    `ready(url)` is called once the socket listens."""
    import signal
    import threading

    server, url = make_server(host, port)
    main_thread = threading.current_thread() is threading.main_thread()  # signal handlers live in the main thread
    previous = signal.signal(signal.SIGTERM, _interrupted) if main_thread else None
    with server:
        try:  # ready() inside: a SIGTERM just after it says the page is served (a test, a quick stop) ends it cleanly too
            if ready:
                ready(url)
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            if main_thread:
                signal.signal(signal.SIGTERM, previous)
