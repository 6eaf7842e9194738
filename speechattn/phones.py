"""The output inventory: 39 ARPAbet phones (CMUdict, no stress) plus silence.

Output index k of every model is PHONES[k].  Index 0 is silence so that a
model's untrained bias and padding conventions have an obvious meaning.
"""

from __future__ import annotations

SILENCE = "sil"

ARPABET = (
    "AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG "
    "OW OY P R S SH T TH UH UW V W Y Z ZH"
).split()

PHONES: tuple[str, ...] = (SILENCE, *ARPABET)
NUM_PHONES = len(PHONES)  # 40
PHONE_TO_INDEX = {phone: index for index, phone in enumerate(PHONES)}
