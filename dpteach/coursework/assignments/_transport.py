"""The transport between the student's kernel and the grader: what ``collect`` returns
travels as JSON text, and the grader rebuilds it as plain data without running anything.

Everything the grader reads here is hostile until proven otherwise, so :func:`loads`

* refuses text longer than :data:`MAX_RESULT_BYTES`;
* scans the text once, in linear time and with NumPy over its bytes (:func:`scan`), for
  how deeply it nests and how many values it holds, before the JSON parser (which
  recurses) sees it: deeper than :data:`MAX_DEPTH` or more than :data:`MAX_VALUES` values
  is refused;
* parses with number hooks that refuse integer and float literals of absurd length;
* rebuilds tagged values (arrays, DataFrames, Series, non-finite floats) only from the
  exact shapes :func:`encode` writes, counting every element against one budget
  (:data:`MAX_ELEMENTS`), capping each string at :data:`MAX_STRING` characters, and
  checking a DataFrame's rows x columns and an array's shape before anything is allocated.

Anything else raises :class:`ResultRefused`, whose message starts "the result is too large
to be data", "the result is nested too deeply to be data" or "the result is not data".

Numeric arrays travel as base64 of their bytes with their dtype and shape (a million
float64 draws are 11 MB, not the 25 MB of their decimal text, and decode at memory speed);
the older list form ``{"__ndarray__": [...], "dtype": "<f8"}`` is still read.
"""

from __future__ import annotations

import base64
import binascii
import json
import math

import numpy as np

__all__ = ["encode", "decode", "dumps", "loads", "scan", "ResultRefused",
           "MAX_RESULT_BYTES", "MAX_DEPTH", "MAX_VALUES", "MAX_ELEMENTS", "MAX_STRING"]

#: the longest result text (characters; the result file is capped at as many bytes). The
#: largest honest result is the Laplace mechanism's (A3 Task 4: 36 probes x 30,000 runs of
#: float64, about 11.5 MB as base64)
MAX_RESULT_BYTES = 16_000_000
#: the deepest nesting of lists and dicts (honest results nest 6 levels or fewer)
MAX_DEPTH = 100
#: JSON values (numbers, strings, lists, dicts, ...) one result may hold
MAX_VALUES = 1_000_000
#: elements one result may decode to: JSON values plus the elements of binary arrays and
#: the cells of DataFrames (honest: at most 1.08 million, the mechanism's draws)
MAX_ELEMENTS = 4_000_000
#: the longest string (characters) outside a binary array
MAX_STRING = 100_000
#: the longest number literal (characters)
_MAX_NUMBER = 400
#: the bytes scanned at a time (bounds the scan's working memory)
_CHUNK = 1 << 20


class ResultRefused(ValueError):
    """A result that is not data of a size and shape the grader will read; the message
    says why."""


def _too_large(what):
    return ResultRefused(f"the result is too large to be data: {what}")


def _not_data(what):
    return ResultRefused(f"the result is not data: {what}")


# ------------------------------------------------------------------ encoding (kernel side)
def encode(obj):
    """``obj`` as JSON-ready plain data (numpy arrays and scalars, DataFrames, Series,
    tuples, dicts with string keys, non-finite floats tagged)."""
    import pandas as pd

    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else {"__float__": repr(x)}
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biuf" and obj.dtype.itemsize <= 8:
            raw = np.ascontiguousarray(obj).tobytes()
            return {"__ndarray__": base64.b64encode(raw).decode("ascii"),
                    "dtype": obj.dtype.str, "shape": list(obj.shape)}
        if obj.dtype.kind not in "biuf":
            return {"__ndarray__": encode(obj.tolist()), "dtype": "object"}
        return {"__ndarray__": encode(obj.tolist()), "dtype": obj.dtype.str}
    if isinstance(obj, pd.DataFrame):
        return {"__dataframe__": {"columns": [str(c) for c in obj.columns],
                                  "index": encode(list(obj.index)),
                                  "data": encode(obj.astype(object).values.tolist())}}
    if isinstance(obj, pd.Series):
        return {"__series__": {"name": None if obj.name is None else str(obj.name),
                               "index": encode(list(obj.index)),
                               "data": encode(obj.astype(object).tolist())}}
    if isinstance(obj, (list, tuple)):
        return [encode(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): encode(v) for k, v in obj.items()}
    return {"__repr__": repr(obj)[:200]}


def dumps(obj) -> str:
    return json.dumps(encode(obj), allow_nan=False)


# ------------------------------------------------------------------ the linear scan
_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1


def scan(text):
    """``(depth, values)`` of the JSON ``text`` in one linear pass over its UTF-8 bytes:
    how deeply arrays and objects nest, and an upper bound on the number of values it
    holds (separators plus containers plus one), both counted outside strings only.

    A quote ends a string unless an odd run of backslashes precedes it; the run lengths
    come from a running maximum of the last non-backslash position, so the cost is a few
    NumPy passes per byte, whatever the text (no regular expression, no recursion). The
    bytes are scanned in chunks of 1 MB carrying (inside a string, the backslash run at
    the chunk's end, the depth) from one chunk to the next. For text that is not JSON the
    counts are exact up to the first byte the parser would reject, which is as far as the
    parser gets."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    data = np.frombuffer(bytes(text), dtype=np.uint8)
    inside, run, depth, deepest, values = False, 0, 0, 0, 1
    for start in range(0, data.size, _CHUNK):
        c = data[start:start + _CHUNK]
        m = c.size
        is_bs = c == _BACKSLASH
        if is_bs.any() or run:
            pos = np.arange(m, dtype=np.int64)
            last = np.maximum.accumulate(np.where(is_bs, -1, pos))
            # backslashes right before byte i: those since the last other byte before i,
            # plus the previous chunk's trailing run when there is none in this chunk
            before = np.empty(m, dtype=np.int64)
            before[0] = run
            prev = last[:-1]
            before[1:] = pos[:-1] - prev + np.where(prev < 0, run, 0)
            quotes = (c == _QUOTE) & (before % 2 == 0)
            run = int(m - 1 - last[-1] + (run if last[-1] < 0 else 0))
        else:
            quotes = c == _QUOTE
        toggles = np.cumsum(quotes, dtype=np.int64)
        in_string = (toggles % 2 == 1) ^ inside
        outside = ~in_string
        steps = np.where(outside, _STEP[c], 0).astype(np.int64)
        levels = depth + np.cumsum(steps)
        if m:
            deepest = max(deepest, int(levels.max()))
            depth = int(levels[-1])
            inside = bool(in_string[-1])
        values += int(np.count_nonzero(outside & ((c == ord(",")) | (c == ord(":")))))
        values += int(np.count_nonzero(steps == 1))
    return deepest, values


# ------------------------------------------------------------------ decoding (grader side)
def _parse_int(text):
    if len(text) > _MAX_NUMBER:
        raise _too_large(f"an integer of {len(text):,} digits")
    return int(text)


def _parse_float(text):
    if len(text) > _MAX_NUMBER:
        raise _too_large(f"a number of {len(text):,} characters")
    return float(text)


def _parse_constant(text):
    raise _not_data(f"{text} is not JSON (non-finite floats travel tagged)")


def loads(text):
    """The data of a result text (see the module docstring for what is refused)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    if not isinstance(text, str):
        raise _not_data(f"expected JSON text, found {type(text).__name__}")
    if len(text) > MAX_RESULT_BYTES:
        raise _too_large(f"{len(text):,} characters of text (at most {MAX_RESULT_BYTES:,})")
    depth, values = scan(text)
    if depth > MAX_DEPTH:
        raise ResultRefused(f"the result is nested too deeply to be data ({depth} levels; "
                            f"at most {MAX_DEPTH})")
    if values > MAX_VALUES:
        raise _too_large(f"about {values:,} values (at most {MAX_VALUES:,})")
    obj = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                     parse_constant=_parse_constant)
    return decode(obj)


class _Budget:
    """Elements decoded so far, against :data:`MAX_ELEMENTS`."""

    def __init__(self):
        self.left = MAX_ELEMENTS

    def take(self, n, what):
        self.left -= n
        if self.left < 0:
            raise _too_large(f"more than {MAX_ELEMENTS:,} elements in all (at {what})")


_TAGS = {"__float__": ({"__float__"},),
         "__ndarray__": ({"__ndarray__", "dtype"}, {"__ndarray__", "dtype", "shape"}),
         "__dataframe__": ({"__dataframe__"},),
         "__series__": ({"__series__"},),
         "__repr__": ({"__repr__"},)}
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def decode(obj):
    """The inverse of :func:`encode` for the JSON types only (only data is rebuilt;
    nothing is executed): :class:`ResultRefused` for anything else, or anything too large
    or too deep."""
    return _decode(obj, _Budget(), 0)


def _decode(obj, budget, depth):
    if depth > MAX_DEPTH:
        raise ResultRefused(f"the result is nested too deeply to be data (more than "
                            f"{MAX_DEPTH} levels)")
    budget.take(1, "a value")
    if obj is None or isinstance(obj, (bool, int, float)):
        return obj
    if isinstance(obj, str):
        if len(obj) > MAX_STRING:
            raise _too_large(f"a string of {len(obj):,} characters (at most {MAX_STRING:,})")
        return obj
    if isinstance(obj, list):
        return [_decode(x, budget, depth + 1) for x in obj]
    if not isinstance(obj, dict):
        raise _not_data(f"a value of type {type(obj).__name__}")
    tags = [k for k in obj if k in _TAGS]
    if not tags:
        for k in obj:
            if not isinstance(k, str) or len(k) > MAX_STRING:
                raise _not_data("a dict whose keys are not short strings")
        return {k: _decode(v, budget, depth + 1) for k, v in obj.items()}
    tag = tags[0]
    if set(obj) not in _TAGS[tag]:
        raise _not_data(f"a {tag} tag with the keys {sorted(obj)[:6]}")
    if tag == "__float__":
        x = _NON_FINITE.get(obj[tag]) if isinstance(obj[tag], str) else None
        if x is None:
            raise _not_data("a tagged float that is not inf, -inf or nan")
        return x
    if tag == "__repr__":
        if not isinstance(obj[tag], str):
            raise _not_data("a repr that is not a string")
        return _Opaque(obj[tag][:200])
    if tag == "__ndarray__":
        return _decode_array(obj, budget, depth)
    if tag == "__dataframe__":
        return _decode_frame(obj[tag], budget, depth)
    return _decode_series(obj[tag], budget, depth)


def _numeric_dtype(spec):
    """The dtype an array names: numeric (b, i, u, f) of at most 8 bytes, or None for
    "object"; ResultRefused for anything else (a made-up "S1000000000" would make a few
    bytes of JSON allocate gigabytes)."""
    if spec == "object":
        return None
    if not isinstance(spec, str) or len(spec) > 8:
        raise _not_data("an array whose dtype is not a short string")
    try:
        dtype = np.dtype(spec)
    except (TypeError, ValueError):
        raise _not_data(f"an array of dtype {spec!r}") from None
    if dtype.kind not in "biuf" or dtype.itemsize > 16:
        raise _not_data(f"an array of dtype {spec!r} (only numbers and booleans travel)")
    return dtype


def _decode_array(obj, budget, depth):
    dtype = _numeric_dtype(obj["dtype"])
    payload = obj["__ndarray__"]
    if "shape" in obj:                                     # binary: base64 of the bytes
        shape = obj["shape"]
        if dtype is None or dtype.itemsize > 8 or not isinstance(payload, str):
            raise _not_data("a binary array without a numeric dtype or base64 bytes")
        if (not isinstance(shape, list) or len(shape) > 32 or
                not all(type(n) is int and n >= 0 for n in shape)):
            raise _not_data("an array whose shape is not a short list of counts")
        count = math.prod(shape)
        if count > MAX_ELEMENTS:
            raise _too_large(f"an array of shape {tuple(shape)} (at most "
                             f"{MAX_ELEMENTS:,} elements)")
        nbytes = count * dtype.itemsize
        if len(payload) != 4 * ((nbytes + 2) // 3):
            raise _not_data(f"an array of shape {tuple(shape)} whose bytes do not match it")
        budget.take(count, f"an array of shape {tuple(shape)}")
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise _not_data("an array whose bytes are not base64") from None
        if len(raw) != nbytes:
            raise _not_data(f"an array of shape {tuple(shape)} whose bytes do not match it")
        arr = np.frombuffer(raw, dtype=dtype).reshape(shape)
        return arr.astype(dtype.newbyteorder("="), copy=True)
    if dtype is not None and dtype.kind in "iuf" and isinstance(payload, list):
        try:    # plain numbers (the list form): no element-by-element decoding
            arr = np.asarray(payload, dtype=dtype)
            budget.take(arr.size, f"an array of shape {arr.shape}")
            return arr
        except (TypeError, ValueError, OverflowError):
            pass    # tagged non-finite floats, ragged lists: decoded below
    values = _decode(payload, budget, depth + 1)
    try:
        return np.asarray(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return np.asarray(values, dtype=object)


def _table_parts(d, keys, what):
    if not isinstance(d, dict) or set(d) != keys:
        raise _not_data(f"a {what} without exactly the parts {sorted(keys)}")
    if not isinstance(d["index"], list):
        raise _not_data(f"a {what} whose index is not a list")
    return d


def _decode_frame(d, budget, depth):
    import pandas as pd

    d = _table_parts(d, {"columns", "index", "data"}, "DataFrame")
    columns, index, rows = d["columns"], d["index"], d["data"]
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise _not_data("a DataFrame whose columns are not a list of names")
    # rows x columns before anything else: pandas broadcasts a scalar "data" to every cell
    cells = len(index) * len(columns)
    if cells > MAX_ELEMENTS or len(index) > MAX_VALUES or len(columns) > MAX_VALUES:
        raise _too_large(f"a DataFrame of {len(index):,} rows x {len(columns):,} columns "
                         f"(at most {MAX_ELEMENTS:,} cells)")
    if not isinstance(rows, list) or len(rows) != len(index) or not all(
            isinstance(r, list) and len(r) == len(columns) for r in rows):
        raise _not_data(f"a DataFrame whose data is not {len(index):,} rows of "
                        f"{len(columns):,} cells")
    index = _decode(index, budget, depth + 1)
    rows = _decode(rows, budget, depth + 1)
    try:
        return pd.DataFrame(rows, columns=columns, index=index)
    except (TypeError, ValueError) as err:
        raise _not_data(f"a DataFrame pandas cannot build ({type(err).__name__})") from None


def _decode_series(d, budget, depth):
    import pandas as pd

    d = _table_parts(d, {"name", "index", "data"}, "Series")
    if not isinstance(d["data"], list) or len(d["data"]) != len(d["index"]):
        raise _not_data("a Series whose data and index differ in length")
    name = d["name"]
    if name is not None and not (isinstance(name, str) and len(name) <= MAX_STRING):
        raise _not_data("a Series whose name is not a string")
    index = _decode(d["index"], budget, depth + 1)
    data = _decode(d["data"], budget, depth + 1)
    try:
        return pd.Series(data, index=index, name=name)
    except (TypeError, ValueError) as err:
        raise _not_data(f"a Series pandas cannot build ({type(err).__name__})") from None


class _Opaque(str):
    """An object that could not travel as data: only its repr arrived."""
