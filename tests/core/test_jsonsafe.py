"""The one JSON policy: NaN/±∞ → null, numpy → Python, dataclasses/enums/tuples → plain JSON."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.jsonsafe import dumps, finite_or_none, jsonable


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Inner:
    x: float
    tags: tuple[str, ...]


@dataclass(frozen=True)
class WithToJson:
    a: float

    def to_json(self) -> dict:
        return {"renamed": self.a}


def test_non_finite_numbers_become_null_everywhere():
    doc = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": np.float64("nan"), "d": np.array([1.0, np.inf])}
    assert jsonable(doc) == {"a": None, "b": [None, None, 1.5], "c": None, "d": [1.0, None]}
    assert json.loads(dumps(doc)) == jsonable(doc)


def test_numpy_dataclass_enum_and_to_json():
    doc = {"i": np.int64(3), "flag": np.bool_(True), "inner": Inner(np.float32(0.5), ("x",)), "col": Colour.RED,
           "t": WithToJson(math.inf), 1: "key"}
    assert jsonable(doc) == {"i": 3, "flag": True, "inner": {"x": 0.5, "tags": ["x"]}, "col": "red",
                             "t": {"renamed": None}, "1": "key"}
    assert type(jsonable(np.int64(3))) is int and jsonable(np.bool_(False)) is False


def test_unknown_types_fail_loudly():
    with pytest.raises(TypeError):
        jsonable(object())


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_finite_or_none_law(x):
    y = finite_or_none(x)
    assert (y is None) == (not math.isfinite(x))
    if y is not None:
        assert y == x
    dumps({"x": x})  # never raises: strict JSON always possible
