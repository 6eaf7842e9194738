"""docs/embedding.md's C and C++ blocks build against libspeechattn and run as written (from the clone's root, as a
reader pasting them would), each printing what it shows."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_native_c import build  # noqa: F401  (the library, built once for this module)

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "embedding.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}[ \t]*\n(.*?)^```", PAGE.read_text(), re.S | re.M)


@pytest.mark.parametrize("language, compiler, suffix", [("c", "cc", ".c"), ("cpp", "c++", ".cpp")])
def test_the_native_snippets_in_the_embedding_page_build_and_run(build, tmp_path, language,  # noqa: F811
                                                                 compiler, suffix):
    if not shutil.which(compiler):
        pytest.skip(f"{compiler} not installed (apt-get install g++)")
    found = blocks(language)
    assert found, f"docs/embedding.md has no {language} block"
    for number, code in enumerate(found):
        source = tmp_path / f"snippet{number}{suffix}"
        source.write_text(code)
        program = tmp_path / f"snippet{number}"
        made = subprocess.run([compiler, str(source), "-o", str(program), f"-I{ROOT / 'export/c/include'}",
                               f"-L{build}", "-lspeechattn", "-lm", f"-Wl,-rpath,{build}", "-Wall", "-Wextra"],
                              capture_output=True, text=True, timeout=120)
        assert made.returncode == 0 and "warning" not in made.stderr, made.stderr
        ran = subprocess.run([str(program)], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert ran.stdout.strip()
        if language == "c":
            assert re.search(r"^phone [A-Za-z]+ \d+\.\d\d-\d+\.\d\d$", ran.stdout, re.M), ran.stdout
            assert re.search(r"^mouth [A-HX] at \d+\.\d\d$", ran.stdout, re.M), ran.stdout
        else:
            assert "15 mouth weights a frame" in ran.stdout and "refused: " in ran.stdout, ran.stdout
