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


def github_anchor(heading: str) -> str:
    """A Markdown heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_benchmarks_results_name_scripts_that_exist_and_sections_that_are_there():
    """docs/benchmarks.md opens with the results (how right, how fast, against whom), each with its command and
    the section that holds its table: every bench script named there exists, every link in the page's own sections
    finds its heading, and the Speed section that new graphs' figures go to is there."""
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    headings = {github_anchor(h) for h in re.findall(r"^#+ (.+)$", page, re.M)}
    results = page.split("## Results\n", 1)[1].split("\n## ", 1)[0]
    assert {"### How right", "### How fast", "### Against whom"} <= set(re.findall(r"^### .+$", results, re.M))
    scripts = re.findall(r"(?:python|bash) (bench/[\w/]+\.(?:py|sh))", results)
    assert len(scripts) >= 8 and all((ROOT / s).exists() for s in scripts), scripts
    anchors = re.findall(r"\]\(#([\w-]+)\)", page)
    assert anchors and not [a for a in anchors if a not in headings], [a for a in anchors if a not in headings]
    assert "speed" in headings
