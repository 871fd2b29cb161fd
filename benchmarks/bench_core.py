"""Core timings: `import dpteach`, and the exponential mechanism over 10^6 candidates."""

import statistics
import subprocess
import sys
import time

import numpy as np


def import_time(repeats=5):
    code = "import time; t = time.perf_counter(); import dpteach; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(repeats)]
    return statistics.median(runs)


def exponential_time(repeats=5):
    import dpteach as dp

    rng = np.random.default_rng(0)
    candidates = np.arange(10**6)
    scores = rng.normal(size=10**6)
    dp.exponential_mechanism(candidates, scores, 1.0, 1.0, rng=rng, size=1000)  # warm up
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        dp.exponential_mechanism(candidates, scores, 1.0, 1.0, rng=rng, size=1000)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def run():
    return [
        ("import dpteach", import_time(), "s", "<= 0.5 s"),
        ("exponential mechanism, 10^6 candidates x 10^3 draws", exponential_time(), "s", "<= 0.1 s"),
    ]


if __name__ == "__main__":
    for row in run():
        print(*row, sep="\t")
