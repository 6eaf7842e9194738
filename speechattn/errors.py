"""Errors caused by the user's input.  The CLI prints their message in one line, no traceback."""


class SpeechattnError(Exception):
    """Base of every error whose message is meant for the user."""


class ConfigError(SpeechattnError, ValueError):
    """A configuration value that is unknown, of the wrong type or out of range."""
