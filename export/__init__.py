"""The portable side of speechattn: the ONNX contract and a numpy + onnxruntime streaming client.

Installed as the package `speechattn_export`; nothing here imports torch or speechattn.
"""
