"""Train the kit's grapheme-to-phoneme fallback on the bundled CMUdict and write export/models/g2p.onnx.

    python tools/train_g2p.py                               # train (9.5 min on 2 idle CPU threads), export, evaluate
    python tools/train_g2p.py --evaluate export/models/g2p.onnx   # the held-out figures of a file, through the kit

The model: letters -> embedding -> bidirectional LSTM -> every letter emits S output slots, each a distribution
over blank + the 39 phones; CTC aligns the slots to the pronunciation.  The clients decode greedily (argmax per
slot, repeats collapsed, blanks dropped: speechattn_export.words.ctc_greedy and its JS twin), so no search code
has to be written twice.

Shapes: B words in a batch (all of L letters), S = --slots output slots per letter, C = 1 + 39 classes.

Data: every word of export/lexicon/cmudict.txt.gz spelt with a-z and ' only, one example per variant (all of
them: the model learns the common reading and the test counts a match with any variant).  2 % of those words are
held out by a hash of the spelling (HELD_OUT_MODULUS), so the split never depends on the order, the seed or the
release; tests/test_words.py reads the same rule.

Scores on the held-out words: word accuracy (the greedy output equals one of the word's variants) and phone error
rate (edits to the nearest variant over that variant's length, summed over words).
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import sys
import time
import warnings
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEXICON = ROOT / "export" / "lexicon" / "cmudict.txt.gz"
OUTPUT = ROOT / "export" / "models" / "g2p.onnx"
sys.path.insert(0, str(ROOT))

from speechattn.phones import ARPABET  # noqa: E402  (the model's inventory less silence)
from speechattn_export.words import ctc_greedy  # noqa: E402

LETTERS = "'abcdefghijklmnopqrstuvwxyz"  # letter id = 1 + position (0 is never used: room for an unknown letter)
BLANK = "<blank>"
SYMBOLS = (BLANK, *ARPABET)  # output class k is SYMBOLS[k]
HELD_OUT_MODULUS = 50  # a word is held out when crc32(word) % 50 == 0: 2 %


def held_out(word: str) -> bool:
    return zlib.crc32(word.encode()) % HELD_OUT_MODULUS == 0


def read_lexicon(path: Path = LEXICON) -> dict[str, list[tuple[str, ...]]]:
    """Words spelt with LETTERS only -> their variants (the kit's file format: word TAB variant TAB ...)."""
    allowed = set(LETTERS)
    lexicon = {}
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        word, *variants = line.split("\t")
        if set(word) <= allowed:
            lexicon[word] = [tuple(v.split()) for v in variants]
    return lexicon


def split(lexicon: dict) -> tuple[list[str], list[str]]:
    words = sorted(lexicon)
    return [w for w in words if not held_out(w)], [w for w in words if held_out(w)]


def edit_distance(a, b) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def score(predictions: dict[str, tuple[str, ...]], lexicon: dict) -> tuple[float, float]:
    """(word accuracy, phone error rate) of predictions against every variant of each word."""
    correct = edits = length = 0
    for word, predicted in predictions.items():
        distance, reference = min((edit_distance(predicted, v), len(v)) for v in lexicon[word])
        correct += distance == 0
        edits += distance
        length += reference
    return correct / len(predictions), edits / length


# ---------------------------------------------------------------------------------------------------------
# The model.

def build_model(hidden: int, layers: int, slots: int, embedding: int, dropout: float):
    import torch
    from torch import nn

    class G2P(nn.Module):
        def __init__(self):
            super().__init__()
            self.slots = slots
            self.embedding = nn.Embedding(1 + len(LETTERS), embedding)
            self.lstm = nn.LSTM(embedding, hidden, num_layers=layers, bidirectional=True, batch_first=True,
                                dropout=dropout if layers > 1 else 0.0)
            self.output = nn.Linear(2 * hidden, slots * len(SYMBOLS))

        def forward(self, letters: torch.Tensor) -> torch.Tensor:
            """letters (B, L) int64, words of one length (training batches are bucketed by length, so nothing is
            padded and the exported graph runs the very code trained) -> log-probabilities (B, L*S, C)."""
            B, L = letters.shape
            x = self.embedding(letters)  # (B, L, E)
            x, _ = self.lstm(x)  # (B, L, 2H)
            x = self.output(x).reshape(B, L * self.slots, len(SYMBOLS))  # (B, L, S*C) -> (B, L*S, C)
            return x.log_softmax(-1)

    return G2P()


def encode(word: str) -> list[int]:
    return [1 + LETTERS.index(c) for c in word]


def greedy(log_probs) -> tuple[str, ...]:
    """(T, C) -> phones, decoded as the clients do."""
    return ctc_greedy(log_probs.argmax(-1).tolist(), list(SYMBOLS), 0)


def batches(items: list, length, batch_size: int) -> list[list]:
    """Items grouped by length(item) into batches of at most batch_size, each of one length (no padding)."""
    by_length: dict[int, list] = {}
    for item in items:
        by_length.setdefault(length(item), []).append(item)
    return [group[i:i + batch_size] for _, group in sorted(by_length.items()) for i in range(0, len(group), batch_size)]


def predict_torch(model, words: list[str], batch_size: int = 512) -> dict[str, tuple[str, ...]]:
    import torch

    model.eval()
    out = {}
    with torch.no_grad():
        for batch in batches(words, len, batch_size):
            log_probs = model(torch.tensor([encode(w) for w in batch]))  # (B, L*S, C)
            out.update((word, greedy(row)) for word, row in zip(batch, log_probs))
    return out


def train(args, lexicon: dict, train_words: list[str], held: list[str]):
    import torch

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    model = build_model(args.hidden, args.layers, args.slots, args.embedding, args.dropout)
    examples = [(encode(w), [SYMBOLS.index(p) for p in v]) for w in train_words for v in lexicon[w]]
    examples = [(x, y) for x, y in examples if len(y) <= args.slots * len(x)]  # CTC needs a slot per phone
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{len(train_words)} training words ({len(examples)} pronunciations), {len(held)} held out; "
          f"{parameters} parameters ({4 * parameters / 1e6:.2f} MB as float32)", flush=True)
    total_steps = args.epochs * len(batches(examples, lambda example: len(example[0]), args.batch_size))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=total_steps, pct_start=0.1)
    ctc = torch.nn.CTCLoss(blank=0, zero_infinity=True)
    started = time.time()
    for epoch in range(args.epochs):
        model.train()
        random.shuffle(examples)
        epoch_batches = batches(examples, lambda example: len(example[0]), args.batch_size)
        random.shuffle(epoch_batches)
        total = 0.0
        for batch in epoch_batches:
            letters = torch.tensor([x for x, _ in batch])  # (B, L)
            targets = torch.tensor([p for _, y in batch for p in y])
            target_lengths = torch.tensor([len(y) for _, y in batch])
            log_probs = model(letters)  # (B, L*S, C)
            slots = torch.full((len(batch),), log_probs.shape[1])
            loss = ctc(log_probs.transpose(0, 1), targets, slots, target_lengths)  # CTC wants (T, B, C)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            total += loss.item() * len(batch)
        accuracy, per = score(predict_torch(model, held), lexicon)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / len(examples):.4f}, held-out word accuracy "
              f"{accuracy:.4f}, PER {per:.4f} ({time.time() - started:.0f} s)", flush=True)
    return model, time.time() - started


# ---------------------------------------------------------------------------------------------------------
# Export and evaluation through the kit.

def export(model, path: Path, metadata: dict[str, str]) -> None:
    """The graph for one word, letters (1, L) -> log_probs (1, L*S, C), opset 17, with the alphabet and output
    symbols in metadata_props; refused if onnxruntime disagrees with torch."""
    import numpy as np
    import onnx
    import onnxruntime
    import torch

    model.eval()
    temporary = path.with_name(path.name + ".tmp")
    example = torch.tensor([encode("speech")])
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation, and its LSTM batch-size note (batch 1 here)
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), str(temporary), dynamo=False, opset_version=17, input_names=["letters"],
                          output_names=["log_probs"], dynamic_axes={"letters": {1: "letters"}, "log_probs": {1: "slots"}})
    proto = onnx.load(str(temporary))
    del proto.metadata_props[:]
    for key, value in metadata.items():
        proto.metadata_props.add(key=key, value=value)
    onnx.save(proto, str(temporary))
    session = onnxruntime.InferenceSession(str(temporary), providers=["CPUExecutionProvider"])
    with torch.no_grad():
        for word in ("a", "speech", "supercalifragilisticexpialidocious", "x'y" * 20):
            letters = torch.tensor([encode(word)])
            ours = session.run(None, {"letters": letters.numpy()})[0]
            theirs = model(letters).numpy()
            if ours.shape != theirs.shape or not np.allclose(ours, theirs, atol=1e-4):
                raise SystemExit(f"onnxruntime disagrees with torch on {word!r}: max difference "
                                 f"{np.abs(ours - theirs).max() if ours.shape == theirs.shape else ours.shape}")
    os.replace(temporary, path)


def evaluate(path: Path, lexicon: dict, held: list[str]) -> tuple[float, float]:
    """The held-out figures of an ONNX file, decoded by the kit's own G2P (what every client runs)."""
    from speechattn_export.words import G2P

    g2p = G2P(path)
    return score({word: g2p.phones(word) for word in held}, lexicon)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--evaluate", type=Path, help="only score this ONNX file on the held-out words")
    parser.add_argument("--hidden", type=int, default=128, help="LSTM units per direction")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--embedding", type=int, default=64)
    parser.add_argument("--slots", type=int, default=2, help="output slots per letter")
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    lexicon = read_lexicon()
    train_words, held = split(lexicon)
    if args.evaluate:
        accuracy, per = evaluate(args.evaluate, lexicon, held)
        print(f"{args.evaluate}: {len(held)} held-out words: word accuracy {accuracy:.4f}, PER {per:.4f}")
        return
    model, seconds = train(args, lexicon, train_words, held)
    accuracy, per = score(predict_torch(model, held), lexicon)
    metadata = {
        "model_type": "speechattn-g2p",
        "g2p_version": "1",
        "letters": LETTERS,  # the input: letter ids 1 + position in this string (lower case; others dropped)
        "symbols": ",".join(SYMBOLS),  # the output classes, blank first
        "blank": BLANK,
        "slots_per_letter": str(args.slots),
        "decoding": "greedy CTC: argmax per slot, collapse repeats, drop blanks",
        "training": (f"CMUdict {len(train_words)} words (all variants, stress removed), 2 % held out by "
                     f"crc32(word) % {HELD_OUT_MODULUS} == 0; BiLSTM {args.layers} x {args.hidden}, embedding "
                     f"{args.embedding}, {args.epochs} epochs, seed {args.seed}; tools/train_g2p.py"),
        "held_out_words": str(len(held)),
        "held_out_word_accuracy": f"{accuracy:.4f}",
        "held_out_phone_error_rate": f"{per:.4f}",
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    export(model, args.output, metadata)
    accuracy, per = evaluate(args.output, lexicon, held)
    print(f"{args.output}: {args.output.stat().st_size} bytes; trained in {seconds / 60:.1f} min on {args.threads} "
          f"threads; {len(held)} held-out words through the kit: word accuracy {accuracy:.4f}, PER {per:.4f}")


if __name__ == "__main__":
    main()
