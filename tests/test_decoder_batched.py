"""The bigram decoder stepped for many streams at once (decoder.push_many) gives each stream exactly what its own
PhoneDecoder gives: the same segments (start, end, phone), confidences equal to 1e-12 (np.exp of a stacked array
may round in other SIMD lanes than of one row), and the same state, so each decoder can go on alone."""

from __future__ import annotations

import numpy as np

from speechattn_export.decoder import DecoderConfig, PhoneBigram, PhoneDecoder, new_segmenter, push_many
from speechattn_export.segments import Segment

CONFIDENCE_TOLERANCE = 1e-12


def posteriors(rng, frames: int, phones: int) -> np.ndarray:
    """Peaky random log-posteriors with runs, like a model's: a phone held for a few frames, then another."""
    logits = rng.normal(0, 1, (frames, phones))
    held = np.repeat(rng.integers(0, phones, frames // 3 + 1), 3)[:frames]
    logits[np.arange(frames), held] += rng.uniform(0, 6, frames)
    return (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)


def same(a: list[Segment], b: list[Segment]) -> bool:
    return [(s.start_frame, s.end_frame, s.phone) for s in a] == [(s.start_frame, s.end_frame, s.phone) for s in b] \
        and all(abs(x.confidence - y.confidence) <= CONFIDENCE_TOLERANCE for x, y in zip(a, b))


def pair(phones, min_frames=None):
    return new_segmenter("bigram", phones, min_frames), new_segmenter("bigram", phones, min_frames)


def test_many_streams_decoded_as_one_batch_each_equal_their_own_decoder_chunk_after_chunk():
    """40 streams joining at different times, with min_frames 1 (the D = 1 branch), 2 and the default, chunks of
    4 frames (some streams given 8, 1 or none in a call, as after a server's late audio): every call's segments, then
    finish(), and the provisional phones equal each stream's own PhoneDecoder pushed the same frames."""
    phones = PhoneBigram.load().phones
    rng = np.random.default_rng(3)
    streams = []
    for number in range(40):
        alone, batched = pair(phones, (1, 2, None, None)[number % 4])
        streams.append({"alone": alone, "batched": batched, "joins": int(rng.integers(0, 12)),
                        "frames": posteriors(rng, 400, len(phones)), "at": 0, "alone_out": [], "batched_out": []})
    for call in range(80):
        chosen, pieces = [], []
        for s in streams:
            if call < s["joins"] or s["at"] >= len(s["frames"]):
                continue
            size = (4, 4, 4, 8, 1, 0)[int(rng.integers(0, 6))]
            piece = s["frames"][s["at"]:s["at"] + size]
            s["at"] += len(piece)
            s["alone_out"] += s["alone"].push(piece)
            chosen.append(s)
            pieces.append(piece)
        for s, segments in zip(chosen, push_many([s["batched"] for s in chosen], pieces)):
            s["batched_out"] += segments
            alone, batched = s["alone"], s["batched"]
            assert (batched.phone, batched.start, batched.run_phone, batched.frame, batched.final) == \
                (alone.phone, alone.start, alone.run_phone, alone.frame, alone.final)
            np.testing.assert_array_equal(batched.scores, alone.scores)
    decided = 0
    for s in streams:
        s["alone_out"] += s["alone"].finish()
        s["batched_out"] += s["batched"].finish()
        assert same(s["batched_out"], s["alone_out"])
        decided += len(s["alone_out"])
    assert decided > 1000  # the streams did make segments to compare


def test_decoders_with_other_tables_in_one_call_are_each_decoded_with_their_own():
    """Decoders of two phone bigrams (same settings, another table) mixed in one push_many: each keeps its own."""
    phones = PhoneBigram.load().phones
    table = PhoneBigram.load().for_phones(phones)
    rng = np.random.default_rng(5)
    frames = [posteriors(rng, 120, len(phones)) for _ in range(16)]
    tables = [table * (1.0, 3.0)[n % 2] for n in range(16)]
    alone = [PhoneDecoder(t, DecoderConfig(), phones.index("sil")) for t in tables]
    batched = [PhoneDecoder(t, DecoderConfig(), phones.index("sil")) for t in tables]
    expected = [a.push(f) + a.finish() for a, f in zip(alone, frames)]
    got = [segments + d.finish() for d, segments in zip(batched, push_many(batched, frames))]
    assert all(same(g, e) for g, e in zip(got, expected))
    assert [len(e) for e in expected[0::2]] != [len(e) for e in expected[1::2]]  # the weights did decide otherwise
