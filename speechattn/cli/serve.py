"""The serve command: many live streams over WebSocket, from one process a core (speechattn/runtime/serve.py)."""

from __future__ import annotations

import click

from speechattn.cli.common import (FiniteFloatRange, chunk_option, decoder_option, decoding_options, load_onnx,
                                   min_frames_option, model_option, option)
from speechattn_export.registry import VISEME_SET_NAMES


@click.command()
@model_option
@option("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface; put TLS in front)")
@option("--port", type=click.IntRange(0, 65535), default=8765, help="port (0: any free one, printed)")
@option("--max-streams", type=click.IntRange(1, 100_000), default=256,
        help="live streams at once; one more is closed with code 1013 and a reason")
@option("--token", envvar="SPEECHATTN_TOKEN", default=None, show_default=False,
        help="clients must send it (Authorization: Bearer TOKEN, or ?token=TOKEN); or SPEECHATTN_TOKEN")
@option("--max-batch", type=click.IntRange(1, 4096), default=16,
        help="streams stepped in one onnxruntime call (1: one call per stream chunk, no batching)")
@option("--max-wait-ms", type=FiniteFloatRange(0, 1000), default=5.0,
        help="once a stream has a chunk ready, how long to wait for the other live streams' chunks (the delay it "
             "may add)")
@option("--idle-timeout", type=FiniteFloatRange(0.1, 86400), default=30.0,
        help="seconds without a message from a client before its stream is closed (1008)")
@option("--handshake-timeout", type=FiniteFloatRange(0.1, 3600), default=10.0,
        help="seconds a connection may take to send its HTTP request and finish the WebSocket handshake (then 408)")
@option("--max-frame-bytes", type=click.IntRange(1024, 1 << 30), default=1 << 20,
        help="largest WebSocket message; a larger one closes the stream (1009)")
@option("--max-ahead", type=FiniteFloatRange(0.1, 3600), default=10.0,
        help="seconds of audio a live stream may send ahead of real time before the server stops reading it")
@option("--http-port", type=click.IntRange(0, 65535), default=None, show_default=False,
        help="also take whole files on this port: POST /transcribe and POST /align, answered with the CLI's JSON "
             "(0: any free one, printed); without --model, /transcribe takes the files' model as transcribe does "
             "(unless the request names chunk_frames)  [default: off]")
@option("--max-file-bytes", type=click.IntRange(1024, 1 << 40), default=64 << 20,
        help="largest file POSTed to --http-port; a larger one gets HTTP 413")
@option("--max-file-seconds", type=FiniteFloatRange(1, 86400), default=3600.0,
        help="longest file POSTed to --http-port, in seconds of audio; a longer one gets HTTP 413 before it is decoded")
@option("--workers", type=click.IntRange(1, 256), default=None, show_default=False,
        help="processes sharing the port (SO_REUSEPORT), each with its own batcher and model  [default: one per core]")
@option("--visemes", type=click.Choice(VISEME_SET_NAMES), default=None,
        help="mouth cues for streams that ask for no set  [default: none]")
@chunk_option
@min_frames_option
@decoder_option
@option("--threads", type=click.IntRange(min=1, max=256), default=1,
        help="onnxruntime threads of each worker's model (the workers are the way to use more cores: one per core)")
@option("--provider", type=click.Choice(["cpu", "cuda"]), default="cpu",
        help="where the live streams' model runs: cuda needs onnxruntime-gpu and an NVIDIA GPU, keeps every batch's "
             "state in the GPU's memory between calls (I/O binding), and defaults to one worker (raise --max-batch "
             "with it: docs/server.md)")
def serve(model, host, port, max_streams, token, max_batch, max_wait_ms, idle_timeout, handshake_timeout,
          max_frame_bytes, max_ahead, http_port, max_file_bytes, max_file_seconds, workers, visemes, chunk_frames, min_frames, decoder,
          threads, provider):
    """Live phone streams for many clients: a WebSocket endpoint at ws://HOST:PORT/stream (protocol: the JSON
    schema export/serve.schema.json, docs/server.md), with /healthz, /readyz and /metrics (Prometheus) on the same
    port.  Every stream with a whole chunk of audio is stepped in one onnxruntime call; each stream's phones are
    those of the same audio streamed alone.  --workers processes (one per core) share the port.  SIGTERM: open
    streams get their final result and close 1001."""
    from speechattn.runtime.serve import ServeOptions, default_workers, run
    from speechattn.runtime.transcribe import resolve_model
    from speechattn_export.registry import files_name

    stream_model = load_onnx(resolve_model(model), threads, provider)
    options = ServeOptions(host=host, port=port, max_streams=max_streams, token=token,
                           idle_timeout_seconds=idle_timeout,
                           handshake_timeout_seconds=handshake_timeout, max_frame_bytes=max_frame_bytes,
                           max_ahead_seconds=max_ahead, max_batch=max_batch, max_wait_ms=max_wait_ms,
                           http_port=http_port, max_file_bytes=max_file_bytes, max_file_seconds=max_file_seconds,
                           provider=provider,
                           workers=workers or (1 if provider == "cuda" else default_workers()),
                           decoding=decoding_options(stream_model, decoder, min_frames, chunk_frames, visemes),
                           files_model=files_name() if model is None else None)

    def ready(host, port, http_port=None):
        click.echo(f"listening on ws://{host}:{port}/stream", err=True)
        if http_port is not None:
            click.echo(f"whole files on http://{host}:{http_port}/transcribe and /align", err=True)

    run(stream_model, options, ready=ready, threads=threads)
