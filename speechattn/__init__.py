"""speechattn: a streaming phone tagger (16 kHz audio -> one phone label per 10 ms frame)."""

__version__ = "0.1.0"
