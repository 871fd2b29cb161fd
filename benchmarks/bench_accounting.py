"""Accountant timings: the PLD accountant at its largest accepted step count, and its
epsilon against the exact Gaussian epsilon at tiny deltas (it must never be below)."""

import time

import numpy as np


def pld_steps_time(steps=10**7):
    import dpteach as dp

    t = time.perf_counter()
    dp.PLDAccountant().compose_gaussian(1.0, q=0.01, steps=steps).epsilon(1e-5)
    return time.perf_counter() - t


def pld_against_exact():
    """(delta, PLD epsilon, exact epsilon) for one Gaussian of sigma = 1, sensitivity 1."""
    import dpteach as dp
    from scipy import optimize
    from scipy.special import log_ndtr

    def log_delta(eps):          # the Gaussian's hockey-stick divergence (mu = 1), in logs
        a, b = log_ndtr(0.5 - eps), log_ndtr(-0.5 - eps)
        return a + np.log1p(-np.exp(eps + b - a))

    acc = dp.PLDAccountant().compose_gaussian(1.0)
    rows = []
    for delta in (1e-6, 1e-12, 1e-30, 1e-300):
        exact = optimize.brentq(lambda e: log_delta(e) - np.log(delta), 0.0, 60.0)
        rows.append((delta, acc.epsilon(delta), exact))
    return rows


def run():
    rows = [("PLD accountant, sigma 1, q 0.01, 10^7 steps (compose + epsilon)",
             pld_steps_time(), "s", "<= 30 s")]
    for delta, ours, exact in pld_against_exact():
        rows.append((f"PLD epsilon at delta {delta:g} (exact Gaussian {exact:.8g})", ours,
                     "eps", ">= exact"))
    return rows


if __name__ == "__main__":
    for row in run():
        print(*row, sep="\t")
