"""Print every benchmark as one table: python benchmarks/run.py [name ...]

Runs each benchmarks/bench_*.py module's run() (or only the named ones, e.g.
`panels core`) and prints what was measured against its goal. Not a test: numbers
depend on the machine; the budgets are those of the design document.
`first_panel` (bench_first_panel.py) times the first panel of every notebook after a
fresh kernel and every Voilà dashboard; alone: `python benchmarks/run.py first_panel`.
"""

import importlib.util
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(names):
    files = sorted(HERE.glob("bench_*.py"))
    if names:
        files = [f for f in files if f.stem.removeprefix("bench_") in names]
    print(f"{'measure':72s} {'value':>10s}  unit  goal")
    print("-" * 100)
    for path in files:
        t = time.perf_counter()
        for what, value, unit, goal in load(path).run():
            print(f"{what:72s} {value:10.3f}  {unit:4s}  {goal}", flush=True)
        print(f"{'  (' + path.name + ' took':72s} {time.perf_counter() - t:10.1f}  s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
