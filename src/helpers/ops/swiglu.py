"""``book::swiglu``: SwiGLU's gate ``silu(a) * b`` as a PyTorch custom operator.

The forward and the backward are the fused Triton kernels of :mod:`helpers.kernels.swiglu`.
The operator is made with ``torch.library.custom_op``, which PyTorch treats as opaque: eager
mode calls it, autograd calls its registered backward, and ``torch.compile`` puts it in the
graph as one call (no graph break) using the shapes its fake implementation reports.

Why ``custom_op`` and not ``torch.library.triton_op``: a ``triton_op`` lets TorchInductor see
the Triton kernel and schedule it in its own generated code (on a GPU that saves the
dispatcher's overhead per call), but tracing it needs a real GPU: with the Triton interpreter
on a CPU, the trace hands fake tensors to the kernel and fails ("Cannot access data pointer of
Tensor"), on torch 2.11 and 2.13 alike. ``custom_op`` works the same way on both machines: on a
CUDA tensor it launches the compiled kernel, on a CPU tensor it runs the same kernel through
Triton's interpreter, and where Triton is compiled for a GPU but the tensor is on the CPU, it
falls back to the PyTorch formula.

The pieces, each a ``torch.library`` registration:

* ``book::swiglu(a, b) -> out`` and ``book::swiglu_backward(a, b, grad_out) -> (da, db)``
  (the backward is an operator too, so a compiled backward graph also holds one call);
* ``register_fake`` for both: output shapes and dtypes without running anything;
* ``register_autograd``: ``setup_context`` saves the inputs (not the output; the backward
  recomputes ``sigmoid(a)``), ``backward`` calls ``book::swiglu_backward``.

>>> import torch
>>> a = torch.randn(4, 8, requires_grad=True)
>>> b = torch.randn(4, 8, requires_grad=True)
>>> out = swiglu(a, b)
>>> bool(torch.allclose(out, torch.nn.functional.silu(a) * b, atol=1e-6))
True
>>> out.sum().backward()
>>> a.grad.shape
torch.Size([4, 8])

Used by: chapters/custom-operators.md.
"""

from __future__ import annotations

import torch

from helpers.kernels import swiglu as _k

__all__ = ["swiglu", "swiglu_backward", "SwiGLUMLP", "NAMESPACE"]

#: The library namespace of the book's operators (``torch.ops.book.*``).
NAMESPACE = "book"


def _use_triton(t: torch.Tensor) -> bool:
    """Whether this tensor's device can run the Triton kernel (GPU, or CPU via interpreter)."""
    return t.device.type == "cuda" or (t.device.type == "cpu" and _k.INTERPRETED)


def _check_pair(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        raise ValueError(f"a and b must share shape, dtype and device; got {tuple(a.shape)} "
                         f"{a.dtype} {a.device} and {tuple(b.shape)} {b.dtype} {b.device}")
    if not a.is_floating_point():
        raise ValueError(f"a and b must be floating point, got {a.dtype}")


@torch.library.custom_op(f"{NAMESPACE}::swiglu", mutates_args=())
def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``silu(a) * b`` elementwise, one fused kernel; ``a`` and ``b`` of the same shape."""
    _check_pair(a, b)
    if not _use_triton(a):
        return _k.swiglu_reference(a, b)
    return _k.swiglu_fwd(a.contiguous(), b.contiguous())


@swiglu.register_fake
def _(a, b):
    _check_pair(a, b)
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.custom_op(f"{NAMESPACE}::swiglu_backward", mutates_args=())
def swiglu_backward(a: torch.Tensor, b: torch.Tensor,
                    grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of ``silu(a) * b`` with respect to ``a`` and ``b``, one fused kernel."""
    _check_pair(a, b)
    _check_pair(a, grad_out)
    if not _use_triton(a):
        return _k.swiglu_bwd_reference(a, b, grad_out)
    return _k.swiglu_bwd(a.contiguous(), b.contiguous(), grad_out.contiguous())


@swiglu_backward.register_fake
def _(a, b, grad_out):
    _check_pair(a, b)
    _check_pair(a, grad_out)
    return (torch.empty_like(a, memory_format=torch.contiguous_format),
            torch.empty_like(b, memory_format=torch.contiguous_format))


def _setup_context(ctx, inputs, output):
    a, b = inputs
    ctx.save_for_backward(a, b)


def _backward(ctx, grad_out):
    a, b = ctx.saved_tensors
    da, db = swiglu_backward(a, b, grad_out)
    return da, db


swiglu.register_autograd(_backward, setup_context=_setup_context)


class SwiGLUMLP(torch.nn.Module):
    """A transformer's SwiGLU feed-forward block: ``W_down (silu(W_gate x) * (W_up x))``.

    The gate is ``book::swiglu`` when ``fused`` is true, else PyTorch's two eager operations,
    so the two versions share weights and can be compared. Sizes: model width ``d_model``,
    hidden width ``d_ff`` (no biases, as in LLaMA-style models).
    """

    def __init__(self, d_model: int, d_ff: int, *, fused: bool = True, dtype=None, device=None):
        super().__init__()
        if d_model < 1 or d_ff < 1:
            raise ValueError(f"d_model and d_ff must be >= 1, got {d_model}, {d_ff}")
        kw = dict(bias=False, dtype=dtype, device=device)
        self.w_gate = torch.nn.Linear(d_model, d_ff, **kw)
        self.w_up = torch.nn.Linear(d_model, d_ff, **kw)
        self.w_down = torch.nn.Linear(d_ff, d_model, **kw)
        self.fused = fused

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g, u = self.w_gate(x), self.w_up(x)
        h = swiglu(g, u) if self.fused else torch.nn.functional.silu(g) * u
        return self.w_down(h)
