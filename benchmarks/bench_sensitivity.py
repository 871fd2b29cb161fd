"""Timings of the brute-force sensitivity checks notebook 05 runs (goal: each well under
the notebook budget of 20 s for the whole notebook)."""

import statistics
import time

import numpy as np


def _median_time(fn, repeats=3):
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def run():
    import dpteach as dp

    values = np.arange(101)
    cats = ["flu", "cold", "covid", "none"]
    hist = lambda d: [np.sum(d == c) for c in cats]  # noqa: E731
    rows = [
        ("global_sensitivity: median, add/remove, <= 3 of 0..100 (182,104 datasets, batched)",
         _median_time(lambda: dp.global_sensitivity(lambda X: np.median(X, axis=1), values, 3,
                                                    batched=True)), "s", "<= 2 s"),
        ("global_sensitivity: mean, substitute, 3 of 0..100 (batched)",
         _median_time(lambda: dp.global_sensitivity(lambda X: X.mean(axis=1), values, 3,
                                                    neighbours="substitute", batched=True)), "s", "<= 2 s"),
        ("global_sensitivity: histogram, 4 categories, substitute, size 4, L2 (per dataset)",
         _median_time(lambda: dp.global_sensitivity(hist, cats, 4, neighbours="substitute", norm=2)),
         "s", "<= 0.5 s"),
        ("local_sensitivity: median of 25 values, substitute over 0..100 (batched)",
         _median_time(lambda: dp.sensitivity.local_sensitivity(lambda X: np.median(X, axis=1), values[::4][:25],
                                                   values, neighbours="substitute", batched=True)),
         "s", "<= 0.05 s"),
    ]
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row[0]:90s} {row[1]:8.4f} {row[2]} {row[3]}")
