"""Shared fixtures: tiny models (random, and briefly trained) and their ONNX exports."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from speechattn.audio import HOP_SAMPLES, speechlike_signal
from speechattn.model.features import FrontendConfig
from speechattn.phones import IGNORE
from speechattn.model.encoder import ModelConfig, PhoneTagger

TINY = dict(num_layers=2, model_dim=32, num_heads=4, ffn_dim=64, left_context_frames=6,
            chunk_frames_choices=(1, 2, 4, 8), default_chunk_frames=4, dropout=0.0,
            frame_subsampling=1, primed_start=False, output_delay_frames=0)  # the plainest streaming model


def tiny_config(**overrides) -> ModelConfig:
    values = {**TINY, **overrides}
    frontend = values.pop("frontend", FrontendConfig())
    return ModelConfig(frontend=frontend, **values)


def random_model(config: ModelConfig | None = None, seed: int = 0) -> PhoneTagger:
    """A random tiny model whose weights are large enough that every part of it matters."""
    torch.manual_seed(seed)
    model = PhoneTagger(config or tiny_config())
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" not in name:
                parameter.normal_(0.0, 0.3)
        audio = torch.from_numpy(speechlike_signal(5.0, seed=seed + 100))[None]
        features = model.frontend(audio)[0]
        model.frontend.set_normalization(features.mean(0), features.std(0))
    return model.eval().prime()  # a primed_start model's silence caches follow its weights


def streamed(model, audio: np.ndarray, chunk_frames: int, sizes=()) -> tuple[np.ndarray, np.ndarray]:
    """Push `audio` through a portable-client StreamingModel in pieces of `sizes` samples (the rest in one), then
    finish: (log_probs, frame_indices) of the whole stream."""
    stream = model.new_stream(chunk_frames)
    pieces, indices, position = [], [], 0
    for size in [*sizes, len(audio)]:
        frames = stream.push(audio[position : position + size])
        position += size
        pieces.append(frames.log_probs), indices.append(frames.frame_indices)
    last = stream.finish()
    pieces.append(last.log_probs), indices.append(last.frame_indices)
    return np.concatenate(pieces), np.concatenate(indices)


def briefly_trained_model(seconds: float = 20.0, steps: int = 300, seed: int = 0,
                          output_delay_frames: int = 0) -> PhoneTagger:
    """A tiny model trained for a few seconds to tag the classes of speechlike_signal.

    Trained models have decisive outputs; random ones have near-tied top scores whose argmax
    flips under any rounding, so int8 fidelity is measured on this one."""
    torch.manual_seed(seed)
    config = tiny_config(model_dim=64, ffn_dim=128, num_heads=4, left_context_frames=16, dropout=0.0,
                         output_delay_frames=output_delay_frames)
    model = PhoneTagger(config)
    audio, classes = speechlike_signal(seconds, seed=seed + 7, with_classes=True)
    audio = torch.from_numpy(audio)[None]
    labels = torch.from_numpy(classes[HOP_SAMPLES // 2 :: HOP_SAMPLES])[None]  # class at each hop's centre
    with torch.no_grad():
        features = model.frontend(audio)
        model.frontend.set_normalization(features[0].mean(0), features[0].std(0))
        features = model.frontend(audio)
    labels = labels[:, : features.shape[1]]
    if output_delay_frames:
        from speechattn.training.train import delayed_labels

        labels = delayed_labels(labels, output_delay_frames)
    lengths = torch.tensor([features.shape[1]])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    generator = np.random.default_rng(seed)
    model.train()
    for _ in range(steps):
        chunk = int(generator.choice(config.chunk_frames_choices))
        log_probs = model(features, lengths, chunk)
        loss = torch.nn.functional.nll_loss(log_probs.transpose(1, 2), labels, ignore_index=IGNORE)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval().prime()  # a primed_start model's silence caches follow its weights


@pytest.fixture(scope="session")
def tiny_model() -> PhoneTagger:
    return random_model()


@pytest.fixture(scope="session")
def tiny_onnx(tmp_path_factory, tiny_model):
    from speechattn.model.export import export_onnx

    path = tmp_path_factory.mktemp("onnx") / "tiny.onnx"
    export_onnx(tiny_model, path)
    return path


@pytest.fixture(scope="session")
def trained_model() -> PhoneTagger:
    return briefly_trained_model()


def write_timit_utterance(speaker_dir, name: str = "SA1", seed: int = 1):
    """One TIMIT utterance: 0.5 s NIST SPHERE audio with a sample-exact .PHN and a .TXT."""
    import soundfile as sf

    speaker_dir.mkdir(parents=True, exist_ok=True)
    sf.write(speaker_dir / f"{name}.WAV", speechlike_signal(0.5, seed=seed), 16000, format="NIST", subtype="PCM_16")
    (speaker_dir / f"{name}.PHN").write_text("0 1200 h#\n1200 2000 sh\n2000 2800 ix\n2800 3600 hv\n3600 4000 dcl\n"
                                             "4000 5600 ax-h\n5600 8000 h#\n")
    (speaker_dir / f"{name}.TXT").write_text("0 8000 She had.\n")


@pytest.fixture(scope="session")
def trained_onnx(tmp_path_factory, trained_model):
    from speechattn.model.export import export_onnx

    path = tmp_path_factory.mktemp("onnx") / "trained.onnx"
    export_onnx(trained_model, path)
    return path
