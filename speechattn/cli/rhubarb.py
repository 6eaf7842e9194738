"""`speechattn-rhubarb`: Rhubarb Lip Sync 1.14's command line, so that Rhubarb's integrations run speechattn.

    speechattn-rhubarb [-o FILE] [-f tsv|xml|json|dat] [-d DIALOG] [--extendedShapes GHX] [--machineReadable] ... AUDIO

The arguments are read as Rhubarb reads them: TCLAP 1.2.1 set up by rhubarb/src/rhubarb/main.cpp (Rhubarb's
rhubarb/lib/tclap-1.2.1), help and errors laid out by its tools/NiceCmdLineOutput.cpp and tools/TablePrinter.cpp.
Not click: an integration's arguments must mean here what they mean to Rhubarb, and a mistake must read as Rhubarb's
and exit 1, where click's parser takes "--" for itself, words its own errors and exits 2.  TCLAP's rules, kept:

  - each argument is offered to the options in TCLAP's list order (main.cpp's declarations reversed, then --,
    --version, -h), the input file last: so an unknown "-x" before the file is taken as the file (and the error
    names "-x", where Rhubarb names the file that then matches nothing);
  - a value follows its option as the next argument ("-o out.tsv", or "-o out.tsv" as one argument with a space;
    "--output=out.tsv" is not an option); "-qh" sets both switches; "--" makes the rest no options;
  - numbers are read as C++ streams read them (one number, nothing after it); a name not of an option's values
    (-f, -r, --consoleLevel/--logLevel, in either case) is not a usage error but a failure, as in Rhubarb.

Exit status 0, or 1 (a mistake on the command line, or a failed run); Rhubarb has no other.  The run itself:
speechattn.runtime.rhubarb, with -o and --logFile checked as every speechattn command checks what it writes
(check_output).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

BLANK = "\a"  # what TCLAP writes over a switch it has taken out of a combined "-qh"
WHITE_SPACE = " \t\n\v\f\r"  # what a C++ stream skips before a value


@dataclass(frozen=True)
class Arg:
    """One of Rhubarb's arguments as TCLAP holds it."""

    name: str  # --NAME
    flag: str  # -F: one character, or ""
    description: str
    kind: str  # switch, string, int, double, or an enumeration's type name (ExportFormat, RecognizerType, Level)
    values: tuple[str, ...] = ()  # an enumeration's names, as Rhubarb writes them
    type_desc: str = ""  # the value's word in the usage: string, number, or the values joined by |
    default: object = None
    unlabeled: bool = False  # the input file: any argument no option took

    def id(self) -> str:  # Arg::toString, the id of an argument's errors
        return (f"-{self.flag} " if self.flag else "") + f"(--{self.name})"

    def short_id(self) -> str:
        if self.unlabeled:
            return f"<{self.type_desc}>"
        text = f"-{self.flag}" if self.flag else f"--{self.name}"
        return "[" + (text + f" <{self.type_desc}>" if self.kind != "switch" else text) + "]"

    def long_id(self) -> str:
        if self.unlabeled:
            return f"<{self.type_desc}>"
        value = f" <{self.type_desc}>" if self.kind != "switch" else ""
        return (f"-{self.flag}{value},  " if self.flag else "") + f"--{self.name}{value}"


LEVEL_NAMES = ("Trace", "Debug", "Info", "Warn", "Error", "Fatal")
EXPORT_FORMAT_NAMES = ("dat", "tsv", "xml", "json")
RECOGNIZER_NAMES = ("pocketSphinx", "phonetic")

# TCLAP's list: each labeled argument is put at the front as main.cpp declares it, so they come in reverse; the
# built-in --, --version and -h were there first; the unlabeled input file is put at the back.
ARGS = (
    Arg("recognizer", "r", "The dialog recognizer.", "RecognizerType", RECOGNIZER_NAMES, "|".join(RECOGNIZER_NAMES),
        "pocketSphinx"),
    Arg("exportFormat", "f", "The export format.", "ExportFormat", EXPORT_FORMAT_NAMES, "|".join(EXPORT_FORMAT_NAMES),
        "tsv"),
    Arg("datFrameRate", "", "Only for dat exporter: the desired frame rate.", "double", type_desc="number",
        default=24.0),
    Arg("datUsePrestonBlair", "", "Only for dat exporter: uses the Preston Blair mouth shape names.", "switch"),
    Arg("dialogFile", "d", "A file containing the text of the dialog.", "string", type_desc="string"),
    Arg("language", "", "Not Rhubarb's: the dialog's language, an espeak-ng voice (es, fr, de ...); if not given, a "
        "WebVTT dialog's Language header, else English.", "string", type_desc="string"),
    Arg("extendedShapes", "", "All extended, optional shapes to use.", "string", type_desc="string", default="GHX"),
    Arg("threads", "", "The maximum number of worker threads to use.", "int", type_desc="number"),
    Arg("quiet", "q", "Suppresses all output to stderr except for warnings and error messages.", "switch"),
    Arg("machineReadable", "", "Formats all output to stderr in a structured JSON format.", "switch"),
    Arg("consoleLevel", "", "The minimum log level that will be printed on the console (stderr)", "Level", LEVEL_NAMES,
        "|".join(LEVEL_NAMES), "Error"),
    Arg("logFile", "", "The log file path.", "string", type_desc="string"),
    Arg("logLevel", "", "The minimum log level that will be written to the log file", "Level", LEVEL_NAMES,
        "|".join(LEVEL_NAMES), "Debug"),
    Arg("output", "o", "The output file path.", "string", type_desc="string"),
    Arg("ignore_rest", "-", "Ignores the rest of the labeled arguments following this flag.", "switch"),
    Arg("version", "", "Displays version information and exits.", "switch"),
    Arg("help", "h", "Displays usage information and exits.", "switch"),
    Arg("inputFile", "", "The input file. Must be a sound file in WAVE format.", "string", type_desc="string",
        unlabeled=True),
)
LEVEL_ALIASES = {"warning": "Warn"}  # Rhubarb's README offers "warning"; its parser knows only "warn"


class ArgError(Exception):
    """TCLAP's ArgException: a usage mistake, shown with the short usage."""

    def __init__(self, error: str, arg_id: str = "undefined") -> None:
        super().__init__(error)
        self.error, self.arg_id = error, arg_id


class NotAValue(Exception):
    """A name that is none of an enumeration's values: Rhubarb's EnumConverter throws past TCLAP, a failure."""


class HelpShown(Exception):
    """--help or --version was printed (TCLAP's ExitException)."""


def read_numbers(arg: Arg, text: str):
    """TCLAP's ExtractValue for a number: `stream >> value` until the stream ends; exactly one number, or the
    default when the text is empty."""
    pattern = re.compile(r"[+-]?\d+" if arg.kind == "int" else r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
    values, position = [], 0
    while position < len(text):
        while position < len(text) and text[position] in WHITE_SPACE:
            position += 1
        match = pattern.match(text, position)
        if match is None or (arg.kind == "int" and not -2**31 <= int(match.group()) < 2**31):
            raise ArgError(f"Couldn't read argument value from string '{text}'", arg.id())
        values.append(int(match.group()) if arg.kind == "int" else float(match.group()))
        position = match.end()
    if len(values) > 1:
        raise ArgError(f"More than one valid value parsed from string '{text}'", arg.id())
    return values[0] if values else arg.default


def read_names(arg: Arg, text: str) -> str:
    """TCLAP's ExtractValue for an enumeration: words read one by one, each looked up in either case."""
    names = {name.lower(): name for name in arg.values}
    if arg.kind == "Level":
        names.update(LEVEL_ALIASES)
    values, position = [], 0
    while position < len(text):
        while position < len(text) and text[position] in WHITE_SPACE:
            position += 1
        start = position
        while position < len(text) and text[position] not in WHITE_SPACE:
            position += 1
        word = text[start:position]
        if word.lower() not in names:
            raise NotAValue(f"{word} is not a valid {arg.kind} value.")
        values.append(names[word.lower()])
    if len(values) > 1:
        raise ArgError(f"More than one valid value parsed from string '{text}'", arg.id())
    return values[0] if values else arg.default


def extract(arg: Arg, text: str):
    if arg.kind == "string":
        return text
    if arg.kind in ("int", "double"):
        return read_numbers(arg, text)
    return read_names(arg, text)


def take_combined(arg: Arg, args: list[str], i: int) -> bool:
    """SwitchArg::combinedSwitchesMatch: the switch's letter in a "-qh", written over so it is taken once."""
    word = args[i]
    if (word and word[0] != "-") or word.startswith("--") or " " in word or not arg.flag or arg.flag == "-":
        return False
    at = word.find(arg.flag, 1)
    if at < 0:
        return False
    args[i] = word[:at] + BLANK + word[at + 1:]
    return True


class _Parse:
    """One parse of Rhubarb's arguments, TCLAP's way: every word is offered to every option in ARGS' order."""

    def __init__(self, arguments: list[str], prog: str, out) -> None:
        self.values = {arg.name: arg.default for arg in ARGS if arg.kind != "switch"}
        self.values.update({arg.name: False for arg in ARGS if arg.kind == "switch"})
        self.taken: set[str] = set()
        self.ignoring = False  # after "--": no more options
        self.args, self.prog, self.out = list(arguments), prog, out

    def switch(self, arg: Arg) -> None:
        if arg.name in self.taken:
            raise ArgError("Argument already set!", arg.id())
        self.taken.add(arg.name)
        self.values[arg.name] = True
        if arg.name == "help":
            self.out.write(usage(self.prog))
            raise HelpShown
        if arg.name == "version":
            self.out.write(version_text())
            raise HelpShown
        if arg.name == "ignore_rest":
            self.ignoring = True

    def offer_switch(self, arg: Arg, i: int) -> bool:
        """Whether args[i] is this switch, alone (-h, --help) or combined (-qh); a combined word is blanked as taken."""
        word, args = self.args[i], self.args
        if word == f"--{arg.name}" or (arg.flag and word == f"-{arg.flag}"):
            self.switch(arg)
            return True
        if take_combined(arg, args, i):
            if take_combined(arg, args, i):
                raise ArgError("Argument already set!", arg.id())
            self.switch(arg)
            return all(c == BLANK for c in args[i][1:])
        return False

    def offer_value(self, arg: Arg, i: int) -> int | None:
        """The index of the last word taken when args[i] is this option with its value (one word or two), else None."""
        word = self.args[i]
        if BLANK in word[1:]:
            return None
        name, space, value = word.partition(" ")
        if not space or word.index(" ") <= 1:  # TCLAP splits "-o out.tsv" given as one argument, not "- x"
            name, value = word, ""
        if name != f"--{arg.name}" and not (arg.flag and name == f"-{arg.flag}"):
            return None
        if arg.name in self.taken:
            raise ArgError("Argument already set!", arg.id())
        if value == "":
            i += 1
            if i >= len(self.args):
                raise ArgError("Missing a value for this argument!", arg.id())
            value = self.args[i]
        self.values[arg.name] = extract(arg, value)
        self.taken.add(arg.name)
        return i

    def offer(self, i: int) -> tuple[bool, int]:
        """(matched, the index of the last word taken) for args[i], offered to each option in turn."""
        for arg in ARGS:
            word = self.args[i]
            if arg.unlabeled:
                if arg.name in self.taken or BLANK in word[1:]:
                    continue
                self.values[arg.name] = extract(arg, word)
                self.taken.add(arg.name)
                return True, i
            if self.ignoring:
                continue
            if arg.kind == "switch":
                if self.offer_switch(arg, i):
                    return True, i
                continue
            if (last := self.offer_value(arg, i)) is not None:
                return True, last
        return False, i

    def run(self) -> dict:
        i = 0
        while i < len(self.args):
            matched, i = self.offer(i)
            word = self.args[i] if i < len(self.args) else ""
            if not matched and (not word or word[0] == "-") and all(c == BLANK for c in word[1:]):
                matched = True  # "-", or what is left of a combined switch
            if not matched and not self.ignoring:
                taken_as_file = self.values.get("inputFile") or ""
                if taken_as_file[:1] == "-" and len(taken_as_file) > 1 and word[:1] != "-":
                    # "--bogus a.wav": TCLAP took --bogus as the file and names a.wav; the option is the mistake
                    raise ArgError("Couldn't find match for argument", taken_as_file)
                raise ArgError("Couldn't find match for argument", word)
            i += 1
        if "inputFile" not in self.taken:
            raise ArgError("Required argument missing: inputFile")
        return self.values


def parse(arguments: list[str], prog: str, out) -> dict:
    """Rhubarb's arguments (without the program) -> {name: value} for every option, defaults included."""
    return _Parse(arguments, prog, out).run()


def wrap(text: str, width: int, hanging_indent: int = 2) -> list[str]:
    """Rhubarb's wrapSingleLineString (tools/stringTools.cpp): break at a space or before a |, indent the rest."""
    lines: list[str] = []
    p = line_begin = line_end = 0
    end = len(text)
    while p <= end:
        if p == end or text[p] in " |":
            line_end = p
        indent = hanging_indent if lines else 0
        if p == end or p - line_begin == width - indent:
            if line_end == line_begin:
                line_end = p  # one word longer than the line: cut it
            lines.append(" " * indent + text[line_begin:line_end].rstrip())
            p = line_end
            while p != end and text[p] == " ":
                p += 1
            line_begin = line_end = p
        p += 1
    return lines


def short_usage(prog: str) -> str:
    return prog + " " + "".join(" " + arg.short_id() for arg in ARGS)


def usage(prog: str) -> str:
    """--help, as Rhubarb prints it to stdout: the short usage, then a table of 20 and 56 columns."""
    rows = []
    for arg in ARGS:
        description = ("(required)  " if arg.unlabeled else "") + arg.description
        left, right = wrap(arg.long_id(), 20), wrap(description, 56)
        height = max(len(left), len(right))
        left, right = left + [""] * (height - len(left)), right + [""] * (height - len(right))
        rows += [f"{a:<20}  {b:<56}\n" for a, b in zip(left, right)]
    return f"\nShort usage:\n{short_usage(prog)}\n\nLong usage:\n\n{''.join(rows)}\n"


def version_text() -> str:
    """--version: Rhubarb's line (the After Effects script checks it), then what answers."""
    from speechattn import __version__
    from speechattn.runtime.rhubarb import APP_NAME, RHUBARB_VERSION

    return (f"\n{APP_NAME} version {RHUBARB_VERSION}\n"
            f"(speechattn-rhubarb: speechattn {__version__}'s phone model behind Rhubarb's command line)\n\n")


def failure_text(error: ArgError, prog: str) -> str:
    """A usage mistake, as Rhubarb prints it to stderr (NiceCmdLineOutput::failure)."""
    arg_id = " " if error.arg_id == "undefined" else f"Argument: {error.arg_id}"
    return (f"Invalid command-line arguments. {arg_id}\n{error.error}\n\nShort usage:\n{short_usage(prog)}\n\n"
            f"For complete usage and help, type `{prog} --help`\n\n")


def check_output(request, option: str, path: str) -> None:
    """-o or --logFile, before anything is written there: speechattn's output checks (a name spelled as a folder,
    "victim.wav/", a folder that is not there, read-only), not the input audio or the dialog file, and not the
    other of the two.  Raises SpeechattnError in one line."""
    from speechattn.cli.common import check_writable, refuse_overwriting_inputs, same_file
    from speechattn.errors import UsageError

    check_writable(path)
    refuse_overwriting_inputs({option: path}, [request.input_file, request.dialog_file])
    other_option, other = ("--logFile", request.log_file) if option == "-o" else ("-o", request.output_file)
    if other is not None and (same_file(path, other) or Path(path).resolve() == Path(other).resolve()):
        raise UsageError(f"{option} {path} is also {other_option} ({other}): one would overwrite the other; "
                         "write them apart")


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Entry point of `speechattn-rhubarb` (argv without the program's name; default sys.argv[1:])."""
    from speechattn.cli import ClosedOutput
    from speechattn.runtime.rhubarb import Entry, NiceSink, Request, failure_entry, run

    program = sys.argv[0] if argv is None and sys.argv else (prog or "speechattn-rhubarb")
    arguments = list(sys.argv[1:] if argv is None else argv)
    prog = Path(program).name
    early = NiceSink("Error", sys.stderr)  # until the command line says which sink: errors only, as Rhubarb's
    try:
        try:
            values = parse(arguments, prog, sys.stdout or ClosedOutput())  # None: started with stdout closed (>&-)
        except HelpShown:
            sys.stdout.flush()
            early.receive(Entry("Info", "Exiting application after help-like command."))
            return 0
        except OSError as error:  # --help or --version with standard output closed
            early.receive(failure_entry(f"Could not write to standard output: {error.strerror or error}"))
            return 1
        except ArgError as error:
            sys.stderr.write(failure_text(error, prog))
            early.receive(failure_entry("Invalid command line."))
            return 1
        except NotAValue as error:
            early.receive(failure_entry(str(error)))
            return 1
        request = Request(
            input_file=values["inputFile"], output_file=values["output"],
            export_format=values["exportFormat"], dialog_file=values["dialogFile"], language=values["language"],
            extended_shapes=values["extendedShapes"], dat_frame_rate=values["datFrameRate"],
            dat_preston_blair=values["datUsePrestonBlair"], recognizer=values["recognizer"], threads=values["threads"],
            quiet=values["quiet"], machine_readable=values["machineReadable"], console_level=values["consoleLevel"],
            log_file=values["logFile"], log_level=values["logLevel"], command_line=(program, *arguments))
        return run(request, check_output=lambda option, path: check_output(request, option, path))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
