"""Tests of helpers.kernels.elementwise: the SwiGLU kernel against PyTorch (through Triton's
interpreter on a CPU), its grid, and on a GPU its resources fed to the occupancy model against
the CUDA driver's own answer."""

from __future__ import annotations

import pytest
import torch

from helpers import specs
from helpers.bench import has_cuda
from helpers.kernels import elementwise as ew
from helpers.models import occupancy as occ

DEVICE = "cuda" if has_cuda() else "cpu"


@pytest.mark.parametrize("n, block", [(1, 64), (1000, 256), (4096, 1024), (5000, 512)])
def test_matches_pytorch(n, block):
    g = torch.randn(n, device=DEVICE, generator=None)
    u = torch.randn(n, device=DEVICE)
    out = ew.swiglu(g, u, block=block)
    torch.testing.assert_close(out, torch.nn.functional.silu(g) * u, atol=1e-6, rtol=1e-5)


def test_bf16_inputs_are_computed_in_fp32_and_stored_in_bf16():
    g = torch.randn(3000, device=DEVICE).to(torch.bfloat16)
    u = torch.randn(3000, device=DEVICE).to(torch.bfloat16)
    out = ew.swiglu(g, u, block=512)
    assert out.dtype == torch.bfloat16
    ref = (torch.nn.functional.silu(g.float()) * u.float()).to(torch.bfloat16)
    # Within one bf16 step (2**-7 relative): Triton's CPU interpreter may round the final
    # fp32 -> bf16 conversion differently from PyTorch's round-to-nearest-even.
    torch.testing.assert_close(out.float(), ref.float(), atol=0, rtol=2**-7)


def test_the_tail_block_is_masked():
    # 1000 elements in blocks of 256: the fourth block owns 232 elements and 24 slots past the
    # end, which it must neither read nor write.
    buf = torch.full((1024,), 7.0, device=DEVICE)
    g, u = torch.randn(1000, device=DEVICE), torch.randn(1000, device=DEVICE)
    out = buf[:1000]
    out.copy_(ew.swiglu(g, u, block=256))
    assert torch.all(buf[1000:] == 7.0)
    assert ew.grid_size(1000, 256) == 4


@pytest.mark.parametrize("n, block, want", [(1, 1, 1), (256, 256, 1), (257, 256, 2),
                                             (458_752, 1024, 448)])
def test_grid_size(n, block, want):
    assert ew.grid_size(n, block) == want


@pytest.mark.parametrize("args", [(0, 256), (10, 0), (2.5, 4), (True, 4)])
def test_grid_size_bad_input(args):
    with pytest.raises(ValueError):
        ew.grid_size(*args)


def test_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        ew.swiglu(torch.zeros(4), torch.zeros(5))
    with pytest.raises(ValueError, match="power of two"):
        ew.swiglu(torch.zeros(4), torch.zeros(4), block=100)
    with pytest.raises(ValueError, match="interpreter"):
        ew.compiled_resources(None)


@pytest.mark.gpu
@pytest.mark.skipif(not has_cuda(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("block, num_warps", [(256, 2), (1024, 4), (4096, 8)])
def test_model_agrees_with_the_driver(block, num_warps):
    major, minor = torch.cuda.get_device_capability()
    try:
        limits = specs.sm_limits(f"{major}.{minor}")
    except ValueError:
        pytest.skip(f"no SM limits for compute capability {major}.{minor}")
    g = torch.randn(1 << 20, device="cuda")
    _, handle = ew.swiglu(g, g, block=block, num_warps=num_warps, return_compiled=True)
    res = ew.compiled_resources(handle)
    model = occ.occupancy(threads_per_block=res["threads_per_block"],
                          registers_per_thread=res["registers_per_thread"],
                          smem_bytes=res["smem_bytes"], limits=limits)
    assert model.blocks_per_sm == ew.driver_blocks_per_sm(handle)
