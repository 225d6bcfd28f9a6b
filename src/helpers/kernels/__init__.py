"""Small GPU kernels the lessons run, written in Triton.

Device code, kept apart from the pure models of :mod:`helpers.models`. Where no CUDA GPU is
usable (:func:`helpers.bench.has_cuda`), importing a kernel module turns on Triton's
interpreter (``TRITON_INTERPRET=1``) before Triton is imported, so the same kernel runs, slowly
but exactly, on a CPU with NumPy.
"""
