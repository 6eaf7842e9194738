"""Build hook: the wheel carries onnxruntime-web's runtime (three files of the npm package locked in
export/web/package-lock.json), so `pip install .` from a clone, a wheel built from the sdist and an editable
install all serve `speechattn web` with no Node.js.

Where the files come from, first found: export/web/node_modules ((cd export/web && npm ci)); a tarball already in
the user's cache; the npm registry (the version and sha512 integrity the lock file pins, checked before use).  A
build with neither the files nor the network still succeeds, says so, and `speechattn web` then says how to add
them.  Everything else is in pyproject.toml."""

import base64
import hashlib
import io
import json
import os
import tarfile
import urllib.request
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

WEB = Path("export") / "web"
ORT_WEB_DIST = WEB / "node_modules" / "onnxruntime-web" / "dist"
ORT_WEB_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
VENDORED = Path("speechattn_export") / "web" / "ort-web"  # inside the installed package
REGISTRY = os.environ.get("npm_config_registry", "https://registry.npmjs.org").rstrip("/")
DOWNLOAD_TIMEOUT_SECONDS = 120


def locked_ort_web() -> tuple[str, str]:
    """(version, integrity) of onnxruntime-web as export/web/package-lock.json pins it."""
    entry = json.loads((WEB / "package-lock.json").read_text())["packages"]["node_modules/onnxruntime-web"]
    return entry["version"], entry["integrity"]


def integrity_matches(data: bytes, integrity: str) -> bool:
    algorithm, _, expected = integrity.partition("-")
    return base64.b64encode(hashlib.new(algorithm, data).digest()).decode() == expected


def ort_web_tarball(announce) -> bytes | None:
    """The locked onnxruntime-web tarball, from the cache or the npm registry, checked; None where neither has it."""
    version, integrity = locked_ort_web()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "speechattn"
    cached = cache / f"onnxruntime-web-{version}.tgz"
    if cached.exists() and integrity_matches(cached.read_bytes(), integrity):
        return cached.read_bytes()
    url = f"{REGISTRY}/onnxruntime-web/-/onnxruntime-web-{version}.tgz"
    announce(f"fetching onnxruntime-web {version} for the browser page from {url}", level=2)
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
            data = response.read()
    except OSError as error:
        announce(f"cannot fetch {url} ({error})", level=3)
        return None
    if not integrity_matches(data, integrity):
        announce(f"{url}: not the file export/web/package-lock.json pins (integrity differs); not used", level=3)
        return None
    try:
        cache.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_suffix(f".tmp{os.getpid()}")
        temporary.write_bytes(data)
        temporary.replace(cached)
    except OSError:  # a read-only home: the build goes on without the cache
        pass
    return data


class BuildWithWebRuntime(build_py):
    def run(self):
        super().run()
        # an editable install serves the page from the checkout: the files go beside it there (git ignores them)
        target = WEB / VENDORED.name if getattr(self, "editable_mode", False) else Path(self.build_lib) / VENDORED
        if all((ORT_WEB_DIST / name).exists() for name in ORT_WEB_FILES):
            files = {name: (ORT_WEB_DIST / name).read_bytes() for name in ORT_WEB_FILES}
            package = json.loads((ORT_WEB_DIST.parent / "package.json").read_text())
        else:
            tarball = ort_web_tarball(self.announce)
            if tarball is None:
                self.announce("the wheel will not carry the browser page's runtime: `speechattn web` will say how "
                              "to add it", level=3)
                return
            with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
                files = {name: archive.extractfile(f"package/dist/{name}").read() for name in ORT_WEB_FILES}
                package = json.loads(archive.extractfile("package/package.json").read())
        target.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (target / name).write_bytes(data)
        (target / "NOTICE.txt").write_text(
            f"{package['name']} {package['version']} (npm), {package.get('license', 'MIT')} License, "
            "Copyright (c) Microsoft Corporation: its WebAssembly runtime, served by `speechattn web`.\n")


setup(cmdclass={"build_py": BuildWithWebRuntime})
