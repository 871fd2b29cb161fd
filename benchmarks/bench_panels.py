"""Redraw time per slider move for every panel in the registry (Agg, headless).

Each control is swept in small steps across its range, the way a dragged slider sends
values; the median and the worst move are reported per panel.
"""

import gc
import statistics
import time

import ipywidgets as widgets
import numpy as np


def sweep(control, steps=25):
    if isinstance(control, widgets.FloatLogSlider):
        return [float(control.base ** e) for e in np.linspace(control.min, control.max, steps)]
    if isinstance(control, widgets.IntSlider):
        return sorted({int(round(v)) for v in np.linspace(control.min, control.max, steps)})
    if isinstance(control, widgets.FloatSlider):
        return [float(v) for v in np.linspace(control.min, control.max, steps)]
    if isinstance(control, widgets.Checkbox):
        return [not control.value, control.value] * 3
    return [value for _, value in control._options_full] * 2


def time_panel(builder):
    gc.collect()          # start each panel from a tidy heap, as a fresh notebook would
    panel = builder()
    times = []
    for control in panel.controls.values():
        start = control.value
        for value in sweep(control):
            if value == control.value:
                continue
            t = time.perf_counter()
            control.value = value
            times.append(time.perf_counter() - t)
        control.value = start
    panel.close()         # else every panel stays alive and the collector's pauses grow
    return statistics.median(times), max(times), len(times)


def run():
    from dpteach.panels import REGISTRY

    rows = []
    for name in sorted(REGISTRY):
        median, worst, n = time_panel(REGISTRY[name])
        rows.append((f"panel {name}: median redraw ({n} moves)", median * 1e3, "ms", "<= 50 ms"))
        rows.append((f"panel {name}: worst redraw", worst * 1e3, "ms", "<= 100 ms"))
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row[0]:70s} {row[1]:8.1f} {row[2]:3s} {row[3]}")
