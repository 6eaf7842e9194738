"""The kit's forced aligner (export/align.py) on posteriors whose truth is known: exact boundaries, the same
result for any chunking, a script the speaker departed from, live commits, bounded memory."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from speechattn.phones import PHONES
from speechattn_export.align import LIVE, AlignOptions, ScriptAligner, align


class Word:
    def __init__(self, text: str, *pronunciations: str) -> None:
        self.text = text
        self.pronunciations = tuple(tuple(p.split()) for p in pronunciations)


HELLO, WORLD, AGAIN = Word("hello", "HH AH L OW", "HH EH L OW"), Word("world", "W ER L D"), Word("again", "AH G EH N")


def posteriors(spans: list[tuple[str, int]], sure: float = 0.8, seed: int = 0) -> np.ndarray:
    """(T, P) log posteriors: each (phone, frames) run has its phone at `sure`, the rest shared, with a little
    noise so no two scores tie."""
    rng = np.random.default_rng(seed)
    rows = []
    for phone, frames in spans:
        for _ in range(frames):
            row = np.full(len(PHONES), (1 - sure) / (len(PHONES) - 1)) * rng.uniform(0.9, 1.1, len(PHONES))
            row[PHONES.index(phone)] = sure
            rows.append(np.log(row / row.sum()))
    return np.array(rows)


SPOKEN = [("sil", 20), ("HH", 6), ("EH", 8), ("L", 5), ("OW", 12), ("sil", 15), ("W", 6), ("ER", 10), ("L", 5),
          ("D", 7), ("sil", 10), ("AH", 5), ("G", 6), ("EH", 9), ("N", 8), ("sil", 20)]


def bounds(alignment) -> list[tuple[str, int, int]]:
    return [(w.text, w.start_frame, w.end_frame) for w in alignment.words]


def test_known_posteriors_align_to_their_exact_frames_with_the_variant_spoken():
    result = align(posteriors(SPOKEN), [HELLO, WORLD, AGAIN], PHONES)
    assert bounds(result) == [("hello", 20, 51), ("world", 66, 94), ("again", 104, 132)]
    assert [p.phone for p in result.words[0].phones] == ["HH", "EH", "L", "OW"]  # the second variant was spoken
    assert [(p.start_frame, p.end_frame) for p in result.words[1].phones] == [(66, 72), (72, 82), (82, 87), (87, 94)]
    assert result.not_heard == [] and result.unscripted == []
    assert result.silences == [(0, 20), (51, 66), (94, 104), (132, 152)]
    assert all(p.gop > 0 and 0.7 < p.confidence < 0.9 for w in result.words for p in w.phones)


@pytest.mark.parametrize("piece", [1, 7, 64, 1000])
def test_any_chunking_gives_the_same_alignment(piece):
    log_probs = posteriors(SPOKEN, sure=0.5, seed=3)
    whole = align(log_probs, [HELLO, WORLD, AGAIN], PHONES, AlignOptions(lag_frames=20, commit_every=5))
    aligner = ScriptAligner([HELLO, WORLD, AGAIN], PHONES, AlignOptions(lag_frames=20, commit_every=5))
    for start in range(0, len(log_probs), piece):
        aligner.push(log_probs[start:start + piece])
    assert bounds(aligner.finish()) == bounds(whole)


def test_a_word_left_out_is_reported_and_the_others_stay_where_they_were():
    script = [HELLO, Word("there", "DH EH R"), WORLD, AGAIN]
    result = align(posteriors(SPOKEN), script, PHONES)
    assert result.not_heard == [1]
    assert bounds(result) == [("hello", 20, 51), ("world", 66, 94), ("again", 104, 132)]


def test_speech_that_is_not_in_the_script_is_marked_and_does_not_drag_the_rest():
    spoken = SPOKEN[:6] + [("B", 6), ("IY", 10), ("G", 5), ("sil", 10)] + SPOKEN[6:]  # "big" said, not written
    result = align(posteriors(spoken), [HELLO, WORLD, AGAIN], PHONES)
    assert bounds(result) == [("hello", 20, 51), ("world", 97, 125), ("again", 135, 163)]
    assert len(result.unscripted) == 1 and 66 <= result.unscripted[0][0] and result.unscripted[0][1] <= 87


def test_a_substituted_word_is_marked_and_its_neighbours_keep_their_times():
    script = [HELLO, Word("word", "W ER D"), AGAIN]
    spoken = SPOKEN[:6] + [("K", 6), ("AE", 10), ("T", 5), ("D", 7)] + SPOKEN[10:]  # "cat'd" said instead
    result = align(posteriors(spoken), script, PHONES)
    heard = {w.text: w for w in result.words}
    assert (heard["hello"].start_frame, heard["hello"].end_frame) == (20, 51)
    assert (heard["again"].start_frame, heard["again"].end_frame) == (104, 132)
    # either not heard, or held to the one phone it shares (D) with the rest of its frames unscripted, its
    # goodness of pronunciation far below the words really said
    assert result.not_heard == [1] or (result.unscripted and heard["word"].gop < -1
                                       and heard["word"].phones[-1].gop > 0 and min(heard["hello"].gop,
                                                                                   heard["again"].gop) > 1)


def test_live_commits_give_each_word_at_most_lag_frames_after_its_end():
    log_probs = posteriors(SPOKEN)
    aligner = ScriptAligner([HELLO, WORLD, AGAIN], PHONES, LIVE)
    final_at = {}
    for t, row in enumerate(log_probs):
        for word in aligner.push(row[None]):
            final_at[word.text] = t
        if t == 75:
            assert aligner.position == (1, True)  # reading "world", not yet final
    # a word is final once the path has left it and the lag has passed: its end + lag (+ the frame it is left)
    assert final_at == {"hello": 51 + LIVE.lag_frames, "world": 94 + LIVE.lag_frames, "again": 132 + LIVE.lag_frames}
    assert aligner.position == (3, False)  # in the silence after the last word


def test_memory_is_bounded_by_the_window_and_the_lag_however_long_the_recording():
    repeats = 60  # about 3 minutes of speech against 180 words
    log_probs = np.concatenate([posteriors(SPOKEN, seed=i) for i in range(repeats)])
    options = AlignOptions(lag_frames=50, commit_every=50)
    aligner = ScriptAligner([HELLO, WORLD, AGAIN] * repeats, PHONES, options)
    largest = 0
    for start in range(0, len(log_probs), 100):
        aligner.push(log_probs[start:start + 100])
        assert len(aligner.backs) < options.lag_frames + options.commit_every
        largest = max(largest, len(aligner.scores))
    result = aligner.finish()
    assert len(result.words) == 3 * repeats and result.not_heard == []
    one_window = (options.window_back_words + options.window_ahead_words) * 4 * options.min_frames * 2 + 200
    assert largest < one_window  # the searched states do not grow with the script


def test_a_script_the_model_cannot_say_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"word 0 \('x'\): pronunciation Q X has phones the model lacks: Q X"):
        ScriptAligner([Word("x", "Q X")], PHONES)
    with pytest.raises(ValueError, match="has no pronunciation"):
        ScriptAligner([Word("y")], PHONES)
    with pytest.raises(ValueError, match="min_frames"):
        AlignOptions(min_frames=0)


def test_an_empty_recording_hears_no_word():
    result = ScriptAligner([HELLO], PHONES).finish()
    assert result.words == [] and result.not_heard == [0] and result.frames == 0


def test_a_word_read_twice_without_a_pause_is_two_words():
    spoken = [("sil", 20), ("HH", 6), ("EH", 8), ("L", 5), ("OW", 12), ("sil", 10)] + \
        [("P", 5), ("L", 6), ("IY", 12), ("Z", 9)] * 2 + [("sil", 10), ("W", 6), ("ER", 10), ("L", 5), ("D", 7),
                                                           ("sil", 20)]
    aligner = ScriptAligner([HELLO, Word("please", "P L IY Z"), WORLD], PHONES, AlignOptions(jump_penalty=40.0),
                            sentence_starts=[1])
    aligner.push(posteriors(spoken, seed=22))
    result = aligner.finish()
    assert [(w.text, w.start_frame, w.end_frame, len(w.phones)) for w in result.words] == [
        ("hello", 20, 51, 4), ("please", 61, 93, 4), ("please", 93, 125, 4), ("world", 135, 163, 4)]


@pytest.mark.parametrize("base", [[-100.0, -5.0, -30.0, -90.0, -80.0, -70.0],   # again's start reached by a jump
                                  [-100.0, -5.0, -10.0, -90.0, -80.0, -70.0]])  # now's by a near one, live
def test_a_jump_to_the_next_sentence_costs_the_near_price_and_others_the_full_one(base):
    """With near_jump_penalty alone below jump_penalty, a sentence start is reached from the best boundary of the
    sentence before it at the near price, or from the best boundary anywhere at jump_penalty, whichever scores
    higher (on a tie, the earlier sentence's: these cases have none); offline one price for all."""
    now, please = Word("now", "N AW"), Word("please", "P L IY Z")
    words = [HELLO, WORLD, AGAIN, now, please]  # sentences: hello world | again | now please
    for options, near in ((AlignOptions(jump_penalty=40.0, near_jump_penalty=20.0), 20.0),
                          (AlignOptions(jump_penalty=40.0), 40.0)):
        options = dataclasses.replace(options, skip_penalty=1000.0)  # no skips: jumps alone
        aligner = ScriptAligner(words, PHONES, options, sentence_starts=[0, 2, 3])
        w = aligner.window
        assert list(w.sentence) == [0, 2, 3]
        scores = np.full(w.n + 2 * w.nb, -np.inf)
        silence = w.n + np.arange(w.nb)  # standing in each boundary's silence; boundary 1 (after hello) the best
        scores[silence] = base
        B, source = aligner._boundaries(scores, w)
        far = base[1] - options.jump_penalty
        # again's start: from boundary 1, the best of the sentence before, at the near price (or where it is)
        assert B[2] == max(base[2], base[1] - near)
        # now's start: from boundary 2 (again's sentence) at the near price, or from boundary 1 at the full one
        assert B[3] == max(base[3], base[2] - near, far)
        assert source[3] == (silence[2] if base[2] - near >= far else silence[1])
        assert B[0] == max(base[0], far)  # back to the start: the full price


@pytest.mark.parametrize("best, expected", [
    # the reader at the pause before the third sentence (its start boundary the best): the next start at the near
    # price, the one just finished and the present one's at the back price, farther ones at the full price plus a
    # step for each sentence past the first
    (2, {0: -60.0, 1: -20.0, 2: 0.0, 3: -20.0, 4: -60.0}),
    # inside the third sentence (after "now"): its own start and the one before it at the back price, the next at
    # the near one, the first (two back) at the full price and a step
    (4, {0: -60.0, 2: -20.0, 3: -20.0, 5: -20.0}),
])
def test_a_jump_costs_by_how_many_sentences_it_passes(best, expected):
    """back_jump_penalty and jump_step_penalty: each start reached from each sentence's best boundary at the price
    of the distance between them (near_jump_penalty for the next one)."""
    now, please = Word("now", "N AW"), Word("please", "P L IY Z")
    words = [HELLO, WORLD, AGAIN, now, please]
    starts = [0, 1, 2, 3, 4]  # a sentence a word
    if best == 4:  # hello world | again | now please | again
        words, starts = [HELLO, WORLD, AGAIN, now, please, AGAIN], [0, 2, 3, 5]
    options = AlignOptions(jump_penalty=40.0, near_jump_penalty=20.0, back_jump_penalty=20.0, jump_step_penalty=20.0,
                           skip_penalty=1000.0, window_back_words=32)
    aligner = ScriptAligner(words, PHONES, options, sentence_starts=starts)
    w = aligner.window
    scores = np.full(w.n + 2 * w.nb, -np.inf)
    scores[w.n + best] = 0.0  # standing in the silence of one boundary, every other state out of reach
    B, source = aligner._boundaries(scores, w)
    assert {b: float(B[b]) for b in expected} == expected  # (the other boundaries: skips at 1000 a word)
    assert all(source[b] == w.n + best for b in expected)


@pytest.mark.parametrize("frames", [899, 900, 901])
def test_a_recording_whose_last_frame_moves_the_window_aligns_every_word(frames):
    """900 frames: the last one makes the aligner commit (every 300 frames, 300 behind) and move its window ahead;
    finish() traces the rest from that frame's own window (before 2026-11-28 it read the moved window's indices in
    the old one: 20 of 60 words not heard, or an IndexError)."""
    script = [HELLO, WORLD, AGAIN] * 20
    spans = [("sil", 10)]
    for word in script:
        phones = word.pronunciations[-1] if word is HELLO else word.pronunciations[0]
        spans += [(p, 3) for p in phones] + [("sil", 2)]
    spans.append(("sil", frames - sum(n for _, n in spans)))
    log_probs = posteriors(spans, seed=31)
    assert len(log_probs) == frames
    result = align(log_probs, script, PHONES, prior_scale=0.0)
    assert result.not_heard == [] and [w.index for w in result.words] == list(range(60))
    assert bounds(result)[:-1] == bounds(align(log_probs[:899], script, PHONES, prior_scale=0.0))[:-1]


def test_a_word_is_reported_only_when_left_for_where_a_path_goes():
    """Live, the final frames come from whichever path is best 100 ms behind; a word they leave for a state no path
    reaches from it (out of its middle, or from its end back to a word that does not start a sentence) came from a
    path given up, and is not reported (ScriptAligner._goes_on)."""
    now = Word("now", "N AW")
    aligner = ScriptAligner([HELLO, WORLD, AGAIN, now], PHONES, LIVE, sentence_starts=[0, 2])  # hello world | again now
    s = aligner.script
    first_state = {w: int(s.word_start[w]) for w in range(4)}
    silence, garbage = s.silence_id, s.garbage_id
    # out of the middle of a word: only into the next word or the boundary before it
    assert aligner._goes_on(0, False, first_state[1]) and aligner._goes_on(0, False, silence(1))
    assert not aligner._goes_on(0, False, first_state[2]) and not aligner._goes_on(1, False, first_state[0])
    # from a word's end: on to any later word or boundary (skips), or to a sentence's start (jumps)
    assert aligner._goes_on(0, True, first_state[1]) and aligner._goes_on(0, True, first_state[3])
    assert aligner._goes_on(1, True, garbage(2)) and aligner._goes_on(3, True, silence(4))
    assert aligner._goes_on(3, True, first_state[2]) and aligner._goes_on(3, True, first_state[0])  # back to starts
    assert not aligner._goes_on(3, True, first_state[1]) and not aligner._goes_on(2, True, silence(1))
    assert not aligner._goes_on(3, True, first_state[3])  # no path enters a word again unless it starts a sentence
    assert aligner._goes_on(2, True, first_state[2])
