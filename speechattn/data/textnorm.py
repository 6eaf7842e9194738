"""Prompt text -> the words a speaker says, for alignment against a pronouncing dictionary."""

from __future__ import annotations

import re

ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
       "seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
SYMBOLS = {"*": "star", "#": "pound", "&": "and", "%": "percent", "+": "plus", "@": "at"}


def spell_number(n: int) -> list[str]:
    """0 .. 999,999 as spoken words ("one hundred twenty three")."""
    if n < 20:
        return [ONES[n]]
    if n < 100:
        return [TENS[n // 10]] + (spell_number(n % 10) if n % 10 else [])
    if n < 1000:
        return [ONES[n // 100], "hundred"] + (spell_number(n % 100) if n % 100 else [])
    if n < 1_000_000:
        return spell_number(n // 1000) + ["thousand"] + (spell_number(n % 1000) if n % 1000 else [])
    raise ValueError(f"{n} is too large to spell")


def spoken_words(text: str) -> list[str]:
    """Lower-case words: digits spelled out, symbols named, punctuation dropped, apostrophes kept."""
    for symbol, word in SYMBOLS.items():
        text = text.replace(symbol, f" {word} ")
    words = []
    for token in re.findall(r"[A-Za-z']+|\d+", text):
        if token.isdigit():
            words += spell_number(int(token))
        else:
            token = token.strip("'").lower()
            if token:
                words.append(token)
    return words
