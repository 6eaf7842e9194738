"""Write tests/words-vectors.json: texts in, Lexicon.words() out, for every normalisation rule, a user dictionary,
unknown words through g2p and the awkward inputs.  The Python kit (tests/test_words.py) and the JavaScript kit
(export/node/check-words.mjs, with onnxruntime-node and with onnxruntime-web) are each tested against this file,
which keeps them equal.

    python tools/words_vectors.py            # rewrite it after a change to export/words.py or models/g2p.onnx
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from speechattn_export.words import LETTER, PHONES, TOKEN_PATTERN, Lexicon, fold, parse_user_dictionary  # noqa: E402

OUTPUT = ROOT / "tests" / "words-vectors.json"
USER_DICTIONARY = """\
;;; names and corrections, CMUdict and MFA styles mixed
nguyen  N W IH1 N
NGUYEN(2)  W IH1 N
tomato\tT AH0 M AA1 T OW0
speechattn\t0.99\t0.05\t1.0\t1.0\tS P IY CH AE T AH N
xyz Z IH Z   # a name, not three letters
five F AY V AH
"""
TEXTS = [  # (text, with the user dictionary)
    ("", False),
    ("?!... — ;: () [] {} \"\" ' ’ - -- ...", False),
    ("Hello, world!", False),
    ("  tabs\tand\nnewlines\r\n  between   words  ", False),
    ("“Hello,” she said, ‘quietly’. «Bonjour»", False),
    ("Don't stop; it's five o'clock.", False),
    ("rock’n’roll with curly apostrophes: don’t, it’s", False),
    ("The dogs' bowls, James's hat, the boss's desk and Xavier's bike.", False),
    ("Rock 'n' roll, 'em, 'bout time, 'Quoted words' and 'single'", False),
    ("A well-known twenty-one-year-old state-of-the-art jack-o-lantern.", False),
    ("hyphen-ated word-final- -leading --double-- e-mail", False),
    ("www.example.com and Ph.D. students", False),
    ("0 7 13 42 100 101 110 999", False),
    ("1,200 and 1,000,000 and 999,999,999,999,999 and 1,2345", False),
    ("12345678901234567890 and 007 and 0123", False),
    ("3.5 0.25 .5 3.14159 10.05", False),
    ("1st 2nd 3rd 4th 11th 12th 21st 22nd 100th 101st 1,000th 0th 5TH", False),
    ("1999 1900 1905 2000 2005 2010 2024 1066 1200 2100", False),
    ("the 1990s, the 1900s, the 80s, the '80s, the 90's and the 2000s", False),
    ("$5 $1 $0.99 $1.01 $5.50 $1,200.50 $3.5 $.50 $0", False),
    ("£20 £1.50 £0.01 €1 €2.99", False),
    ("50% 3.5% 100 % 0.1%", False),
    ("Mr. Smith and Mrs. Jones met Dr. Who vs. the Daleks, etc.", False),
    ("e.g. apples, i.e. fruit; E.G. and I.E; eg ie", False),
    ("St. Louis, Main St. and St Paul; Elm St, Springfield; st. ives", False),
    ("Jr. and Sr. with Prof. Plum at Mt. Everest", False),
    ("U.S.A. and U.K. with J. R. R. Tolkien, A.B.C and Plan A.", False),
    ("Vitamin C. Then x. and y.", False),
    ("the USA, NASA and the FBI; XYZ and QWZ; GPT; ABCDEFG; I am a cat", False),
    ("ALL CAPS SHOUTING IS FINE", False),
    ("&, +, =, @; Tom & Jerry; 2 + 2 = 4; me@example", False),
    ("Café naïve São Paulo Zürich façade Ærøskøbing Straße Łódź", False),
    ("The blorptastic zindlewort quarkified the snorble.", False),
    ("frobnicate covid Daleks", False),
    ("mp3 A4 3D COVID-19 B2B 5km 10kg 3pm", False),
    ("1-2 1/2 10:30 4,5 1.2.3", False),
    ("at 3:30, 7:00, 12:05, 0:15 and 23:59; not 24:00, 9:5, 10:300 or 1:2:3", False),
    ("The 1st-place winner got 2nd-best", False),
    ("O'Neill and McDonald's; who's whose", False),
    ("Привет мир 你好 hello ΑΒΓ", False),
    ("supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis", False),
    ("abc" * 70, False),
    ("1234567890" * 4, False),
    ("-".join(["well"] * 20), False),
    ("end. Hello... world. Wait—what?", False),
    ("I.E", False),
    ("km kg www XKCD pdfs; UCX, IBM, COVID and UEFA", False),
    ("I have 2 cats and 1 dog; call 555-1234; -5 degrees", False),
    ("(42) [3.5] “$5” '7' {1st}", False),
    ("A.M. and P.M.; a.m. p.m.; Ms. Smith", False),
    ("ÉCOLE ÜBER naïveté", False),
    ("\n\n", False),
    ("...and then...", False),
    ("can't won't shouldn't've y'all", False),
    ("He said 'no.' She said \"yes.\"", False),
    ("X Æ A-12", False),
    ("The 2024's budget and 1920's jazz", False),
    ("Nguyen read the tomato to speechattn.", True),
    ("NGUYEN'S TOMATO", True),
    ("XYZ paid $5 for five tomatoes", True),
    ("Nguyen's xyz", True),
    ("no user words here", True),
]
PRONUNCIATIONS = [  # (word, with the user dictionary)
    ("tomato", False), ("tomato", True), ("TOMATO", True), ("Xavier's", False), ("blorptastic", False),
    ("a.", False), ("ÆTHER", False), ("", False), ("'", False), ("c++", False), ("Nguyen's", True),
]
BAD_USER_DICTIONARIES = [
    "good G UH D\nbad B AE XX\n",
    ";;; header\n\nlonely\n",
    "word 0.5 1.0\n",
    "silence sil\n",
    "\ufeffcafé K AE F EY # comment\nbad1 B AE D 1\n",
    ",COMMA K AA M AH\npassword,P AE S W ER D\n",
]


def word_dict(word) -> dict:
    out = dataclasses.asdict(word)
    out["pronunciations"] = [list(v) for v in word.pronunciations]
    return out


def build() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "user.dict")
        Path(path).write_text(USER_DICTIONARY)
        lexicons = {False: Lexicon.load(), True: Lexicon.load(path)}
        cases = [{"text": text, "user_dictionary": user, "words": [word_dict(w) for w in lexicons[user].words(text)]}
                 for text, user in TEXTS]
        pronunciations = [{"word": word, "user_dictionary": user,
                           "pronunciations": [list(v) for v in lexicons[user].pronunciations(word)]}
                          for word, user in PRONUNCIATIONS]
    errors = []
    for text in BAD_USER_DICTIONARIES:
        try:
            parse_user_dictionary(text, "user.dict")
        except ValueError as error:
            errors.append({"text": text, "error": str(error)})
        else:
            raise AssertionError(f"{text!r} was accepted")
    letters = "".join(chr(c) for c in range(0x41, 0x180) if re.fullmatch(f"[{LETTER}]", chr(c)))
    return {
        "about": "Lexicon.words() of the Python kit (export/words.py); export/js/words.mjs must give the same. "
                 "Written by tools/words_vectors.py.",
        "token_pattern": TOKEN_PATTERN,
        "phones": list(PHONES),
        "fold": {"input": letters, "output": [fold(c) for c in letters]},
        "user_dictionary": USER_DICTIONARY,
        "cases": cases,
        "pronunciations": pronunciations,
        "user_dictionary_errors": errors,
    }


def dumps(vectors: dict) -> str:
    """JSON with one word (or error, or pronunciation) per line: a diff shows which word changed."""
    def one(value) -> str:
        return json.dumps(value, ensure_ascii=False)

    def listing(items) -> str:
        return "[\n" + ",\n".join(items) + "\n ]" if items else "[]"

    parts = []
    for key, value in vectors.items():
        if key == "cases":
            cases = [f'  {{"text": {one(c["text"])}, "user_dictionary": {one(c["user_dictionary"])}, "words": '
                     + (listing(["   " + one(w) for w in c["words"]]).replace("\n ]", "\n  ]")) + "}" for c in value]
            parts.append(f' {one(key)}: ' + listing(cases))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            parts.append(f' {one(key)}: ' + listing(["  " + one(item) for item in value]))
        else:
            parts.append(f' {one(key)}: {one(value)}')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main() -> None:
    vectors = build()
    temporary = OUTPUT.with_name(OUTPUT.name + ".tmp")
    temporary.write_text(dumps(vectors))
    os.replace(temporary, OUTPUT)
    words = sum(len(c["words"]) for c in vectors["cases"])
    print(f"{OUTPUT.relative_to(ROOT)}: {len(vectors['cases'])} texts, {words} words")


if __name__ == "__main__":
    main()
