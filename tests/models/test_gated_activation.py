"""The gated-activation traffic models against a byte count of PyTorch's own eager kernels."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from helpers.models import gated_activation as ga

# Operations that only relabel memory (views, detach) move no bytes.
_NO_TRAFFIC = {"detach", "view", "alias", "t", "expand", "_unsafe_view", "reshape"}


class ByteCounter(TorchDispatchMode):
    """Sum the bytes of every tensor each aten operation reads and writes (the oracle)."""

    def __init__(self):
        super().__init__()
        self.bytes = 0
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name not in _NO_TRAFFIC:
            self.ops.append(name)
            for t in tree_leaves((args, kwargs, out)):
                if isinstance(t, torch.Tensor):
                    self.bytes += t.numel() * t.element_size()
        return out


def _eager_traffic(n: int, dtype=torch.float32) -> tuple[int, int, list[str]]:
    a = torch.randn(n, dtype=dtype, requires_grad=True)
    b = torch.randn(n, dtype=dtype, requires_grad=True)
    g = torch.randn(n, dtype=dtype)
    with ByteCounter() as fwd:
        out = torch.nn.functional.silu(a) * b
    with ByteCounter() as bwd:
        out.backward(g)
    return fwd.bytes, bwd.bytes, fwd.ops + bwd.ops


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_unfused_passes_match_pytorch_eager_kernels(dtype):
    n = 4096
    fwd, bwd, ops = _eager_traffic(n, dtype)
    b = torch.empty((), dtype=dtype).element_size()
    assert fwd == ga.swiglu_traffic_bytes(n, b, fused=False)
    assert bwd == ga.swiglu_traffic_bytes(n, b, fused=False, direction="backward")
    assert "silu" in ops and "silu_backward" in ops


def test_fused_operator_moves_the_fused_bytes():
    from helpers.kernels import swiglu as k

    n = 2048
    a, b, g = torch.randn(n), torch.randn(n), torch.randn(n)
    # The fused kernels touch exactly their arguments: count them as the launch sees them.
    fwd_args = (a, b, k.swiglu_fwd(a, b))
    bwd_args = (a, b, g, *k.swiglu_bwd(a, b, g))
    assert sum(t.nbytes for t in fwd_args) == ga.swiglu_traffic_bytes(n, 4, fused=True)
    assert sum(t.nbytes for t in bwd_args) == ga.swiglu_traffic_bytes(
        n, 4, fused=True, direction="backward")


def test_saved_activations_match_autograd():
    n = 1000
    a = torch.randn(n, requires_grad=True)
    b = torch.randn(n, requires_grad=True)
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        torch.nn.functional.silu(a) * b
    distinct = {t.data_ptr(): t.nbytes for t in saved}
    assert sum(distinct.values()) == ga.swiglu_saved_bytes(n, 4, fused=False)

    from helpers.ops import swiglu
    saved.clear()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        swiglu(a, b)
    distinct = {t.data_ptr(): t.nbytes for t in saved}
    assert sum(distinct.values()) == ga.swiglu_saved_bytes(n, 4, fused=True)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 10**9), b=st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_fusion_always_saves_and_scales_linearly(n, b):
    for d in ("forward", "backward"):
        fused = ga.swiglu_traffic_bytes(n, b, fused=True, direction=d)
        unfused = ga.swiglu_traffic_bytes(n, b, fused=False, direction=d)
        assert fused < unfused
        assert math.isclose(ga.swiglu_traffic_bytes(2 * n, b, fused=True, direction=d),
                            2 * fused)
    # a training step (forward + backward) moves 8 passes fused against 14 unfused
    assert ga.swiglu_passes(fused=True) + ga.swiglu_passes(fused=True, direction="backward") == 8
    assert ga.swiglu_saved_bytes(n, b, fused=True) < ga.swiglu_saved_bytes(n, b, fused=False)


@pytest.mark.parametrize("kw", [dict(n_elements=0), dict(n_elements=-3), dict(n_elements=1.5),
                                dict(bytes_per_element=0.0),
                                dict(bytes_per_element=float("nan"))])
def test_bad_input_raises(kw):
    args = dict(n_elements=10, bytes_per_element=2.0) | kw
    with pytest.raises(ValueError):
        ga.swiglu_traffic_bytes(**args, fused=True)
    with pytest.raises(ValueError):
        ga.swiglu_saved_bytes(**args, fused=False)


def test_bad_direction_raises():
    with pytest.raises(ValueError, match="direction"):
        ga.swiglu_passes(fused=True, direction="sideways")
