"""Labs: the framework every lab notebook uses, and one runner module per lab.

* :mod:`.core`: the :class:`~.core.Lab` record every runner declares (name, pages, size table,
  bench settings, the checked reference), tiers (CPU, any CUDA GPU, the shipped H200
  reference), provenance, result files, progress bars, the runners' command line, and what a
  page glues (:data:`~.core.MISSING`, :func:`~.core.fmt`, :func:`~.core.page_numbers`);
* :mod:`.grading`: deterministic PASS/FAIL verdicts for correctness and performance;
* :mod:`.report`: the side-by-side table of model, H200 reference and the reader's machine;
* runners, each also a script (``python -m helpers.labs.<lab> --out DIR``): :mod:`.timing`, ...
"""

from .core import (MISSING, REFERENCE_DIR, Lab, announce, fmt, lab_device, load_reference,
                   load_result, new_result, page_numbers, progress, provenance_line,
                   reference_path, run_cli, save_result, summarize, tier)
from .grading import Verdict, check_outputs, check_performance

__all__ = ["Lab", "MISSING", "fmt", "page_numbers", "REFERENCE_DIR", "announce", "lab_device",
           "load_reference", "load_result", "new_result", "progress", "provenance_line", "reference_path", "run_cli", "save_result",
           "summarize", "tier", "Verdict", "check_outputs", "check_performance"]
