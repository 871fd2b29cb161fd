"""Execute course notebooks in place and save them lean.

    python tests/execute_notebooks.py notebooks/06_laplace_mechanism.ipynb [...]
    python tests/execute_notebooks.py --strip-only notebooks/*.ipynb

A committed notebook keeps every output a reader needs before running anything (text,
tables and each panel's static picture) but none of what changes on every run or only
makes sense in a live kernel: the saved widget state, the widget-view part of a panel's
output (its picture stays), and the execution timestamps. `tests/notebooks/test_notebook_files.py`
holds the committed notebooks to this.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def lean(nb) -> None:
    """Remove widget state, widget views and timestamps from a notebook, in place."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and WIDGET_VIEW in data:
                del data[WIDGET_VIEW]


def execute(path: Path, timeout: int = 600) -> None:
    """Run a notebook top to bottom in a fresh kernel (in its own folder) and save it lean."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    lean(nb)
    nbformat.write(nb, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--strip-only", action="store_true",
                        help="do not execute; only remove widget state and timestamps")
    args = parser.parse_args(argv)
    for path in args.notebooks:
        if args.strip_only:
            nb = nbformat.read(path, as_version=4)
            lean(nb)
            nbformat.write(nb, path)
        else:
            print(f"executing {path}", flush=True)
            execute(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
