"""What the judging server of :mod:`._judging` imports once, before it forks a child
per notebook: every assignment's tasks, with the libraries their judges and their
requests need (numpy, pandas, scipy, the kit). A child then starts with all of it in
memory; importing it again in each child took 3 to 4 seconds per notebook judged."""

from . import assignments

for _key in assignments.ASSIGNMENTS:
    try:
        assignments.tasks(_key)
    except Exception:                                       # noqa: BLE001
        pass        # an assignment that cannot load fails in its own grading, by name
