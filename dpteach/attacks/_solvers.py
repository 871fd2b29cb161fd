"""Fast solvers behind dpteach.attacks.reconstruction (private; no notebook reads this).

Two pieces of machinery live here so that ``reconstruction.py`` reads as the maths:

* least squares for large query matrices (``lsq_gram``, ``lsq_cg``): the normal equations,
  by Cholesky on an exact Gram matrix or by preconditioned conjugate gradients;
* ``ipm_l1_decode``, an interior-point method for the L1-decoding LP, opt-in through
  ``reconstruct_lp(..., solver="ipm")``.

Why the interior-point method exists: the course's notebooks and panels decode at most
n = 200 people, where scipy's HiGHS on the LP's dual takes a fraction of a second (the
default; measured on a 2-core machine, m = 4n: 0.03 s at n = 100, 0.07 s at n = 200).
At n = 1000, m = 4n (benchmarks/bench_reconstruction.py --highs-1000) the same HiGHS
solve took 46 s (65 s under a load average of 8), and this method 1.7 s (5-6 s under that
load) in 12 iterations, for the same optimum (relative difference 6e-12) and the same
bits, with a certified relative gap below 1e-10. Tests check it against HiGHS to
optimality (tests/lessons/test_reconstruction.py).
"""

from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np
from scipy import linalg
from threadpoolctl import ThreadpoolController

_ROW_DROP = 1e-6
_ROW_DROP_REFINED = 1e-8
_REFINE_MAX = 8


# ------------------------------------------------------------------------ least squares
#: from this many matrix entries reconstruct_lsq uses conjugate gradients
CG_MIN_SIZE = 1_000_000


def _small(m, n):
    """Small enough that numpy's own loops beat a (possibly multithreaded) BLAS call."""
    return n * n * m <= _SMALL_WORK


_SMALL_WORK = 3_000_000


def _weighted_gram(mat):
    """mat^T mat; numpy's einsum loop for small matrices (no BLAS thread start-up),
    BLAS (syrk) for large ones."""
    if _small(*mat.shape):
        return np.einsum("ji,jk->ik", mat, mat)
    return mat.T @ mat


def lsq_gram(q, a):
    """Solve the normal equations (Q^T Q) x = Q^T a (``a`` may hold several columns):
    the Gram matrix is exact (a 0/1 matrix gives whole numbers), Cholesky in float64."""
    if _small(*q.shape):
        qd = q.astype(np.float64)
        gram = np.einsum("ji,jk->ik", qd, qd)       # exact integers, numpy's own loop
    else:
        qf = q.astype(np.float32)
        gram = (qf.T @ qf).astype(np.float64)       # exact integers (below 2^24)
    rhs = q.T.astype(np.float64) @ a
    try:
        return linalg.cho_solve(linalg.cho_factor(gram, check_finite=False), rhs,
                                check_finite=False)
    except linalg.LinAlgError:
        return linalg.lstsq(gram, rhs, check_finite=False)[0]


def lsq_cg(q, a, *, rtol=1e-10, max_iter=300):
    """Preconditioned CG on Q^T Q x = Q^T a; None if it does not converge."""
    m, n = q.shape
    mu = q.mean(axis=0, dtype=np.float64)
    d = m * mu * (1.0 - mu)
    if (d <= 0).any():
        return None                  # a column that is all 0 or all 1: no preconditioner
    qf = q.astype(np.float64)
    dinv_mu = mu / d
    coef = m / (1.0 + m * (mu @ dinv_mu))

    def precond(r):
        z = r / d
        return z - dinv_mu * (coef * (mu @ z))

    x, converged = pcg(lambda v: qf.T @ (qf @ v), precond, qf.T @ a, rtol=rtol,
                       max_iter=max_iter)
    return x if converged else None


def pcg(apply, precond, b, *, rtol, max_iter):
    """Preconditioned conjugate gradients for apply(x) = b (symmetric positive definite),
    started from precond(b); returns (x, whether ||b - apply(x)|| <= rtol ||b||)."""
    x = precond(b)
    r = b - apply(x)
    target = rtol * np.linalg.norm(b)
    z = precond(r)
    p = z.copy()
    rz = r @ z
    for _ in range(max_iter):
        if np.linalg.norm(r) <= target or rz <= 0:
            break
        ap = apply(p)
        alpha = rz / (p @ ap)
        x += alpha * p
        r -= alpha * ap
        z = precond(r)
        rz_new = r @ z
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, bool(np.linalg.norm(r) <= target)


# --------------------------------------------------------------------------- L1 decoding
def _objectives(qf, a, x, y):
    """Primal value ||a - Qx||_1 (x in the box) and dual value
    a^T y - sum_i max(0, (Q^T y)_i) (y in [-1,1]^m); every such pair brackets the optimum.
    (The certificate reported to the user is recomputed in reconstruction.py.)"""
    xb = np.clip(x, 0.0, 1.0)
    yb = np.clip(y, -1.0, 1.0)
    primal = np.abs(a - qf @ xb).sum()
    dual = a @ yb - np.maximum(qf.T @ yb, 0.0).sum()
    return primal, dual


_BLAS = []


def _blas():
    """The loaded BLAS libraries' thread pools (looked up once: it takes ~10 ms)."""
    if not _BLAS:
        _BLAS.append(ThreadpoolController().select(user_api="blas"))
    return _BLAS[0]


def _blas_threads(*, big_product=False):
    """How many threads the LP's BLAS calls should use.

    On a machine with two cores or fewer, every BLAS call but the normal matrix product
    runs on one thread: OpenBLAS's second thread gains little on a matrix-vector product
    or a 1000 x 1000 factorisation, and while it waits for work it competes with the
    interpreter for the other core (measured on a 2-core machine, n = 1000, m = 4n: 4.8 s
    with one thread throughout, 6.2 s with two). The normal matrix product is large
    enough to use both (0.19 s on one thread, 0.11 s on two). Elsewhere keep the default.
    """
    cores = os.cpu_count() or 1
    if cores > 2:
        return None
    return cores if big_product else 1


#: below this many matrix entries the BLAS calls are too small for threads to matter
_SMALL_LP = 200_000


def _blas_limit(threads):
    return contextlib.nullcontext() if threads is None else _blas().limit(limits=threads)


def ipm_l1_decode(q, a, tol, max_iter):
    """Solve  min_{0 <= x <= 1} ||a - Q x||_1  (q an int8 0/1 matrix, a float answers).

    Returns (x, y, iterations): x in [0,1]^n and a dual point y in [-1,1]^m whose gap
    certifies optimality. The LP, in equality form, is
    ``min sum(u + v)  s.t.  Q x + u - v = a,  0 <= x <= 1,  u, v >= 0``; its dual is
    ``max a^T y - sum_i max(0, (Q^T y)_i)`` over ``-1 <= y <= 1``.
    This is a primal-dual interior-point method (Mehrotra predictor-corrector, plus up to
    two of Gondzio's centrality correctors per iteration) specialised to that structure:
    the Newton system is reduced to n x n normal equations (F + Q^T E^{-1} Q) dx = rhs,
    with diagonal E (m) and F (n), never the (2m + n)-variable system a general solver
    factorises. The normal matrix is one BLAS product of the rows whose weight is not
    negligible, in float32 until the relative gap reaches 1e-4 and in float64 after that,
    when conjugate gradients on the exact system polish each direction. The method stops
    when the gap between ||a - Qx||_1 and the dual bound at the current y is at most
    ``tol * max(1, ||a - Qx||_1)``; near the end it also tries to guess the optimal
    vertex (a crossover) and keeps it when that certifies the optimum.
    """
    m, n = q.shape
    if m * n < _SMALL_LP:                 # a panel's size: thread-pool set-up would dominate
        return _ipm(q, a, tol, max_iter)
    with _blas_limit(_blas_threads()):
        return _ipm(q, a, tol, max_iter)


def _ipm(q, a, tol, max_iter):
    m, n = q.shape
    qf = q.astype(np.float64)
    qt = np.ascontiguousarray(qf.T)
    q32 = q.astype(np.float32)

    x, s, u, v, y, p, qq, z, w = _feasible_start(qf, qt, a)
    n_pairs = 2 * n + 2 * m

    best = None
    it = 0
    for it in range(1, max_iter + 1):
        primal, dual = _objectives(qf, a, x, y)
        if best is None or primal - dual < best[0]:
            best = (primal - dual, x.copy(), y.copy(), primal, dual)
        rel = (primal - dual) / max(1.0, abs(primal))
        if rel <= tol:
            break
        if rel <= _CROSSOVER_FROM:
            # crossover: guess the optimal vertex from the iterate and certify it
            vertex = _crossover(qf, qt, a, x, s, w, z, u, v, p, qq)
            if vertex is not None:
                xv, yv, pv, dv_ = vertex
                if pv - dv_ < best[0]:
                    best = (pv - dv_, xv, yv, pv, dv_)
                if pv - dv_ <= tol * max(1.0, abs(pv)):
                    break
        # residuals (zero in exact arithmetic: the method starts feasible)
        rp = a - qf @ x - u + v
        rs = 1.0 - x - s
        rx = -(qt @ y - z + w)
        ru = 1.0 - y - p
        rv = 1.0 + y - qq
        mu = (x @ w + s @ z + u @ p + v @ qq) / n_pairs

        e_diag = u / p + v / qq
        f_diag = z / s + w / x
        inv_e = 1.0 / e_diag
        normal = _NormalEquations(qf, qt, q32, inv_e, f_diag, refine=rel <= _REFINE_FROM)

        def solve(c1, c2, c3, c4):
            h1 = rp - (c3 - u * ru) / p + (c4 - v * rv) / qq
            h2 = rx - c1 / x + (c2 - z * rs) / s
            dx = normal.solve(qt @ (inv_e * h1) - h2)
            dy = inv_e * (h1 - qf @ dx)
            ds = rs - dx
            dw = (c1 - w * dx) / x
            dz = (c2 - z * ds) / s
            dp = ru - dy
            dq = rv + dy
            du = (c3 - u * dp) / p
            dv = (c4 - v * dq) / qq
            return dx, ds, du, dv, dy, dw, dz, dp, dq

        # predictor (affine scaling)
        aff = solve(-x * w, -s * z, -u * p, -v * qq)
        ap, ad = (min(1.0, t) for t in _step_lengths(x, s, u, v, w, z, p, qq, aff))
        dx, ds, du, dv, dy, dw, dz, dp, dq = aff
        mu_aff = ((x + ap * dx) @ (w + ad * dw) + (s + ap * ds) @ (z + ad * dz)
                  + (u + ap * du) @ (p + ad * dp) + (v + ap * dv) @ (qq + ad * dq)) / n_pairs
        sigma = (mu_aff / mu) ** 3
        # corrector (Mehrotra): centring plus the second-order term
        cen = sigma * mu
        rhs = (cen - x * w - dx * dw, cen - s * z - ds * dz,
               cen - u * p - du * dp, cen - v * qq - dv * dq)
        step = solve(*rhs)
        ap, ad = _step_lengths(x, s, u, v, w, z, p, qq, step)
        step, ap, ad = _centrality_correctors(solve, (x, s, u, v, w, z, p, qq), step, rhs,
                                              ap, ad, cen)
        ap, ad = min(1.0, 0.9995 * ap), min(1.0, 0.9995 * ad)
        dx, ds, du, dv, dy, dw, dz, dp, dq = step
        x = x + ap * dx
        s = s + ap * ds
        u = u + ap * du
        v = v + ap * dv
        y = y + ad * dy
        w = w + ad * dw
        z = z + ad * dz
        p = p + ad * dp
        qq = qq + ad * dq
    else:
        primal, dual = _objectives(qf, a, x, y)
        if primal - dual < best[0]:
            best = (primal - dual, x.copy(), y.copy(), primal, dual)
    _, xb, yb, _, _ = best
    return np.clip(xb, 0.0, 1.0), np.clip(yb, -1.0, 1.0), it


def _feasible_start(qf, qt, a):
    """A strictly feasible start: x = s = 1/2; u - v = r = a - Qx with u, v >= theta
    (theta = mean |r|, so that u p and v q are of the size of the residuals); y = 0,
    p = q = 1; z = w = theta (Q^T y - z + w = 0). Returns (x, s, u, v, y, p, q, z, w)."""
    m, n = qf.shape
    x = np.full(n, 0.5)
    s = 1.0 - x
    r = a - qf @ x
    theta = max(1.0, float(np.mean(np.abs(r))))
    u = np.maximum(r, 0.0) + theta
    v = u - r
    y = np.zeros(m)
    g = qt @ y
    z = np.maximum(g, 0.0) + theta
    return x, s, u, v, y, 1.0 - y, 1.0 + y, z, z - g


def _centrality_correctors(solve, point, step, rhs, ap, ad, cen):
    """Gondzio's centrality correctors: each costs one more solve with the same factor
    (cheap next to forming it) and lengthens the steps, so fewer iterations -- fewer
    normal matrices -- are needed. Returns the (possibly corrected) step and its lengths."""
    x, s, u, v, w, z, p, qq = point
    for _ in range(_CORRECTORS):
        if min(ap, ad) >= 1.0:
            break
        tp, td = min(1.0, ap + _CORRECTOR_REACH), min(1.0, ad + _CORRECTOR_REACH)
        dx, ds, du, dv, dy, dw, dz, dp, dq = step
        lo, hi = 0.1 * cen, 10.0 * cen
        extra = []
        for prim, dprim, dual_, ddual in ((x, dx, w, dw), (s, ds, z, dz), (u, du, p, dp),
                                          (v, dv, qq, dq)):
            prod = (prim + tp * dprim) * (dual_ + td * ddual)
            extra.append(np.maximum(np.clip(prod, lo, hi) - prod, -hi))
        trial_rhs = tuple(c + t for c, t in zip(rhs, extra))
        trial = solve(*trial_rhs)
        tap, tad = _step_lengths(x, s, u, v, w, z, p, qq, trial)
        if min(tap, tad) < min(ap, ad) + 0.1 * _CORRECTOR_REACH:
            break
        step, rhs, ap, ad = trial, trial_rhs, tap, tad
    return step, ap, ad


_CROSSOVER_FROM = 1e-6      # relative gap below which vertex guesses are worth a try
_REFINE_FROM = 1e-4         # relative gap below which search directions are refined
_CORRECTORS = 2             # at most this many centrality correctors per iteration
_CORRECTOR_REACH = 0.3      # each aims to lengthen the steps by this much


class _NormalEquations:
    """The interior-point normal equations (F + Q^T E^-1 Q) dx = rhs, n x n.

    The matrix is one BLAS product over the rows whose weight is not negligible next to
    the largest, factorised by Cholesky. Far from the optimum (``refine=False``) it is
    formed in float32: Q is 0/1, so only the weights are rounded, and the direction only
    steers the search (the certificate is computed in float64). Near the optimum the
    weights spread over many orders of magnitude and float32 directions stall the method
    at a relative gap of about 1e-5, so ``refine=True`` forms it in float64 (from even
    fewer rows by then) and uses the factor as the preconditioner of conjugate gradients
    on the exact system, which also restores the rows left out.
    """

    def __init__(self, qf, qt, q32, inv_e, f_diag, *, refine):
        self.qf, self.qt, self.inv_e, self.f_diag, self.refine = qf, qt, inv_e, f_diag, refine
        keep = inv_e > (_ROW_DROP_REFINED if refine else _ROW_DROP) * inv_e.max()
        self.kept = int(keep.sum())
        attempts = dict.fromkeys(((np.float64 if refine else np.float32, 0.0),
                                  (np.float64, 0.0), (np.float64, 1e-12), (np.float64, 1e-8)))
        for dtype, ridge in attempts:
            source = q32 if dtype == np.float32 else qf
            rows = source if self.kept == len(keep) else source[keep]
            scaled = rows * np.sqrt(inv_e[keep]).astype(dtype)[:, None]
            small = qf.size < _SMALL_LP
            with _blas_limit(None if small else _blas_threads(big_product=True)):
                normal = _weighted_gram(scaled)
            diag = np.diag_indices_from(normal)
            normal[diag] += f_diag.astype(dtype) + dtype(ridge) * normal[diag].max()
            try:
                self.factor = linalg.cho_factor(normal, overwrite_a=True, check_finite=False)
                return
            except linalg.LinAlgError:
                continue
        raise linalg.LinAlgError("the interior-point normal equations could not be factorised")

    def matvec(self, v):
        return self.f_diag * v + self.qt @ (self.inv_e * (self.qf @ v))

    def precondition(self, r):
        return linalg.cho_solve(self.factor, r, check_finite=False)

    def solve(self, rhs):
        if not self.refine:
            return self.precondition(rhs)
        # conjugate gradients on the exact system, preconditioned by the factor
        return pcg(self.matvec, self.precondition, rhs, rtol=1e-12, max_iter=_REFINE_MAX)[0]


def _crossover(qf, qt, a, x, s, w, z, u, v, p, qq):
    """Guess the optimal vertex from an interior iterate; return the best certified
    (x, y, primal, dual) among a few guesses, or None.

    A vertex of the L1 LP has each x_i free, at 0 or at 1, and (without degeneracy) as
    many zero-residual answers (rows) as free x_i. Near the optimum, free x_i have both
    x_i/w_i and s_i/z_i large; zero-residual rows have max(u_j, v_j)/min(p_j, q_j) small.
    For k free variables, solving Q[Z, F] x_F = a_Z - Q[Z, U] 1 gives x; the dual point
    takes y_j = sign(r_j) off Z and solves Q[Z, F]^T y_Z = -Q[not Z, F]^T y_notZ, so that
    (Q^T y)_F = 0. Each guess is certified by its duality gap; k is tried at the two
    indicator counts and a few values between them.
    """
    m, n = qf.shape
    freeness = np.minimum(x / w, s / z)
    score = np.maximum(u, v) / np.minimum(p, qq)
    var_order = np.argsort(-freeness, kind="stable")
    row_order = np.argsort(score, kind="stable")
    k_var = int((freeness > 1.0).sum())
    k_row = int((score < 1.0).sum())
    tried = set()
    best = None
    lo, hi = sorted((k_var, k_row))
    # the true count lies between the two indicators' counts, usually; try a few
    guesses = [k_var, k_row] + list(np.unique(np.linspace(lo, hi, 8).round().astype(int)))
    for k in guesses:
        if k in tried or k < 0 or k > min(m, n):
            continue
        tried.add(k)
        free = np.zeros(n, dtype=bool)
        free[var_order[:k]] = True
        upper = ~free & (s < x)
        rows = row_order[:k]
        xv = np.where(upper, 1.0, 0.0)
        yv = np.zeros(m)
        if k:
            b = qf[np.ix_(rows, np.flatnonzero(free))]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", linalg.LinAlgWarning)
                    lu = linalg.lu_factor(b, check_finite=False)
            except (linalg.LinAlgError, ValueError):
                continue
            if not np.all(np.isfinite(lu[0])) or np.min(np.abs(np.diag(lu[0]))) < 1e-9:
                continue
            xv[free] = linalg.lu_solve(lu, a[rows] - qf[rows] @ upper.astype(float),
                                       check_finite=False)
        xv = np.clip(xv, 0.0, 1.0)
        r = a - qf @ xv
        others = np.ones(m, dtype=bool)
        others[rows] = False
        yv[others] = np.sign(r[others])
        if k:
            yv[rows] = linalg.lu_solve(lu, -(qt[free] @ yv), trans=1, check_finite=False)
        yv = np.clip(yv, -1.0, 1.0)
        primal, dual = _objectives(qf, a, xv, yv)
        if best is None or primal - dual < best[2] - best[3]:
            best = (xv, yv, primal, dual)
    return best


def _step_lengths(x, s, u, v, w, z, p, qq, step):
    """The longest primal and dual steps along ``step`` that keep every variable
    non-negative (may exceed 1, or be infinite)."""
    dx, ds, du, dv, dy, dw, dz, dp, dq = step

    def longest(vals, dirs):
        neg = dirs < 0
        if not neg.any():
            return np.inf
        return float(np.min(-vals[neg] / dirs[neg]))

    ap = min(longest(x, dx), longest(s, ds), longest(u, du), longest(v, dv))
    ad = min(longest(w, dw), longest(z, dz), longest(p, dp), longest(qq, dq))
    return ap, ad
