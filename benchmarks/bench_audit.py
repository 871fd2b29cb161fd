"""Benchmarks for notebook 11: the auditor, the zoo, exact discrete Laplace sampling and
the floating-point attack. Run alone: ``python benchmarks/bench_audit.py``."""

from __future__ import annotations

import time

import numpy as np


def run() -> list[tuple[str, float, str, str]]:
    import dpteach as dp
    from dpteach.attacks.floating_point import floating_point_attack, naive_laplace_mechanism
    from dpteach.audit import audit
    from dpteach.audit import ZOO

    rows = []
    rng = np.random.default_rng(2026)

    def lap(v, size, rng):
        return dp.laplace_mechanism(v, 1.0, 1.0, rng=rng, size=size)

    audit(lap, 0.0, 1.0, n=1_000, rng=rng)                # warm-up (imports)
    t0 = time.perf_counter()
    res = audit(lap, 0.0, 1.0, n=1_000_000, rng=rng)
    dt = time.perf_counter() - t0
    rows.append(("audit Laplace eps=1, n=10^6: time", dt, "s", "<= 2"))
    rows.append(("audit Laplace eps=1, n=10^6: eps_lb", res.epsilon_lb, "nats", ">= 0.9"))

    for name, entry in ZOO.items():
        t0 = time.perf_counter()
        r = entry.audit(rng=rng)
        dt = time.perf_counter() - t0
        verdict = "refuted" if r.refuted else "ok"
        goal = "<= 5, refuted" if not entry.private else "ok (never refuted)"
        rows.append((f"zoo {name} (n={entry.n:,}, lb={r.epsilon_lb:.3g}, {verdict})", dt, "s", goal))

    dp.discrete_laplace_mechanism(0, 1, 1.0, rng=rng, size=1000)
    for eps in (1.0, 0.1):
        n = 1_000_000
        t0 = time.perf_counter()
        dp.discrete_laplace_mechanism(0, 1, eps, rng=rng, size=n)
        dt = time.perf_counter() - t0
        rows.append((f"discrete Laplace eps={eps}: samples/s", n / dt, "1/s", ">= 1e5"))

    dp.discrete.discrete_gaussian_mechanism(0, 3.0, rng=rng, size=1000)
    for sigma in (3.0, 2.718281828):
        n = 200_000
        t0 = time.perf_counter()
        dp.discrete.discrete_gaussian_mechanism(0, sigma, rng=rng, size=n)
        dt = time.perf_counter() - t0
        rows.append((f"discrete Gaussian sigma={sigma}: samples/s", n / dt, "1/s", "-"))

    for sampler in ("naive", "numpy"):
        n = 10_000
        out = (naive_laplace_mechanism(0.0, 10.0, rng=rng, size=n) if sampler == "naive"
               else rng.laplace(0.0, 10.0, size=n))
        t0 = time.perf_counter()
        res = floating_point_attack(out, [0.0, 1.0], 10.0, sampler=sampler)
        dt = time.perf_counter() - t0
        rows.append((f"fp attack ({sampler}), eps=0.1: outputs ruling out input 1",
                     float((~res[:, 1]).mean()), "fraction", "most (> 0.5)"))
        rows.append((f"fp attack ({sampler}), eps=0.1: truth ruled out",
                     float((~res[:, 0]).mean()), "fraction", "0"))
        rows.append((f"fp attack ({sampler}): time for 10^4 outputs x 2 inputs", dt, "s", "-"))
    return rows


if __name__ == "__main__":
    for what, value, unit, goal in run():
        print(f"{what:70s} {value:12.4g} {unit:9s} goal {goal}")
