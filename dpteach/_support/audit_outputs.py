"""The audit's handling of a mechanism's outputs: running it on one input (checking it
returns one output per run), and turning outputs of any shape into one comparable value
per run and back. Used by :func:`dpteach.audit.audit`."""

from __future__ import annotations

import numpy as np


def run_mechanism(mechanism, data, size, rng, which):
    out = mechanism(data, size, rng)
    arr = np.asarray(out)
    if arr.ndim == 0 or arr.shape[0] != size:
        raise ValueError(
            f"mechanism({which}, size={size}, rng) must return {size} outputs (one per run), "
            f"got shape {arr.shape}; wrap a one-release-per-call function with "
            "per_call_mechanism(...)")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"mechanism returned NaN on {which}")
    if arr.dtype.kind == "c":
        raise TypeError("mechanism outputs must be real numbers or categories, not complex")
    return arr


def as_values(arr):
    """1-D values, one per run: rows of a 2-D output become integers or byte strings."""
    if arr.ndim == 1:
        return arr, None
    flat = arr.reshape(arr.shape[0], -1)
    if flat.dtype.kind in "biu" or (flat.dtype.kind == "f" and np.all(flat == np.round(flat))
                                      and np.all(np.isfinite(flat))):
        ints = flat.astype(np.int64)
        lo = ints.min(axis=0)
        span = ints.max(axis=0) - lo + 1
        if np.prod(span.astype(float)) < 2.0 ** 62:
            radix = np.concatenate([[1], np.cumprod(span[:-1])]).astype(np.int64)
            codes = (ints - lo) @ radix
            return codes, ("radix", lo, span, radix, flat.dtype)
    flat = np.ascontiguousarray(flat)
    void = flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()
    return void, ("void", flat.dtype, flat.shape[1])


def decode(value, how):
    """The original output (a tuple for rows) of a value made by as_values."""
    if how is None:
        return value.item() if hasattr(value, "item") else value
    if how[0] == "radix":
        _, lo, span, _radix, dtype = how
        digits, v = [], int(value)
        for s, low in zip(span, lo):
            digits.append(v % int(s) + int(low))
            v //= int(s)
        return tuple(np.asarray(digits).astype(dtype).tolist())
    _, dtype, width = how
    return tuple(np.frombuffer(bytes(value), dtype=dtype, count=width).tolist())
