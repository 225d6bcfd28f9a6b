"""Triton kernel of the quantization lab: a weight-only int8 matrix product for decode shapes.

``y = x @ (s * W)^T``: the activations ``x`` are ``(M, K)`` in bf16, fp16 or fp32 with ``M``
small (the tokens of one decode step, 1 to 16); the weights ``W`` are ``(N, K)`` int8 codes
with one scale ``s[n]`` per output row (per-channel absmax, :mod:`helpers.models.quantization`).
The weights are dequantized *inside* the kernel: each program loads a ``BLOCK_K x BLOCK_N``
tile of int8 codes, converts it to the activations' dtype in registers (every int8 code is
exact in bf16, fp16 and fp32), multiplies with ``tl.dot`` into an fp32 accumulator, and
applies the row scales once, in the epilogue, since
:math:`\\sum_k x_k\\,(s_n q_{nk}) = s_n \\sum_k x_k\\,q_{nk}`. So HBM sees one byte per weight,
half of what the bf16 matrix costs, and no dequantized copy is ever written.

One program computes a ``BLOCK_M x BLOCK_N`` tile of ``y`` (``BLOCK_M`` is 16, the smallest
tile ``tl.dot`` takes; rows past ``M`` are masked). Any ``M``, ``N``, ``K`` work (edges masked).

With no usable CUDA GPU, Triton runs through its interpreter (set by :mod:`helpers.kernels`
before ``triton`` loads): keep the sizes tiny there.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> x = torch.randn(3, 100, generator=g)
>>> q = torch.randint(-127, 128, (40, 100), generator=g, dtype=torch.int8)
>>> s = torch.rand(40, generator=g) + 0.1
>>> y = int8_matmul(x, q, s, Int8Config(16, 32, 1, 1))
>>> bool(torch.allclose(y.double(), reference(x, q, s), rtol=1e-5, atol=1e-4))
True

Used by: labs/quantization.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

# the package's entrance chose interpreter or GPU
from helpers.kernels import INTERPRETED, matrix_output

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

__all__ = ["Int8Config", "DEFAULT", "int8_matmul_kernel", "int8_matmul", "reference",
           "INTERPRETED", "BLOCK_M", "TUNING_CONFIGS"]

#: Rows of ``y`` per program: the smallest tile ``tl.dot`` accepts (decode has M <= 16).
BLOCK_M = 16


@dataclass(frozen=True)
class Int8Config:
    """A tiling of the kernel: output columns and reduction depth per step, launch settings."""

    block_n: int
    block_k: int
    num_warps: int = 4
    num_stages: int = 3

    def __post_init__(self) -> None:
        for name in ("block_n", "block_k"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 16 or v & (v - 1):
                raise ValueError(f"{name} must be a power of two >= 16, got {v!r}")
        for name in ("num_warps", "num_stages"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")

    @property
    def name(self) -> str:
        """``"BNxBK s=S w=W"``, e.g. ``"32x256 s=4 w=4"``."""
        return f"{self.block_n}x{self.block_k} s={self.num_stages} w={self.num_warps}"

    def as_dict(self) -> dict:
        return asdict(self)


#: The launch settings used when none is given.
DEFAULT = Int8Config(block_n=32, block_k=256, num_warps=4, num_stages=4)
#: Launch configurations the quantization lab tries on a GPU, the fastest kept (the first is
#: :data:`DEFAULT`).
TUNING_CONFIGS = (DEFAULT, Int8Config(16, 512, 4, 4), Int8Config(32, 512, 4, 3),
                  Int8Config(64, 256, 4, 4), Int8Config(64, 128, 8, 4), Int8Config(128, 128, 8, 3))


@triton.jit
def int8_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                       stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       INPUT_PRECISION: tl.constexpr):
    """One ``BLOCK_M x BLOCK_N`` tile of ``y = x @ (s * W)^T`` per program."""
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :] * stride_xk
    # W is (N, K) row-major; read it as a (BLOCK_K, BLOCK_N) tile of W^T (K is contiguous).
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :].to(tl.int64) * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_left = K - k0
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0)
        # Dequantize in registers: int8 codes are exact in the activations' dtype. (Through
        # fp32: Triton 3.5's interpreter converts int8 straight to bf16 wrongly; on a GPU the
        # extra conversion is one register instruction.)
        acc = tl.dot(x, w.to(tl.float32).to(x.dtype), acc, input_precision=INPUT_PRECISION)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    # Epilogue: one scale per output column of y (= per row of W), then cast and store.
    s = tl.load(s_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    y = (acc * s[None, :]).to(y_ptr.dtype.element_ty)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _check(x, w, scales):
    import torch

    if x.dim() != 2 or w.dim() != 2 or x.shape[1] != w.shape[1]:
        raise ValueError(f"need x (M x K) and w (N x K), got {tuple(x.shape)} and {tuple(w.shape)}")
    if x.dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise ValueError(f"x must be float32, bfloat16 or float16, got {x.dtype}")
    if w.dtype != torch.int8:
        raise ValueError(f"w must hold int8 codes, got {w.dtype}")
    if scales.dim() != 1 or scales.shape[0] != w.shape[0]:
        raise ValueError(f"scales must be a vector of one scale per row of w ({w.shape[0]}), "
                         f"got shape {tuple(scales.shape)}")
    if not scales.is_floating_point():
        raise ValueError(f"scales must be floating point, got {scales.dtype}")
    if not (x.device == w.device == scales.device):
        raise ValueError("x, w and scales must be on one device")


def int8_matmul(x, w, scales, config: Int8Config = DEFAULT, *, out=None, kernel=None):
    """``x @ (scales[:, None] * w)^T`` with :func:`int8_matmul_kernel` (or one of its signature).

    ``x`` is ``(M, K)`` float32, bfloat16 or float16; ``w`` is ``(N, K)`` int8; ``scales`` is
    ``(N,)`` floating point. The result is ``(M, N)`` in ``x``'s dtype, written into ``out``
    if given. fp32 activations use exact fp32 products (``input_precision="ieee"``).
    """
    import torch

    _check(x, w, scales)
    if not isinstance(config, Int8Config):
        raise ValueError(f"config must be an Int8Config, got {type(config).__name__}")
    (m, k), n = x.shape, w.shape[0]
    out = matrix_output(out, m, n, x, "x")
    precision = "ieee" if x.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n, config.block_n), triton.cdiv(m, BLOCK_M))
    (kernel or int8_matmul_kernel)[grid](
        x, w, scales, out, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
        out.stride(0), out.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=config.block_n,
        BLOCK_K=config.block_k, INPUT_PRECISION=precision,
        num_warps=config.num_warps, num_stages=config.num_stages)
    return out


def reference(x, w, scales):
    """The float64 answer: dequantize ``w`` with ``scales``, then multiply (on the CPU)."""
    if x.dim() != 2 or w.dim() != 2 or x.shape[1] != w.shape[1] or scales.shape != w.shape[:1]:
        raise ValueError(f"need x (M x K), w (N x K) and scales (N,), got {tuple(x.shape)}, "
                         f"{tuple(w.shape)} and {tuple(scales.shape)}")
    w64 = w.detach().cpu().double() * scales.detach().cpu().double()[:, None]
    return x.detach().cpu().double() @ w64.T
