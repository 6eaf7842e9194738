"""The output formats of `speechattn transcribe`: one table, name -> writer, extension and help, that the command
line reads for its choices, its help and its file names.  Standard library only (read by `--help`).

Add a format: a function in runtime/transcribe.py that turns a Transcript into text, and one entry here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OutputFormat:
    extension: str  # of the file --output-dir writes
    writer: str  # the function in speechattn.runtime.transcribe: Transcript -> text
    help: str
    rhubarb_shapes: bool = False  # Rhubarb's mouth shapes, whatever --visemes says
    takes_visemes: bool = False  # --visemes chooses its set
    one_file_each: bool = False  # a whole document per input: several inputs need --output-dir
    pieces: str | None = None  # a function yielding the text in pieces, for a text that grows with the audio


FORMATS: dict[str, OutputFormat] = {
    "text": OutputFormat(".txt", "as_text", "the phones, one line per file"),
    "json": OutputFormat(".json", "as_json", "start, end, phone, confidence (export/transcript.schema.json)"),
    "ctm": OutputFormat(".ctm", "as_ctm", "NIST CTM: a line per phone"),
    "textgrid": OutputFormat(".TextGrid", "textgrid_text", "Praat TextGrid, a phones tier", one_file_each=True),
    "rhubarb-tsv": OutputFormat(".tsv", "as_rhubarb_tsv", "Rhubarb Lip Sync's TSV mouth cues", rhubarb_shapes=True,
                                one_file_each=True),
    "rhubarb-json": OutputFormat(".json", "as_rhubarb_json", "Rhubarb's JSON", rhubarb_shapes=True,
                                 one_file_each=True),
    "rhubarb-xml": OutputFormat(".xml", "as_rhubarb_xml", "Rhubarb's XML", rhubarb_shapes=True, one_file_each=True),
    "rhubarb-dat": OutputFormat(".dat", "as_rhubarb_dat", "Rhubarb's Moho switch data (Moho, OpenToonz)",
                                rhubarb_shapes=True, one_file_each=True),
    "visemes-json": OutputFormat(".visemes.json", "as_visemes_json",
                                 "a row of mouth-shape weights per 10 ms and the cues, of --visemes SET",
                                 takes_visemes=True, pieces="visemes_json_pieces"),
}


def format_of(path, extensions: dict[str, str]) -> str | None:
    """The format an output file's name asks for ({extension: format name}, matched without case, the longest
    first: a.visemes.json is visemes-json, a.json json); None for a name with none of them."""
    name = str(path).lower()
    for extension in sorted(extensions, key=len, reverse=True):
        if name.endswith(extension.lower()):
            return extensions[extension]
    return None


# -o FILE's extension -> transcribe's format, where --format is not given: the first format of each extension
EXTENSIONS = {spec.extension: name for name, spec in reversed(list(FORMATS.items()))}


def render(name: str, transcript, rhubarb=None) -> str:
    """The transcript in format `name`, ending with a newline (nothing for a format with no line to write: CTM of a
    file too short for a frame); `rhubarb` (transcribe.RhubarbOptions) sets the rhubarb-* formats' shapes and .dat
    frames."""
    from speechattn.runtime import transcribe

    writer = getattr(transcribe, FORMATS[name].writer)
    text = writer(transcript, rhubarb) if FORMATS[name].rhubarb_shapes and rhubarb is not None else writer(transcript)
    return text if text.endswith("\n") or not text else text + "\n"


def render_pieces(name: str, transcript, rhubarb=None):
    """render's text in pieces (a format with a `pieces` function streams: its text is never held whole)."""
    from speechattn.runtime import transcribe

    if FORMATS[name].pieces is None:
        yield render(name, transcript, rhubarb)
        return
    last = ""
    for piece in getattr(transcribe, FORMATS[name].pieces)(transcript):
        if piece:
            yield piece
            last = piece
    if not last.endswith("\n"):
        yield "\n"


def write_transcript(transcript, name: str, target=None, rhubarb=None) -> None:
    """The transcript in format `name`, written in pieces (visemes-json grows with the audio: never held whole) to
    standard output, or, whole or not at all (a temporary file renamed), to the path `target`."""
    import sys

    from speechattn.files import atomic_path, flush_to_disk

    if target is None:
        for piece in render_pieces(name, transcript, rhubarb):
            sys.stdout.write(piece)
        sys.stdout.flush()
        return
    with atomic_path(target) as temporary:
        with open(temporary, "w", encoding="utf-8") as handle:
            for piece in render_pieces(name, transcript, rhubarb):
                handle.write(piece)
            flush_to_disk(handle)


def formats_help() -> str:
    return "; ".join(f"{name}: {f.help}" for name, f in FORMATS.items())
