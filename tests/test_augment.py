"""The training data path: augmentation moves labels with the audio, is seeded, and is off in evaluation."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import torch

from speechattn.data.augment import AugmentConfig, augment_waveform, coloured_noise, spec_augment
from speechattn.data.dataset import FrameLabelDataset, collate, cuts_from_manifests
from speechattn.phones import IGNORE, PHONE_TO_INDEX
from speechattn.data.synth import espeak, with_edge_silence

SIL = PHONE_TO_INDEX["sil"]
NOTHING = AugmentConfig(speed_factors=(1.0,), gain_db=(0.0, 0.0), reverb_probability=0, noise_probability=0,
                        band_limit_probability=0)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Three synthesized utterances with exact labels, written as lhotse manifests."""
    from lhotse import Recording, RecordingSet, SupervisionSet

    from speechattn.data.corpora import _supervision

    directory = tmp_path_factory.mktemp("corpus")
    recordings, supervisions = [], []
    for number, text in enumerate(["Seven big dogs, then a pause.", "A quiet morning.", "Fish swim far."]):
        utterance = with_edge_silence(espeak().synthesize(text, "espeak:en-us+m3", 150), 0.3, 0.3)
        sf.write(directory / f"u{number}.wav", utterance.audio, 16000)
        recording = Recording.from_file(directory / f"u{number}.wav", recording_id=f"u{number}")
        recordings.append(recording)
        supervisions.append(_supervision(recording, utterance.intervals, "m3", text))
    RecordingSet.from_recordings(recordings).to_file(directory / "r.jsonl.gz")
    SupervisionSet.from_segments(supervisions).to_file(directory / "s.jsonl.gz")
    return cuts_from_manifests(directory / "r.jsonl.gz", directory / "s.jsonl.gz")


def silence_is_quiet(audio: np.ndarray, labels: np.ndarray) -> float:
    frames = min(len(audio) // 160, len(labels))
    db = 10 * np.log10((audio[: frames * 160].reshape(frames, 160) ** 2).mean(1) + 1e-12)
    return float(np.median(db[labels[:frames] != SIL]) - np.median(db[labels[:frames] == SIL]))


@pytest.mark.parametrize("factor", [0.9, 1.1])
def test_speed_perturbation_moves_the_labels_with_the_audio(corpus, factor):
    plain = FrameLabelDataset(corpus, augment=None, crop_seconds=None).load(corpus[0], None)
    config = AugmentConfig(speed_factors=(factor,), gain_db=(0.0, 0.0), reverb_probability=0,
                           noise_probability=0, band_limit_probability=0)
    audio, labels = FrameLabelDataset(corpus, augment=config, crop_seconds=None).load(corpus[0], np.random.default_rng(0))
    assert len(audio) == pytest.approx(len(plain[0]) / factor, rel=0.01)
    assert len(labels) == pytest.approx(len(plain[1]) / factor, rel=0.01)
    first_speech = lambda lab: int(np.flatnonzero(lab != SIL)[0])  # noqa: E731
    assert first_speech(labels) == pytest.approx(first_speech(plain[1]) / factor, abs=1)
    assert silence_is_quiet(audio, labels) > 30  # the labels still sit on the audio they describe


def test_augmentation_is_seeded_and_off_in_evaluation(corpus):
    train = FrameLabelDataset(corpus, augment=AugmentConfig(), crop_seconds=1.0, seed=7)
    first, again = train[1], train[1]
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(train[(1, 1)][0], first[0])  # (epoch, index): a new epoch draws anew
    assert np.array_equal(train[(1, 1)][0], train[(1, 1)][0]) and np.array_equal(train[(0, 1)][0], first[0])
    evaluation = FrameLabelDataset(corpus, augment=None, crop_seconds=None)
    audio, labels = evaluation[1]
    assert np.array_equal(audio, corpus[1].load_audio()[0].astype(np.float32))
    assert len(labels) == -(-len(audio) // 160)


def test_crops_start_on_a_hop_and_keep_labels_aligned(corpus):
    dataset = FrameLabelDataset(corpus, augment=NOTHING, crop_seconds=0.5, seed=1)
    whole_audio, whole_labels = FrameLabelDataset(corpus, augment=None, crop_seconds=None)[0]
    audio, labels = dataset[0]
    assert len(audio) == 8000 and len(labels) == 50
    start = next(s for s in range(0, len(whole_audio) - 8000 + 1, 160) if np.array_equal(whole_audio[s : s + 8000], audio))
    assert np.array_equal(whole_labels[start // 160 : start // 160 + 50], labels)


def test_noise_reverb_and_band_limits_stay_finite_and_bounded():
    rng = np.random.default_rng(3)
    audio = (0.3 * np.sin(np.arange(16000) / 5)).astype(np.float32)
    config = AugmentConfig(reverb_probability=1, noise_probability=1, band_limit_probability=1, babble_share=0.5)
    for _ in range(10):
        out = augment_waveform(audio, rng, config, babble_sources=[coloured_noise(20000, rng)])
        assert out.shape == audio.shape and np.isfinite(out).all() and np.abs(out).max() <= 1.0


def test_noise_reaches_the_drawn_snr():
    rng = np.random.default_rng(4)
    audio = (0.1 * np.sin(np.arange(16000) / 3)).astype(np.float32)
    config = AugmentConfig(gain_db=(0, 0), reverb_probability=0, noise_probability=1, snr_db=(10.0, 10.0),
                           babble_share=0, band_limit_probability=0)
    noisy = augment_waveform(audio, rng, config)
    snr = 10 * np.log10((audio**2).mean() / ((noisy - audio) ** 2).mean())
    assert snr == pytest.approx(10.0, abs=0.1)


def test_spec_augment_masks_inside_each_length():
    features = torch.ones(2, 100, 80)
    masked = spec_augment(features, torch.tensor([100, 40]), torch.Generator().manual_seed(0),
                          AugmentConfig(freq_masks=1, freq_mask_bins=10, time_masks=1, time_mask_frames=20))
    assert (masked == 0).any() and masked.shape == features.shape
    fully_masked_frames = (masked[1] == 0).all(dim=1).nonzero().flatten()
    assert fully_masked_frames.numel() and fully_masked_frames.max() < 40  # item 2's time mask stays in its 40 frames


def test_collate_pads_labels_with_ignore(corpus):
    batch = collate([FrameLabelDataset(corpus, augment=None, crop_seconds=None)[i] for i in range(3)])
    audio, labels, lengths = batch
    assert audio.shape[1] == labels.shape[1] * 160
    for row in range(3):
        assert torch.all(labels[row, lengths[row]:] == IGNORE) and torch.all(labels[row, : lengths[row]] >= 0)


def test_the_audio_store_decodes_a_cut_listed_twice_once(corpus, tmp_path):
    from speechattn.data.dataset import AudioStore

    listed = [corpus[0], corpus[1], corpus[0], corpus[2], corpus[1]]  # sets listed twice weigh twice
    store = AudioStore(listed, tmp_path)
    assert len(store) == 5
    for index, cut in enumerate(listed):
        expected = cut.load_audio()[0].astype(np.float32)
        assert store.length(index) == len(expected)
        assert np.allclose(store.segment(index), expected, atol=1 / 32768)
    (data,) = tmp_path.glob("*.i16")
    assert data.stat().st_size == 2 * sum(store.length(i) for i in (0, 1, 3))  # the three distinct utterances
    again = AudioStore(listed, tmp_path)  # a later run reuses the file
    assert list(tmp_path.glob("*.i16")) == [data] and np.array_equal(again.segment(2), store.segment(0))
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_two_runs_decoding_the_same_audio_at_once_both_succeed(corpus, tmp_path, monkeypatch):
    """Two training runs started side by side on the same data each decode it into the shared cache; the one that
    finishes second must not fail (it did: both wrote one temporary name, and the second rename found it gone).
    Here the second run starts and finishes while the first is writing, the worst interleaving."""
    from speechattn.data import dataset

    cuts = [corpus[0], corpus[1]]
    original, nested, started = dataset.cut_audio, [], []

    def cut_audio_with_another_run_meanwhile(cut):
        if not started:
            started.append(True)
            nested.append(dataset.AudioStore(cuts, tmp_path))  # the other run, from start to end, right now
        return original(cut)

    monkeypatch.setattr(dataset, "cut_audio", cut_audio_with_another_run_meanwhile)
    first = dataset.AudioStore(cuts, tmp_path)
    for index, cut in enumerate(cuts):
        expected = cut.load_audio()[0].astype(np.float32)
        assert np.allclose(first.segment(index), expected, atol=1 / 32768)
        assert np.array_equal(nested[0].segment(index), first.segment(index))
    assert len(list(tmp_path.glob("*.i16"))) == 1 and len(list(tmp_path.glob("*.json"))) == 1
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name or p.suffix == ".tmp"]  # nothing left behind
