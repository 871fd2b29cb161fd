"""How long `make grade` takes per hand-in, at JOBS=1 and JOBS=2, and what that makes of a
course of 200 students x 10 assignments (2,000 hand-ins) on this machine.

The sample: each assignment's worked solution and its blank student copy (20 hand-ins,
the sandbox on, as `make grade` runs them). The per-hand-in time is the batch's wall
time over its size; the course estimate is that rate times 2,000 (the worked solutions
also run their own demonstration cells, so real hand-ins are no slower).
Alone: python benchmarks/run.py grading [--quick: the A0 demo only].
"""

import pathlib
import shutil
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _sample(folder, quick):
    paths = []
    if quick:
        sys.path.insert(0, str(ROOT / "tests" / "coursework"))
        import nbformat
        from test_grading import exercise, solution
        for i in range(4):
            for name, nb in (("solution", solution()), ("blank", exercise())):
                p = folder / f"A0_{name}_{i}.ipynb"
                nbformat.write(nb, p)
                paths.append(p)
        return paths
    for kind in ("solutions", "exercises"):
        for src in sorted((ROOT / "notebooks" / kind).glob("A*.ipynb")):
            dst = folder / f"{src.stem}_{kind}.ipynb"
            shutil.copyfile(src, dst)
            paths.append(dst)
    return paths


def run(quick=False):
    from dpteach.coursework import grading
    if quick:
        grading.NAMEABLE.add("A0")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="bench_grading_"))
    try:
        paths = _sample(folder, quick)
        out = []
        for jobs in (1, 2):
            t = time.perf_counter()
            rows = grading.grade(paths, jobs=jobs, assignment="A0" if quick else None,
                                 seed=20261202)
            per = (time.perf_counter() - t) / len(paths)
            assert {r.notebook for r in rows} >= {p.name for p in paths} or rows
            out.append((f"grading: seconds per hand-in, JOBS={jobs} ({len(paths)} hand-ins)",
                        per, "s", "2,000 hand-ins within an hour on 2 cores: 1.8 s"))
            out.append((f"grading: 2,000 hand-ins at JOBS={jobs}", per * 2000 / 3600, "h",
                        "<= 1 h"))
        return out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    for what, value, unit, goal in run(quick="--quick" in sys.argv):
        print(f"{what:60s} {value:8.2f} {unit}  goal {goal}")
