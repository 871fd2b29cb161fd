"""A2 · Attacks on released statistics (notebooks/solutions/A2_attacks_and_reconstruction.ipynb,
with notebooks 02 and 03). Every task runs the student's function against data the
check draws and keeps:

* Task 1 (1 point) ``x_bit_from_counts(count, target) -> 0/1``: differencing against
  a server that answers exact counts of people with a trait, but only about groups of
  at least half the table (a "large query set" rule), over three hidden tables. The
  student's ``where`` functions see only the public columns (Name, Age); the server holds
  the counts of the groups it may answer about, computed by the checker, never the trait
  column. The judge also
  checks that the counts asked determine the target's bit (the target's indicator
  vector lies in the span of the groups asked about), so reading the bit some other way
  does not pass;
* Task 2 (1 point) ``bob_from_means(mean_all, n_all, mean_rest, n_rest)``: the
  differencing of two averages, at four hidden groups;
* Task 3a (1 point) ``recover_count(server, where)``: averaging fresh Laplace noise
  away, against three servers like :class:`dpteach.attacks.NaiveNoisyServer` over hidden
  tables (the scale, 1 to 3, is public as ``server.scale``); at least ``MIN_ANSWERS``
  answers must have been asked. Each server hands out ``POOL`` noisy answers the checker
  drew beforehand: neither the table nor the true count is in the student's kernel;
* Task 3b (1 point) ``k_needed(b, target_sd)``: the smallest k with
  √2·b/√k ≤ target_sd, at four hidden pairs;
* Task 4 (2 points) ``reconstruct_lsq(queries, answers)`` and Task 5 (3 points)
  ``reconstruct_lp(queries, answers)``: Dinur-Nissim reconstruction of a hidden secret
  of n = 128 bits from noisy random subset sums (Gaussian σ = 3 with m = 8n queries;
  Laplace b = 1.5 with m = 4n, 5% of the answers wildly off, which least squares cannot
  survive); at least 90% of the bits each. Sizes and bars are set so that the model
  solutions fail on fewer than one seed in a million (measurements at ``LSQ`` and
  ``LP`` below). The package's own decoders are noticed and refused.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import Task
from ._student import (boxed_number, call, collect_values, fail, field, first_problem, forbid, g,
                       missing_answer, number, ok, problem_feedback, short)

NAMES = ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jan", "Kai",
         "Lea", "Max", "Nia", "Oto", "Pia", "Quin", "Rui", "Sol", "Tao"]
TRAIT = "Trait"

#: Task 4: n bits, m = 8n queries, Gaussian noise sigma, fraction of bits needed.
#: Least squares has per-bit error variance about sigma^2 (Q^T Q)^-1_ii ~ 4 sigma^2 / m.
#: At m = 4n the model solution failed 90% on 36 of 2000 seeds (1.8%); at m = 8n, over
#: 1000 seeds: 0.78 wrong bits on average (variance 0.72), at most 4, none failed; the
#: binomial chance of more than 12 wrong is below 1e-11.
LSQ = {"n": 128, "m": 1024, "sigma": 3.0, "threshold": 0.90}
#: Task 5: LP decoding (least absolute deviations) with m = 4n against Laplace noise
#: b = 1.5 plus 5% of the answers off by 20 to 40 (either sign): least squares then gets
#: 32 of 128 bits wrong on average (at least 18 in 400 seeds), LP decoding 0.68 (variance
#: 0.86, at most 6 in 1000 seeds). A negative binomial fitted to those counts puts more
#: than 12 wrong (below 90%) at 4e-8, but more than 6 (below 95%) at 2.4e-4, so the bar
#: is 90%.
LP = {"n": 128, "m": 512, "b": 1.5, "outliers": 0.05, "outlier_size": (20.0, 40.0),
      "threshold": 0.90}


def _people(rng, n=None):
    n = int(rng.integers(7, 13)) if n is None else n
    names = [str(x) for x in rng.choice(NAMES, n, replace=False)] if n <= len(NAMES) else \
        [f"P{i:03d}" for i in rng.choice(1000, n, replace=False)]
    return pd.DataFrame({"Name": names, "Age": rng.integers(18, 90, n).astype(int),
                         TRAIT: (rng.random(n) < 0.45).astype(int)})


class CountServer:
    """Exact counts of people with the trait among those ``where(people)`` selects, only
    for groups of at least ``min_group`` people. ``where`` sees only the public columns
    (Name, Age); every question is logged.

    The server never holds the trait column: ``answers`` lists (group, count) for each
    group it may answer about (a bit mask, bit i for row i), computed by the checker
    beforehand (:func:`group_counts`). So the hidden table is nowhere in the student's kernel, only
    the answers the student's code is allowed to ask for."""

    def __init__(self, people, min_group, answers):
        self._people = people[["Name", "Age"]].copy()
        self._answers = {int(code): int(count) for code, count in answers}
        self.min_group = int(min_group)
        self.log = []

    def __call__(self, where):
        if not callable(where):
            raise TypeError("count(where): where must be a function people -> boolean mask")
        n = len(self._people)
        mask = np.asarray(where(self._people.copy()))
        if mask.shape != (n,) or mask.dtype.kind != "b":
            raise ValueError(f"where must return a boolean mask with one entry per person "
                             f"({n}), got dtype {mask.dtype}, shape {mask.shape}")
        if mask.sum() < self.min_group:
            raise ValueError(f"refused: this server answers only about groups of at least "
                             f"{self.min_group} people (yours has {int(mask.sum())})")
        if len(self.log) < 200:
            self.log.append(mask.astype(int).tolist())
        return int(self._answers[_bits(mask)])


def _bits(mask) -> int:
    """A boolean mask as an int, bit i for row i."""
    return int(sum(1 << i for i, m in enumerate(np.asarray(mask).tolist()) if m))


def group_counts(trait, min_group) -> list:
    """[bit mask, count of the trait] for every group of at least ``min_group`` rows."""
    trait = np.asarray(trait, dtype=int)
    n = trait.size
    codes = np.arange(2 ** n)
    members = (codes[:, None] >> np.arange(n)[None, :]) & 1
    keep = members.sum(axis=1) >= min_group
    counts = members[keep] @ trait
    return [[int(c), int(k)] for c, k in zip(codes[keep].tolist(), counts.tolist())]


# ------------------------------------------------------------------ Task 1: differencing counts
def _t1_request(rng):
    while True:
        tables = [_people(rng) for _ in range(3)]
        targets = [str(rng.choice(t["Name"])) for t in tables]
        bits = [int(t.set_index("Name").loc[x, TRAIT]) for t, x in zip(tables, targets)]
        if 0 < sum(bits) < 3:
            break
    # the kernel gets the public columns and the counts it may ask for, not the trait
    return ({"tables": [t[["Name", "Age"]].copy() for t in tables], "targets": targets,
             "answers": [group_counts(t[TRAIT], math.ceil(len(t) / 2)) for t in tables]},
            bits)


def _t1_collect(answers, request):
    if missing_answer(answers, ["x_bit_from_counts"]):
        return {"unsolved": True}
    out = []
    for table, target, counts in zip(request["tables"], request["targets"],
                                     request["answers"]):
        server = CountServer(table, math.ceil(len(table) / 2), counts)
        res, problem = call(answers["x_bit_from_counts"], server, target)
        item = problem if problem is not None else {"bit": _bit(res)}
        item["queries"] = server.log
        out.append(item)
    return {"results": out}


def _bit(x):
    """:func:`boxed_number`, but True/False read as 1.0/0.0 (a bit may be a bool)."""
    return float(x) if isinstance(x, (bool, np.bool_)) else boxed_number(x)


def _determined(queries, n, index):
    """Is person ``index``'s bit a linear function of the asked counts, i.e. does the
    indicator vector e_index lie in the row space of the asked masks?"""
    try:
        M = np.asarray(queries, dtype=float).reshape(-1, n)
    except (TypeError, ValueError):
        return False
    if M.size == 0:
        return False
    e = np.zeros((1, n))
    e[0, index] = 1.0
    return np.linalg.matrix_rank(np.vstack([M, e])) == np.linalg.matrix_rank(M)


def _t1_judge(data, request, truth):
    key = "Task 1"
    tables, targets = field(request, "tables", []), field(request, "targets", [])
    kind, item = first_problem(data, len(tables))
    if kind is not None:
        if kind == "error" and "refused" in str(field(item, "error", "")):
            return fail(key, f"the server refused a question: {field(item, 'error')}. Ask about "
                             "large groups whose difference is the target alone.", "refused")
        return problem_feedback(key, kind, item, "x_bit_from_counts(count, target)")
    for i, (item, table, target, bit) in enumerate(zip(data["results"], tables, targets, truth)):
        found = item.get("bit")
        if not isinstance(found, float) or found not in (0.0, 1.0):
            return fail(key, f"x_bit_from_counts returned {short(field(found, 'repr', found))}; "
                             "expected 0 or 1.", "type")
        where = f"on hidden table {i + 1} ({len(table)} people, target {target!r})"
        if int(found) != bit:
            return fail(key, f"{where} expected {bit}, found {int(found)}. Hint: count the "
                             "trait among everybody, then among everybody except the target; "
                             "the difference is the target's bit.", "wrong")
        index = list(table["Name"]).index(target)
        if not _determined(item.get("queries", []), len(table), index):
            return fail(key, f"{where} the answer is right, but the counts your function asked "
                             "for do not determine the target's bit (it was not found by "
                             "differencing the server's answers).", "not_differencing")
    return ok(key, f"right on all {len(truth)} hidden tables (bits {truth}), each time from "
                   "two large-group counts that differ by the target alone.")


# ------------------------------------------------------------------ Task 2: differencing means
def _t2_request(rng):
    groups, truth = [], []
    for _ in range(4):
        n_all = int(rng.integers(4, 13))
        values = np.round(rng.uniform(3.5, 9.0, n_all), 1)
        groups.append({"mean_all": float(values.mean()), "n_all": n_all,
                       "mean_rest": float(values[1:].mean()), "n_rest": n_all - 1})
        truth.append(float(values[0]))
    return {"groups": groups}, truth


def _t2_collect(answers, request):
    return collect_values(answers, "bob_from_means",
                          ((gr["mean_all"], gr["n_all"], gr["mean_rest"], gr["n_rest"])
                           for gr in request["groups"]), box=_bit)


def _t2_judge(data, request, truth):
    key = "Task 2"
    groups = field(request, "groups", [])
    kind, item = first_problem(data, len(groups))
    if kind is not None:
        return problem_feedback(key, kind, item,
                                "bob_from_means(mean_all, n_all, mean_rest, n_rest)")
    for item, gr, value in zip(data["results"], groups, truth):
        found = item.get("value")
        if not isinstance(found, float):
            return fail(key, f"bob_from_means returned {short(field(found, 'repr', found))}; "
                             "expected a number.", "type")
        if not math.isclose(found, value, rel_tol=1e-6, abs_tol=1e-6):
            return fail(key, f"for a group of {gr['n_all']} with mean {g(gr['mean_all'], 6)} "
                             f"and the other {gr['n_rest']} with mean {g(gr['mean_rest'], 6)}, the "
                             f"one person's value is {g(value)}, found {g(found)}. Hint: turn "
                             "each average back into a sum (mean × size); the sums differ by "
                             "exactly that person.", "wrong")
    return ok(key, f"right for all {len(truth)} hidden groups (e.g. a group of "
                   f"{groups[0]['n_all']}: {g(truth[0])}).")


# ------------------------------------------------------------------ Task 3: averaging
#: fewest answers per server Task 3a accepts: a single Lap(b) answer rounds to the
#: truth by luck (probability 1 - e^(-1/(2b)), 39% at b = 1)
MIN_ANSWERS = 30


#: answers each hidden server of Task 3a has ready (drawn by the checker beforehand)
POOL = 200_000


def _front(pool, scale, question):
    """What the student's function gets: a server with ``count``, ``scale`` and
    ``answers_given`` that hands out the pre-drawn noisy answers ``pool`` (true count plus
    fresh Lap(scale) noise each, drawn by the checker) in order, for ``question`` only.
    Neither the hidden table nor the true count is in the student's kernel."""
    given = [0]
    pool = np.array(pool, dtype=float)

    class NoisyServer:
        __slots__ = ()
        __doc__ = ("A server adding fresh Lap(scale) noise to every count: "
                   f"count(where, size=None); it answers at most {POOL:,} times.")

        def count(self, where, *, size=None):
            if where is not question:
                raise ValueError("this server answers only the question recover_count "
                                 "was handed (where)")
            k = 1 if size is None else int(np.prod(size))
            if given[0] + k > len(pool):
                raise ValueError(f"this server answers at most {len(pool):,} times "
                                 f"(asked for {given[0] + k:,})")
            out = pool[given[0]:given[0] + k].copy()
            given[0] += k
            return float(out[0]) if size is None else out.reshape(size)

        @property
        def scale(self):
            return scale

        @property
        def answers_given(self):
            return given[0]

        def __repr__(self):
            return f"NoisyServer(scale={scale:g}, answers_given={given[0]})"

    return NoisyServer()


def _has_trait(table):
    """The question Task 3a averages: who has the trait?"""
    return table[TRAIT].to_numpy() == 1


def _t3a_request(rng):
    tables = [_people(rng, int(rng.integers(20, 60))) for _ in range(3)]
    scales = [float(np.round(rng.uniform(1.0, 3.0), 2)) for _ in tables]
    counts = [int(t[TRAIT].sum()) for t in tables]
    # the answers the servers may give, drawn here: the true counts stay with the checker
    pools = [c + rng.laplace(0.0, b, POOL) for c, b in zip(counts, scales)]
    return {"scales": scales, "pools": pools}, counts


def _t3a_collect(answers, request):
    if missing_answer(answers, ["recover_count"]):
        return {"unsolved": True}
    out = []
    for pool, scale in zip(request["pools"], request["scales"]):
        server = _front(pool, scale, _has_trait)
        res, problem = call(answers["recover_count"], server, _has_trait)
        item = problem if problem is not None else {"count": _bit(res)}
        item["answers_given"] = server.answers_given
        out.append(item)
    return {"results": out}


def _t3a_judge(data, request, truth):
    key = "Task 3a"
    scales = field(request, "scales", [])
    kind, item = first_problem(data, len(scales))
    if kind is not None:
        return problem_feedback(key, kind, item, "recover_count(server, where)")
    asked = []
    for i, (item, b, count) in enumerate(zip(data["results"], scales, truth)):
        found, k = item.get("count"), number(item.get("answers_given"))
        if not isinstance(found, float):
            return fail(key, f"recover_count returned {short(field(found, 'repr', found))}; "
                             "expected a whole number.", "type")
        k = int(k or 0)
        where = f"on hidden server {i + 1} (noise scale b = {g(b)})"
        if found != count:
            sd = math.sqrt(2) * b / math.sqrt(max(k, 1))
            return fail(key, f"{where} the true count is {count}, found {g(found)} after "
                             f"{k:,} answers (their average has standard deviation "
                             f"√2·b/√k = {g(sd, 3)}). Hint: ask many times (k from Task 3b for "
                             "a standard deviation of 0.1 or less), average, round.", "wrong")
        pool = np.asarray(field(request, "pools", [[]])[i], dtype=float)
        if 0 < k <= pool.size and abs(float(pool[:k].mean()) - count) >= 0.5:
            return fail(key, f"{where} the count is right, but the {k:,} answers your function "
                             f"asked average to {g(float(pool[:k].mean()), 4)}, which does not "
                             "round to it: the answer did not come from averaging them.",
                        "not_averaging")
        if k < MIN_ANSWERS:
            return fail(key, f"{where} the count is right, but your function asked only {k} "
                             f"time(s): one answer is off by b = {g(b)} on average, so that was "
                             f"luck. Average at least {MIN_ANSWERS} answers.", "too_few")
        asked.append(k)
    return ok(key, f"all {len(truth)} hidden counts recovered exactly ({truth}) by averaging "
                   f"{', '.join(f'{k:,}' for k in asked)} noisy answers.")


def _t3b_request(rng):
    pairs = [{"b": float(np.round(rng.uniform(0.5, 5.0), 3)),
              "target_sd": float(np.round(rng.uniform(0.02, 0.5), 3))} for _ in range(4)]
    return {"pairs": pairs}, [2 * p["b"] ** 2 / p["target_sd"] ** 2 for p in pairs]


def _t3b_collect(answers, request):
    return collect_values(answers, "k_needed",
                          ((p["b"], p["target_sd"]) for p in request["pairs"]), box=_bit)


def _t3b_judge(data, request, truth):
    key = "Task 3b"
    pairs = field(request, "pairs", [])
    kind, item = first_problem(data, len(pairs))
    if kind is not None:
        return problem_feedback(key, kind, item, "k_needed(b, target_sd)")
    shown = []
    for item, p, bound in zip(data["results"], pairs, truth):
        found = item.get("value")
        if not isinstance(found, float) or found != round(found):
            return fail(key, f"k_needed returned {short(field(found, 'repr', found))}; expected "
                             "a whole number of answers.", "type")
        k = int(found)
        # smallest whole k >= 2 b^2 / sd^2, allowing float rounding at an exact boundary
        fine = k >= bound * (1 - 1e-9) and (k - 1) < bound * (1 + 1e-9)
        if not fine:
            return fail(key, f"for b = {g(p['b'])} and a target standard deviation of "
                             f"{g(p['target_sd'])}, the smallest k is {math.ceil(bound - 1e-9):,}, "
                             f"found {k:,}. Hint: Lap(b) has variance 2b², so the mean of k "
                             "answers has standard deviation √2·b/√k; square both sides and "
                             "round up.", "wrong")
        shown.append(f"b = {g(p['b'])}, sd {g(p['target_sd'])}: {k:,}")
    return ok(key, f"right at all {len(truth)} hidden (b, target) pairs ({'; '.join(shown)}).")


# ------------------------------------------------------------------ Tasks 4 and 5: reconstruction
_DECODERS = ("dpteach.attacks:reconstruct_lsq", "dpteach.attacks:reconstruct_lp",
             "dpteach.attacks:lp_decode", "dpteach.attacks:textbook_lp",
             "dpteach.attacks.reconstruction:reconstruct_lsq",
             "dpteach.attacks.reconstruction:reconstruct_lp",
             "dpteach.attacks.reconstruction:lp_decode",
             "dpteach.attacks.reconstruction:textbook_lp")


def _recon_request(rng, spec, noise):
    from ...attacks import noisy_answers, random_subset_queries

    n, m = spec["n"], spec["m"]
    rng = np.random.default_rng(rng.integers(2**63))   # not the stream a notebook seeds
    secret = rng.integers(0, 2, n)
    queries = random_subset_queries(m, n, rng=rng)
    scale = spec["sigma"] if noise == "gaussian" else spec["b"]
    answers = noisy_answers(queries, secret, scale, noise=noise, rng=rng)
    wild = rng.choice(m, int(round(spec.get("outliers", 0.0) * m)), replace=False)
    if wild.size:
        lo, hi = spec["outlier_size"]
        answers[wild] += rng.choice([-1.0, 1.0], wild.size) * rng.uniform(lo, hi, wild.size)
    return {"queries": queries, "answers": answers}, secret.astype(int).tolist()


def _recon_collect(answers, request, name):
    if missing_answer(answers, [name]):
        return {"unsolved": True}
    with forbid(*_DECODERS, code=[answers[name]]) as guard:
        res, problem = call(answers[name], np.array(request["queries"]).copy(),
                            np.array(request["answers"], dtype=float).copy())
    if problem is not None:
        return {**problem, "used": guard.used}
    try:
        bits = np.asarray(res)
        bits = bits.astype(float) if bits.dtype.kind in "biuf" else {"repr": short(res)}
    except Exception:                              # ragged lists and the like
        bits = {"repr": short(res)}
    return {"bits": bits, "used": guard.used}


def _recon_judge(key, data, request, truth, spec, what):
    name = "reconstruct_lsq" if key == "Task 4" else "reconstruct_lp"
    if not isinstance(data, dict):
        return fail(key, "the check received malformed data.", "malformed")
    if data.get("unsolved"):
        return problem_feedback(key, "unsolved", data, name)
    used = data.get("used")
    if isinstance(used, list) and used:
        return fail(key, f"your function called {', '.join(map(str, used))}: write the decoder "
                         "yourself (that is the task).", "forbidden", used=used)
    if "error" in data:
        return problem_feedback(key, "error", data, f"{name}(queries, answers)")
    secret = np.asarray(truth)
    bits = data.get("bits")
    if not isinstance(bits, np.ndarray) or bits.dtype.kind not in "biuf":
        return fail(key, f"{name} returned {short(field(bits, 'repr', bits))}; expected an "
                         f"array of {secret.size} bits (0/1).", "type")
    bits = bits.reshape(-1) if bits.size == secret.size else bits
    if bits.shape != secret.shape:
        return fail(key, f"{name} returned shape {bits.shape}; expected one bit per person, "
                         f"shape {secret.shape}.", "shape")
    if not np.all(np.isin(bits, (0.0, 1.0))):
        return fail(key, f"{name} returned values other than 0 and 1 (e.g. "
                         f"{g(bits[~np.isin(bits, (0.0, 1.0))][0])}). Hint: round at 1/2: "
                         "bit = 1 where x ≥ 0.5.", "not_bits")
    frac = float(np.mean(bits == secret))
    wrong = int(np.sum(bits != secret))
    need = spec["threshold"]
    if frac >= need:
        return ok(key, f"{frac:.1%} of a hidden secret of {secret.size} bits recovered from "
                       f"{spec['m']} noisy subset sums ({what}); {wrong} wrong, at least "
                       f"{need:.0%} needed.", fraction=frac)
    return fail(key, f"{frac:.1%} of the hidden secret's {secret.size} bits recovered ({wrong} "
                     f"wrong), at least {need:.0%} needed; guessing gets about 50%. Hint: "
                     + ("solve min ‖Qx − a‖₂ (np.linalg.lstsq), then bit = 1 where x ≥ 1/2."
                        if key == "Task 4" else
                        "variables (x, e), minimise Σe subject to −e ≤ Qx − a ≤ e and "
                        "0 ≤ x ≤ 1, then bit = 1 where x ≥ 1/2."), "too_few", fraction=frac)


def _t4_request(rng):
    return _recon_request(rng, LSQ, "gaussian")


def _t4_collect(answers, request):
    return _recon_collect(answers, request, "reconstruct_lsq")


def _t4_judge(data, request, truth):
    return _recon_judge("Task 4", data, request, truth, LSQ,
                        f"Gaussian noise σ = {g(LSQ['sigma'])}")


def _t5_request(rng):
    return _recon_request(rng, LP, "laplace")


def _t5_collect(answers, request):
    return _recon_collect(answers, request, "reconstruct_lp")


def _t5_judge(data, request, truth):
    return _recon_judge("Task 5", data, request, truth, LP,
                        f"Laplace noise b = {g(LP['b'])}, {LP['outliers']:.0%} of the answers "
                        f"off by {g(LP['outlier_size'][0])} to {g(LP['outlier_size'][1])}")


TASKS = [
    Task(key="Task 1", points=1, names=("x_bit_from_counts",),
         title="Differencing two counts on hidden tables", request=_t1_request,
         collect=_t1_collect, judge=_t1_judge),
    Task(key="Task 2", points=1, names=("bob_from_means",), title="Differencing two averages",
         request=_t2_request, collect=_t2_collect, judge=_t2_judge),
    Task(key="Task 3a", points=1, names=("recover_count",), title="Averaging fresh noise away",
         request=_t3a_request, collect=_t3a_collect, judge=_t3a_judge),
    Task(key="Task 3b", points=1, names=("k_needed",),
         title="How many answers the average needs", request=_t3b_request,
         collect=_t3b_collect, judge=_t3b_judge),
    Task(key="Task 4", points=2, names=("reconstruct_lsq",),
         title="Least-squares reconstruction of a hidden secret", request=_t4_request,
         collect=_t4_collect, judge=_t4_judge, forbidden=_DECODERS),
    Task(key="Task 5", points=3, names=("reconstruct_lp",),
         title="LP decoding of a hidden secret", request=_t5_request, collect=_t5_collect,
         judge=_t5_judge, forbidden=_DECODERS),
]
