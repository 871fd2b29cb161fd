"""Benchmark of dpteach.coursework.exercises.check_mechanism (coursework A3): the time one
check takes on a correct student mechanism, and how often a correct mechanism is failed
(the design asks for at most alpha = 1e-6, so any failure here is a bug).
Run alone: ``python benchmarks/bench_mechanism_check.py``."""

from __future__ import annotations

import time

import numpy as np


def correct(value, sensitivity, epsilon, rng):
    return value + rng.laplace(0.0, sensitivity / epsilon)


def _lap_data(request, rng, n):
    """What mechanism_collect returns for a correct mechanism, drawn vectorised."""
    points = np.asarray(request["points"])
    inputs = np.asarray(request["inputs"])
    b = np.repeat(points[:, 0] / points[:, 1], inputs.shape[1])[:, None]
    z = rng.laplace(0.0, 1.0, size=(b.size, n))
    return {"problem": None, "repro": [0.0, 0.0], "outputs": inputs.reshape(-1, 1) + b * z,
            "runs": n, "seconds_per_call": 1e-6, "seconds": 0.0, "too_slow": False}


def run(full_seeds=10, judge_seeds=400) -> list[tuple[str, float, str, str]]:
    from dpteach.coursework import exercises as ex

    rows = []
    ex.check_mechanism(correct, sensitivity=1, epsilon=0.5, seconds=1e-3)   # warm-up
    times, cpu, fails, calls = [], [], 0, 0
    for seed in range(full_seeds):
        t0, c0 = time.perf_counter(), time.process_time()
        fb = ex.check_mechanism(correct, sensitivity=1, epsilon=0.5, rng=seed)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        fails += not fb.passed
        calls = fb.details.get("runs", 0) * fb.details.get("inputs", 0)
    rows.append(("check_mechanism, correct Laplace: seconds per check (median)",
                 float(np.median(times)), "s", "<= 3"))
    rows.append(("check_mechanism, correct Laplace: seconds per check (worst)",
                 float(np.max(times)), "s", "<= 3"))
    rows.append(("check_mechanism, correct Laplace: CPU seconds per check (median; = wall "
                 "when idle)", float(np.median(cpu)), "s", "<= 3"))
    rows.append(("check_mechanism: student calls per check (last seed)", float(calls), "",
                 ">= 5e5"))
    rows.append((f"check_mechanism false failures, correct Laplace ({full_seeds} seeds)",
                 float(fails), "", "0"))

    for n_key in ("n_min", "n_max"):
        fails, t_judge = 0, []
        seeds = judge_seeds if n_key == "n_min" else judge_seeds // 4
        for seed in range(seeds):
            rng = np.random.default_rng(1_000_000 + seed)
            request = ex.mechanism_request(rng, sensitivity=1, epsilon=0.5, value=10.0)
            data = _lap_data(request, rng, request[n_key])
            t0 = time.perf_counter()
            fails += not ex.mechanism_judge(data, request).passed
            t_judge.append(time.perf_counter() - t0)
        runs = request[n_key]
        rows.append((f"mechanism_judge false failures, pre-drawn Laplace, {runs:,} runs "
                     f"({seeds} seeds)", float(fails), "", "0 (rate <= 1e-6)"))
        rows.append((f"mechanism_judge time, {runs:,} runs per input",
                     float(np.median(t_judge)), "s", "-"))
    return rows


if __name__ == "__main__":
    for what, value, unit, goal in run():
        print(f"{what:72s} {value:10.3f}  {unit:4s}  {goal}")
