"""Rhubarb Lip Sync's run over speechattn's phones: what `speechattn-rhubarb` does once its command line is read.

Rhubarb's integrations (After Effects, Spine, the Blender add-on, Moho/OpenToonz via .dat, game pipelines) run the
`rhubarb` executable and read its files and its stderr.  This module keeps Rhubarb 1.14's contract, taken from its
sources (github.com/DanielSWolf/rhubarb-lip-sync, v1.14.0):

    rhubarb/src/rhubarb/main.cpp                 the order of a run: sinks, checks, start, animation, export, success;
                                                 "Error processing file X." around whatever failed inside
    rhubarb/src/rhubarb/semanticEntries.cpp      the start, progress, success and failure entries and their messages
    rhubarb/src/rhubarb/sinks/*StderrSink.cpp    stderr: nice (a progress bar), quiet, machine-readable (a JSON line
                                                 per event, flushed)
    rhubarb/src/logging/formatters.cpp           "[Level] message"; the log file's "[date time] thread [Level] message"
    rhubarb/src/tools/textFiles.cpp              the dialog file's errors
    rhubarb/src/exporters/*.cpp                  the files: speechattn.runtime.transcribe's as_rhubarb_* writers

What differs: the phones come from speechattn's model (-r phonetic, Rhubarb's recognizer for speech not in English,
takes the multilingual model; pocketSphinx the English files model), the dialog
text is aligned to the audio as `transcribe --dialog` aligns it (phones_for), any audio format transcribe reads is
taken (Rhubarb: .wav and .ogg), and one option is speechattn's own: --language LANG, the dialog's words through
espeak-ng as `align --language` takes them (Rhubarb's dialog is English; its phonetic recognizer ignores the dialog); a
WebVTT dialog file is read as its cues' words, in the language of its `Language:` header.  Progress is reported as the model works through the audio, a twentieth of the
recording at a time (progress_block_seconds), where Rhubarb reports its voice detection's frames and then each
utterance recognised; the machine-readable sink passes on each whole percent once, as Rhubarb's does.

Nothing on the command line makes a run read without end, wait without end or overwrite what it reads: the dialog
file is read bounded (a device or a pipe refused), an input pipe is waited for as transcribe waits for one, --threads
is bounded as speechattn's, and -o and --logFile are checked by the command line's own output checks (the `check_output`
run takes) before anything is written.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, TextIO

from speechattn.runtime.transcribe import (BLOCK_SECONDS, DAT_FRAME_RATES, RhubarbOptions, Transcript, file_phases,
                                           transcribe_file)

APP_NAME = "Rhubarb Lip Sync"
RHUBARB_VERSION = "1.14.0"  # the command line kept; the After Effects script wants 1.x with x >= 9
LEVELS = ("Trace", "Debug", "Info", "Warn", "Error", "Fatal")  # logging/Level.cpp, lowest first
EXPORT_FORMATS = {"tsv": "rhubarb-tsv", "xml": "rhubarb-xml", "json": "rhubarb-json", "dat": "rhubarb-dat"}
MAX_THREADS = 256  # --threads at most, as `speechattn transcribe --threads` (cli/common.py's threads_option)
PROGRESS_STEPS = 20  # a progress report per twentieth of the audio: every 5 %, where Rhubarb's come about every 10 %
MIN_BLOCK_SECONDS = 0.25  # a graph call at least per block: on a minute of audio 0.25 s blocks took 40-55 % longer than
# 5 s ones, 0.6 s blocks (a report a percent) 10-20 %; 3 s blocks (every 5 %) cost next to nothing; the phones are equal
CheckOutput = Callable[[str, str], None]  # (option, path): raises SpeechattnError when the path must not be written


class RhubarbError(Exception):
    """A failure as Rhubarb words it: its message, lines of nested causes outermost first."""


@dataclass(frozen=True)
class Entry:
    """One log entry; `event` marks Rhubarb's semantic entries, which the stderr sinks show their own way."""

    level: str  # one of LEVELS
    message: str
    event: str = "log"  # start, progress, success, failure; log for the rest
    file: str = ""  # start: the input file as given
    progress: float = 0.0  # progress: 0 to 1
    reason: str = ""  # failure
    time: float = field(default_factory=time.time)


def start_entry(path: str) -> Entry:
    return Entry("Info", f"Application startup. Input file: {path}.", "start", file=path)


def progress_entry(value: float) -> Entry:
    return Entry("Trace", f"Progress: {int(value * 100)}%", "progress", progress=value)


def success_entry() -> Entry:
    return Entry("Info", "Application terminating normally.", "success")


def failure_entry(reason: str) -> Entry:
    return Entry("Fatal", f"Application terminating with error: {reason}", "failure", reason=reason)


def at_least(level: str, minimum: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(minimum)


def escape_json_string(text: str) -> str:
    """Rhubarb's escapeJsonString (tools/stringTools.cpp): per UTF-16 unit; below 0x20 and from 0x80 as \\uxxxx."""
    named = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    units = text.encode("utf-16-le", "surrogatepass")
    out = []
    for i in range(0, len(units), 2):
        unit = int.from_bytes(units[i:i + 2], "little")
        char = chr(unit) if unit < 0x80 else ""
        out.append(named.get(char) or (char if 0x20 <= unit < 0x80 else f"\\u{unit:04x}"))
    return "".join(out)


class MachineReadableSink:
    """--machineReadable (sinks/MachineReadableStderrSink.cpp): a JSON object per line, flushed; progress only when
    its whole percent grows; plain log entries from `minimum` up."""

    def __init__(self, minimum: str, stream: TextIO) -> None:
        self.minimum, self.stream, self.last_percent = minimum, stream, -1

    def receive(self, entry: Entry) -> None:
        log = f'"log": {{ "level": "{entry.level}", "message": "{escape_json_string(entry.message)}" }}'
        if entry.event == "start":
            line = f'{{ "type": "start", "file": "{escape_json_string(entry.file)}", {log} }}'
        elif entry.event == "progress":
            percent = int(entry.progress * 100)
            if percent <= self.last_percent:
                return
            self.last_percent = percent
            line = f'{{ "type": "progress", "value": {entry.progress:.2f}, {log} }}'
        elif entry.event == "success":
            line = f'{{ "type": "success", {log} }}'
        elif entry.event == "failure":
            line = f'{{ "type": "failure", "reason": "{escape_json_string(entry.reason)}", {log} }}'
        elif at_least(entry.level, self.minimum):
            line = f'{{ "type": "log", {log} }}'
        else:
            return
        self.stream.write(line + "\n")
        self.stream.flush()  # an integration reads each line as it comes


class ProgressBar:
    """Rhubarb's bar (tools/ProgressBar.cpp): "[####----------------]  20% " redrawn in place with backspaces; here
    redrawn when progress is reported (Rhubarb's thread redraws it 8 times a second with a spinner)."""

    BLOCKS = 20

    def __init__(self, stream: TextIO, progress: float = 0.0) -> None:
        self.stream, self.text = stream, ""
        self.report(progress)

    def report(self, value: float) -> None:
        self.progress = 0.0 if value != value else min(1.0, max(0.0, value))
        blocks = int(self.progress * self.BLOCKS)
        text = f"[{'#' * blocks}{'-' * (self.BLOCKS - blocks)}] {int(self.progress * 100 + 0.0001):3}% "
        common = 0
        while common < min(len(text), len(self.text)) and text[common] == self.text[common]:
            common += 1
        overlap = len(self.text) - len(text)
        self.stream.write("\b" * (len(self.text) - common) + text[common:] + (" " * overlap + "\b" * overlap
                                                                                if overlap > 0 else ""))
        self.stream.flush()
        self.text = text


class NiceSink:
    """The default stderr (sinks/NiceStderrSink.cpp): "Generating lip sync data for X.", a progress bar, "Done.";
    plain log entries from `minimum` up, as "[Level] message", interrupting the bar."""

    def __init__(self, minimum: str, stream: TextIO) -> None:
        self.minimum, self.stream, self.bar, self.progress = minimum, stream, None, 0.0

    def receive(self, entry: Entry) -> None:
        if entry.event == "start":
            self.stream.write(f"Generating lip sync data for {entry.file}.\n" + "Progress: ")
            self.bar = ProgressBar(self.stream)
        elif entry.event == "progress":
            self.progress = entry.progress
            if self.bar is not None:
                self.bar.report(entry.progress)
        elif entry.event == "success":
            self.bar = None
            self.stream.write("\nDone.\n")
        elif at_least(entry.level, self.minimum):
            interrupted = self.bar is not None
            if interrupted:
                self.stream.write("\n")
            self.stream.write(f"[{entry.level}] {entry.message}\n")
            if interrupted:
                self.stream.write("Progress (cont'd): ")
                self.bar = ProgressBar(self.stream, self.progress)
        self.stream.flush()


class QuietSink:
    """-q (sinks/QuietStderrSink.cpp): only entries from `minimum` up, the first one after a line naming the file."""

    def __init__(self, minimum: str, stream: TextIO) -> None:
        self.minimum, self.stream, self.file, self.quiet_so_far = minimum, stream, None, True

    def receive(self, entry: Entry) -> None:
        if entry.event == "start":
            self.file = entry.file
        if not at_least(entry.level, self.minimum):
            return
        if self.quiet_so_far:
            self.stream.write(f"{APP_NAME} {RHUBARB_VERSION} processing file {self.file}:\n" if self.file is not None
                              else f"{APP_NAME} {RHUBARB_VERSION}:\n")
            self.quiet_so_far = False
        self.stream.write(f"[{entry.level}] {entry.message}\n")
        self.stream.flush()


class FileSink:
    """--logFile (logging/formatters.cpp, SimpleFileFormatter): "[YYYY-MM-DD hh:mm:ss] 1 [Level] message" from
    --logLevel up, each line flushed.  Rhubarb numbers its threads; every entry here comes from the main one.  A
    write that fails (a full disk) is the run's failure, reported on the console only: the sink closes itself."""

    def __init__(self, path: str, minimum: str) -> None:
        try:
            self.handle = open(path, "w", encoding="utf-8")  # created at once, as Rhubarb's: an empty log is news too
        except OSError as error:
            raise RhubarbError(f"Could not open log file {path}.\n{error.strerror or error}") from None
        self.path, self.minimum = path, minimum
        self.failure: str | None = None  # why a write failed: the run fails with it

    def receive(self, entry: Entry) -> None:
        if self.handle is not None and at_least(entry.level, self.minimum):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.time))
            try:
                self.handle.write(f"[{stamp}] 1 [{entry.level}] {entry.message}\n")
                self.handle.flush()
            except OSError as error:
                self.close()
                self.failure = f"Could not write log file {self.path}: {error.strerror or error}"
                raise RhubarbError(self.failure) from None

    def close(self) -> None:
        """Closes the file; what could not be written then (a full disk) was reported when it was written."""
        handle, self.handle = self.handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError:
                pass


class Log:
    """The sinks every entry goes to (Rhubarb's logging::addSink / logging::log)."""

    def __init__(self, *sinks) -> None:
        self.sinks = list(sinks)

    def __call__(self, entry: Entry) -> None:
        for sink in self.sinks:
            sink.receive(entry)

    def say(self, level: str, message: str) -> None:
        self(Entry(level, message))


class PythonLogBridge(logging.Handler):
    """What speechattn's own modules log (a clipped file, a short header) becomes a Rhubarb log entry, so stderr
    carries nothing an integration cannot parse."""

    LEVEL = {logging.DEBUG: "Debug", logging.INFO: "Info", logging.WARNING: "Warn", logging.ERROR: "Error",
             logging.CRITICAL: "Fatal"}

    def __init__(self, log: Log) -> None:
        super().__init__(logging.INFO)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.log.say(self.LEVEL.get(record.levelno, "Warn"), record.getMessage())
        except RhubarbError:  # the log file's write failed; the sink keeps why, and the run fails with it after
            pass


@dataclass(frozen=True)
class Request:
    """A Rhubarb command line, read (speechattn.cli.rhubarb)."""

    input_file: str
    output_file: str | None = None
    export_format: str = "tsv"  # a key of EXPORT_FORMATS
    dialog_file: str | None = None
    language: str | None = None  # --language, speechattn's own: the dialog's words through espeak-ng
    extended_shapes: str = "GHX"
    dat_frame_rate: float = 24.0
    dat_preston_blair: bool = False
    recognizer: str = "pocketSphinx"  # phonetic: the multilingual model (no dialog); pocketSphinx: the English one
    threads: int | None = None  # None: all cores (Rhubarb's default too)
    quiet: bool = False
    machine_readable: bool = False
    console_level: str = "Error"
    log_file: str | None = None
    log_level: str = "Debug"
    command_line: tuple[str, ...] = ()  # every argument, the program's own name first (logged at Debug)


def console_sink(request: Request, stream: TextIO):
    if request.quiet:
        return QuietSink(request.console_level, stream)
    if request.machine_readable:
        return MachineReadableSink(request.console_level, stream)
    return NiceSink(request.console_level, stream)


def read_dialog(path: str) -> str:
    """The dialog file's text, or Rhubarb's error for it (tools/textFiles.cpp); read as `transcribe --dialog` reads
    one: at most MAX_TEXT_BYTES, a device (/dev/zero) or a pipe (a FIFO nobody writes to) refused."""
    from speechattn.errors import SpeechattnError
    from speechattn.files import read_bounded
    from speechattn.runtime.align import MAX_TEXT_BYTES

    if not os.path.exists(path):
        raise RhubarbError(f"File {path} does not exist.")
    try:
        data = read_bounded(path, "dialog", MAX_TEXT_BYTES)
    except SpeechattnError as error:
        raise RhubarbError(f"Error reading file {path}.\n{error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RhubarbError(f"Error reading file {path}.\nFile encoding is not ASCII or UTF-8.") from None


def phones_for(model, audio: Path, dialog: str | None, log: Log,
               on_progress: Callable[[float], None] | None = None, lexicon=None) -> Transcript:
    """The phones of one recording, which Rhubarb's mouth cues are made from: with a dialog text (Rhubarb's
    --dialogFile), the text aligned to the audio (`transcribe --dialog`: the recognised phones where the speech
    departs from it); without one, or with nothing speakable in it, the phones recognised from the audio alone.
    on_progress(fraction of the audio done) as the model works through it (progress_block_seconds)."""
    from speechattn.runtime.align import offline_chunk
    from speechattn_export.pipeline import DecodingOptions

    block_seconds = progress_block_seconds(audio)
    options = DecodingOptions(chunk_frames=offline_chunk(model))  # a file: the largest chunk, as transcribe
    if dialog is not None and dialog.strip():
        from speechattn.runtime.align import TextError, dialog_mismatch, dialog_transcript, script_words
        from speechattn_export.words import Lexicon

        try:
            words, starts = script_words(dialog, "the dialog file", lexicon or Lexicon.load())
        except TextError as error:
            log.say("Warn", f"{error}; recognizing the phones from the audio alone.")
        else:
            transcript, aligned = dialog_transcript(model, audio, words, starts, options,
                                                    on_progress=on_progress, block_seconds=block_seconds)
            if mismatch := dialog_mismatch(aligned):
                log.say("Warn", f"{mismatch[0].upper()}{mismatch[1:]}.")
                return transcript
            log.say("Info", f"Dialog: {len(words) - len(aligned.not_heard)} of {len(words)} words aligned.")
            if aligned.not_heard:
                log.say("Warn", f"Not heard in the recording: {' '.join(aligned.not_heard)}.")
            return transcript
    return transcribe_file(model, audio, options, on_progress=on_progress, block_seconds=block_seconds,
                           phases=file_phases(model))  # two phases, as `transcribe` reads a file


def progress_block_seconds(audio: Path) -> float:
    """The audio handed to the model between two progress reports: a PROGRESS_STEPS-th of the recording, from
    MIN_BLOCK_SECONDS (a pipe, whose length is known only once read, gets that) to transcribe's BLOCK_SECONDS."""
    import soundfile

    from speechattn.files import special_kind

    seconds = None
    if special_kind(audio) is None:  # soundfile would read a pipe away
        try:
            seconds = soundfile.info(str(audio)).duration
        except Exception:  # a format only FFmpeg reads, or no audio at all: the reading says which, later
            seconds = None
    if not seconds or seconds != seconds:
        return MIN_BLOCK_SECONDS
    return min(BLOCK_SECONDS, max(MIN_BLOCK_SECONDS, seconds / PROGRESS_STEPS))


PHONETIC_MODEL = "multilingual"  # -r phonetic: Rhubarb's recognizer for recordings in any language


def load_model(threads: int | None, log: Log, dialog: bool = False, phonetic: bool = False):
    """The bundled files' model (file-int8); with -r phonetic and no dialog the multilingual model (what Rhubarb's
    phonetic recognizer is for: recordings not in English); with a dialog the default (what alignment runs on); or
    why not (as a RhubarbError)."""
    from speechattn.errors import SpeechattnError
    from speechattn.runtime.transcribe import model_identity, resolve_model
    from speechattn_export.registry import files_name
    from speechattn_export.stream_client import StreamingModel
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)  # its warnings would reach stderr, which integrations parse line by line
    try:
        path = resolve_model(None if dialog else PHONETIC_MODEL if phonetic else files_name())
        model = StreamingModel(path, num_threads=threads)
    except (SpeechattnError, ValueError, OSError) as error:
        raise RhubarbError(f"Could not load speechattn's phone model.\n{error}") from None
    log.say("Debug", f"Model: {path.name}, sha256 {model_identity(str(path))['sha256']}.")
    return model


def open_sound_file(path: str) -> None:
    """Rhubarb's first check of the audio (tools/fileTools.cpp, openFile): readable at all, else the system's words.
    A device or a pipe is left to transcribe's reading, which refuses a device and waits for a pipe's first bytes
    PIPE_WAIT_SECONDS at most (an open here would wait for a FIFO's writer for ever)."""
    from speechattn.files import special_kind

    if special_kind(path) is not None:
        return
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise RhubarbError(f"Could not open sound file {path}.\n{error.strerror or error}") from None


def absolute(path: str) -> str:
    """std::filesystem::absolute: the working directory joined in front, nothing normalised (Rhubarb's soundFile)."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def animate_and_export(request: Request, options: RhubarbOptions, log: Log, stdout: TextIO,
                       check_output: CheckOutput | None = None) -> None:
    """The inner part of Rhubarb's run, whose failures it reports as "Error processing file X." and their cause."""
    from speechattn import __version__
    from speechattn.audio import AudioError
    from speechattn.errors import SpeechattnError, one_line
    from speechattn.files import atomic_write_text
    from speechattn.runtime.formats import render

    log.say("Info", "Starting animation.")
    if request.output_file is not None and check_output is not None:
        try:  # before the work: an input named as the output, "victim.wav/", a folder that is not there
            check_output("-o", request.output_file)
        except SpeechattnError as error:
            raise RhubarbError(f"Could not write output file {request.output_file}.\n{one_line(error)}") from None
    dialog = read_dialog(request.dialog_file) if request.dialog_file is not None else None
    lexicon, language = None, request.language
    try:  # an unknown language, espeak-ng missing: Rhubarb's failure, before the work
        from speechattn.runtime.align import load_lexicon, script_and_language

        if dialog is not None:  # a WebVTT dialog: its cues' words, in its Language header's language
            dialog, language = script_and_language(dialog, request.dialog_file, language)
        if language is not None:
            lexicon = load_lexicon(None, language)
    except SpeechattnError as error:
        raise RhubarbError(one_line(error)) from None
    has_dialog = dialog is not None and bool(dialog.strip())
    phonetic = request.recognizer.lower() == "phonetic"
    log.say("Info", f"Recognizer: speechattn {__version__}'s phone model"
                    + (" for a dialog (-r phonetic takes the multilingual model without one)." if has_dialog
                       else ", multilingual (-r phonetic: speech in any language)." if phonetic
                       else ", English (-r phonetic takes the multilingual model, for speech in any language)."))
    model = load_model(request.threads, log, dialog=has_dialog, phonetic=phonetic)
    open_sound_file(request.input_file)
    log(progress_entry(0.0))
    try:
        transcript = phones_for(model, Path(request.input_file), dialog, log,
                                on_progress=lambda fraction: log(progress_entry(fraction)), lexicon=lexicon)
    except (AudioError, ValueError) as error:  # ValueError: what the client refuses to stream
        message = str(error)
        message = message[len(request.input_file) + 2:] if message.startswith(f"{request.input_file}: ") else message
        raise RhubarbError(f"Could not open sound file {request.input_file}.\n{message}") from None
    log(progress_entry(1.0))
    log.say("Info", "Done animating.")
    transcript = replace(transcript, file=absolute(request.input_file))
    log.say("Info", "Starting export.")
    text = render(EXPORT_FORMATS[request.export_format], transcript, options)
    if request.output_file is None:
        try:
            stdout.write(text)
            stdout.flush()  # before "success": an integration reads the result then
        except OSError as error:  # a closed pipe, a full disk behind ">"
            discard_output(stdout)
            raise RhubarbError(f"Could not write to standard output: {error.strerror or error}") from None
    else:
        try:
            atomic_write_text(request.output_file, text)
        except Exception as error:  # SpeechattnError: cannot write, disk full
            raise RhubarbError(f"Could not write output file {request.output_file}.\n{error}") from None
    log.say("Info", "Done exporting.")


def discard_output(stdout: TextIO) -> None:
    """Standard output that failed points at /dev/null from now on, so the text left in its buffer does not fail
    again at exit, as a second message and a traceback."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # not a file descriptor (a StringIO): nothing to fail at exit
        pass


def run(request: Request, stdout: TextIO | None = None, stderr: TextIO | None = None,
        check_output: CheckOutput | None = None) -> int:
    """One Rhubarb run after its command line is read (main.cpp from the sinks on): 0, or 1 after a failure entry.
    check_output(option, path) is asked about --logFile before it is opened and about -o before the work; it raises
    SpeechattnError for a path that must not be written (speechattn.cli.rhubarb passes the command line's checks)."""
    from speechattn.errors import SpeechattnError, one_line

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    log = Log(console_sink(request, stderr))
    bridge = PythonLogBridge(log)
    root = logging.getLogger()
    level = root.level
    root.addHandler(bridge)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    try:
        try:
            if request.log_file is not None:
                if check_output is not None:
                    try:
                        check_output("--logFile", request.log_file)
                    except SpeechattnError as error:
                        raise RhubarbError(one_line(error)) from None
                log.sinks.append(FileSink(request.log_file, request.log_level))
            if request.threads is not None and request.threads < 1:
                raise RhubarbError("Thread count must be 1 or higher.")
            if request.threads is not None and request.threads > MAX_THREADS:
                raise RhubarbError(f"Thread count must be {MAX_THREADS} or lower.")
            if request.output_file is None and stdout is None:
                raise RhubarbError("Standard output is closed, so the result has nowhere to go; give -o FILE.")
            options = RhubarbOptions(request.extended_shapes, request.dat_frame_rate, request.dat_preston_blair)
            low, high = DAT_FRAME_RATES
            if request.export_format == "dat" and not low <= request.dat_frame_rate <= high:
                raise RhubarbError(f"Frame rate must be between {low:g} and {high:g} fps.")
        except ValueError as error:  # RhubarbOptions: a letter that names no shape
            raise RhubarbError(str(error)) from None
        log(start_entry(request.input_file))
        log.say("Debug", "Command line: " + " ".join(f'"{argument}"' for argument in request.command_line))
        try:
            animate_and_export(request, options, log, stdout, check_output)
            for sink in log.sinks:
                if isinstance(sink, FileSink) and sink.failure is not None:  # found by a log entry from below
                    raise RhubarbError(sink.failure)
        except RhubarbError as error:
            raise RhubarbError(f"Error processing file {request.input_file}.\n{error}") from None
        except Exception as error:  # a bug: reported as Rhubarb reports any failure, so integrations show it
            if os.environ.get("SPEECHATTN_DEBUG", "") not in ("", "0"):
                raise
            raise RhubarbError(f"Error processing file {request.input_file}.\n{type(error).__name__}: {error} "
                               "(a bug in speechattn; SPEECHATTN_DEBUG=1 shows the traceback)") from None
        log(success_entry())
        return 0
    except RhubarbError as error:
        log(failure_entry(str(error)))
        return 1
    finally:
        root.removeHandler(bridge)
        root.setLevel(level)
        logging.captureWarnings(False)
        for sink in log.sinks:
            if isinstance(sink, FileSink):
                sink.close()
