"""`python -m runrun.plot`: PNG figures from runrun's JSON (docs/profiling.md):

- runrun_bench --json lines: bandwidth (busbw) against message size, runrun against the raw
  transport, one panel per op;
- `runrun --profile --profile-output` JSON lines: the per-step stacked time split (compute,
  hidden communication, exposed wait, optimizer) of rank 0.

Why: tables of numbers hide the shape (where busbw flattens, which steps are slow). Importing
this package imports nothing heavy; matplotlib is loaded when a figure is drawn.
"""

from runrun.plot.inputs import PlotInputError, read_bench, read_profile  # noqa: F401
