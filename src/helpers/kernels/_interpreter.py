"""Repairs to Triton's CPU interpreter (Triton 3.5 with NumPy 2), applied once by
:mod:`helpers.kernels` when the interpreter is on. Compiled kernels on a GPU are not affected.

* **A scalar in a loop bound** (``for k0 in range(0, K, BLOCK_K)``, or a program id in a bound):
  the interpreter holds the value as a one-element NumPy array and converts it with
  ``int(array)``, which NumPy 2 refuses for arrays of one dimension. The patch converts through
  the array's single element; 0-d values convert as before.
* **``tl.dot`` of bf16 tiles:** the interpreter stores bf16 as raw 16-bit integers and multiplies
  those integers. The patch widens bf16 tiles to fp32 first; the product of two bf16 numbers is
  exact in fp32, so the result is what the tensor cores compute, up to the order of the sums.

Library only: no page imports it.
"""

from __future__ import annotations

__all__ = ["apply_fixes"]


def apply_fixes() -> None:
    """Patch the interpreter (idempotent)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor
    if getattr(original, "_book_fixed", False):
        return

    def patched(tensor):
        original(tensor)
        tensor.__index__ = lambda self: int(np.asarray(self.handle.data).reshape(-1)[0])

    patched._book_fixed = True
    interpreter._patch_lang_tensor = patched

    builder = interpreter.InterpreterBuilder
    dot = builder.create_dot

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        def widen(x):
            if x.dtype.scalar == tl.bfloat16:
                data = interpreter._convert_float(x.data, tl.bfloat16, tl.float32, None)
                return interpreter.TensorHandle(data.view(np.float32), tl.float32)
            return x
        return dot(self, widen(a), widen(b), d, input_precision, max_num_imprecise_acc)

    builder.create_dot = create_dot
