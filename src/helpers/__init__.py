"""helpers: the tested models, benchmark harness and figure code of the book.

Pages import from here; they never define library code inline. Submodules:

* :mod:`helpers.units` and :mod:`helpers.specs`: prefixes, formatting, hardware data;
* :mod:`helpers.models`: pure functions, one module per topic, each citing its source;
* :mod:`helpers.bench`: the one benchmark helper, environment capture and the size switch;
* :mod:`helpers.figures` and :mod:`helpers.widgets`: animations, diagrams, plots, explorers.

Used by many pages, among them: appendix/checklist.md, appendix/control-ownership.md,
appendix/formulas.md, appendix/status.md, chapters/collectives.md, chapters/cuda-execution.md.
"""

from . import specs, units

__all__ = ["specs", "units"]
__version__ = "0.1.0"
