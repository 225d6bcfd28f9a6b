"""Weight-only quantization of a :class:`helpers.nn.decoder.Decoder`: int8 and int4 Linear layers.

:func:`quantize_model` returns a copy of a model whose projection matrices (each block's
``wq``, ``wk``, ``wv``, ``wo`` and the MLP's ``gate``, ``up``, ``down``) are replaced by
:class:`QuantLinear` layers holding integer codes and scales, made with the absmax quantizers
of :mod:`helpers.models.quantization`. The activations stay in the model's dtype: a
``QuantLinear`` dequantizes its weights on the fly (weight-only quantization, "W8A16" or
"W4A16"). On a CUDA device the per-channel and per-tensor int8 layers call the book's Triton
kernel :func:`helpers.kernels.int8_gemv.int8_matmul` for inputs of at most
:data:`KERNEL_MAX_ROWS` tokens (decode), which dequantizes inside the kernel; elsewhere they
dequantize in torch and call ``F.linear``.

What is *not* quantized, and why:

* the **token embedding**, which is also the output head (the book's models tie them): its
  rows are looked up, not multiplied, and quantizing the head would also change the embedding
  (or, untied, store the matrix twice). Production int8 and int4 schemes usually leave the
  embedding and the head in 16 bits as well (LLM.int8(), GPTQ, AWQ);
* the **RMSNorm weights**: one vector per norm, a fraction of a percent of the bytes.

Schemes (:data:`SCHEMES`): ``"int8-tensor"`` (one scale per matrix), ``"int8-channel"`` (one
scale per output row), ``"int4-g32"``, ``"int4-g64"``, ``"int4-g128"`` (one scale per group
of 32, 64 or 128 inputs of a row). Scales are stored in fp16 (16 bits, the storage model's
default); int4 codes are packed two per byte, so :func:`model_bytes` is the real footprint.

>>> import torch
>>> from helpers.nn import tinylm
>>> m = tinylm.load("book-draft")
>>> q = quantize_model(m, "int8-channel")
>>> type(q.blocks[0].attn.wq).__name__, q.blocks[0].attn.wq.weight_codes.dtype
('QuantLinear', torch.int8)
>>> model_bytes(q) < model_bytes(m)
True

Used by: chapters/quantization-and-speculation.md, labs/quantization.md.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..models import quantization as qz
from .decoder import Decoder

__all__ = ["Scheme", "SCHEMES", "scheme", "QuantLinear", "quantize_model", "quantized_layers",
           "model_bytes", "cast_unquantized", "KERNEL_MAX_ROWS", "SCALE_DTYPE"]

#: Dtype of stored scales (fp16: 16 bits, as llama.cpp's blocks and AWQ store them).
SCALE_DTYPE = torch.float16
#: Largest number of input rows (tokens) for which a CUDA int8 layer calls the Triton kernel.
KERNEL_MAX_ROWS = 16


@dataclass(frozen=True)
class Scheme:
    """One weight format: code bits, scale granularity and group size."""

    name: str
    bits: int
    granularity: str  # "tensor", "channel" or "group"
    group_size: int | None = None


SCHEMES = {s.name: s for s in (
    Scheme("int8-tensor", 8, "tensor"),
    Scheme("int8-channel", 8, "channel"),
    Scheme("int4-g32", 4, "group", 32),
    Scheme("int4-g64", 4, "group", 64),
    Scheme("int4-g128", 4, "group", 128),
)}


def scheme(name: str | Scheme) -> Scheme:
    """The :class:`Scheme` called ``name`` (a Scheme passes through)."""
    if isinstance(name, Scheme):
        return name
    if name not in SCHEMES:
        raise ValueError(f"unknown scheme {name!r}; choose one of {sorted(SCHEMES)}")
    return SCHEMES[name]


def _pack_int4(codes: torch.Tensor) -> torch.Tensor:
    """Codes in [-8, 7] (``(N, K)``, K even) packed two per byte: low nibble = even column."""
    u = (codes.to(torch.int16) + 8).to(torch.uint8)  # 0 .. 15
    return u[:, 0::2] | (u[:, 1::2] << 4)


def _unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`_pack_int4`: ``(N, K/2)`` bytes to ``(N, K)`` int8 codes."""
    lo = (packed & 0x0F).to(torch.int8) - 8
    hi = (packed >> 4).to(torch.int8) - 8
    return torch.stack([lo, hi], dim=-1).reshape(packed.shape[0], -1)


class QuantLinear(nn.Module):
    """A bias-free Linear layer whose weight is stored as integer codes and fp16 scales.

    Buffers: ``weight_codes`` (int8 ``(N, K)``, or uint8 ``(N, K/2)`` with two int4 codes per
    byte) and ``scales`` (fp16 ``(1, 1)``, ``(N, 1)`` or ``(N, K/G)``). ``forward(x)`` computes
    ``x @ W_hat^T`` with ``W_hat`` the dequantized weight, in ``x``'s dtype.
    """

    def __init__(self, weight: torch.Tensor, scheme_name: str | Scheme = "int8-channel", *,
                 use_kernel: bool = True):
        super().__init__()
        s = scheme(scheme_name)
        if weight.dim() != 2:
            raise ValueError(f"weight must be 2-D (out_features, in_features), got {tuple(weight.shape)}")
        w = weight.detach().float()
        if s.granularity == "group" and w.shape[1] % s.group_size:
            raise ValueError(f"in_features {w.shape[1]} is not a multiple of the group size "
                             f"{s.group_size} of {s.name}")
        self.scheme = s
        self.out_features, self.in_features = w.shape
        self.use_kernel = use_kernel
        # Scales rounded to their storage dtype first, so the codes are made with the scales
        # the layer will multiply by.
        scales = qz.absmax_scales(w, s.granularity, bits=s.bits, group_size=s.group_size)
        scales = scales.to(SCALE_DTYPE)
        codes = qz.quantize(w, scales.float(), bits=s.bits).to(torch.int8)
        self.register_buffer("scales", scales.to(weight.device))
        stored = _pack_int4(codes) if s.bits == 4 else codes
        self.register_buffer("weight_codes", stored.to(weight.device))
        # A dequantized copy for the torch path, made on first use (not part of the state: the
        # layer's footprint is its codes and scales; the copy trades memory for speed on a CPU).
        self._dense = None

    def codes(self) -> torch.Tensor:
        """The integer codes as an int8 ``(N, K)`` tensor (int4 unpacked)."""
        return _unpack_int4(self.weight_codes) if self.scheme.bits == 4 else self.weight_codes

    def dequantized_weight(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """``W_hat = s * q`` as an ``(N, K)`` tensor of ``dtype``."""
        return qz.dequantize(self.codes().to(dtype), self.scales.to(dtype))

    def row_scales(self) -> torch.Tensor:
        """One scale per output row (``(N,)``, fp32) for the int8 schemes; ValueError for
        grouped ones."""
        if self.scheme.bits != 8:
            raise ValueError(f"{self.scheme.name} has one scale per group, not per row")
        return self.scales.float().expand(self.out_features, 1).reshape(-1).contiguous()

    def kernel_applies(self, x: torch.Tensor) -> bool:
        """Whether :meth:`forward` calls the Triton kernel for input ``x``."""
        rows = x.numel() // max(x.shape[-1], 1)
        return (self.use_kernel and x.is_cuda and self.scheme.bits == 8
                and rows <= KERNEL_MAX_ROWS
                and x.dtype in (torch.bfloat16, torch.float16, torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(f"input has {x.shape[-1]} features, the layer takes {self.in_features}")
        if self.kernel_applies(x):
            from ..kernels import int8_gemv

            x2 = x.reshape(-1, self.in_features).contiguous()
            y = int8_gemv.int8_matmul(x2, self.weight_codes, self.row_scales())
            return y.reshape(*x.shape[:-1], self.out_features)
        key = (x.dtype, x.device)
        if self._dense is None or self._dense[0] != key:  # dequantize once per dtype and device
            self._dense = (key, self.dequantized_weight(x.dtype).to(x.device))
        return F.linear(x, self._dense[1])

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"scheme={self.scheme.name}")


#: The Linear layers of a block that :func:`quantize_model` replaces, by attribute path.
_TARGETS = ("attn.wq", "attn.wk", "attn.wv", "attn.wo", "mlp.gate", "mlp.up", "mlp.down")


def quantize_model(model: Decoder, scheme_name: str | Scheme, *, use_kernel: bool = True) -> Decoder:
    """A copy of ``model`` with every block's projection matrices replaced by
    :class:`QuantLinear` layers of ``scheme_name``; the embedding (tied output head) and the
    norms are kept as they are. ``model`` itself is not changed."""
    if not isinstance(model, Decoder):
        raise ValueError(f"model must be a helpers.nn.decoder.Decoder, got {type(model).__name__}")
    s = scheme(scheme_name)
    out = copy.deepcopy(model)
    for block in out.blocks:
        for path in _TARGETS:
            owner_name, attr = path.split(".")
            owner = getattr(block, owner_name)
            lin = getattr(owner, attr, None)
            if lin is None:  # e.g. no gate in a GELU MLP
                continue
            if lin.bias is not None:
                raise ValueError("quantize_model handles bias-free Linear layers only")
            q = QuantLinear(lin.weight, s, use_kernel=use_kernel)
            setattr(owner, attr, q.to(device=lin.weight.device))
    return out.eval()


def quantized_layers(model: nn.Module) -> dict[str, QuantLinear]:
    """The :class:`QuantLinear` layers of ``model`` by name."""
    return {n: m for n, m in model.named_modules() if isinstance(m, QuantLinear)}


def model_bytes(model: nn.Module) -> int:
    """Bytes of ``model``'s state (parameters and persistent buffers), each storage counted
    once (the tied embedding and head are one matrix)."""
    seen, total = set(), 0
    for t in model.state_dict().values():
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), t.numel(), t.dtype)
        if key in seen:
            continue
        seen.add(key)
        total += t.numel() * t.element_size()
    return total


def cast_unquantized(model: nn.Module, dtype: torch.dtype) -> nn.Module:
    """A copy of ``model`` whose parameters (the embedding, norms and any Linear layer left
    unquantized) are cast to ``dtype``; the codes and scales of :class:`QuantLinear` layers
    stay as they are (``Module.to(dtype)`` would also cast the fp16 scales)."""
    out = copy.deepcopy(model)
    for p in out.parameters():
        p.data = p.data.to(dtype)
    return out
