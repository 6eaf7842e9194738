"""Errors caused by the user's input.  The CLI prints their message in one line, no traceback.

Exit status: a UsageError (the command line or a configuration is wrong) exits 2, as click's own usage errors
do; any other SpeechattnError (the command ran and an input, a file or a device failed it) exits 1."""


class SpeechattnError(Exception):
    """Base of every error whose message is meant for the user: the command ran and failed (exit status 1)."""


class UsageError(SpeechattnError):
    """The command line or configuration is wrong (exit status 2)."""


class ConfigError(UsageError, ValueError):
    """A configuration value that is unknown, of the wrong type or out of range."""


def one_line(message: object) -> str:
    """A message as one line: a newline or carriage return inside it (a file name may hold one) as its escape."""
    return str(message).replace("\r", "\\r").replace("\n", "\\n")
