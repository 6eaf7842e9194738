"""Level normalisation inside the graph (frontend.level_target_dbfs): a running estimate of the input's level as
streaming state, exact under any chunking, blind to the input's scale, and deaf to digital silence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import random_model, tiny_config
from speechattn.audio import HOP_SAMPLES, speechlike_signal
from speechattn.errors import ConfigError
from speechattn.model.export import export_onnx
from speechattn.model.features import Frontend, FrontendConfig
from speechattn.model.stream import offline_log_probs, state_specs
from speechattn_export.stream_client import StreamingModel

LEVELLED = FrontendConfig(level_target_dbfs=-20.0)
TOLERANCE = 1e-4  # log-mel units (natural log), as the frontend's other parity tests


def stepped(frontend: Frontend, audio: torch.Tensor, bounds: list[int]) -> torch.Tensor:
    tail, history = frontend.initial_state(1)
    level, pieces = frontend.initial_level(1), []
    for start, end in zip(bounds[:-1], bounds[1:]):
        features, tail, history, level = frontend.step(audio[:, start * HOP_SAMPLES:end * HOP_SAMPLES], tail,
                                                       history, level)
        pieces.append(features)
    return torch.cat(pieces, dim=1)


def quiet_then_loud(seconds: float = 3.0) -> torch.Tensor:
    """A speech-like signal whose level jumps by 30 dB half way, with a gap of digital silence in between."""
    audio = speechlike_signal(seconds, seed=3)
    half = len(audio) // 2
    audio[:half] *= 0.03
    audio[half - 8000:half] = 0.0
    return torch.from_numpy(audio)[None]


@pytest.mark.parametrize("seed, band", [(0, 0.0), (1, 0.0), (2, 8.0), (3, 8.0)])
def test_any_split_into_calls_gives_the_one_shot_features(seed, band):
    frontend = Frontend(FrontendConfig(level_target_dbfs=-20.0, level_band_db=band))
    audio = quiet_then_loud()
    frames = audio.shape[1] // HOP_SAMPLES
    cuts = np.random.default_rng(seed).integers(0, frames, size=12)
    bounds = sorted({0, frames, *cuts.tolist()})
    one_shot = frontend(audio)
    torch.testing.assert_close(stepped(frontend, audio, bounds), one_shot, atol=TOLERANCE, rtol=0)
    torch.testing.assert_close(stepped(frontend, audio, list(range(frames + 1))), one_shot, atol=TOLERANCE, rtol=0)


def test_forward_over_many_blocks_equals_the_stream():
    """forward() estimates the level in 512-frame blocks; a 12 s recording crosses two block edges."""
    frontend = Frontend(LEVELLED)
    audio = torch.from_numpy(np.tile(speechlike_signal(3.0, seed=4), 4) * 0.1)[None]
    frames = audio.shape[1] // HOP_SAMPLES
    torch.testing.assert_close(stepped(frontend, audio, list(range(0, frames, 37)) + [frames]), frontend(audio),
                               atol=TOLERANCE, rtol=0)


def test_the_features_do_not_depend_on_the_input_level():
    """The same audio at two levels 15 dB apart gives the same features, from the first frame on (where the gains
    either needs stay within level_max_cut_db and level_max_gain_db)."""
    frontend = Frontend(LEVELLED)
    signal = speechlike_signal(3.0, seed=5)
    room = np.random.default_rng(5).normal(0.0, 1e-3, len(signal)).astype(np.float32)  # a floor at -60 dBFS
    audio = torch.from_numpy(signal / np.sqrt(np.mean(signal**2)) * 0.03 + room)[None]  # speech at -30 dBFS RMS
    quieter = 10 ** (-15 / 20)  # -45 dBFS, the floor at -75: inside the gain's range, above the silence gate
    torch.testing.assert_close(frontend(audio * quieter), frontend(audio), atol=1e-3, rtol=0)
    plain = Frontend(FrontendConfig())
    assert (plain(audio) - plain(audio * quieter)).abs().mean() > 1.0


def test_a_stream_that_starts_with_noise_alone_hears_it_quiet():
    """The first frames heard are set to level_onset_dbfs whatever their level (a room's noise before anyone
    speaks reads as a quiet room), then the target ramps up over level_onset_frames."""
    frontend, plain = Frontend(LEVELLED), Frontend(FrontendConfig())
    noise = np.random.default_rng(9).normal(0.0, 1.0, 32000).astype(np.float32)
    for level in (-25.0, -35.0):  # within level_max_cut_db of the onset level
        loud = torch.from_numpy(noise * 10 ** (level / 20))[None]
        at_onset = torch.from_numpy(noise * 10 ** (LEVELLED.level_onset_dbfs / 20))[None]
        # within 2.6 dB of the onset level (the ramp has begun, the first windows hold the zeros before the stream),
        # where the level itself is 15 or 5 dB above it
        assert abs(float((frontend(loud)[:, 2:6] - plain(at_onset)[:, 2:6]).mean())) < 0.6
        at_target = torch.from_numpy(noise * 10 ** (LEVELLED.level_target_dbfs / 20))[None]
        assert abs(float((frontend(loud)[:, 100:] - plain(at_target)[:, 100:]).mean())) < 0.1


def test_a_level_inside_the_dead_band_is_left_alone_and_one_outside_it_reaches_its_edge():
    """level_band_db: once the onset ramp is over, speech within the band around the target keeps its level (the
    features equal those of no normalisation); speech quieter than the band is lifted to its lower edge."""
    banded, plain = Frontend(FrontendConfig(level_target_dbfs=-20.0, level_band_db=8.0)), Frontend(FrontendConfig())
    signal = speechlike_signal(4.0, seed=8)
    signal = signal / np.sqrt(np.mean(signal**2))
    for level in (-25.0, -15.0):  # inside: untouched, exactly
        audio = torch.from_numpy(signal * 10 ** (level / 20))[None]
        torch.testing.assert_close(banded(audio)[:, 200:], plain(audio)[:, 200:], atol=TOLERANCE, rtol=0)
    # -45 dBFS is lifted to about -28 (the band's edge; the estimate follows the signal's own ups and downs over
    # 1 s, so on average within 0.15 log units, 0.65 dB), not to the target
    quiet = banded(torch.from_numpy(signal * 10 ** (-45 / 20))[None])[:, 200:]
    for heard_at, close in ((-28.0, True), (-20.0, False)):
        difference = float((quiet - plain(torch.from_numpy(signal * 10 ** (heard_at / 20))[None])[:, 200:]).mean())
        assert (abs(difference) < 0.15) == close, (heard_at, difference)
    # without the band every one of them is brought to -20 dBFS
    assert float((Frontend(LEVELLED)(torch.from_numpy(signal * 10 ** (-25 / 20))[None])[:, 200:]
                  - plain(torch.from_numpy(signal * 10 ** (-25 / 20))[None])[:, 200:]).mean()) > 0.5


def test_digital_silence_before_the_audio_changes_nothing():
    frontend = Frontend(LEVELLED)
    audio = torch.from_numpy(speechlike_signal(2.0, seed=6) * 0.05)[None]
    padded = torch.cat([torch.zeros(1, 50 * HOP_SAMPLES), audio], dim=1)
    torch.testing.assert_close(frontend(padded)[:, 50:], frontend(audio), atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("band", [0.0, 8.0])
def test_the_model_state_gains_the_level_estimate_and_exports_exactly(tmp_path, band):
    model = random_model(tiny_config(frontend=FrontendConfig(level_target_dbfs=-20.0, level_band_db=band)), seed=7)
    names = [spec["name"] for spec in state_specs(model)]
    assert "level_estimate" in names and "level_estimate" not in [s["name"] for s in state_specs(random_model())]
    path = tmp_path / "levelled.onnx"
    export_onnx(model, path)
    streaming = StreamingModel(path)
    audio = quiet_then_loud(2.0).numpy()[0]
    reference = offline_log_probs(model, torch.from_numpy(audio)[None], 4)[0].numpy()
    for sizes in (np.random.default_rng(8).integers(0, 3000, 14).tolist(), [HOP_SAMPLES] * 30, [7] * 20):
        stream, outputs, position = streaming.new_stream(4), [], 0
        for size in sizes:
            outputs.append(stream.push(audio[position:position + size]).log_probs)
            position += size
        outputs += [stream.push(audio[position:]).log_probs, stream.finish().log_probs]
        streamed = np.concatenate(outputs)
        assert streamed.shape == reference.shape
        assert np.abs(streamed - reference).max() <= 1e-4


@pytest.mark.parametrize("key, value", [("level_target_dbfs", 3.0), ("level_time_constant_s", 0.0),
                                        ("level_onset_frames", -1.0), ("level_weighting", "peak"),
                                        ("level_onset_dbfs", -90.0), ("level_band_db", -1.0)])
def test_settings_out_of_range_are_refused_naming_the_key(key, value):
    with pytest.raises(ConfigError, match=f"frontend.{key}"):
        FrontendConfig(**{"level_target_dbfs": -20.0, key: value})


def test_the_bundled_weights_fine_tune_with_level_normalisation_turned_on():
    """Level normalisation has no weights: --init-from default takes the recipe's level settings."""
    from dataclasses import replace

    from speechattn.model.encoder import ModelConfig, load
    from speechattn.runtime.transcribe import CHECKPOINTS_DIR
    from speechattn.training.train import initial_weights

    config = replace(ModelConfig(), frontend=LEVELLED)
    model = initial_weights("default", config, quiet=True)
    assert model.config.frontend.level_target_dbfs == -20.0
    bundled = load(CHECKPOINTS_DIR / "default.pt").state_dict()
    assert all(torch.equal(value, bundled[key]) for key, value in model.state_dict().items())


def test_below_the_log_floor_a_level_change_is_a_shift_of_every_band():
    """frontend.log_floor: with Kaldi's floor moved to [-1, 1] (1e-16), 30 dB quieter audio gives every log-mel band
    3 ln 10 lower, even at -75 dBFS; the default floor (float32's epsilon) flattens the quiet bands there instead."""
    audio = torch.from_numpy(speechlike_signal(1.0, seed=5))[None]
    audio = 0.5 * audio / audio.abs().max()
    for floor, exact in ((1e-16, True), (FrontendConfig().log_floor, False)):
        frontend = Frontend(FrontendConfig(log_floor=floor))
        loud, quiet = frontend(audio * 10 ** (-45 / 20)), frontend(audio * 10 ** (-75 / 20))
        heard = loud > np.log(1e-16) + 3 * np.log(10) + 1  # the bands that are sound at both levels (not pauses)
        off = ((loud - quiet) - 3 * np.log(10)).abs()[heard]
        assert heard.float().mean() > 0.5
        assert (off.max() < 1e-3) == exact, (floor, off.max(), (off > 1e-3).float().mean())


def test_the_bundled_weights_start_from_another_log_floor():
    """The floor has no weights: --init-from default takes the recipe's, and silence is what that floor makes it."""
    from dataclasses import replace

    from speechattn.model.encoder import ModelConfig, load
    from speechattn.runtime.transcribe import CHECKPOINTS_DIR
    from speechattn.training.train import initial_weights

    config = replace(ModelConfig(), frontend=FrontendConfig(log_floor=1e-16))
    model = initial_weights("default", config, quiet=True)
    assert model.config.frontend.log_floor == 1e-16
    assert torch.equal(model.frontend.silence_features, Frontend(FrontendConfig(log_floor=1e-16)).silence_features)
    bundled = load(CHECKPOINTS_DIR / "default.pt").state_dict()
    assert all(torch.equal(value, bundled[key]) for key, value in model.state_dict().items()
               if key != "frontend.silence_features")
    with pytest.raises(ConfigError, match="frontend.log_floor"):
        FrontendConfig(log_floor=0.0)


def test_a_level_blind_input_projection_labels_any_input_level_alike():
    """train.level_blind: the input projection's weights kept off the direction a gain moves the log-mel features in,
    so (with the floor out of the way) 30 dB quieter audio gives the same posteriors; MFCC models are refused."""
    model = random_model(tiny_config(frontend=FrontendConfig(log_floor=1e-16)), seed=4)
    model.frontend.set_normalization(torch.randn(model.config.frontend.feature_dim), 1 + torch.rand(
        model.config.frontend.feature_dim))
    audio = speechlike_signal(1.5, seed=6)
    audio = audio / np.abs(audio).max() + 1e-3 * np.random.default_rng(6).standard_normal(len(audio))  # every band
    audio = torch.from_numpy(0.5 * audio / np.abs(audio).max()).float()[None]  # above the floor at -45 dBFS
    loud, quiet = audio * 10 ** (-15 / 20), audio * 10 ** (-45 / 20)
    chunk = model.config.default_chunk_frames
    before = (offline_log_probs(model, loud, chunk) - offline_log_probs(model, quiet, chunk)).abs().max()
    model.blind_to_level()
    after = (offline_log_probs(model, loud, chunk) - offline_log_probs(model, quiet, chunk)).abs().max()
    assert before > 1e-2 and after < 1e-3, (before, after)
    mfcc = random_model(tiny_config(frontend=FrontendConfig(kind="mfcc")), seed=4)
    with pytest.raises(ConfigError, match="fbank"):
        mfcc.blind_to_level()


NOISE = Path(__file__).resolve().parents[2] / "shared" / "data" / "mssnsd-noise" / "audio"


@pytest.fixture(scope="module")
def noisy_speech():
    """The two bundled recordings after 1 s of a dev room-noise clip, the noise running on under them at 5 dB SNR."""
    from speechattn.audio import load_audio
    from speechattn.runtime.web import SAMPLES

    clips = sorted(NOISE.glob("noise5*"))
    if not clips:
        pytest.skip(f"{NOISE}: no dev noise clips (CI has ../shared beside the repository)")
    speech = np.concatenate([load_audio(p) for p in sorted(SAMPLES.glob("*.wav"))])
    speech = np.concatenate([np.zeros(16000, np.float32), speech])
    noise = np.resize(load_audio(clips[0]), len(speech))
    mix = speech + noise * rms(speech) / rms(noise) * 10 ** (-5 / 20)
    return mix / rms(mix)


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x.astype(np.float64) ** 2)))


def bundled_labels(level_norm: bool):
    from dataclasses import replace

    from speechattn.model.encoder import PhoneTagger, load
    from speechattn.runtime.transcribe import CHECKPOINTS_DIR

    bundled = load(CHECKPOINTS_DIR / "default.pt")
    model = bundled
    if level_norm != bundled.config.frontend.level_norm:  # the bundled weights with it turned on (or off)
        frontend = LEVELLED if level_norm else replace(bundled.config.frontend, level_target_dbfs=None)
        model = PhoneTagger(replace(bundled.config, frontend=frontend))
        model.load_state_dict(bundled.state_dict())
        model.eval().prime()

    def labels(audio: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model.tag(torch.from_numpy(audio.astype(np.float32))[None], torch.tensor([len(audio)]),
                             4)[0].argmax(-1).numpy()
    return labels


def test_noisy_speech_is_labelled_alike_at_any_level_with_the_bundled_weights(noisy_speech):
    """Noise first, then speech in it: at -45 and -15 dBFS the labels agree on at least 93 % of frames with level
    normalisation (measured: 94.7 % with the bundled model, trained with it; 97 % with the earlier weights, trained
    without it); the same weights without it agree on 50 % (76 % for the earlier weights)."""
    quiet, loud = noisy_speech * 10 ** (-45 / 20), noisy_speech * 10 ** (-15 / 20)
    levelled, plain = bundled_labels(True), bundled_labels(False)
    assert np.mean(levelled(quiet) == levelled(loud)) >= 0.93
    assert np.mean(plain(quiet) == plain(loud)) < 0.85


def test_after_a_jump_in_level_the_labels_are_those_of_a_steady_stream(noisy_speech):
    """The level rises or falls by 30 dB half way.  A second after a rise the labels agree with those of the same
    audio at the new level throughout on at least 90 % of frames (measured: 96 % with the bundled model).  A fall is
    the weak side: the louder past is forgotten with the 0.5 s time constant, so the quieter speech is heard too
    quiet for a few seconds; measured 66.5 % (the earlier model, without level normalisation: 74 %; the bundled
    weights with a 1 s time constant: 30 %), held at 60 %."""
    labels, half = bundled_labels(True), len(noisy_speech) // 2
    settle = half // HOP_SAMPLES + 100
    for before, after, least in ((-45, -15, 0.90), (-15, -45, 0.60)):
        jumped = noisy_speech * 10 ** (before / 20)
        jumped[half:] = noisy_speech[half:] * 10 ** (after / 20)
        steady = labels(noisy_speech * 10 ** (after / 20))
        assert np.mean(labels(jumped)[settle:] == steady[settle:]) >= least


def test_one_call_and_any_pieces_give_the_same_bits_in_fp32_and_int8(tmp_path):
    """The level's float64 sums travel between calls as six float32 numbers and the gain's log is rounded, so the
    gain of a frame is the same bit for bit whatever the pieces.  With the sums in three float32 numbers the fp32
    file differed by 1e-5 and the int8 file, which quantizes each frame's activations on their own, by 0.05."""
    from speechattn.model.export import _quantize, chunking_difference

    model = random_model(tiny_config(frontend=FrontendConfig(level_target_dbfs=-20.0)), seed=7)
    fp32, int8 = tmp_path / "levelled.onnx", tmp_path / "levelled-int8.onnx"
    export_onnx(model, fp32)
    _quantize(fp32, int8)
    audio = quiet_then_loud(3.0).numpy()[0]
    for path in (fp32, int8):
        assert [chunking_difference(path, audio, chunk, seed) for chunk in (4, 8) for seed in (0, 1, 2)] == [0.0] * 6


@pytest.mark.parametrize("weighting", ["mean", "power"])
def test_the_closed_form_gains_are_the_frame_by_frame_recurrence(weighting):
    """Each frame's gain against the estimate written as its recurrence, one frame at a time in float64:
    u_k = d_k u_(k-1) + on_k w_k p_k, v_k = d_k v_(k-1) + on_k w_k, the target ramped over the frames heard."""
    import math

    from speechattn.audio import SAMPLE_RATE
    from speechattn.model.features import LEVEL_GATE, WINDOW_SAMPLES, frame_energy

    config = FrontendConfig(level_target_dbfs=-20.0, level_weighting=weighting, level_onset_frames=25.0)
    frontend = Frontend(config)
    audio = quiet_then_loud(2.0)
    audio[:, 8000:12000] = 0.0  # digital silence inside: it leaves the estimate as it was
    frames = torch.stack([audio[0, k * HOP_SAMPLES:k * HOP_SAMPLES + WINDOW_SAMPLES]
                          for k in range((audio.shape[1] - WINDOW_SAMPLES) // HOP_SAMPLES)])[None]
    gain, _ = frontend._level_gains(frontend._centered(frames), frontend.initial_level(1))
    power = (frame_energy(frames) / WINDOW_SAMPLES)[0, :, 0].numpy()
    a = math.exp(-HOP_SAMPLES / SAMPLE_RATE / config.level_time_constant_s)
    u = v = heard = 0.0
    expected = []
    for p in power:
        on = p > LEVEL_GATE
        w = p if weighting == "power" else 1.0
        if on:
            u, v, heard = a * u + w * p, a * v + w, heard + 1
        ramp = min(heard / config.level_onset_frames, 1.0)
        target = config.level_onset_dbfs + ramp * (config.level_target_dbfs - config.level_onset_dbfs)
        wanted = target * math.log(10) / 10 - math.log(max(u / max(v, 1e-30), 1e-30))
        expected.append(min(max(wanted, -config.level_max_cut_db * math.log(10) / 10),
                            config.level_max_gain_db * math.log(10) / 10))
    assert np.abs(np.log(gain[0, :, 0].numpy()) - np.array(expected)).max() < 2 ** -15  # the gain's rounding
