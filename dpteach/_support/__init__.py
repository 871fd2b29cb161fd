"""What several lessons share and a student need not read (private: skip this folder).

- ``validate``: every parameter check (the ``valid_*`` functions and the ``@checked``
  declarations of the lesson functions)
- ``tables``: table and column checks for the anonymity lessons and the attacks on them
- ``gaussian``: the exact Gaussian delta and its inversions
- ``densities``: the Laplace and normal distribution functions in closed form, so that a
  first panel does not wait for scipy.stats
- ``lazy``: scipy imported on first use (``lazy_module``)
- ``audit_outputs``: running a mechanism for the audit and encoding its outputs

Nothing here is imported by ``import dpteach`` itself: each module loads with the first
lesson that needs it.
"""
