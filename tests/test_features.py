"""The frontend: parity with kaldi-native-fbank, and streaming in pieces equals one shot."""

from __future__ import annotations

import kaldi_native_fbank as knf
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from speechattn.audio import HOP_SAMPLES, TAIL_SAMPLES, speechlike_signal
from speechattn.model.features import Frontend, FrontendConfig

# Measured against kaldi-native-fbank (float32) on speechlike_signal, seeds 0, 3, 11-13:
#   fbank: max |delta log-mel| 1.5e-4 in bins with energy (log-mel > -10), 8.7e-4 in any bin (the
#          rest sit at the float32 floor, log-mel ~ -15.9, where rounding dominates); mean 7e-6.
#   MFCC:  max |delta| 2.2e-3 on coefficients spanning about +-60 (lifter gain up to 12); mean 6e-5.
FBANK_TOLERANCE_ENERGETIC_BINS = 2.5e-4
FBANK_TOLERANCE_ANY_BIN = 1.5e-3
MFCC_TOLERANCE = 3e-3


def knf_frames(online, audio: np.ndarray) -> np.ndarray:
    # Our frame i ends with hop i and reaches 240 samples back over zeros: Kaldi's snip_edges framing
    # of the audio with 240 zeros in front.
    online.accept_waveform(16000, np.concatenate([np.zeros(TAIL_SAMPLES, np.float32), audio]).tolist())
    online.input_finished()
    return np.stack([online.get_frame(i) for i in range(online.num_frames_ready)])


@pytest.fixture(scope="module")
def audio() -> np.ndarray:
    return speechlike_signal(3.0, seed=3)


def test_fbank_matches_kaldi_native_fbank(audio):
    options = knf.FbankOptions()
    options.frame_opts.dither = 0
    options.mel_opts.num_bins = 80
    reference = knf_frames(knf.OnlineFbank(options), audio)
    ours = Frontend(FrontendConfig())(torch.from_numpy(audio)[None])[0].numpy()
    assert ours.shape == reference.shape == (300, 80)
    difference = np.abs(ours - reference)
    assert difference[reference > -10].max() <= FBANK_TOLERANCE_ENERGETIC_BINS
    assert difference.max() <= FBANK_TOLERANCE_ANY_BIN


def test_mfcc_matches_kaldi_native_fbank(audio):
    options = knf.MfccOptions()
    options.frame_opts.dither = 0  # defaults otherwise: 23 mel bins, 13 ceps, energy in C0, lifter 22
    reference = knf_frames(knf.OnlineMfcc(options), audio)
    ours = Frontend(FrontendConfig(kind="mfcc", num_mel_bins=23))(torch.from_numpy(audio)[None])[0].numpy()
    assert ours.shape == reference.shape == (300, 13)
    assert np.abs(ours - reference).max() <= MFCC_TOLERANCE


def test_causal_deltas_are_kaldi_deltas_of_the_frame_window_frames_back(audio):
    """Delta at frame t is Kaldi's regression delta of frame t - N (its window ends at t)."""
    static_frontend = Frontend(FrontendConfig(kind="mfcc", num_mel_bins=23))
    delta_frontend = Frontend(FrontendConfig(kind="mfcc", num_mel_bins=23, delta_order=1, delta_window=2))
    x = torch.from_numpy(audio)[None]
    static = static_frontend(x)[0].numpy()
    ours = delta_frontend(x)[0].numpy()
    assert ours.shape == (300, 26)
    np.testing.assert_array_equal(ours[:, :13], static)
    n = 2
    kaldi = np.array(knf.compute_deltas(knf.DeltaOptions(order=1, window=n), static.tolist()))[:, 13:]
    # Kaldi replicates edge frames; away from the edges the formulas must agree exactly.
    np.testing.assert_allclose(ours[2 * n : -1, 13:], kaldi[n : -n - 1], atol=1e-4)


# Pieces vs one shot differ only by float32 rounding after the float64 spectrum (DCT, deltas on
# coefficients of magnitude up to ~80, where one float32 ulp is 7.6e-6): measured up to 7.6e-5.
PIECES_TOLERANCE = dict(atol=1e-4, rtol=0)

CONFIGS = [
    FrontendConfig(),
    FrontendConfig(kind="mfcc", num_mel_bins=23, delta_order=2),
    FrontendConfig(delta_order=1, delta_window=3),
]


@pytest.mark.parametrize("config", CONFIGS, ids=["fbank", "mfcc+dd", "fbank+d"])
@settings(max_examples=15, deadline=None)
@given(cuts=st.lists(st.integers(0, 40), min_size=0, max_size=12))
def test_features_of_hop_pieces_equal_one_shot(config, cuts):
    frontend = Frontend(config)
    audio = torch.from_numpy(speechlike_signal(0.6, seed=1))[None]  # 60 hops
    one_shot = frontend(audio)
    tail, history = frontend.initial_state(1)
    bounds = sorted({0, 60, *[c % 61 for c in cuts]})
    pieces = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        features, tail, history = frontend.step(audio[:, start * HOP_SAMPLES : end * HOP_SAMPLES], tail, history)
        pieces.append(features)
    streamed = torch.cat(pieces, dim=1)
    assert streamed.shape == one_shot.shape
    torch.testing.assert_close(streamed, one_shot, **PIECES_TOLERANCE)


def test_one_hop_at_a_time_equals_one_shot():
    frontend = Frontend(FrontendConfig(kind="mfcc", delta_order=2))
    audio = torch.from_numpy(speechlike_signal(0.5, seed=2))[None]
    tail, history = frontend.initial_state(1)
    pieces = []
    for start in range(0, audio.shape[1], HOP_SAMPLES):
        features, tail, history = frontend.step(audio[:, start : start + HOP_SAMPLES], tail, history)
        pieces.append(features)
    torch.testing.assert_close(torch.cat(pieces, 1), frontend(audio), **PIECES_TOLERANCE)


def test_non_finite_samples_read_as_zero_and_features_stay_finite():
    frontend = Frontend(FrontendConfig())
    audio = torch.from_numpy(speechlike_signal(0.5, seed=4))[None]
    broken = audio.clone()
    broken[0, 1000:1100] = float("nan")
    broken[0, 3000] = float("inf")
    broken[0, 3001] = -float("inf")
    cleaned = audio.clone()
    cleaned[0, 1000:1100] = 0.0
    cleaned[0, 3000:3002] = 0.0
    features = frontend(broken)
    assert torch.isfinite(features).all()
    torch.testing.assert_close(features, frontend(cleaned), atol=0, rtol=0)


def test_digital_silence_gives_finite_floor_features():
    features = Frontend(FrontendConfig(kind="mfcc", delta_order=2))(torch.zeros(1, 1600))
    assert torch.isfinite(features).all()
    # before and during a silent stream the static features are the same, so all deltas vanish
    assert features[0, :, 13:].abs().max() < 1e-5


def test_partial_final_hop_is_zero_padded():
    frontend = Frontend(FrontendConfig())
    audio = torch.from_numpy(speechlike_signal(0.1, seed=5))[None][:, :1000]  # 6.25 hops
    padded = torch.nn.functional.pad(audio, (0, 120))
    assert frontend(audio).shape[1] == 7
    torch.testing.assert_close(frontend(audio), frontend(padded), atol=0, rtol=0)
