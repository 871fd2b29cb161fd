"""Run inside the minimum-versions environment by tests/system/test_min_versions.py (not a test
module itself): every panel in the registry builds, every control is moved across its
range and changes the picture; every lesson module imports without the grading extra.
Prints one JSON line: the versions this ran on and what it checked."""

import importlib
import json
import pathlib
import pkgutil
import platform
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "panels"))

#: instructor machinery that needs the grading extra (nbformat, nbclient)
GRADING_MODULES = {"dpteach.coursework.grading", "dpteach.coursework.student_copies",
                   "dpteach.coursework.nbgrader_export", "dpteach.coursework._grade_kernel",
                   "dpteach.coursework._grade_run"}
for blocked in ("nbformat", "nbclient"):
    sys.modules[blocked] = None          # importing them now raises ImportError

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import dpteach  # noqa: E402
from dpteach import panels  # noqa: E402
from test_panels import control_values  # noqa: E402


def lesson_modules():
    names = []
    for info in pkgutil.walk_packages(dpteach.__path__, "dpteach."):
        if info.name in GRADING_MODULES or info.name.startswith(("dpteach.coursework.cli", "dpteach.__main__")):
            continue
        names.append(info.name)
    return names


def main():
    imported = [importlib.import_module(name).__name__ for name in lesson_modules()]
    moves, problems = 0, []
    for name in sorted(panels.REGISTRY):
        panel = panels.REGISTRY[name]()
        for cname, control in panel.controls.items():
            start = control.value
            pictures = {panel.png()}
            for value in control_values(control) + [start]:
                control.value = value
                pictures.add(panel.png())
                moves += 1
            if len(pictures) < 2:
                problems.append(f"{name}: moving {cname!r} never changed the picture")
        panel.close()
    import ipywidgets
    import IPython
    import numpy
    import pandas
    import scipy
    import threadpoolctl
    import tqdm
    versions = {"python": platform.python_version(), "numpy": numpy.__version__,
                "scipy": scipy.__version__, "matplotlib": matplotlib.__version__,
                "pandas": pandas.__version__, "ipywidgets": ipywidgets.__version__,
                "ipython": IPython.__version__, "tqdm": tqdm.__version__,
                "threadpoolctl": threadpoolctl.__version__}
    print(json.dumps({"versions": versions, "panels": len(panels.REGISTRY), "moves": moves,
                      "modules": len(imported), "problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
