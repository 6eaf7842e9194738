"""Noisy dev conditions (speechattn/data/noise.py): the mix has the SNR and level asked, the noise of an utterance
depends on its id alone, and the dev noise clips are never in the training split."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from speechattn.data.noise import (DEV_NOISE_CLIPS, FULL_SCALE_PEAK, dev_noise, mix_at_snr, noise_clips, power,
                                   rms_dbfs, set_level, speech_samples)

HOP = 160
SIL = 0


def utterance(seed: int = 0):
    """3 s: 0.5 s of near silence, 2 s of loud 'speech', 0.5 s of near silence, with frame labels to match."""
    rng = np.random.default_rng(seed)
    audio = 0.001 * rng.standard_normal(48_000)
    audio[8_000:40_000] = 0.2 * np.sin(np.arange(32_000) * 0.07) * (1 + rng.standard_normal(32_000) * 0.3)
    labels = np.full(300, SIL)
    labels[50:250] = 5
    return audio.astype(np.float32), labels


@pytest.mark.parametrize("snr_db", [0.0, 5.0, 10.0, 20.0])
@pytest.mark.parametrize("level_dbfs", [-45.0, -30.0, -15.0])
def test_the_mix_has_the_snr_over_the_speech_frames_and_the_level_asked(snr_db, level_dbfs):
    speech, labels = utterance()
    mask = speech_samples(labels, SIL, HOP, len(speech))
    assert mask.sum() == 32_000 and mask[8_000:40_000].all()
    noise = dev_noise([np.random.default_rng(1).standard_normal(20_000).astype(np.float32)], "u1", len(speech))
    mixed = mix_at_snr(speech, noise, snr_db, mask)
    added = mixed.astype(np.float64) - speech
    assert 10 * np.log10(power(speech[mask]) / power(added)) == pytest.approx(snr_db, abs=0.1)
    out, held = set_level(mixed, level_dbfs)
    assert not held and rms_dbfs(out) == pytest.approx(level_dbfs, abs=0.1)
    gain = out.astype(np.float64) / np.where(mixed == 0, 1, mixed)
    assert np.allclose(gain[mixed != 0], gain[np.argmax(np.abs(mixed))], rtol=1e-4)  # one gain: the SNR is kept


def test_a_level_that_would_clip_is_held_below_full_scale_and_says_so():
    speech, _ = utterance()
    out, held = set_level(speech, -3.0)  # this signal's peaks are ~15 dB above its RMS
    assert held and np.abs(out).max() == pytest.approx(FULL_SCALE_PEAK, abs=1e-6) and rms_dbfs(out) < -3.0


def test_the_noise_of_an_utterance_depends_on_its_id_alone_and_is_looped_to_its_length():
    clips = [np.full(1_000, k, dtype=np.float32) + np.arange(1_000, dtype=np.float32) / 1e4 for k in range(100)]
    first = dev_noise(clips, "LJ050-0161", 2_500)
    assert np.array_equal(first, dev_noise(clips, "LJ050-0161", 2_500))
    assert len(first) == 2_500 and len(np.unique(np.floor(first))) == 1  # one clip ...
    assert np.array_equal(first[:1_000], first[1_000:2_000])  # ... repeated
    others = {float(np.floor(dev_noise(clips, f"utt{k}", 10)[0])) for k in range(40)}
    assert len(others) > 20  # ids spread over the clips


def test_the_noise_draw_is_the_same_in_another_process():
    script = ("import numpy as np; from speechattn.data.noise import dev_noise; "
              "clips = [np.arange(k, k + 977, dtype=np.float32) for k in range(100)]; "
              "print(dev_noise(clips, 'LJ050-0161', 3)[0])")
    outputs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outputs) == 1  # not Python's salted hash()


def test_the_dev_noise_clips_are_never_in_the_training_split(tmp_path):
    for number in range(552):
        (tmp_path / f"noise{number:03d}.opus").touch()
    (tmp_path / "README.md").touch()
    train, dev = noise_clips(tmp_path, "train"), noise_clips(tmp_path, "dev")
    assert [p.name for p in dev] == [f"noise{n}.opus" for n in range(452, 552)] and len(DEV_NOISE_CLIPS) == 100
    assert len(train) == 452 and not set(train) & set(dev)
    with pytest.raises(ValueError):
        noise_clips(tmp_path, "test")


@pytest.fixture
def noise_folder(tmp_path):
    """Clips noise440 .. noise459 as 16 kHz WAV: the training ones (below 452) hold -0.25, the dev ones +0.25."""
    import soundfile as sf

    for number in range(440, 460):
        sf.write(tmp_path / f"noise{number}.wav", np.full(1_600, 0.25 if number in DEV_NOISE_CLIPS else -0.25), 16_000)
    return tmp_path


def test_training_augmentation_adds_only_the_training_clips(noise_folder):
    from speechattn.data.augment import AugmentConfig, augment_waveform
    from speechattn.data.noise import TrainingNoise

    config = AugmentConfig(gain_db=(0.0, 0.0), reverb_probability=0, noise_probability=1, babble_share=0,
                           band_limit_probability=0, snr_db=(0.0, 0.0), noise_dir=str(noise_folder),
                           recorded_noise_share=1.0)
    noise = TrainingNoise(noise_folder)
    assert len(noise.clips()) == 12
    speech = (0.1 * np.sin(np.arange(4_000) * 0.05)).astype(np.float32)
    for seed in range(50):
        added = augment_waveform(speech, np.random.default_rng(seed), config, None, None, noise) - speech
        assert (added < 0).all()  # never a dev clip's +0.25, and looped past the clip's 1,600 samples


def test_a_recipe_without_recorded_noise_draws_what_it_drew_before(noise_folder):
    from speechattn.data.augment import AugmentConfig, augment_waveform
    from speechattn.data.noise import TrainingNoise

    speech = (0.1 * np.sin(np.arange(4_000) * 0.05)).astype(np.float32)
    plain = AugmentConfig(reverb_probability=0, noise_probability=1)
    unused = AugmentConfig(reverb_probability=0, noise_probability=1, noise_dir=str(noise_folder))
    for seed in range(10):
        assert np.array_equal(augment_waveform(speech, np.random.default_rng(seed), plain),
                              augment_waveform(speech, np.random.default_rng(seed), unused, None, None,
                                               TrainingNoise(noise_folder)))


def test_a_noise_folder_without_training_clips_is_refused(tmp_path):
    from speechattn.data.augment import AugmentConfig
    from speechattn.errors import ConfigError

    (tmp_path / "noise500.opus").touch()
    with pytest.raises(ConfigError, match="noise_dir"):
        AugmentConfig(noise_dir=str(tmp_path))
    with pytest.raises(ConfigError, match="needs augment.noise_dir"):
        AugmentConfig(recorded_noise_share=0.5)
