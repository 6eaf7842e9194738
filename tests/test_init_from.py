"""Fine-tuning from the shipped weights: --init-from / train.init_from."""

from __future__ import annotations

import torch

from speechattn.cli import main
from speechattn.model.encoder import load
from speechattn.runtime.transcribe import MODELS_DIR
from speechattn.training.recipes import load_recipe
from speechattn.training.train import initial_weights


def test_the_default_recipe_continues_from_the_shipped_weights():
    """recipes/default.yaml made the shipped weights from the round before's; its next round starts from them."""
    recipe = load_recipe("recipes/default.yaml")
    assert recipe.train.init_from == "default"
    model = initial_weights("default", recipe.model)
    shipped = load(MODELS_DIR / "default.pt")
    assert model.config.dropout == recipe.model.dropout  # the recipe's training settings ...
    for (name, value), (_, expected) in zip(model.state_dict().items(), shipped.state_dict().items()):
        assert torch.equal(value, expected), name  # ... and the shipped weights and normalisation, all of them


def test_init_from_a_checkpoint_of_another_architecture_is_refused_by_name(capsys, tmp_path):
    code = main(["train", "recipes/tiny.yaml", "--out", str(tmp_path / "run"), "--init-from", "default"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "default.pt: cannot start from it, its model differs from the recipe's" in err
    assert "model_dim (192 there, 64 here)" in err and "num_layers (6 there, 2 here)" in err
    assert not (tmp_path / "run" / "train.csv").exists()
