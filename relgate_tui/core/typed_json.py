"""Typed JSON round trips for frozen result dataclasses: a file is read back as its type, never by key.

:class:`Record` gives a frozen dataclass ``to_json()`` (:func:`relgate_tui.core.jsonsafe.jsonable` of its fields, in
field order) and ``from_json(obj)``, which rebuilds it from its annotations: ``int``, ``float`` (an integer is
accepted), ``str``, ``bool``, ``Literal[...]``, ``X | None``, ``tuple[X, ...]``, ``dict[str, Any]`` and nested
records. Anything else — a missing or extra field, a string where a number belongs, a float that is not finite — is
a :class:`ValueError` naming the field's path (``selective.steps[3].threshold``), one line.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

__all__ = ["Record", "from_plain"]

T = TypeVar("T")


def _fail(path: str, want: str, got: Any) -> ValueError:
    shown = type(got).__name__ if not isinstance(got, (int, float, str)) or isinstance(got, bool) else repr(got)[:40]
    return ValueError(f"{path or 'the document'}: expected {want}, got {shown}")


def from_plain(tp: Any, obj: Any, path: str = "") -> Any:
    """``obj`` (plain JSON) as an instance of the type ``tp`` (module docstring)."""
    origin = get_origin(tp)
    if tp is Any:
        return obj
    if origin in (typing.Union, types.UnionType):
        options = get_args(tp)
        if obj is None and type(None) in options:
            return None
        rest = [o for o in options if o is not type(None)]
        if len(rest) == 1:
            return from_plain(rest[0], obj, path)
        raise TypeError(f"{path}: unions other than X | None are not supported")
    if origin is typing.Literal:
        if obj not in get_args(tp) or isinstance(obj, bool):
            raise _fail(path, " or ".join(map(repr, get_args(tp))), obj)
        return obj
    if origin is tuple:
        args = get_args(tp)
        if not isinstance(obj, list):
            raise _fail(path, "a list", obj)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], v, f"{path}[{i}]") for i, v in enumerate(obj))
        if len(args) != len(obj):
            raise _fail(path, f"a list of {len(args)}", obj)
        return tuple(from_plain(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, obj, strict=True)))
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(obj, dict) or not all(isinstance(k, str) for k in obj):
            raise _fail(path, "an object", obj)
        args = get_args(tp)
        value_type = args[1] if len(args) == 2 else Any
        return {k: from_plain(value_type, v, f"{path}.{k}") for k, v in obj.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record(tp, obj, path)
    if tp is bool:
        if not isinstance(obj, bool):
            raise _fail(path, "true or false", obj)
        return obj
    if tp is int:
        if not isinstance(obj, int) or isinstance(obj, bool):
            raise _fail(path, "an integer", obj)
        return obj
    if tp is float:
        if not isinstance(obj, (int, float)) or isinstance(obj, bool) or not math.isfinite(obj):
            raise _fail(path, "a number", obj)
        return float(obj)
    if tp is str:
        if not isinstance(obj, str):
            raise _fail(path, "a string", obj)
        return obj
    raise TypeError(f"{path}: type {tp!r} is not supported")


def _record(cls: type[T], obj: Any, path: str) -> T:
    if not isinstance(obj, dict):
        raise _fail(path, "an object", obj)
    hints = get_type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    names = {f.name for f in fields}
    extra = sorted(set(obj) - names)
    if extra:
        raise ValueError(f"{path or 'the document'}: unknown field {extra[0]!r}")
    kwargs: dict[str, Any] = {}
    for f in fields:
        where = f"{path}.{f.name}" if path else f.name
        if f.name not in obj:
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                continue
            raise ValueError(f"{where}: missing")
        kwargs[f.name] = from_plain(hints[f.name], obj[f.name], where)
    return cls(**kwargs)


class Record:
    """Mixin for frozen dataclasses: ``to_json`` / ``from_json`` (module docstring)."""

    def to_json(self) -> dict[str, Any]:
        from relgate_tui.core.jsonsafe import jsonable

        return {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_json(cls: type[T], obj: Any) -> T:
        return typing.cast(T, _record(cls, obj, ""))
