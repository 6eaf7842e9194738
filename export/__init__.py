"""The portable kit of speechattn, numpy + onnxruntime only: the ONNX contract, the streaming client, the phone
decoder, segments, mouth shapes and the bundled models, the same modules and behaviour as export/js.

Installed as the package `speechattn_export`; nothing here imports torch or speechattn.

    stream_client  StreamingModel, Stream, StreamSet: audio in, frame log-probabilities out (the contract)
    decoder        the bigram phone decoder and new_segmenter (JS: PhoneDecoder, newSegmenter)
    segments       Segment, the hysteresis segmenter, segment_dicts (JS: HysteresisSegmenter, segmentDicts)
    visemes        viseme sets, frame_weights, CueMaker, cue_dicts (JS: visemes.mjs)
    registry       the tables: bundled models (models/models.json, read by every client), decoders, viseme sets
    words          text to spoken words to phones: CMUdict (lexicon/), normalisation, a g2p model (js/words.mjs)
    align          forced alignment of known words on the frames, offline or live (JS: js/align.mjs)
    resample       the resampler every client shares (js/resample.mjs)
    pipeline       load_model, DecodingOptions, PhoneStream: the short API below
"""

__all__ = ["DecodingOptions", "PhoneStream", "load_model"]


def __getattr__(name: str):  # lazy: `import speechattn_export.registry` (the CLI's --help) stays free of numpy
    if name in __all__:
        from speechattn_export import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'speechattn_export' has no attribute {name!r}")
