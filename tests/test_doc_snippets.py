"""Every Python block in the repository's Markdown runs as written: each page's blocks in order, in a fresh
interpreter started at the clone's root, as a reader pasting them would run them (a block fenced
"```python sketch" shows the shape of code to write and is only shown).  The README's block is also compared with
what `speechattn transcribe` prints (tests/test_client.py); the Node and browser pages' snippets are run by
their own test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p for p in [*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), *ROOT.glob("export/**/*.md"),
                           *ROOT.glob("recipes/*.md"), *ROOT.glob("bench/*.md")] if "node_modules" not in p.parts)
BLOCK = re.compile(r"^```python[ \t]*(\w*)[ \t]*\n(.*?)^```", re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    return [code for kind, code in BLOCK.findall(page.read_text()) if kind != "sketch"]


RUNNABLE = [page for page in PAGES if python_blocks(page)]


def test_the_pages_with_python_snippets_are_found():
    names = {page.relative_to(ROOT).as_posix() for page in RUNNABLE}
    assert {"README.md", "docs/embedding.md"} <= names


@pytest.mark.parametrize("page", RUNNABLE, ids=[p.relative_to(ROOT).as_posix() for p in RUNNABLE])
def test_every_python_snippet_in_the_docs_runs_as_written(page, tmp_path):
    script = tmp_path / "snippets.py"
    script.write_text("\n\n".join(python_blocks(page)))
    result = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{page.name}:\n{result.stderr[-2000:]}"
    assert result.stdout.strip()  # each page's snippets print what they show
