"""Grading past one machine: ``dpteach grade --shard K/N`` grades one of N shards of a
batch, and ``dpteach grade-merge OUT SHARD.csv ...`` joins the shard reports into one.

**Which notebook goes to which shard.** Every shard is given the same list of hand-ins
(the same glob); each names them as the whole batch would (relative to the folder they
all share, or ``--root``), sorts the names by their bytes and deals them out in turn:
the i-th name in that order (counting from 0) goes to shard ``i % N + 1``. The choice
depends only on the set of names, not on the order the shell lists them, and shards
differ in size by at most one notebook (sorted names keep an assignment's hand-ins
together, so dealing spreads each assignment evenly over the shards).

**What a shard leaves.** Its report and totals, as any grading does, and, once it has
finished, a manifest beside the report (``grades_shard.json`` for ``grades.csv``): the
shard's K and N, the names of the whole batch (in the order given) and of the shard's
own notebooks, and how many rows its report holds. The manifest is removed when a
shard starts and written only when it has finished, so a shard that died has none.

**Merging** reads every shard's report and manifest and refuses, naming what is wrong,
unless the shards are K = 1 ... N exactly once each, of the same batch, each finished,
and every notebook of the batch has rows in exactly one report. The merged report holds
every row, in the order the batch was given; its totals are recomputed from them.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from ._grade_report import (FIELDS, NOTEBOOK_ROW, atomic_write, cell, report_name,  # noqa: F401
                            safe_text, show, totals_path, write_totals)

__all__ = ["parse_shard", "batch_root", "deal", "manifest_path", "ShardPlan", "plan",
           "MergeError", "merge", "main"]

#: the manifest's format, checked when merging
FORMAT = "dpteach-grade-shard/1"
#: how many names a refusal lists before it says how many more there are
_LISTED = 20


def parse_shard(text) -> tuple:
    """(K, N) from ``"K/N"``: whole numbers with 1 <= K <= N; ValueError otherwise."""
    parts = str(text).strip().split("/")
    try:
        if len(parts) != 2:
            raise ValueError
        k, n = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"--shard must be K/N with whole numbers, e.g. 2/8, got {text!r}") from None
    if not 1 <= k <= n:
        raise ValueError(f"--shard K/N needs 1 <= K <= N (K counts from 1), got {text!r}")
    return k, n


def batch_root(paths) -> str:
    """The folder every notebook of the batch is named relative to: the folder the
    notebooks share (as :func:`dpteach.coursework.grading.grade` chooses it)."""
    folders = [os.path.dirname(os.path.abspath(str(p))) for p in paths]
    if not folders:
        return "."
    try:
        return os.path.commonpath(folders)
    except ValueError:
        return os.sep


def deal(names, k, n) -> list:
    """The indices into ``names`` of shard ``k`` of ``n``: the names sorted by their
    bytes, the i-th going to shard i % n + 1; in the order of ``names``."""
    order = sorted(range(len(names)), key=lambda i: (os.fsencode(names[i]), i))
    return sorted(order[k - 1::n])


def manifest_path(report) -> Path:
    report = Path(report)
    return report.with_name(report.stem + "_shard.json")


def _listed(names) -> str:
    names = list(names)
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


@dataclass
class ShardPlan:
    """One shard of a batch: its number, the batch's root folder, its own paths and the
    report names of the batch and of the shard."""

    k: int
    n: int
    root: str
    paths: list
    batch: list = field(default_factory=list)
    names: list = field(default_factory=list)

    def start(self, report) -> None:
        """Remove the manifest a former run of this report left (this run has not
        finished)."""
        try:
            os.unlink(manifest_path(report))
        except FileNotFoundError:
            pass

    def finish(self, report, rows) -> None:
        """Write the manifest: the shard has finished and its report holds ``rows``."""
        manifest = {"format": FORMAT, "shard": self.k, "of": self.n, "batch": self.batch,
                    "notebooks": self.names, "rows": len(rows)}
        text = json.dumps(manifest, ensure_ascii=True, indent=1)
        atomic_write(manifest_path(report), lambda f: f.write(text + "\n"))


def plan(paths, names, shard, root) -> ShardPlan:
    """The shard ``shard`` (``"K/N"``) of the batch ``paths``, named ``names`` (relative
    to ``root``). ValueError when the shard is malformed or two hand-ins have one name
    in the report (the merge could not tell them apart)."""
    k, n = parse_shard(shard)
    batch = [report_name(x) for x in names]
    twice = [x for x, c in Counter(batch).items() if c > 1]
    if twice:
        raise ValueError(f"these notebooks are given more than once: {_listed(twice)}")
    mine = deal(batch, k, n)
    return ShardPlan(k, n, str(root), [str(paths[i]) for i in mine], batch,
                     [batch[i] for i in mine])


# ------------------------------------------------------------------ merging
class MergeError(ValueError):
    """Shard reports that do not make one whole batch (the message says why)."""


def _read_shard(path):
    """(manifest, rows as lists of cells) of one shard report, or MergeError."""
    where = manifest_path(path)
    try:
        manifest = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"{safe_text(path)}: no {safe_text(where.name)} beside it, so that "
                         "shard did not finish (or was not graded with --shard): grade that "
                         "shard again") from None
    except (OSError, ValueError) as err:
        raise MergeError(f"{safe_text(where)}: cannot read the manifest "
                         f"({type(err).__name__})") from None
    ok = (isinstance(manifest, dict) and manifest.get("format") == FORMAT
          and all(isinstance(manifest.get(key), int) for key in ("shard", "of", "rows"))
          and all(isinstance(manifest.get(key), list) for key in ("batch", "notebooks")))
    if not ok:
        raise MergeError(f"{safe_text(where)}: not a shard manifest of this grader")
    try:
        with open(path, newline="", encoding="utf-8", errors="backslashreplace") as f:
            table = list(csv.reader(f))
    except OSError as err:
        raise MergeError(f"{safe_text(path)}: cannot read the report ({err.strerror})") from None
    if not table or tuple(table[0]) != FIELDS:
        raise MergeError(f"{safe_text(path)}: not a grading report (its header is not "
                         f"{','.join(FIELDS)})")
    rows = table[1:]
    if any(len(r) != len(FIELDS) for r in rows) or len(rows) != manifest["rows"]:
        raise MergeError(f"{safe_text(path)}: holds {len(rows)} rows, or some incomplete, "
                         f"but its shard finished with {manifest['rows']}: the report was "
                         "changed after grading; grade that shard again")
    return manifest, rows


def merge(out, reports, totals=None) -> list:
    """Join the shard ``reports`` into the report ``out`` and its totals (``totals``,
    default ``out`` with ``_totals``), both written atomically; returns the merged rows
    (lists of cells). MergeError, and nothing written, unless the reports are shards
    1 ... N of one batch, each once and finished, and every notebook of the batch has
    rows in exactly one of them."""
    reports = [Path(r) for r in reports]
    if not reports:
        raise MergeError("no shard reports to merge")
    out = Path(out)
    if any(os.path.abspath(r) == os.path.abspath(out) for r in reports):
        raise MergeError(f"{safe_text(out)} is one of the shard reports: name a new file")
    shards = [(path, *_read_shard(path)) for path in reports]
    problems = []
    ns = sorted({m["of"] for _, m, _ in shards})
    batches = {tuple(sorted(m["batch"])) for _, m, _ in shards}
    if len(ns) > 1:
        problems.append(f"the reports are shards of different N: {ns}")
    if len(batches) > 1:
        problems.append("the reports are shards of different batches (each shard must be "
                        "given the same notebooks)")
    if problems:
        raise MergeError("; ".join(problems))
    n = ns[0]
    seen = Counter(m["shard"] for _, m, _ in shards)
    lost = [k for k in range(1, n + 1) if k not in seen]
    if lost:
        problems.append(f"missing shard{'s' if len(lost) > 1 else ''} "
                        + ", ".join(f"{k}/{n}" for k in lost))
    for k in sorted(k for k, c in seen.items() if c > 1):
        given = [safe_text(p) for p, m, _ in shards if m["shard"] == k]
        problems.append(f"shard {k}/{n} given {seen[k]} times ({', '.join(given)})")
    batch = [str(x) for x in shards[0][1]["batch"]]
    expected = set(batch)
    holders = {}
    for path, _, rows in shards:
        for name in dict.fromkeys(r[0] for r in rows):
            holders.setdefault(name, []).append(path)
    missing = [x for x in batch if x not in holders]
    doubled = [x for x, held in holders.items() if len(held) > 1]
    strange = [x for x in holders if x not in expected]
    if missing:
        problems.append(f"{len(missing)} notebook{'s' if len(missing) > 1 else ''} of the "
                        f"batch {'have' if len(missing) > 1 else 'has'} no rows: "
                        f"{_listed(map(safe_text, missing))}")
    if doubled:
        problems.append(f"{len(doubled)} notebook{'s' if len(doubled) > 1 else ''} "
                        f"{'have' if len(doubled) > 1 else 'has'} rows in more than one "
                        f"report: {_listed(map(safe_text, doubled))}")
    if strange:
        problems.append(f"rows of notebooks not in the batch: {_listed(map(safe_text, strange))}")
    if problems:
        raise MergeError("; ".join(problems))
    by_name = {}
    for _, _, rows in shards:
        for r in rows:
            by_name.setdefault(r[0], []).append(r)
    merged = [r for name in batch for r in by_name[name]]

    def write(f):
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        writer.writerows(merged)
    atomic_write(out, write)
    write_totals([_as_row(r) for r in merged], totals if totals is not None else totals_path(out))
    return merged


def _as_row(cells):
    """A report row read back, with what :func:`totals` reads of a Row."""
    notebook, task, passed, _message, points, max_points, assignment = cells
    return SimpleNamespace(notebook=notebook, task=task, passed=passed == "True",
                           points=_float(points), assignment=assignment,
                           max_points="" if max_points == "" else _float(max_points))


def _float(text) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="dpteach grade-merge",
        description="Join the reports of `dpteach grade --shard K/N` (K = 1 ... N) into one "
                    "report and its totals. Refuses, naming them, when a shard or a "
                    "notebook is missing or given twice.")
    parser.add_argument("out", metavar="OUT", help="the merged report (CSV)")
    parser.add_argument("reports", nargs="+", metavar="SHARD_REPORT",
                        help="the shards' reports (each with its _shard.json beside it)")
    parser.add_argument("--totals", help="the merged totals CSV (default: OUT's name with "
                                         "_totals)")
    args = parser.parse_args(argv)
    try:
        merged = merge(args.out, args.reports, args.totals)
    except MergeError as err:
        show(sys.stderr, f"dpteach grade-merge: refusing to merge: {err}")
        return 1
    except OSError as err:
        show(sys.stderr, f"dpteach grade-merge: cannot write the merged report: {err}")
        return 1
    notebooks = len({r[0] for r in merged})
    show(sys.stdout, safe_text(f"merged {len(args.reports)} shards: {notebooks} notebooks, "
                               f"{len(merged)} rows into {args.out} and totals into "
                               f"{args.totals or totals_path(args.out)}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
