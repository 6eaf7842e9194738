"""Build hook: the wheel carries onnxruntime-web's runtime (three files of the npm package locked in
export/web/package-lock.json), so `pip install speechattn && speechattn web` serves the page with no Node.js.

The files are taken from export/web/node_modules at build time ((cd export/web && npm ci) first); a build without
them still works and `speechattn web` then says how to add them.  Everything else is in pyproject.toml."""

import json
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ORT_WEB_DIST = Path("export") / "web" / "node_modules" / "onnxruntime-web" / "dist"
ORT_WEB_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
VENDORED = Path("speechattn_export") / "web" / "ort-web"  # inside the installed package


class BuildWithWebRuntime(build_py):
    def run(self):
        super().run()
        missing = [name for name in ORT_WEB_FILES if not (ORT_WEB_DIST / name).exists()]
        if missing:
            self.announce(f"onnxruntime-web is not in {ORT_WEB_DIST} ((cd export/web && npm ci)): the wheel will "
                          "not carry the browser page's runtime", level=3)
            return
        target = Path(self.build_lib) / VENDORED
        target.mkdir(parents=True, exist_ok=True)
        for name in ORT_WEB_FILES:
            shutil.copyfile(ORT_WEB_DIST / name, target / name)
        package = json.loads((ORT_WEB_DIST.parent / "package.json").read_text())
        (target / "NOTICE.txt").write_text(
            f"{package['name']} {package['version']} (npm), {package.get('license', 'MIT')} License, "
            "Copyright (c) Microsoft Corporation: its WebAssembly runtime, served by `speechattn web`.\n")


setup(cmdclass={"build_py": BuildWithWebRuntime})
