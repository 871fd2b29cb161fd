"""What the judging server of :mod:`._judging` imports once, before it forks a child
per notebook: every assignment's tasks, with the libraries their judges and their
requests need (numpy, pandas, scipy, the kit). A child then starts with all of it in
memory; importing an assignment's tasks again in each child took up to 1.3 s per
notebook judged. The server pays that once, for every assignment, when it starts."""

from . import assignments

for _key in assignments.ASSIGNMENTS:
    try:
        assignments.tasks(_key)
    except Exception:                                       # noqa: BLE001
        pass        # an assignment that cannot load fails in its own grading, by name
