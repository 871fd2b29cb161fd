"""Every log slider of every panel moves under the arrow keys.

A key press on a focused slider handle moves the exponent by one step, and the browser
sends the new value; the slider snaps a value from the browser to two significant
figures. Where a step is finer than two figures can show (notebook 14's clipping bound U
moves by 10**0.02, and 100 -> 104.7 snapped back to 100), the handle never left its value:
the snap now keeps as many figures as the move needs.
"""

import math

import pytest

from dpteach import panels
from dpteach.panels import _controls


def _press(slider, direction):
    """What a browser sends for one ArrowRight (+1) or ArrowLeft (-1) press."""
    exponent = math.log(slider.value, slider.base) + direction * slider.step
    exponent = min(max(exponent, slider.min), slider.max)
    slider.set_state({"value": slider.base ** exponent})
    return slider.value


def _log_sliders():
    found = []
    for name, build in sorted(panels.REGISTRY.items()):
        panel = build()
        for key, control in panel.controls.items():
            if isinstance(control, _controls._SnappedLogSlider):
                found.append((f"{name}.{key}", control))
    return found


@pytest.fixture(scope="module")
def log_sliders():
    return _log_sliders()


def _bare_copy(control):
    """The same slider, without the panel's redraw behind it."""
    return _controls._SnappedLogSlider(value=control.value, base=control.base, min=control.min,
                                       max=control.max, step=control.step, whole=control._whole)


def test_every_log_slider_moves_under_every_arrow_press(log_sliders):
    assert log_sliders, "no log slider found in any panel"
    stuck = []
    for label, control in log_sliders:
        slider = _bare_copy(control)
        lo, hi = slider.base ** slider.min, slider.base ** slider.max
        for direction in (+1, -1):
            for _ in range(20):
                before = slider.value
                after = _press(slider, direction)
                at_end = (direction > 0 and before >= hi * (1 - 1e-12)) or \
                         (direction < 0 and before <= lo * (1 + 1e-12))
                if not at_end and (after - before) * direction <= 0:
                    stuck.append(f"{label}: {before!r} -> {after!r} ({'right' if direction > 0 else 'left'})")
                    break
    assert not stuck, "sliders the arrow keys cannot move:\n" + "\n".join(stuck)


def test_notebook_14s_clipping_bound_leaves_100_and_reads_as_typed():
    panel = panels.REGISTRY["clipping_tradeoff"]()
    slider = _bare_copy(panel.controls["upper"])
    assert slider.value == 100
    seen = [slider.value]
    for _ in range(20):
        seen.append(_press(slider, +1))
    assert all(b > a for a, b in zip(seen, seen[1:])), seen
    assert seen[1] == 105 and seen[-1] > 200
    # every value still reads as a student would type it: at most three figures here
    assert all(_controls.snap(v, figures=3) == v for v in seen), seen


def test_the_wrong_twin_two_figures_always_is_stuck_at_100():
    """The old rule (two significant figures, whatever the move) never leaves 100."""
    value = 100.0
    for _ in range(20):
        value = _controls.snap(10 ** (math.log10(value) + 0.02))
    assert value == 100.0


def test_a_count_slider_moves_by_one_at_least():
    slider = _controls._SnappedLogSlider(value=1.0, base=10, min=0, max=5, step=0.05, whole=True)
    assert _press(slider, +1) == 2
    assert _press(slider, +1) == 3
    assert _press(slider, -1) == 2


def test_a_value_set_from_python_is_kept_as_it_is():
    slider = _controls._SnappedLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05)
    slider.value = math.log(3)
    assert slider.value == math.log(3)
