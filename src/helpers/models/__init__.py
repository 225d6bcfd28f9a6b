"""The book's models: pure functions of explicit arguments in SI base units.

One module per topic; each function's docstring states its equation, units, assumptions and
source. Models import nothing heavier than numpy, so they run and test on any CPU.
Import the module you need, e.g. ``from helpers.models import roofline``.

Used by many pages, among them: chapters/collectives.md, chapters/cuda-execution.md,
chapters/custom-operators.md, chapters/distributed-analysis.md, chapters/fault-tolerance.md,
chapters/fusion-and-attention.md.
"""
