"""The runtime: streaming ONNX inference from files and microphones (numpy, onnxruntime, soundfile, soxr; never torch), and the bundled models."""
