"""Training: recipes, the training loop, evaluation."""
