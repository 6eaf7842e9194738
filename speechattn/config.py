"""Checking configuration dicts (from checkpoints, recipes, --set) against frozen dataclasses."""

from __future__ import annotations

import math
import types
import typing
from dataclasses import MISSING, fields

from speechattn.errors import ConfigError


def checked_fields(cls, values: dict, source: str, prefix: str = "", what: str = "model setting") -> dict:
    """Check the keys and value types of `values` against the type annotations of dataclass `cls`.

    Fields without a plain default (nested dataclasses) are the caller's to check.  `tuple[int, ...]` takes a
    list of integers, `tuple[float, ...]` a list of numbers (integers too), `tuple[str, ...]` of strings; `float`
    takes an integer too; `str | None` takes a string or null.
    """
    hints = typing.get_type_hints(cls)
    defaults = {f.name: f.default for f in fields(cls) if f.default is not MISSING}
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise ConfigError(f"{source}: unknown {what}(s): {', '.join(prefix + key for key in unknown)}")
    return {key: _checked(value, hints[key], f"{source}: {prefix}{key}") for key, value in values.items()}


def _is(value, kind) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


KIND_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
PLURALS = {int: "integers", float: "numbers", str: "strings", bool: "true/false values"}


def _checked(value, annotation, where: str):
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    if options:  # X | None
        if value is None and type(None) in options:
            return None
        annotation = next(o for o in options if o is not type(None))
    if typing.get_origin(annotation) is tuple or annotation is tuple:
        arguments = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        element = arguments[0] if arguments else object
        if not isinstance(value, (list, tuple)) or not all(_is(v, element) for v in value):
            kind = PLURALS.get(element, getattr(element, "__name__", "values"))
            raise ConfigError(f"{where} must be a list of {kind}, not {value!r}")
        fixed = typing.get_args(annotation)
        if fixed and Ellipsis not in fixed and len(value) != len(fixed):
            raise ConfigError(f"{where} must be a list of {len(fixed)} {PLURALS.get(element, 'values')}, not {value!r}")
        return tuple(float(v) if element is float else v for v in value)
    if annotation is float and isinstance(value, str):
        try:  # YAML 1.1 reads 3e-3 (no dot) as a string
            value = float(value)
        except ValueError:
            pass
    if annotation in KIND_NAMES:
        if not _is(value, annotation):
            raise ConfigError(f"{where} must be {KIND_NAMES[annotation]}, not {value!r}")
        if annotation is float:
            value = float(value)
            if not math.isfinite(value):
                raise ConfigError(f"{where} must be a finite number, not {value!r}")
        return value
    if isinstance(annotation, type) and not isinstance(value, annotation):
        raise ConfigError(f"{where} must be a {annotation.__name__}, not {value!r}")
    return value
