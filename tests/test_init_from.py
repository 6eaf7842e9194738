"""Fine-tuning from the shipped weights: --init-from / train.init_from."""

from __future__ import annotations

import torch

from speechattn.cli import main
from speechattn.model.encoder import load
from speechattn.runtime.transcribe import CHECKPOINTS_DIR
from speechattn.training.recipes import load_recipe
from speechattn.training.train import initial_weights


def test_the_default_recipe_continues_from_the_shipped_weights():
    """recipes/default.yaml made the shipped weights from the round before's; its next round starts from them."""
    recipe = load_recipe("recipes/default.yaml")
    assert recipe.train.init_from == "default"
    model = initial_weights("default", recipe.model)
    shipped = load(CHECKPOINTS_DIR / "default.pt")
    assert model.config.dropout == recipe.model.dropout  # the recipe's training settings ...
    for (name, value), (_, expected) in zip(model.state_dict().items(), shipped.state_dict().items()):
        assert torch.equal(value, expected), name  # ... and the shipped weights and normalisation, all of them


def test_init_from_a_checkpoint_of_another_architecture_is_refused_by_name(capsys, tmp_path):
    code = main(["train", "recipes/tiny.yaml", "--out", str(tmp_path / "run"), "--init-from", "default"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1
    assert "default.pt: cannot start from it, its model differs from the recipe's" in err
    assert "model_dim (192 there, 64 here)" in err and "num_layers (6 there, 2 here)" in err
    blocking, taken = err.split(" (these differ as well but would be the recipe's: ")  # what blocks it, named first
    assert "model_dim" in blocking and "num_layers" in taken and "output_delay_frames" not in blocking
    assert not (tmp_path / "run" / "train.csv").exists()


def test_a_recipe_with_another_left_context_starts_from_the_same_weights(tmp_path):
    """Left context is the one architecture setting init_from adapts: the weights stay, each layer's relative-bias
    table keeps the entries both contexts reach, and where no key lies beyond the shorter reach the output is
    the original model's."""
    from dataclasses import replace

    from speechattn.model.encoder import PhoneTagger

    recipe = load_recipe("recipes/default.yaml")
    # both without the primed start: the shipped model's silence caches span its own 128 frames, beyond the reach
    shorter = replace(recipe.model, left_context_frames=32, primed_start=False)
    model = initial_weights("default", shorter).eval()
    primed = load(CHECKPOINTS_DIR / "default.pt")
    shipped = PhoneTagger(replace(primed.config, primed_start=False)).eval()
    shipped.load_state_dict(primed.state_dict())
    assert model.config.left_context_frames == 32
    for (name, value), (_, expected) in zip(model.state_dict().items(), shipped.state_dict().items()):
        if name.endswith("relative_bias"):
            assert value.shape[1] == model.config.max_relative_past + model.config.max_relative_future + 1
            assert torch.equal(value, expected[:, : value.shape[1]]), name
        else:
            assert torch.equal(value, expected), name
    torch.manual_seed(0)
    feats, lengths = torch.randn(1, 40, 80), torch.tensor([40])  # 40 frames: every key within 32 + 8 frames
    with torch.no_grad():
        torch.testing.assert_close(model(feats, lengths, 8), shipped(feats, lengths, 8), atol=1e-4, rtol=0)
        longer = torch.randn(1, 200, 80)
        assert not torch.allclose(model(longer, torch.tensor([200]), 8), shipped(longer, torch.tensor([200]), 8),
                                  atol=1e-3)  # beyond the shorter reach the far keys are no longer seen


def test_a_longer_left_context_gives_far_offsets_the_farthest_bias():
    from speechattn.model.encoder import with_left_context

    shipped = load(CHECKPOINTS_DIR / "default.pt")
    longer = with_left_context(shipped, 256)
    for (name, value), (_, old) in zip(longer.state_dict().items(), shipped.state_dict().items()):
        if name.endswith("relative_bias"):
            assert torch.equal(value[:, : old.shape[1]], old)
            assert torch.equal(value[:, old.shape[1]:], old[:, -1:].expand(-1, value.shape[1] - old.shape[1]))


def test_a_recipe_with_fewer_layers_starts_from_evenly_spaced_layers_of_the_checkpoint():
    """Fewer layers is the other architecture change init_from takes (a smaller, faster model trained on from a
    larger one): the first and last layers and evenly spaced ones between, their weights unchanged; more layers
    than the checkpoint has is refused by name."""
    from dataclasses import replace

    import pytest

    from speechattn.model.encoder import CheckpointError, kept_layers

    assert kept_layers(6, 5) == [0, 1, 2, 4, 5] and kept_layers(6, 3) == [0, 2, 5] and kept_layers(6, 6) == list(range(6))
    recipe = load_recipe("recipes/default.yaml")
    model = initial_weights("default", replace(recipe.model, num_layers=5))
    shipped = load(CHECKPOINTS_DIR / "default.pt").state_dict()
    assert model.config.num_layers == 5 and len(model.layers) == 5
    for name, value in model.state_dict().items():
        if name.startswith("layers."):
            _, index, rest = name.split(".", 2)
            name = f"layers.{[0, 1, 2, 4, 5][int(index)]}.{rest}"
        assert torch.equal(value, shipped[name]), name
    with pytest.raises(CheckpointError, match=r"num_layers \(6 there, 7 here\)"):
        initial_weights("default", replace(recipe.model, num_layers=7))


def test_the_recipes_for_your_own_corpus_fine_tune_the_bundled_model(tmp_path):
    """`speechattn train recipes/timit.yaml --init-from default`: the corpus recipes train the bundled model's
    architecture (ModelConfig's defaults), so its weights are taken as they are."""
    shipped = load(CHECKPOINTS_DIR / "default.pt").config
    for name in ("timit", "textgrid", "htk", "synth-en"):
        recipe = load_recipe(f"recipes/{name}.yaml", {} if name == "synth-en" else {"data": {"root": str(tmp_path)}})
        assert initial_weights("default", recipe.model).config == shipped, name


def test_a_larger_chunk_gives_far_offsets_the_biases_full_context_gives_them():
    """with_chunk_frames (a file model: weights trained at full context served in large chunks): the tables grow on
    both sides with the farthest entries, so full context and the old chunks are unchanged, and a chunk as long as
    the input is full context; init_from adapts a recipe's chunk sizes the same way."""
    from dataclasses import replace

    from speechattn.model.encoder import PhoneTagger, with_chunk_frames

    primed = load(CHECKPOINTS_DIR / "default.pt")
    shipped = PhoneTagger(replace(primed.config, primed_start=False)).eval()
    shipped.load_state_dict(primed.state_dict())
    larger = with_chunk_frames(shipped, (4, 8, 16, 32, 100), 100).eval()
    grow = (100 - 32) // 4
    assert larger.config.chunk_frames_choices == (4, 8, 16, 32, 100) and larger.config.default_chunk_frames == 100
    for (name, value), (_, old) in zip(larger.state_dict().items(), shipped.state_dict().items()):
        if name.endswith("relative_bias"):
            assert value.shape[1] == old.shape[1] + 2 * grow
            assert torch.equal(value[:, grow:grow + old.shape[1]], old)
            assert torch.equal(value[:, :grow], old[:, :1].expand(-1, grow))
            assert torch.equal(value[:, grow + old.shape[1]:], old[:, -1:].expand(-1, grow))
        else:
            assert torch.equal(value, old), name
    torch.manual_seed(1)
    feats, lengths = torch.randn(1, 100, 80), torch.tensor([100])
    with torch.no_grad():
        full = shipped(feats, lengths, None)
        torch.testing.assert_close(larger(feats, lengths, None), full, atol=1e-5, rtol=0)
        torch.testing.assert_close(larger(feats, lengths, 8), shipped(feats, lengths, 8), atol=1e-5, rtol=0)
        torch.testing.assert_close(larger(feats, lengths, 100), full, atol=1e-5, rtol=0)
    recipe = load_recipe("recipes/default.yaml")
    model = initial_weights("default", replace(recipe.model, chunk_frames_choices=(100,), default_chunk_frames=100))
    assert model.config.chunk_frames_choices == (100,)
    assert torch.equal(model.state_dict()["layers.0.attention.relative_bias"],
                       with_chunk_frames(primed, (100,), 100).state_dict()["layers.0.attention.relative_bias"])
