// Runs notebooks' code cells in the JupyterLite site's own Pyodide, under Node.js, with
// no browser: `node pyodide_run.mjs SITE_PYODIDE_DIR NOTEBOOK_DIR NAME.ipynb ...`.
// The cells run one after another in one IPython shell (as Run All would, notebook after
// notebook), with matplotlib's Agg backend. The last line of standard output is
// `REPORT {json}`: per notebook, the code cells run and the first error, if any.
// tests/system/test_lite.py runs it for the notebooks whose index arrays once broke
// under Pyodide, where numpy's intp is 32 bits.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, notebookDir, ...names] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const py = await loadPyodide({
  indexURL: path.resolve(pyodideDir) + "/",
  env: { MPLBACKEND: "Agg", HOME: "/home/pyodide" },
});
await py.loadPackage(["dpteach", "ipython"], { messageCallback: () => {} });
py.FS.mkdirTree("/notebooks");
py.FS.mount(py.FS.filesystems.NODEFS, { root: path.resolve(notebookDir) }, "/notebooks");
py.globals.set("NAMES", py.toPy(names));
const report = await py.runPythonAsync(`
import json, os, platform, time
import numpy as np
from IPython.core.interactiveshell import InteractiveShell

os.chdir("/notebooks")
shell = InteractiveShell.instance()
report = {"platform": platform.platform(), "intp_bits": 8 * np.dtype(np.intp).itemsize,
          "notebooks": {}}
for name in NAMES:
    with open(name, encoding="utf-8") as f:
        cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    started, error, ran = time.time(), None, 0
    for cell in cells:
        result = shell.run_cell("".join(cell["source"]), store_history=True)
        ran += 1
        if not result.success:
            err = result.error_in_exec or result.error_before_exec
            error = f"cell {ran}: {type(err).__name__}: {err}"[:2000]
            break
    report["notebooks"][name] = {"cells": len(cells), "ran": ran, "error": error,
                                 "seconds": round(time.time() - started, 1)}
json.dumps(report)
`);
console.log("REPORT " + report);
