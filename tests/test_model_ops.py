"""bench/model_ops.py: where a bundled model's CPU goes by operator, from onnxruntime's own profile."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(ROOT / "bench" / "model_ops.py")


def test_each_batch_size_gets_its_cpu_and_its_operators_shares():
    result = subprocess.run([sys.executable, SCRIPT, "--batches", "1,3", "--calls", "4"], capture_output=True,
                            text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for batch in (1, 3):
        block = out.split(f"B = {batch}: ")[1].split("\nB = ")[0]
        assert re.match(r"[\d.]+ ms CPU a call", block), block
        shares = [float(x) for x in re.findall(r"^\s+\w+\s+([\d.]+) %$", block, re.M)]
        assert 3 <= len(shares) <= 8 and 0 < sum(shares) <= 100.05, block
        assert "MatMulNBits" in block  # the int8 model's matrix products are there by name
        assert "\n    If " not in block  # a branch's time is its nodes', not counted twice
    assert "CPU a stream's chunk at B = 3 against B = 1" in out


def test_a_batch_size_out_of_range_is_one_line():
    result = subprocess.run([sys.executable, SCRIPT, "--batches", "0"], capture_output=True, text=True, timeout=120,
                            cwd=ROOT)
    assert result.returncode == 1 and "each from 1 to 4096" in result.stderr and "Traceback" not in result.stderr
