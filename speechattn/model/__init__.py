"""The model: frontend, encoder, streaming step, ONNX export and stream checks (torch)."""
