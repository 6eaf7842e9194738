"""The kit's tables, each written once and read by everyone (the CLI's choices and help, the clients, the page);
standard library only, so `speechattn --help` reads them without importing numpy.

    bundled models  models/models.json beside this file (also read by the Node.js client and the web page): add a
                    model with its file in models/ and one entry there
    decoders        the phone decoders' names (decoder.py implements them; JS: speechattn.mjs DECODERS)
    viseme sets     phone -> mouth shape tables (visemes.py builds VisemeSet objects from VISEME_TABLES; JS:
                    visemes.mjs VISEME_SETS, kept equal by tests/test_js_clients.py; the schema's enum by
                    tests/test_visemes.py): add a set with one entry here, its JS twin and nothing else
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent / "models"
REGISTRY = MODELS_DIR / "models.json"


@functools.lru_cache(maxsize=1)
def registry() -> dict:
    """{"default": NAME, "files": NAME, "models": {NAME: {"file", "label", "description"}}, "bigram": FILE}."""
    return json.loads(REGISTRY.read_text())


def bundled_names() -> tuple[str, ...]:
    return tuple(registry()["models"])


def default_name() -> str:
    return registry()["default"]


def files_name() -> str:
    """The bundled model a file gets when none is named (transcribe, speechattn-rhubarb without a dialog, Node's
    transcribe.mjs): trained at full context, since nobody waits for a file's labels."""
    return registry().get("files", default_name())


def bundled_path(name: str) -> Path:
    """The file of a bundled model; KeyError naming the bundled ones for another name."""
    try:
        return MODELS_DIR / registry()["models"][name]["file"]
    except KeyError:
        raise KeyError(f"{name!r} is not a bundled model ({', '.join(bundled_names())})") from None


def resolve(name_or_path: str | Path | None) -> Path:
    """A bundled model's name (None: the default) or a path to an ONNX file -> the file's path.
    FileNotFoundError with one line when it is neither."""
    name = str(name_or_path) if name_or_path is not None else default_name()
    if name in registry()["models"]:
        path = bundled_path(name)
        if not path.exists():
            raise FileNotFoundError(f"the bundled model {name!r} is missing from this install ({path})")
        return path
    path = Path(name)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such model file (or bundled model name: {', '.join(bundled_names())})")
    return path


DECODERS = ("bigram", "hysteresis")

SILENCE = "sil"  # the contract's silence label (export/CONTRACT.md); every other phone name comes from the model

# name -> {shapes (output order), rest (the shape of silence), closed_lips (of P B M), covers (shape -> its phones),
# descriptions}: rhubarb = Rhubarb Lip Sync's nine shapes (its README, "Mouth shapes"), oculus = the 15 visemes of
# Oculus/Meta Lipsync, vrm = VRM's A I U E O blendshapes plus "sil", the closed mouth (every blendshape 0)
VISEME_TABLES: dict[str, dict] = {
    "rhubarb": {
        "shapes": ("A", "B", "C", "D", "E", "F", "G", "H", "X"), "rest": "X", "closed_lips": "A",
        "covers": {
            "A": ("P", "B", "M"),
            "B": ("K", "G", "NG", "T", "D", "N", "S", "Z", "SH", "ZH", "CH", "JH", "TH", "DH", "Y", "HH", "IY", "IH"),
            "C": ("EH", "AE", "AH", "EY"),
            "D": ("AA", "AY", "AW"),
            "E": ("AO", "ER", "OY", "R"),
            "F": ("UW", "UH", "OW", "W"),
            "G": ("F", "V"),
            "H": ("L",),
            "X": ("sil",),
        },
        "descriptions": {
            "A": "closed mouth, slight pressure between the lips: P B M",
            "B": "slightly open mouth, clenched teeth: most consonants, and EE as in bee",
            "C": "open mouth: EH as in men, AE as in bat",
            "D": "wide open mouth: AA as in father",
            "E": "slightly rounded mouth: AO as in off, ER as in bird",
            "F": "puckered lips: UW as in you, OW as in show, W as in way",
            "G": "upper teeth on the lower lip: F as in for, V as in very",
            "H": "tongue raised behind the upper teeth: long L sounds",
            "X": "idle, lips closed and relaxed: pauses",
        },
    },
    "oculus": {
        "shapes": ("sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "ih", "oh", "ou"), "rest": "sil", "closed_lips": "PP",
        "covers": {
            "sil": ("sil",),
            "PP": ("P", "B", "M"),
            "FF": ("F", "V"),
            "TH": ("TH", "DH"),
            "DD": ("T", "D"),
            "kk": ("K", "G", "NG", "HH"),
            "CH": ("CH", "JH", "SH", "ZH"),
            "SS": ("S", "Z"),
            "nn": ("N", "L"),
            "RR": ("R", "ER"),
            "aa": ("AA", "AE", "AH", "AY", "AW"),
            "E": ("EH", "EY"),
            "ih": ("IH", "IY", "Y"),
            "oh": ("AO", "OW", "OY"),
            "ou": ("UW", "UH", "W"),
        },
        "descriptions": {
            "sil": "silence, neutral",
            "PP": "p b m: lips closed",
            "FF": "f v: lower lip to upper teeth",
            "TH": "th: tongue between the teeth",
            "DD": "t d: tongue on the ridge",
            "kk": "k g: back of the tongue",
            "CH": "ch j sh: lips pushed forward",
            "SS": "s z: teeth together",
            "nn": "n l: tongue up, mouth ajar",
            "RR": "r: lips slightly rounded",
            "aa": "a as in father, cat, cut",
            "E": "e as in bed, bay",
            "ih": "i as in tip, bee",
            "oh": "o as in toe, law",
            "ou": "u as in book, you",
        },
    },
    "vrm": {
        "shapes": ("sil", "A", "I", "U", "E", "O"), "rest": "sil", "closed_lips": "sil",
        "covers": {
            "sil": ("sil", "P", "B", "M"),
            "A": ("AA", "AE", "AH", "AY", "AW", "HH", "K", "G", "NG"),
            "I": ("IY", "IH", "Y", "S", "Z", "T", "D", "N", "TH", "DH", "F", "V", "L"),
            "U": ("UW", "UH", "W", "SH", "ZH", "CH", "JH"),
            "E": ("EH", "EY"),
            "O": ("AO", "OW", "OY", "ER", "R"),
        },
        "descriptions": {
            "sil": "mouth closed: silence and P B M (every blendshape 0)",
            "A": "open: a as in father, cat",
            "I": "spread, teeth close: ee, and the consonants made at the teeth",
            "U": "rounded and forward: oo, w, sh",
            "E": "half open: e as in bed",
            "O": "rounded open: o as in law, toe, and r",
        },
    },
}
VISEME_SET_NAMES = tuple(VISEME_TABLES)
