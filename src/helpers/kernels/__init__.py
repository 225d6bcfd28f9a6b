"""The GPU kernels the lessons and labs run, written in Triton (and one in CUDA C).

Device code, kept apart from the pure models of :mod:`helpers.models`: one module per page or
lab (:mod:`.elementwise` for lesson 05, :mod:`.roofline`, :mod:`.memory_access`, ...).

Where no CUDA GPU is usable (:func:`helpers.bench.has_cuda`), importing this package turns on
Triton's interpreter (``TRITON_INTERPRET=1``) before any kernel module imports Triton, so the
same kernels run, slowly but exactly, on a CPU with NumPy. Triton fixes the mode when it is
first imported, which is why the switch lives here, at the package's entrance. Two repairs
to the interpreter that the kernels need are applied here too (:mod:`._interpreter`).
"""

import os as _os

from helpers.bench.sizes import has_cuda as _has_cuda

if not _has_cuda():
    _os.environ.setdefault("TRITON_INTERPRET", "1")

if _os.environ.get("TRITON_INTERPRET") == "1":
    from ._interpreter import apply_fixes as _apply_fixes

    _apply_fixes()
