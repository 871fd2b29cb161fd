"""Sensitivity: how much one person can move a query's answer.

The global sensitivity of a query f is the largest change ||f(x) - f(y)|| over all pairs
of neighbouring datasets x, y [DR14 Definition 3.1; seed 003 Definition 5; seed 002
eqs. 2-3 for the L1 and L2 versions]. Which pairs count as neighbours matters:

* ``"add_remove"``: y is x with one record added or removed (seeds 000, 001, 003);
* ``"substitute"``: x and y have the same size and differ in one record (seed 004's
  proof writes D = {x1, ..., xn} and D' = {y1, x2, ..., xn}).

:func:`global_sensitivity` finds the maximum by brute force over *every* dataset of
records drawn from a small universe, so a student can check a claimed sensitivity
(counts 1, histograms 1 or 2, the mean 100/n, the median 100) instead of trusting it.

Datasets are **multisets** by default: the order of the records does not matter and a
record may appear several times (a hospital can have two patients aged 40). This is
the histogram view of seed 003 (x in N^|X|). Every query of the course is symmetric, so
multisets and sequences give the same answer for them; ``ordered=True`` enumerates
sequences instead, for order-dependent queries such as "the first record".

Notebook 05 teaches this module.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from math import comb

import numpy as np

from ._support.validate import (Flag, NonnegativeInt, PositiveInt, Using, checked,
                                valid_values)

__all__ = ["global_sensitivity", "local_sensitivity", "l1_sensitivity", "l2_sensitivity",
           "SensitivityResult", "count_datasets", "all_datasets", "histogram", "l1_distance", "l2_distance", "are_neighbours"]

#: exceptions that mean "the query is undefined on this dataset" (mean of nothing,
#: max of nothing, first record of nothing). Other exceptions (TypeError, NameError,
#: ...) are bugs in the query and propagate.
UNDEFINED_ERRORS = (ArithmeticError, ValueError, IndexError)

_NEIGHBOURS = ("add_remove", "substitute")
_MAX_DATASETS = 2_000_000
_MAX_DATASETS_LIMIT = 10 ** 9      # max_datasets itself: a brute force beyond this never ends
_MAX_COUNT_DIGITS = 10_000


@dataclass(frozen=True)
class SensitivityResult:
    """What :func:`global_sensitivity` found when asked for ``details=True``.

    ``value`` is the sensitivity; ``x`` and ``y`` a neighbouring pair that attains it
    (tuples of records; None when no pair was defined); ``n_datasets`` the number of
    datasets enumerated, ``n_undefined`` how many of them the query was undefined on,
    ``n_pairs`` how many neighbouring pairs with both answers defined were compared.
    """

    value: float
    x: tuple | None
    y: tuple | None
    n_datasets: int
    n_undefined: int
    n_pairs: int
    neighbours: str
    norm: int

    def __float__(self):
        return float(self.value)


# ------------------------------------------------------------------ input checks
def _valid_query(query, name):
    if not callable(query):
        raise TypeError(f"{name} must be a callable taking a dataset, got {type(query).__name__}")
    return query


def _valid_universe(universe, name):
    if isinstance(universe, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of records, not a string "
                        "(write list('abc') for the records 'a', 'b', 'c')")
    if isinstance(universe, (set, frozenset)):
        universe = sorted(universe)
    try:
        arr = np.asarray(list(universe))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of records of one kind (numbers, strings "
                        f"or equal-length tuples), got {_short(universe)}") from None
    if arr.size == 0 or arr.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one record")
    if arr.dtype.kind == "O":
        raise TypeError(f"{name} must hold records of one kind (numbers, strings or "
                        "equal-length tuples)")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} must not contain NaN or infinite records")
    distinct = np.unique(arr, axis=0).shape[0]
    if distinct != arr.shape[0]:
        raise ValueError(f"{name} must list each record once, got {arr.shape[0]} records "
                         f"of which only {distinct} are distinct")
    return arr


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _valid_neighbours(neighbours, name):
    if neighbours not in _NEIGHBOURS:
        raise ValueError(f"{name} must be 'add_remove' or 'substitute', got {neighbours!r}")
    return neighbours


def _valid_norm(norm, name):
    if isinstance(norm, (bool, np.bool_)) or norm not in (1, 2):
        raise ValueError(f"{name} must be 1 (L1) or 2 (L2), got {norm!r}")
    return int(norm)


def _valid_dataset(dataset, name):
    """A dataset as an array of records (its records' shape is checked against the
    universe's by the caller)."""
    x = np.asarray(dataset)
    if isinstance(dataset, (str, bytes)) or x.dtype.kind == "O":
        raise TypeError(f"{name} must be a sequence of records like those of universe")
    return x


def _valid_records(records, name):
    if isinstance(records, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of records, not a string")
    if not hasattr(records, "__iter__"):
        raise TypeError(f"{name} must be a sequence of records, got {_short(records)}")
    return records


# ------------------------------------------------------------ evaluating a query
def _as_output(out):
    """A query answer as a 1-D float vector, or None when undefined."""
    if out is None:
        return None
    if isinstance(out, (str, bytes)):
        raise TypeError(f"query must return a number or a vector of numbers, got {out!r}")
    arr = np.asarray(out, dtype=float).ravel()
    if arr.size == 0 or np.isnan(arr).any():
        return None
    if np.isinf(arr).any():
        raise ValueError(f"query returned an infinite value {out!r}; sensitivity is unbounded")
    return arr


def _evaluate(query, datasets, universe, batched):
    """Answers of ``query`` on every dataset (rows of index array ``datasets``).

    Returns a float array (n_datasets, dim) with NaN rows where undefined, or None if
    the query was undefined everywhere (dim unknown).
    """
    n, m = datasets.shape
    records = universe[datasets]                       # (n, m) + record shape
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if batched:
            try:
                out = query(records)
            except UNDEFINED_ERRORS:
                return None
            if out is None:
                return None
            arr = np.asarray(out, dtype=float)
            if arr.ndim == 0 or arr.shape[0] != n:
                raise ValueError(f"a batched query must return one answer per dataset: given "
                                 f"{n} datasets it returned shape {arr.shape}")
            arr = arr.reshape(n, -1)
            if np.isinf(arr).any():
                raise ValueError("query returned an infinite value; sensitivity is unbounded")
            arr[np.isnan(arr).any(axis=1)] = np.nan
            return arr
        answers = []
        for row in records:
            try:
                out = query(row)
            except UNDEFINED_ERRORS:
                answers.append(None)
                continue
            answers.append(_as_output(out))
    dims = {a.size for a in answers if a is not None}
    if not dims:
        return None
    if len(dims) > 1:
        raise ValueError(f"query must return answers of one length, got lengths {sorted(dims)}")
    dim = dims.pop()
    out = np.full((n, dim), np.nan)
    for i, a in enumerate(answers):
        if a is not None:
            out[i] = a
    return out


# ------------------------------------------------------- enumerating datasets
class _Space:
    """All datasets of m records (multisets or sequences) and their ranks.

    Multisets are sorted index tuples i1 <= ... <= im, ranked in colexicographic
    order through the bijection j_k = i_k + k with combinations of m out of u + m - 1
    (rank = sum_k C(j_k, k + 1)). Sequences are ranked as base-u numbers.
    """

    def __init__(self, u, ordered):
        self.u, self.ordered = u, ordered

    def count(self, m):
        return self.u ** m if self.ordered else comb(self.u + m - 1, m)

    def log_count_lower(self, m) -> float:
        """A lower bound on ln(count(m)), in time independent of m's size:
        m ln u for sequences, k ln((u + m - 1)/k) with k = min(m, u - 1) for multisets
        (C(n, k) >= (n/k)^k)."""
        if self.u == 1 or m == 0:
            return 0.0
        if self.ordered:
            return m * math.log(self.u) if m < 10 ** 300 else math.inf
        k = min(m, self.u - 1)
        return k * (math.log(self.u + m - 1) - math.log(k))

    def capped_count(self, m, cap):
        """min(count(m), cap + 1), quickly even for m = 10**400."""
        if self.u == 1 or m == 0:
            return 1
        if m > cap:                     # u >= 2: at least m + 1 datasets of m records
            return cap + 1
        if self.log_count_lower(m) > math.log(cap + 1) + 1:
            return cap + 1
        return min(self.count(m), cap + 1)

    def capped_total(self, sizes, cap):
        """min(sum of count(m) over the range ``sizes``, cap + 1), in at most about
        sqrt(2 cap) steps (for u >= 2 the counts grow at least like m + 1)."""
        if self.u == 1:
            return min(len(sizes), cap + 1)
        total = 0
        for m in sizes:
            total += self.capped_count(m, cap)
            if total > cap:
                return cap + 1
        return total

    def enumerate(self, m):
        it = (itertools.product(range(self.u), repeat=m) if self.ordered
              else itertools.combinations_with_replacement(range(self.u), m))
        flat = np.fromiter(itertools.chain.from_iterable(it), dtype=np.int64,
                           count=self.count(m) * m)
        return flat.reshape(self.count(m), m)

    def rank(self, idx):
        idx = np.asarray(idx, dtype=np.int64)
        m = idx.shape[-1]
        if m == 0:
            return np.zeros(idx.shape[:-1], dtype=np.int64)
        if self.ordered:
            weights = self.u ** np.arange(m - 1, -1, -1, dtype=np.int64)
            return idx @ weights
        j = idx + np.arange(m)
        table = np.array([[comb(a, k + 1) for k in range(m)] for a in range(self.u + m)],
                         dtype=np.int64)
        return table[j, np.arange(m)].sum(axis=-1)

    def grow(self, smaller):
        """Every way to add one record to each dataset of ``smaller`` (n, m-1).

        Returns (parent, grown): ``grown`` has shape (rows, u, m) and row i holds the
        u datasets obtained from ``smaller[parent[i]]`` by adding record 0, 1, ..., u-1
        (at one position, for sequences: one row per position).
        """
        n, m1 = smaller.shape
        r = np.arange(self.u)
        if not self.ordered:
            grown = np.concatenate([np.broadcast_to(smaller[:, None, :], (n, self.u, m1)),
                                    np.broadcast_to(r[None, :, None], (n, self.u, 1))], axis=2)
            return np.arange(n), np.sort(grown, axis=2)
        parts, parents = [], []
        for pos in range(m1 + 1):
            g = np.empty((n, self.u, m1 + 1), dtype=np.int64)
            g[:, :, :pos] = smaller[:, None, :pos]
            g[:, :, pos] = r[None, :]
            g[:, :, pos + 1:] = smaller[:, None, pos:]
            parts.append(g)
            parents.append(np.arange(n))
        return np.concatenate(parents), np.concatenate(parts)


@checked(universe_size=PositiveInt(), size=NonnegativeInt(), ordered=Flag())
def count_datasets(universe_size, size, *, ordered=False) -> int:
    """How many datasets of exactly ``size`` records from a universe of ``universe_size``
    records: C(u + m - 1, m) multisets, or u^m sequences with ``ordered=True``. The
    brute force of :func:`global_sensitivity` visits all sizes it needs. Counts with
    more than 10,000 digits are refused (ValueError). Notebook 05."""
    space = _Space(universe_size, ordered)
    if space.log_count_lower(size) > _MAX_COUNT_DIGITS * math.log(10):
        raise ValueError(f"size={_short(size)} with universe_size={universe_size} gives a count "
                         f"with more than {_MAX_COUNT_DIGITS:,} digits; use a smaller size")
    return space.count(size)


@checked(universe=Using(_valid_universe), size=NonnegativeInt(), ordered=Flag(),
         max_datasets=PositiveInt(maximum=_MAX_DATASETS_LIMIT))
def all_datasets(universe, size, *, ordered=False, max_datasets=_MAX_DATASETS):
    """Every dataset of exactly ``size`` records from ``universe``, one per row of a numpy
    array (shape (count, size) for scalar records), in the order the brute force uses:
    multisets as sorted tuples, or sequences with ``ordered=True``. Notebook 05."""
    space = _Space(universe.shape[0], ordered)
    if space.capped_count(size, max_datasets) > max_datasets:
        raise ValueError(f"size={_short(size)} gives more than max_datasets={max_datasets:,} "
                         "datasets; use a smaller universe or size")
    return universe[space.enumerate(size)]


def _norms(diff, norm):
    return np.abs(diff).sum(axis=-1) if norm == 1 else np.sqrt((diff ** 2).sum(axis=-1))


@checked(query=Using(_valid_query), universe=Using(_valid_universe), size=PositiveInt(),
         neighbours=Using(_valid_neighbours), norm=Using(_valid_norm), min_size=NonnegativeInt(),
         ordered=Flag(), batched=Flag(), details=Flag(),
         max_datasets=PositiveInt(maximum=_MAX_DATASETS_LIMIT))
def global_sensitivity(query, universe, size, *, neighbours="add_remove", norm=1,
                       min_size=0, ordered=False, batched=False, details=False,
                       max_datasets=_MAX_DATASETS):
    """Brute-force global sensitivity: max ||f(x) - f(y)||_norm over neighbouring x, y.

    Every dataset of records drawn (with repetition) from ``universe`` is enumerated:

    * ``neighbours="add_remove"``: datasets of ``min_size`` to ``size`` records; x and y
      are neighbours when y is x plus one record (||x - y||_1 = 1 for histograms,
      seed 003 Definition 3);
    * ``neighbours="substitute"``: datasets of exactly ``size`` records; neighbours
      differ in one record (same size, ||x - y||_1 = 2 for histograms; seed 004).

    ``query(records)`` receives a numpy array of records (shape (m,) for scalar records,
    (m, k) for k-tuples) and returns a number or a vector; ``norm`` 1 or 2 picks the L1
    or L2 distance between answers [DR14 Def. 3.1; seed 002 eqs. 2-3]. A query is
    *undefined* on a dataset when it returns None or NaN or raises ArithmeticError,
    ValueError or IndexError (the mean of no records): such datasets are skipped, and
    with them every pair they belong to. With ``batched=True`` the query is called once
    per dataset size with a 2-D array (one dataset per row, e.g. ``lambda X:
    X.mean(axis=1)``) and must return one answer per row: much faster.

    Datasets are multisets (``ordered=False``; see the module docstring) or sequences
    (``ordered=True``). Answers are cached, each dataset is evaluated once, and the
    comparisons are vectorised: there are C(u + m - 1, m) multisets of m records from
    u values (176,851 for m = 3 records from 0..100). More than ``max_datasets``
    datasets in all raises ValueError before any work.

    Returns the sensitivity as a float (0.0 when no pair of neighbours has both
    answers defined), or a :class:`SensitivityResult` with a pair attaining it when
    ``details=True``. Notebook 05.
    """
    if neighbours == "add_remove" and min_size >= size:
        raise ValueError(f"min_size must be < size for add_remove neighbours, got "
                         f"min_size={_short(min_size)}, size={_short(size)}")
    space = _Space(universe.shape[0], ordered)
    sizes = range(min_size, size + 1) if neighbours == "add_remove" else range(size - 1, size + 1)
    total = space.capped_total(sizes, max_datasets)
    if total > max_datasets:
        raise ValueError(f"size={_short(size)} with {universe.shape[0]} records in the universe "
                         f"means more than max_datasets={max_datasets:,} datasets; use a "
                         "smaller universe or size")

    eval_sizes = range(min_size, size + 1) if neighbours == "add_remove" else (size,)
    answers, n_datasets, n_undefined = _answers_by_rank(query, space, universe, batched, eval_sizes)

    best, witness, n_pairs = -1.0, None, 0
    top = size if neighbours == "add_remove" else size
    low = min_size + 1 if neighbours == "add_remove" else size
    for m in range(low, top + 1):
        big = answers.get(m)
        if big is None:
            continue
        smaller = space.enumerate(m - 1)
        parent, grown = space.grow(smaller)
        fg = big[space.rank(grown)]                     # (rows, u, dim)
        if neighbours == "add_remove":
            small = answers.get(m - 1)
            if small is None:
                continue
            fs = small[space.rank(smaller)][parent]     # (rows, dim)
            dist = _norms(fg - fs[:, None, :], norm)   # (rows, u)
            ok = ~np.isnan(dist)
            n_pairs += int(ok.sum())
            if ok.any():
                flat = np.nanargmax(np.where(ok, dist, -np.inf))
                i, r = np.unravel_index(flat, dist.shape)
                if dist[i, r] > best:
                    best = float(dist[i, r])
                    witness = (smaller[parent[i]], grown[i, r])
        else:
            best, witness, n_pairs = _substitute_max(fg, grown, norm, best, witness, n_pairs)
    if witness is None:
        best = 0.0
    if not details:
        return float(best)
    x = y = None
    if witness is not None:
        x = tuple(_record(universe[i]) for i in witness[0])
        y = tuple(_record(universe[i]) for i in witness[1])
    return SensitivityResult(float(best), x, y, n_datasets, n_undefined, n_pairs, neighbours, norm)


def _answers_by_rank(query, space, uni, batched, eval_sizes):
    """The query's answers on every dataset of each size in ``eval_sizes``, indexed by the
    dataset's rank in ``space`` (None for a size where it is undefined everywhere), and
    the numbers of datasets and of undefined answers."""
    answers, n_datasets, n_undefined, dim = {}, 0, 0, None
    for m in eval_sizes:
        ds = space.enumerate(m)
        vals = _evaluate(query, ds, uni, batched)
        n_datasets += ds.shape[0]
        if vals is None:
            n_undefined += ds.shape[0]
            answers[m] = None
            continue
        if dim is not None and vals.shape[1] != dim:
            raise ValueError(f"query must return answers of one length, got {dim} and {vals.shape[1]}")
        dim = vals.shape[1]
        n_undefined += int(np.isnan(vals[:, 0]).sum())
        by_rank = np.empty_like(vals)
        by_rank[space.rank(ds)] = vals
        answers[m] = by_rank
    if dim is None:
        raise ValueError("query is undefined (None, NaN or an error) on every dataset; "
                         "check it on a small example, e.g. query(np.array(universe[:2]))")
    return answers, n_datasets, n_undefined


def _record(r):
    return tuple(r.tolist()) if np.ndim(r) else r.item()


def _substitute_max(fg, grown, norm, best, witness, n_pairs, chunk=2_000_000):
    """Largest distance between two answers in the same row of ``fg`` (rows, u, dim):
    the datasets of one row share all records but one."""
    rows, u, dim = fg.shape
    defined = ~np.isnan(fg[:, :, 0])
    k = defined.sum(axis=1)
    n_pairs += int((k * (k - 1) // 2).sum())
    if dim == 1:
        v = fg[:, :, 0]
        hi = np.where(defined, v, -np.inf)
        lo = np.where(defined, v, np.inf)
        spread = hi.max(axis=1) - lo.min(axis=1)
        spread[k < 2] = -np.inf
        i = int(np.argmax(spread))
        if spread[i] > best:
            best = float(spread[i])
            witness = (grown[i, int(np.argmin(lo[i]))], grown[i, int(np.argmax(hi[i]))])
        return best, witness, n_pairs
    step = max(1, chunk // (u * u * dim))
    for start in range(0, rows, step):
        block = fg[start:start + step]
        d = _norms(block[:, :, None, :] - block[:, None, :, :], norm)   # (b, u, u)
        d = np.where(np.isnan(d), -np.inf, d)
        flat = int(np.argmax(d))
        i, a, b = np.unravel_index(flat, d.shape)
        if np.isfinite(d[i, a, b]) and d[i, a, b] > best:
            best = float(d[i, a, b])
            witness = (grown[start + i, a], grown[start + i, b])
    return best, witness, n_pairs


def l1_sensitivity(query, universe, size, *, neighbours="add_remove", **kwargs):
    """Global L1 sensitivity, :func:`global_sensitivity` with ``norm=1`` (Laplace
    mechanism's Delta f, seed 002 eq. 2)."""
    return global_sensitivity(query, universe, size, neighbours=neighbours, norm=1, **kwargs)


def l2_sensitivity(query, universe, size, *, neighbours="add_remove", **kwargs):
    """Global L2 sensitivity, :func:`global_sensitivity` with ``norm=2`` (Gaussian
    mechanism's Delta_2 f, seed 002 eq. 3)."""
    return global_sensitivity(query, universe, size, neighbours=neighbours, norm=2, **kwargs)


@checked(query=Using(_valid_query), universe=Using(_valid_universe),
         neighbours=Using(_valid_neighbours), norm=Using(_valid_norm), batched=Flag(),
         dataset=Using(_valid_dataset))
def local_sensitivity(query, dataset, universe, *, neighbours="add_remove", norm=1,
                      batched=False):
    """Local sensitivity at one dataset x: max ||f(x) - f(y)|| over the neighbours y of x.

    Neighbours are x with one record removed or one record of ``universe`` added
    (``"add_remove"``), or x with one record replaced by a record of ``universe``
    (``"substitute"``). Local sensitivity can be far below the global one (the median
    of tightly clustered values barely moves) but noise scaled to it is NOT private:
    the noise level itself would reveal x [Nissim, Raskhodnikova & Smith 2007].
    Returns a float (0.0 when no neighbour's answer is defined). Notebook 05.
    """
    if dataset.ndim == 0 or dataset.shape[1:] != universe.shape[1:]:
        raise ValueError(f"dataset records must have the shape of universe records "
                         f"{universe.shape[1:]}, got dataset of shape {dataset.shape}")
    if dataset.dtype.kind in "iuf" and universe.dtype.kind in "iuf":
        valid_values(dataset, "dataset", allow_empty=True)
    n = dataset.shape[0]
    if neighbours == "substitute" and n == 0:
        raise ValueError("dataset must hold at least one record for substitute neighbours")
    # Index view: universe records plus the dataset's own records (which may lie outside).
    pool = np.concatenate([universe, dataset]) if n else universe
    own = np.arange(universe.shape[0], universe.shape[0] + n)
    groups = []
    if neighbours == "add_remove":
        if n:
            groups.append(own[np.array([[j for j in range(n) if j != i] for i in range(n)],
                                       dtype=np.int64).reshape(n, n - 1)])
        groups.append(np.concatenate([np.broadcast_to(own, (universe.shape[0], n)),
                                      np.arange(universe.shape[0])[:, None]], axis=1))
    else:
        rep = np.broadcast_to(own, (n * universe.shape[0], n)).copy()
        rows = np.repeat(np.arange(n), universe.shape[0])
        rep[np.arange(rep.shape[0]), rows] = np.tile(np.arange(universe.shape[0]), n)
        groups.append(rep)
    fx = _evaluate(query, own[None, :], pool, batched)
    if fx is None or np.isnan(fx).any():
        raise ValueError("query is undefined on dataset, so it has no local sensitivity there")
    best = 0.0
    for g in groups:
        vals = _evaluate(query, g, pool, batched)
        if vals is None:
            continue
        if vals.shape[1] != fx.shape[1]:
            raise ValueError("query must return answers of one length")
        d = _norms(vals - fx, norm)
        if (~np.isnan(d)).any():
            best = max(best, float(np.nanmax(d)))
    return best


# ------------------------------------------------------ databases as histograms
@checked(universe=Using(_valid_universe), records=Using(_valid_records))
def histogram(records, universe):
    """Seed 003's histogram view of a database: x_i = number of records equal to the
    i-th record of ``universe`` (x in N^|X|). Records outside the universe raise."""
    rec = np.asarray(list(records))
    if rec.size == 0:
        return np.zeros(universe.shape[0], dtype=np.int64)
    if rec.shape[1:] != universe.shape[1:]:
        raise ValueError(f"records must have the shape of universe records {universe.shape[1:]}, "
                         f"got {rec.shape[1:]}")
    if universe.ndim == 1:
        eq = rec[:, None] == universe[None, :]
    else:
        eq = (rec[:, None, :] == universe[None, :, :]).all(axis=2)
    missing = ~eq.any(axis=1)
    if missing.any():
        raise ValueError(f"records must come from universe; {rec[missing][0]!r} does not")
    return eq.sum(axis=0).astype(np.int64)


def _valid_vector(v, name):
    arr = valid_values(v, name)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-D vector, got shape {arr.shape}")
    return np.atleast_1d(arr)


def _valid_histogram(h, name):
    arr = _valid_vector(h, name)
    if (arr < 0).any() or (arr != np.round(arr)).any():
        raise ValueError(f"{name} must be a histogram of non-negative whole counts")
    return arr


@checked(x=Using(_valid_vector), y=Using(_valid_vector))
def l1_distance(x, y) -> float:
    """||x - y||_1 = sum_i |x_i - y_i| [seed 003 Definition 2]. For two histograms it
    counts the records by which the databases differ."""
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.shape[0]} and {y.shape[0]}")
    return float(np.abs(x - y).sum())


@checked(x=Using(_valid_vector), y=Using(_valid_vector))
def l2_distance(x, y) -> float:
    """||x - y||_2 = sqrt(sum_i (x_i - y_i)^2), the distance the Gaussian mechanism uses."""
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.shape[0]} and {y.shape[0]}")
    return float(np.sqrt(((x - y) ** 2).sum()))


@checked(x=Using(_valid_histogram), y=Using(_valid_histogram),
         neighbours=Using(_valid_neighbours))
def are_neighbours(x, y, *, neighbours="add_remove") -> bool:
    """Are histograms x and y neighbours? ``add_remove``: ||x - y||_1 = 1 (one record
    added or removed; seed 003 writes <= 1, which also lets a database neighbour
    itself); ``substitute``: the same number of records and ||x - y||_1 = 2."""
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.shape[0]} and {y.shape[0]}")
    d = np.abs(x - y).sum()
    if neighbours == "add_remove":
        return bool(d == 1)
    return bool(d == 2 and x.sum() == y.sum())
