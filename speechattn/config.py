"""Checking configuration dicts (from checkpoints, recipes, --set) against frozen dataclasses."""

from __future__ import annotations

from dataclasses import MISSING, fields

from speechattn.errors import ConfigError


def checked_fields(cls, values: dict, source: str, prefix: str = "", what: str = "model setting") -> dict:
    """Check the keys and value types of `values` against the defaults of dataclass `cls`.

    Fields without a plain default (nested dataclasses) are the caller's to check.  A default of
    None accepts a string (paths and optional names).
    """
    defaults = {f.name: f.default for f in fields(cls) if f.default is not MISSING}
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise ConfigError(f"{source}: unknown {what}(s): {', '.join(prefix + key for key in unknown)}")
    checked = {}
    for key, value in values.items():
        default = defaults[key]
        if isinstance(default, tuple):
            element = type(default[0]) if default else int  # lists hold what the default holds
            accepted = (int, float) if element is float else element
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, accepted) and not isinstance(v, bool) for v in value
            ):
                kind = {int: "integers", float: "numbers", str: "strings"}.get(element, element.__name__)
                raise ConfigError(f"{source}: {prefix}{key} must be a list of {kind}, not {value!r}")
            value = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: {prefix}{key} must be true or false, not {value!r}")
        elif isinstance(default, (int, float)):
            if isinstance(default, float) and isinstance(value, str):
                try:  # YAML 1.1 reads 3e-3 (no dot) as a string
                    value = float(value)
                except ValueError:
                    pass
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not numeric or (isinstance(default, int) and not isinstance(value, int)):
                kind = "an integer" if isinstance(default, int) else "a number"
                raise ConfigError(f"{source}: {prefix}{key} must be {kind}, not {value!r}")
        elif default is None:
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{source}: {prefix}{key} must be a string, not {value!r}")
        elif not isinstance(value, type(default)):
            raise ConfigError(f"{source}: {prefix}{key} must be a {type(default).__name__}, not {value!r}")
        checked[key] = value
    return checked
