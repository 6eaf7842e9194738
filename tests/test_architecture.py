"""The layout's import rule (ARCHITECTURE.md): imports point downwards, no cycles, a torch-free runtime."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "speechattn"
LAYERS = {"core": 0, "runtime": 1, "data": 2, "model": 3, "training": 4, "cli": 5}
ALLOWED_BELOW = {  # layer -> the stages it may import from (besides itself)
    "core": {"core"},
    "runtime": {"core"},
    "data": {"core", "runtime"},
    "model": {"core", "runtime", "data"},
    "training": {"core", "runtime", "data", "model"},
    "cli": set(LAYERS),
}
CLIENT_ALLOWED = {"runtime", "model", "training", "cli"}  # may import speechattn_export
RUNTIME_THIRD_PARTY = {"numpy", "onnxruntime", "soundfile", "soxr", "sounddevice", "praatio", "tqdm", "click", "pythonosc",
                       "matplotlib", "scipy", "av", "ray", "grpc",  # grpc: the cluster extra's, as ray
                       "websockets", "prometheus_client", "h11", "uvloop", "espeakng_loader"}  # from matplotlib on: optional extras, imported where used


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage(module: str) -> str:
    if module == "speechattn.__main__":  # `python -m speechattn`: the command line's entry point
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS and parts[1] != "core" and \
        (PACKAGE / parts[1]).is_dir() else "core"


def imports(path: Path) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file, inside functions too; relative ones resolved."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import; the layout uses absolute imports"
            found.append((node.module, node.lineno))
            for alias in node.names:  # `from speechattn import x` may name a module
                candidate = f"{node.module}.{alias.name}"
                if node.module.startswith("speechattn") and (
                        (PACKAGE.parent / candidate.replace(".", "/")).with_suffix(".py").exists()
                        or (PACKAGE.parent / candidate.replace(".", "/")).is_dir()):
                    found.append((candidate, node.lineno))
    return found


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_import_points_downwards():
    broken = []
    for name, path in MODULES.items():
        own = stage(name)
        for imported, line in imports(path):
            if imported == "speechattn_export" or imported.startswith("speechattn_export."):
                if own not in CLIENT_ALLOWED:
                    broken.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {own} imports the portable client")
                continue
            if not imported.startswith("speechattn.") or imported == "speechattn":
                continue
            target = stage(imported)
            if target != own and target not in ALLOWED_BELOW[own]:
                broken.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {own} imports {imported} ({target})")
    assert not broken, "imports against ARCHITECTURE.md:\n" + "\n".join(broken)


def test_no_import_cycle():
    graph = {name: {i for i, _ in imports(path) if i in MODULES and i != name} for name, path in MODULES.items()}
    for name in graph:  # a package's __init__ is imported with its modules; count edges between modules only
        graph[name] = {i for i in graph[name] if not name.startswith(i + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_no_import_cycle_among_the_bench_scripts():
    """bench/align.py, agreed_boundaries.py and real_edges.py imported each other's pieces in a circle; what they
    share is in bench/alignment_common.py.  Scripts import their neighbours by file name (bench/ on the path), inside
    functions too."""
    bench = PACKAGE.parent / "bench"
    scripts = {path.stem: path for path in bench.glob("*.py")}
    graph = {}
    for name, path in scripts.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                found.add(node.module)
        graph[name] = {module for module in found if module in scripts and module != name}

    def cycle_from(node, stack):
        for nxt in sorted(graph[node]):
            if nxt in stack:
                return stack[stack.index(nxt):] + [nxt]
            if (found := cycle_from(nxt, stack + [nxt])) is not None:
                return found
        return None

    cycles = [" -> ".join(c) for name in sorted(graph) if (c := cycle_from(name, [name])) is not None]
    assert not cycles, "import cycles in bench/: " + "; ".join(cycles)
    assert graph["alignment_common"] == set() and "alignment_common" in graph["agreed_boundaries"]


def test_core_and_runtime_import_only_runtime_packages():
    stray = []
    for name, path in MODULES.items():
        if stage(name) not in ("core", "runtime"):
            continue
        for imported, line in imports(path):
            top = imported.split(".")[0]
            if top in ("speechattn", "speechattn_export") or top in sys.stdlib_module_names:
                continue
            if top not in RUNTIME_THIRD_PARTY:
                stray.append(f"{path.relative_to(PACKAGE.parent)}:{line}: imports {imported}")
    assert not stray, "the runtime must install light:\n" + "\n".join(stray)


def run_without_torch(code: str) -> subprocess.CompletedProcess:
    """Python with torch, lhotse and the training stack made unimportable (as after `pip install speechattn`)."""
    blocker = ("import sys\n"
               "class Block:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] in ('torch', 'lhotse', 'onnx', 'pyroomacoustics', 'pocketsphinx', "
               "'tensorboard', 'yaml'):\n"
               "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
               "sys.meta_path.insert(0, Block())\n")
    return subprocess.run([sys.executable, "-c", blocker + code], capture_output=True, text=True, timeout=120,
                          cwd=PACKAGE.parent)


def test_runtime_imports_and_transcribes_without_torch():
    result = run_without_torch(
        "import speechattn, speechattn.runtime, speechattn.runtime.transcribe, speechattn.runtime.mic\n"
        "from speechattn.cli import main\n"
        "sys.exit(main(['transcribe', 'speechattn/runtime/samples/please-enter-your-password.wav', '--format', 'json']))")
    assert result.returncode == 0, result.stderr
    assert '"phone"' in result.stdout


def test_mic_help_and_a_training_command_without_torch_say_what_to_install():
    assert run_without_torch("from speechattn.cli import main\nsys.exit(main(['mic', '--help']))").returncode == 0
    result = run_without_torch("from speechattn.cli import main\nsys.exit(main(['init', '-o', '/tmp/x.pt']))")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install '.[train]' in a clone of speechattn" in lines[0], result.stderr


def test_no_source_file_is_hidden_by_gitignore():
    """A package or test file that .gitignore matches never reaches a commit (a `data/` pattern once hid
    speechattn/data/ from every clone)."""
    root = PACKAGE.parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    files = [str(p.relative_to(root)) for folder in ("speechattn", "tests", "export", "bench", "tools")
             for p in (root / folder).rglob("*") if p.is_file() and not {"__pycache__", "node_modules", "ort-web"} & set(p.parts)]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=root, input="\n".join(files),
                             capture_output=True, text=True).stdout.split()
    assert ignored == []


KIT = PACKAGE.parent / "export"


def test_the_portable_kit_imports_numpy_and_onnxruntime_only():
    stray = []
    for path in sorted(KIT.glob("*.py")):
        for imported, line in imports(path):
            top = imported.split(".")[0]
            if top not in ("speechattn_export", "numpy", "onnxruntime") and top not in sys.stdlib_module_names and \
                    (path.name, top) != ("remote.py", "websockets"):  # RemoteStream: the [serve] extra, lazily
                stray.append(f"export/{path.name}:{line}: imports {imported}")
    assert not stray, "the kit is numpy + onnxruntime only:\n" + "\n".join(stray)


def test_the_portable_kit_works_without_the_core_package():
    """Every kit module imports, and the bundled model streams into phones and cues, with `speechattn` and
    torch unimportable (an app that embeds the kit alone)."""
    code = ("import sys, numpy as np\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('speechattn', 'torch', 'soundfile', 'soxr', 'click'):\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import importlib, pkgutil, speechattn_export\n"
            "for m in pkgutil.iter_modules(speechattn_export.__path__):\n"
            "    importlib.import_module('speechattn_export.' + m.name)\n"
            "from speechattn_export.decoder import new_segmenter\n"
            "from speechattn_export.visemes import RHUBARB, make_cues\n"
            "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            cwd=PACKAGE.parent.parent)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
