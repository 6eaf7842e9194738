"""bench/serve_load.py --model-only: the model's cost a stream at each batch size, with the state through numpy and
through I/O binding (the GPU server's way), and the copies onnxruntime put between a device and the host; --one-core:
the server's CPU against the model's on one pinned core."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnxruntime as ort
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(ROOT / "bench" / "serve_load.py")
SPEECH = ROOT.parent / "shared" / "data" / "librispeech-clips" / "audio"


@pytest.mark.skipif(not SPEECH.is_dir(), reason="../shared/data/librispeech-clips is not beside the clone")
def test_model_only_measures_each_batch_size_with_and_without_io_binding(tiny_onnx):
    result = subprocess.run([sys.executable, SCRIPT, "--model-only", "--model", str(tiny_onnx), "--batches", "1,3",
                             "--io-binding", "both"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "on CPUExecutionProvider" in result.stdout
    assert "0 copies between the device and the host" in result.stdout
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if line.startswith("| ") and
            line.split("|")[1].strip().isdigit()]
    assert [(r[0].strip(), r[1].strip()) for r in rows] == [("1", "off"), ("1", "on"), ("3", "off"), ("3", "on")]
    for row in rows:
        cpu_ms, wall_ms, per_core, real_time = (float(x) for x in row[2:6])
        assert cpu_ms > 0 and wall_ms > 0 and per_core > 0 and real_time > 0, row


@pytest.mark.skipif(not SPEECH.is_dir(), reason="../shared/data/librispeech-clips is not beside the clone")
def test_model_only_runs_where_the_onnx_package_is_not_installed(tiny_onnx):
    """A runtime install has onnxruntime but not onnx (a training dependency): on the CPU nothing needs it."""
    blocker = ("import runpy, sys\n"
               "class Block:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name == 'onnx' or name.startswith('onnx.'):\n"
               "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
               "sys.meta_path.insert(0, Block())\n"
               f"sys.argv = ['serve_load.py', '--model-only', '--model', {str(tiny_onnx)!r}, '--batches', '2']\n"
               f"runpy.run_path({SCRIPT!r}, run_name='__main__')\n")
    result = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0 and "| 2 | off |" in result.stdout, result.stderr


def test_a_model_that_is_not_there_is_one_line():
    result = subprocess.run([sys.executable, SCRIPT, "--model-only", "--model", "tiny"], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 1 and result.stderr.startswith("serve_load.py: tiny: no such model file"), \
        result.stderr


def test_device_copies_lists_none_on_the_cpu_and_names_what_reads_and_writes_each_copy(tiny_onnx):
    """On the CPU onnxruntime inserts no copy; in a graph as onnxruntime saves it for a GPU, each copy to the host is
    named with the kinds of node that read it (those that run on the CPU), each copy from it with its input's writer."""
    from onnx import helper

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from serve_load import copies_in, device_copies
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert device_copies(str(tiny_onnx), ["CPUExecutionProvider"]) == []
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("MemcpyToHost", ["y"], ["y_host"]),
             helper.make_node("Shape", ["y_host"], ["shape"]), helper.make_node("Reshape", ["y_host", "shape"], ["z"]),
             helper.make_node("MemcpyFromHost", ["z"], ["z_device"]), helper.make_node("Relu", ["z_device"], ["out"]),
             helper.make_node("MemcpyFromHost", ["x"], ["x_device"])]
    graph = helper.make_graph(nodes, "copies", [], [])
    assert copies_in(graph) == ["MemcpyToHost -> Reshape, Shape", "Reshape -> MemcpyFromHost",
                                "(an input) -> MemcpyFromHost"]


@pytest.mark.skipif("CUDAExecutionProvider" in ort.get_available_providers(), reason="this onnxruntime has CUDA")
def test_model_only_on_a_gpu_this_onnxruntime_lacks_is_one_line():
    result = subprocess.run([sys.executable, SCRIPT, "--model-only", "--provider", "cuda"], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("serve_load.py: this onnxruntime") and "onnxruntime-gpu" in result.stderr


@pytest.mark.skipif(not SPEECH.is_dir() or not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs ../shared/data/librispeech-clips and two cores to pin to")
def test_one_core_prints_each_levels_server_cpu_against_the_model_alone_and_its_graph_calls(tiny_onnx):
    """--one-core: the server on one core, the clients on another; each level's row has the server's CPU a
    stream-second, the model alone at the server's mean batch and the graph calls' CPU, each ratio their quotient."""
    server_core, client_core = sorted(os.sched_getaffinity(0))[:2]
    result = subprocess.run([sys.executable, SCRIPT, "--one-core", f"{server_core},{client_core}", "--model",
                             str(tiny_onnx), "--levels", "2", "--seconds", "2", "--arms", "4", "--budget-ms", "100000"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if line.startswith("| this ")]
    assert len(rows) == 1 and [cell.strip() for cell in rows[0][:3]] == ["this", "4", "2"], result.stdout
    server, alone, ratio, inside, ratio_inside = (float(rows[0][i]) for i in range(6, 11))
    assert server > 0 and alone > 0 and inside > 0, rows
    assert abs(ratio - server / alone) <= 0.01 + 0.01 * ratio, rows
    assert abs(ratio_inside - server / inside) <= 0.01 + 0.01 * ratio_inside, rows
    assert "# this, --max-batch 4: one server core held 2 streams" in result.stdout


def test_one_core_with_one_core_twice_is_one_line():
    result = subprocess.run([sys.executable, SCRIPT, "--one-core", "0,0"], capture_output=True, text=True, timeout=120,
                            cwd=ROOT)
    assert result.returncode == 1 and result.stderr.startswith("serve_load.py: --one-core 0,0: two different cores"), \
        result.stderr
