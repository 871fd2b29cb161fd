"""The local protocols compared in notebook 17 (k-ary randomized response, unary encoding,
optimal local hashing): their variances are the lesson's formulas, the crossing points
are where the variances meet, and the local_protocols_variance panel marks them."""

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import local, local_protocols as lp, panels


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_protocol_variances_are_the_lesson_formulas(eps):
    ks = np.array([2, 5, 64, 1000])
    v = lp.protocol_variances(ks, eps)
    for m in ("krr", "sue", "oue"):
        np.testing.assert_allclose(v[m], [dp.local_variance(1, int(k), eps, mechanism=m) for k in ks])
    np.testing.assert_allclose(v["olh"], dp.olh_variance(1, eps))
    np.testing.assert_allclose(v["oue"], 4 * math.exp(eps) / math.expm1(eps) ** 2)
    e = math.exp(eps)
    np.testing.assert_allclose(v["krr"], (e + ks - 2) / (e - 1) ** 2)
    # OLH at g = e^eps + 1 exactly has OUE's variance; rounding g can only cost
    assert dp.olh_variance(1, eps, g=e + 1) == pytest.approx(v["oue"][0])
    assert v["olh"][0] >= v["oue"][0] * (1 - 1e-12)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_krr_crossover_k_is_where_the_variances_meet(eps):
    k_oue = lp.krr_crossover_k(eps, against="oue")
    assert k_oue == pytest.approx(3 * math.exp(eps) + 2)
    assert k_oue != pytest.approx(3 * math.exp(eps))                      # twin: k - 2 dropped
    for against in ("oue", "sue", "olh"):
        k = lp.krr_crossover_k(eps, against=against)
        lo, hi = math.floor(k), math.ceil(k)
        if lo < 2:
            continue
        v = lp.protocol_variances(np.array([lo, hi]), eps)
        assert v["krr"][0] <= v[against][0] <= v["krr"][1]
        # k-RR's variance is linear in k: interpolating at k meets the other exactly
        assert np.interp(k, [lo, hi], v["krr"]) == pytest.approx(v[against][0]) if hi > lo else True
    for k in range(2, 40):
        assert local.krr_is_better(k, eps) == (k < k_oue)


@pytest.mark.parametrize("k", [6, 16, 64, 1000])
def test_krr_crossover_epsilon_is_where_the_variances_meet(k):
    e = lp.krr_crossover_epsilon(k, against="oue")
    assert e == pytest.approx(math.log((k - 2) / 3), abs=1e-9)
    for against in ("oue", "olh"):
        e = lp.krr_crossover_epsilon(k, against=against)
        gap = [lp.protocol_variances(k, x)["krr"] - lp.protocol_variances(k, x)[against]
               for x in (e - 1e-6, e + 1e-6)]
        assert gap[0] > 0 > gap[1] or abs(gap[0] - gap[1]) > 0       # k-RR worse below, better above
    assert lp.krr_crossover_epsilon(4) is None                     # k <= 5: k-RR always better


def test_report_bits():
    assert lp.report_bits(1024, 1.0, "krr") == 10
    assert lp.report_bits(1024, 1.0, "oue") == 1024
    assert lp.report_bits(1024, 1.0, "olh") == 2 + 64            # g = 4 buckets
    with pytest.raises(ValueError, match="protocol"):
        lp.report_bits(8, 1.0, "rappor")


# ------------------------------------------------------------------ the two panels
def test_local_protocols_panel_marks_the_crossings_the_lesson_computes():
    panel = panels.local_protocols_variance(epsilon=1.0, k=64)
    ax1, ax2 = panel.figure.axes[:2]
    cross_k = [ln for ln in ax1.get_lines() if "3e" in (ln.get_label() or "")][0]
    assert cross_k.get_xdata()[0] == pytest.approx(lp.krr_crossover_k(1.0))
    cross_e = [ln for ln in ax2.get_lines() if ln.get_label() == "k-RR = OUE"][0]
    assert cross_e.get_xdata()[0] == pytest.approx(math.log(62 / 3))
    assert "best: OUE" in panel.status.value
    panel.controls["k"].value = 4
    assert "best: KRR" in panel.status.value
    panel.close()
