"""The encoder: streaming step equals forward, attention is truncated as specified, checkpoints rebuild."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import random_model, tiny_config
from speechattn.errors import ConfigError
from speechattn.model.features import FrontendConfig
from speechattn.model.encoder import CheckpointError, ModelConfig, PhoneTagger, load, save_checkpoint

TOLERANCE = 1e-4  # max |delta log-prob| between streaming and forward


def stream_in_pieces(model, feats, chunk_frames, sizes):
    state = model.initial_state(feats.shape[0])
    outputs, position = [], 0
    for size in sizes:
        out, state = model.step(feats[:, position : position + size], state, chunk_frames)
        assert out.shape[1] % chunk_frames == 0  # only whole chunks come out before the end
        outputs.append(out)
        position += size
    out, state = model.step(feats[:, position:], state, chunk_frames, final=True)
    outputs.append(out)
    return torch.cat(outputs, dim=1)


def assert_same(streamed, reference):
    assert streamed.shape == reference.shape
    assert (streamed - reference).abs().max().item() <= TOLERANCE
    assert torch.equal(streamed.argmax(-1), reference.argmax(-1))


def assert_streaming_equals_forward(model, data, chunk_frames, frames, max_piece, max_pieces):
    """Random features of `frames` frames, streamed in pieces hypothesis draws, against one forward call."""
    feats = torch.randn(1, frames, model.config.frontend.feature_dim, generator=torch.Generator().manual_seed(frames))
    sizes = data.draw(st.lists(st.integers(0, max_piece), max_size=max_pieces))
    with torch.no_grad():
        reference = model(feats, torch.tensor([frames]), chunk_frames)
        streamed = stream_in_pieces(model, feats, chunk_frames, sizes)
    assert reference.shape[1] == frames  # one distribution per 10 ms frame, whatever the subsampling
    assert_same(streamed, reference)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), chunk_frames=st.sampled_from([1, 2, 4, 8]), frames=st.integers(1, 45))
def test_step_over_any_chunking_equals_forward(tiny_model, data, chunk_frames, frames):
    assert_streaming_equals_forward(tiny_model, data, chunk_frames, frames, max_piece=12, max_pieces=20)


@pytest.mark.parametrize("chunk_frames", [1, 4, 8])
def test_one_frame_at_a_time_equals_forward(tiny_model, chunk_frames):
    feats = torch.randn(2, 50, tiny_model.config.frontend.feature_dim, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        reference = tiny_model(feats, torch.tensor([50, 50]), chunk_frames)
        streamed = stream_in_pieces(tiny_model, feats, chunk_frames, [1] * 50)
    assert_same(streamed, reference)


def _changed_frames(model, feats, perturb_frame, chunk_frames):
    with torch.no_grad():
        base = model(feats, torch.tensor([feats.shape[1]]), chunk_frames)
        moved = feats.clone()
        moved[:, perturb_frame] += 5.0
        changed = (model(moved, torch.tensor([feats.shape[1]]), chunk_frames) - base).abs().amax(-1)[0] > 1e-6
    return changed.nonzero().flatten().tolist()


def test_no_frame_sees_beyond_its_own_chunk(tiny_model):
    """Perturbing frame 21 (chunk 5 of C=4: frames 20-23) changes nothing before frame 20."""
    feats = torch.randn(1, 60, tiny_model.config.frontend.feature_dim, generator=torch.Generator().manual_seed(1))
    changed = _changed_frames(tiny_model, feats, 21, 4)
    assert changed and min(changed) == 20


def test_influence_ends_after_the_receptive_field(tiny_model):
    """A frame reaches at most num_layers * left_context frames past its chunk (2 x 6 here)."""
    config = tiny_model.config
    feats = torch.randn(1, 80, config.frontend.feature_dim, generator=torch.Generator().manual_seed(2))
    changed = _changed_frames(tiny_model, feats, 20, 4)
    chunk_end = 24
    reach = config.num_layers * config.left_context_frames
    assert max(changed) < chunk_end + reach
    assert max(changed) >= chunk_end + reach - 4  # the bound is tight: the field really is this wide


def test_padding_does_not_change_results(tiny_model):
    generator = torch.Generator().manual_seed(3)
    short = torch.randn(1, 23, tiny_model.config.frontend.feature_dim, generator=generator)
    batch = torch.cat([torch.nn.functional.pad(short, (0, 0, 0, 17)), torch.randn(1, 40, short.shape[2])])
    with torch.no_grad():
        for chunk in (4, None):
            alone = tiny_model(short, torch.tensor([23]), chunk)
            batched = tiny_model(batch, torch.tensor([23, 40]), chunk)[:1, :23]
            assert (alone - batched).abs().max() <= TOLERANCE


def test_full_context_sees_the_whole_utterance(tiny_model):
    feats = torch.randn(1, 60, tiny_model.config.frontend.feature_dim, generator=torch.Generator().manual_seed(4))
    assert min(_changed_frames(tiny_model, feats, 59, None)) == 0


def test_attention_cost_is_linear_in_length(tiny_model, monkeypatch):
    """Chunked attention scores have T * (L + C) entries per head, never T x T."""
    shapes = []
    original = torch.softmax

    def recording_softmax(x, dim):
        shapes.append(tuple(x.shape))
        return original(x, dim=dim)

    monkeypatch.setattr(torch, "softmax", recording_softmax)
    with torch.no_grad():
        tiny_model(torch.randn(1, 4000, tiny_model.config.frontend.feature_dim), torch.tensor([4000]), 8)
    L, H = tiny_model.config.left_context_frames, tiny_model.config.num_heads
    assert shapes == [(1, 4000 // 8, H, 8, L + 8)] * tiny_model.config.num_layers  # (B, chunks, H, C, L + C)


def test_the_default_config_is_the_bundled_model():
    """ModelConfig() with the default recipe's model settings builds the shipped model: every field equals the config
    inside default.pt, and so does the parameter count export/models/README.md states.  The recipe sets the level
    normalisation (ModelConfig() leaves it off: a model built in code hears the level as it comes)."""
    from pathlib import Path

    import yaml

    from speechattn.runtime.transcribe import CHECKPOINTS_DIR

    shipped = torch.load(CHECKPOINTS_DIR / "default.pt", map_location="cpu", weights_only=True)["config"]
    recipe = yaml.safe_load((Path(__file__).parents[1] / "recipes" / "default.yaml").read_text())["model"]
    defaults = ModelConfig().to_dict()
    assert defaults["frontend"]["level_target_dbfs"] is None
    assert defaults["frontend"]["log_floor"] == float(torch.finfo(torch.float32).eps)
    defaults["frontend"].update(recipe["frontend"])
    assert sorted(defaults) == sorted(shipped)
    assert {key: defaults[key] for key in defaults if defaults[key] != shipped[key]} == {}
    assert PhoneTagger(ModelConfig()).num_parameters() == 2_763_208


def test_a_checkpoint_older_than_a_setting_loads_as_it_was_trained(tmp_path):
    """A checkpoint written before frame_subsampling, conv_kernel, primed_start and output_delay_frames existed
    lacks them: it means what it was trained as (1, 0, off, 0), not today's defaults."""
    config = tiny_config()
    model = random_model(config)
    save_checkpoint(model, tmp_path / "old.pt")
    payload = torch.load(tmp_path / "old.pt", weights_only=True)
    for key in ("frame_subsampling", "conv_kernel", "primed_start", "output_delay_frames"):
        del payload["config"][key]
    torch.save(payload, tmp_path / "old.pt")
    assert load(tmp_path / "old.pt").config == config


def test_checkpoint_rebuilds_the_model_alone(tmp_path):
    config = tiny_config(frontend=FrontendConfig(kind="mfcc", num_mel_bins=23, delta_order=2), left_context_frames=5)
    model = random_model(config, seed=4)
    save_checkpoint(model, tmp_path / "m.pt")
    loaded = load(tmp_path / "m.pt")
    assert loaded.config == config
    feats = torch.randn(1, 30, config.frontend.feature_dim)
    with torch.no_grad():
        assert torch.equal(model(feats, torch.tensor([30]), 4), loaded(feats, torch.tensor([30]), 4))
    assert torch.equal(loaded.frontend.feature_std, model.frontend.feature_std)  # normalisation travels too


def test_checkpoint_errors_are_clear(tmp_path):
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        load(tmp_path / "missing.pt")
    (tmp_path / "garbage.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load(tmp_path / "garbage.pt")
    torch.save({"weights": 1}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a speechattn checkpoint"):
        load(tmp_path / "other.pt")
    # weights from another config under this config's name
    model = random_model()
    payload = {"format": "speechattn-checkpoint-1", "config": tiny_config(model_dim=64, ffn_dim=64).to_dict(),
               "model": model.state_dict()}
    torch.save(payload, tmp_path / "mismatch.pt")
    with pytest.raises(CheckpointError, match="do not fit its own config"):
        load(tmp_path / "mismatch.pt")


def test_config_errors_name_the_key():
    with pytest.raises(ConfigError, match="unknown model setting.*num_layer"):
        ModelConfig.from_dict({"num_layer": 3}, source="r.yaml")
    with pytest.raises(ConfigError, match="frontend.kind must be"):
        ModelConfig.from_dict({"frontend": {"kind": "spectrogram"}})
    with pytest.raises(ConfigError, match="model_dim must be an integer"):
        ModelConfig.from_dict({"model_dim": 25.5})
    with pytest.raises(ConfigError, match="not divisible"):
        ModelConfig.from_dict({"model_dim": 250})


@pytest.fixture(scope="module", params=[2, 4])
def subsampled_model(request):
    S = request.param
    return random_model(tiny_config(frame_subsampling=S, left_context_frames=8,
                                    chunk_frames_choices=(4, 8), default_chunk_frames=4), seed=S)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), chunk_frames=st.sampled_from([4, 8]), frames=st.integers(1, 45))
def test_subsampled_step_over_any_chunking_equals_forward(subsampled_model, data, chunk_frames, frames):
    """Call sizes that are not multiples of the subsampling, and utterances that end inside a position."""
    assert_streaming_equals_forward(subsampled_model, data, chunk_frames, frames, max_piece=11, max_pieces=12)


def test_subsampled_batch_padding_does_not_change_results(subsampled_model):
    feats = torch.randn(2, 23, subsampled_model.config.frontend.feature_dim, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        batched = subsampled_model(feats, torch.tensor([23, 13]), 4)
        alone = subsampled_model(feats[1:, :13], torch.tensor([13]), 4)
        full = subsampled_model(feats[1:, :13], torch.tensor([13]), None)
        full_batched = subsampled_model(feats, torch.tensor([23, 13]), None)
    assert (batched[1, :13] - alone[0]).abs().max() <= TOLERANCE
    assert (full_batched[1, :13] - full[0]).abs().max() <= TOLERANCE


def test_subsampling_must_divide_chunks_and_left_context():
    with pytest.raises(ConfigError, match="multiples of 4"):
        tiny_config(frame_subsampling=4, chunk_frames_choices=(2, 4), default_chunk_frames=4)
    with pytest.raises(ConfigError, match="1, 2 or 4"):
        tiny_config(frame_subsampling=3)
    with pytest.raises(ConfigError, match="at least 1"):
        tiny_config(num_layers=0)


@pytest.fixture(scope="module", params=[(1, 3), (4, 5)], ids=["S1-W3", "S4-W5"])
def conv_model(request):
    S, W = request.param
    return random_model(tiny_config(frame_subsampling=S, conv_kernel=W, left_context_frames=8,
                                    chunk_frames_choices=(4, 8), default_chunk_frames=4), seed=W)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), chunk_frames=st.sampled_from([4, 8]), frames=st.integers(1, 45))
def test_conv_module_streams_exactly(conv_model, data, chunk_frames, frames):
    """The convolution's left context travels as state: any chunking gives forward's result."""
    assert_streaming_equals_forward(conv_model, data, chunk_frames, frames, max_piece=11, max_pieces=12)


def test_conv_module_is_causal_and_matters(conv_model):
    """A change at a frame moves no earlier frame's output (no look-ahead beyond the chunk, none at all from the
    convolution), and the module changes the result (it is in the path)."""
    c = conv_model.config
    feats = torch.randn(1, 40, c.frontend.feature_dim, generator=torch.Generator().manual_seed(1))
    changed = feats.clone()
    changed[:, 24:] += 1.0
    with torch.no_grad():
        a = conv_model(feats, torch.tensor([40]), 8)
        b = conv_model(changed, torch.tensor([40]), 8)
        plain = PhoneTagger(tiny_config(**{**c.to_dict(), "frontend": c.frontend, "conv_kernel": 0}))
        state = {k: v for k, v in conv_model.state_dict().items() if ".conv." not in k}
        plain.load_state_dict(state)
        without = plain.eval()(feats, torch.tensor([40]), 8)
    assert (a[:, :24] - b[:, :24]).abs().max() == 0
    assert (a[:, 24:] - b[:, 24:]).abs().max() > 1e-3
    assert (a - without).abs().max() > 1e-3


def test_conv_kernel_must_be_0_or_at_least_2():
    with pytest.raises(ConfigError, match="conv_kernel must be 0"):
        tiny_config(conv_kernel=1)
