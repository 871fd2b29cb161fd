"""The coursework's machinery: what checks, grades and hands out the exercises, kept apart
from the lessons (``dpteach/<lesson>.py``) so that a student reading the kit finds the
maths on top and need not read this.

* :mod:`.exercises`: the ``dp.exercises.check_*`` checks the notebooks call, and the
  :class:`~dpteach.coursework.exercises.Feedback` they return; their private helpers are
  ``_feedback`` (the verdict and its wording), ``_mechanism_judge`` and
  ``_mechanism_stats`` (the statistics of ``check_mechanism``) and ``_anonymity_checks``;
* :mod:`.assignments`: the graded tasks of A1-A10 (``dp.assignments.check``);
* :mod:`.grading`: ``dpteach grade`` / ``make grade``, with ``_sandbox`` (bubblewrap and
  the forbidden-function stubs), ``_grade_runner`` and ``_grade_kernel`` (inside the
  sandbox) and ``_grade_report`` (the result files and the report);
* :mod:`.student_copies`: ``dpteach exercises`` / ``make exercises``, the student copies
  written from the model solutions;
* :mod:`.nbgrader_export`: ``dpteach nbgrader`` / ``make nbgrader``, the same solutions as
  an nbgrader course.

Nothing is imported here: ``dp.exercises`` and ``dp.assignments`` (the package's lazy
loader) load only what they need, and grading's packages (nbformat, nbclient) load only
with grading.
"""
