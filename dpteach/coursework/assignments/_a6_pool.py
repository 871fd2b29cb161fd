"""A6's hidden pool of mechanisms: each, run on two neighbouring inputs, gives the
samples a student's audit sees, the claimed ε, the true privacy loss (an upper bound on
any sound audit) and whether the claim holds. :mod:`dpteach.coursework.assignments.a6_auditing`
draws its cases from here (and re-exports these names)."""

from __future__ import annotations

import math

import numpy as np


def exp_loss(k, eps_exponent):
    """Privacy loss of P ∝ exp(c u) on u = (1, 0, ..., 0) vs u' = (0, 1, ..., 1), c =
    eps_exponent (the module docstring of a5_exponential)."""
    a = eps_exponent
    return a + math.log1p((k - 1) * math.exp(a)) - math.log(math.exp(a) + k - 1)


def draw_mechanism(kind, rng, n):
    """(outputs on x, outputs on y, claimed epsilon, U, private, description)."""
    r3 = lambda a: np.round(a, 3)                          # noqa: E731 (shorter JSON)
    if kind == "laplace_count":
        eps, c = float(np.round(rng.uniform(0.3, 2.0), 2)), float(rng.integers(0, 200))
        x = r3(c + rng.laplace(0, 1 / eps, n))
        y = r3(c + 1 + rng.laplace(0, 1 / eps, n))
        return x, y, eps, eps, True, f"Laplace count, Lap(1/ε), ε = {eps:g}"
    if kind == "laplace_sum":
        eps, cap = float(np.round(rng.uniform(0.3, 2.0), 2)), float(rng.integers(2, 11))
        s = float(rng.integers(0, 100))
        x = r3(s + rng.laplace(0, cap / eps, n))
        y = r3(s + cap + rng.laplace(0, cap / eps, n))
        return x, y, eps, eps, True, f"clipped sum with Lap(Δ/ε), Δ = {cap:g}, ε = {eps:g}"
    if kind == "scale_is_epsilon":
        eps, c = float(np.round(rng.uniform(0.1, 0.5), 2)), float(rng.integers(0, 200))
        x = r3(c + rng.laplace(0, eps, n))
        y = r3(c + 1 + rng.laplace(0, eps, n))
        return x, y, eps, 1 / eps, False, f"Lap(ε) instead of Lap(Δ/ε), ε = {eps:g}"
    if kind == "half_noise":
        eps, c = float(np.round(rng.uniform(0.8, 2.0), 2)), float(rng.integers(0, 200))
        x = r3(c + rng.laplace(0, 1 / (2 * eps), n))
        y = r3(c + 1 + rng.laplace(0, 1 / (2 * eps), n))
        return x, y, eps, 2 * eps, False, f"Lap(Δ/(2ε)): half the noise, ε = {eps:g}"
    if kind == "sensitivity_missing":
        eps, cap = float(np.round(rng.uniform(0.3, 1.5), 2)), float(rng.integers(3, 9))
        s = float(rng.integers(0, 100))
        x = r3(s + rng.laplace(0, 1 / eps, n))
        y = r3(s + cap + rng.laplace(0, 1 / eps, n))
        return x, y, eps, cap * eps, False, (f"sum clipped to [0, {cap:g}] with Lap(1/ε): "
                                             f"sensitivity left out, ε = {eps:g}")
    if kind == "truncated_noise":
        eps, c = float(np.round(rng.uniform(0.3, 2.0), 2)), float(rng.integers(0, 200))
        cut = 3 / eps
        x = r3(c + np.clip(rng.laplace(0, 1 / eps, n), -cut, cut))
        y = r3(c + 1 + np.clip(rng.laplace(0, 1 / eps, n), -cut, cut))
        return x, y, eps, math.inf, False, (f"Laplace noise clipped to ±3/ε (outputs at the "
                                            f"edges exist on one input only), ε = {eps:g}")
    if kind == "randomized_response":
        eps = float(np.round(rng.uniform(0.5, 2.5), 2))
        keep = math.exp(eps) / (1 + math.exp(eps))
        x = (rng.random(n) < keep).astype(np.int8)
        y = (rng.random(n) >= keep).astype(np.int8)
        return x, y, eps, eps, True, f"randomized response, ε = {eps:g}"
    if kind == "rr_wrong_keep":
        eps = float(np.round(rng.uniform(0.7, 1.5), 2))
        keep = 1 - math.exp(-eps) / 2
        x = (rng.random(n) < keep).astype(np.int8)
        y = (rng.random(n) >= keep).astype(np.int8)
        return x, y, eps, math.log(keep / (1 - keep)), False, (
            f"randomized response keeping the bit with 1 − e^(−ε)/2, ε = {eps:g}")
    if kind == "discrete_laplace":
        from ...discrete import discrete_laplace_mechanism
        eps, c = float(np.round(rng.uniform(0.3, 2.0), 2)), int(rng.integers(0, 200))
        x = np.asarray(discrete_laplace_mechanism(c, 1, eps, rng=rng, size=n))
        y = np.asarray(discrete_laplace_mechanism(c + 1, 1, eps, rng=rng, size=n))
        return x, y, eps, eps, True, f"discrete Laplace count, ε = {eps:g}"
    if kind in ("exponential", "exponential_without_half"):
        half = kind == "exponential"
        eps = float(np.round(rng.uniform(0.5, 2.0) if half else rng.uniform(0.8, 2.0), 2))
        k = int(rng.integers(5, 60) if half else rng.integers(5, 30))
        c = eps / 2 if half else eps
        u = np.zeros(k)
        u[0] = 1.0
        from scipy import special
        x = rng.choice(k, size=n, p=special.softmax(c * u)).astype(np.int16)
        y = rng.choice(k, size=n, p=special.softmax(c * (1 - u))).astype(np.int16)
        what = "exp(εu/(2Δ))" if half else "exp(εu/Δ): the 1/2 left out"
        return x, y, eps, exp_loss(k, c), half, (f"exponential mechanism {what}, {k} "
                                                  f"candidates, ε = {eps:g}")
    if kind in ("above_threshold", "svt_no_query_noise"):
        eps = float(np.round(rng.uniform(0.5, 2.0), 2))
        out = []
        for answers in (np.array([1.0, 0.0]), np.array([0.0, 1.0])):
            rho = rng.laplace(0, 2 / eps, (n, 1))
            if kind == "above_threshold":
                nu = rng.laplace(0, 4 / eps, (n, 2))
                above = answers[None, :] + nu >= 0.5 + rho
                out.append(np.where(above.any(axis=1), above.argmax(axis=1), 2).astype(np.int8))
            else:
                out.append(answers[None, :] >= 0.5 + rho)
        if kind == "above_threshold":
            return out[0], out[1], eps, eps, True, f"AboveThreshold (sparse vector), ε = {eps:g}"
        return out[0], out[1], eps, math.inf, False, (
            f"sparse vector without noise on the answers (a vector of booleans), ε = {eps:g}")
    raise ValueError(kind)


CORRECT = ("laplace_count", "laplace_sum", "randomized_response", "discrete_laplace",
           "exponential", "above_threshold")
BROKEN = ("scale_is_epsilon", "half_noise", "sensitivity_missing", "truncated_noise",
          "rr_wrong_keep", "exponential_without_half", "svt_no_query_noise")
