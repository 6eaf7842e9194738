"""Data: frame labels, corpora and alignment, synthesis, augmentation, the training data path, manifests,
prepare (lhotse)."""
