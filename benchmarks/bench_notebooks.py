"""Run time of every notebook, top to bottom, in a fresh kernel (nbclient), and its
slowest cell that shows no progress bar (the course keeps those under 2 s); then every
assignment's solution notebook, whose checks run the graded tasks."""

import datetime
import pathlib
import time

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run():
    rows, total = [], 0.0
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        t = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        seconds = time.perf_counter() - t
        total += seconds
        rows.append((f"notebook {path.name}", seconds, "s", "<= 20 s"))
        rows.append(("  its slowest cell without a progress bar", _slowest_plain_cell(nb), "s",
                     "<= 2 s"))
    rows.append(("all notebooks", total, "s", "<= 120 s"))
    for path in sorted((ROOT / "notebooks" / "solutions").glob("A*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        t = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        rows.append((f"solution {path.name} (every check in the notebook)",
                     time.perf_counter() - t, "s", "<= 30 s"))
    return rows


def _slowest_plain_cell(nb):
    def stamp(text):
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))

    slowest = 0.0
    for cell in nb.cells:
        timing = cell.metadata.get("execution", {})
        if cell.cell_type != "code" or "shell.execute_reply" not in timing:
            continue
        if "progress" in cell.source or "load_panels" in cell.source:
            continue
        took = stamp(timing["shell.execute_reply"]) - stamp(timing["iopub.execute_input"])
        slowest = max(slowest, took.total_seconds())
    return slowest


if __name__ == "__main__":
    for row in run():
        print(f"{row[0]:60s} {row[1]:8.2f} {row[2]} {row[3]}")
