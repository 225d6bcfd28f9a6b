r"""Links between chips: what a PCIe link carries, how long weights take to cross it, and what
a bounce buffer costs.

A PCIe link of generation :math:`g` runs :math:`w` lanes at a transfer rate :math:`R_g`
(transfers per second per lane, one bit each), and spends a fraction of those bits on line
encoding (8b/10b for generations 1 and 2, 128b/130b for 3 to 5; generation 6 moves to flit
mode, which the Linux kernel counts as 1:1). The payload bandwidth in *one direction* is

.. math:: B_{\text{PCIe}} = R_g \, w \, e_g / 8          (the page labels this eq-pcie-bw)

Datasheets usually print the raw rate of both directions together (:math:`2 R_g w / 8`), so
"PCIe Gen5 x16: 128 GB/s" is 64 GB/s each way before encoding.

Moving :math:`W` bytes of weights over a link of bandwidth :math:`B` takes at least
:math:`W / B` (:func:`helpers.models.latency_bandwidth.transfer_time_s` with the latency
left out). A copy staged through intermediate buffers (storage to host memory to GPU, the
*bounce buffer* that GPUDirect Storage removes) is modelled by :func:`staged_copy_time_s`.

Symbols (the page {ref}`sec-pcie-and-interconnects` uses the same): :math:`R_g` transfer rate
per lane (``transfer_rate_per_s``), :math:`w` lanes, :math:`e_g` encoding efficiency,
:math:`W` bytes moved, :math:`B_i` bandwidth of hop :math:`i`, :math:`c` chunk size.

References
----------
Linux kernel, ``drivers/pci/pci.h``, macro ``PCIE_SPEED2MBS_ENC`` ("PCIe speed to Mb/s reduced
by encoding overhead"), and ``pcie_bandwidth_capable()`` in ``drivers/pci/pci.c``, which
multiplies it by the link width; NVIDIA A100 and H100 datasheets ("PCIe Gen4: 64 GB/s",
"PCIe Gen5: 128 GB/s").

Used by: foundations/pcie-and-interconnects.md.
"""

from __future__ import annotations

import math
from typing import Sequence

from ._checks import positive, positive_int
from . import _checks

__all__ = ["PCIE_GENERATIONS", "pcie_bytes_per_s", "pcie_raw_bidirectional_bytes_per_s",
           "weight_transfer_time_s", "staged_copy_time_s"]

#: generation -> (transfer rate per lane in transfers/s, encoding efficiency), after the
#: kernel's ``PCIE_SPEED2MBS_ENC`` (PCIe Base Specification r6.1, section 1.2, table 1-1).
PCIE_GENERATIONS: dict[int, tuple[float, float]] = {
    1: (2.5e9, 8 / 10),
    2: (5.0e9, 8 / 10),
    3: (8.0e9, 128 / 130),
    4: (16.0e9, 128 / 130),
    5: (32.0e9, 128 / 130),
    6: (64.0e9, 1.0),
}

_LANES = (1, 2, 4, 8, 12, 16, 32)


def _gen_lanes(generation, lanes) -> tuple[float, float, int]:
    if isinstance(generation, bool) or generation not in PCIE_GENERATIONS:
        raise ValueError(f"generation must be one of {sorted(PCIE_GENERATIONS)}, "
                         f"got {generation!r}")
    w = positive_int("lanes", lanes)
    if w not in _LANES:
        raise ValueError(f"lanes must be one of {_LANES}, got {lanes!r}")
    rate, eff = PCIE_GENERATIONS[generation]
    return rate, eff, w


def pcie_bytes_per_s(*, generation: int, lanes: int) -> float:
    r"""Payload bandwidth (bytes/s) of a PCIe link in one direction, after line encoding.

    .. math:: B_{\text{PCIe}} = R_g \, w \, e_g / 8          (eq-pcie-bw)

    Parameters
    ----------
    generation : int
        PCIe generation :math:`g`, 1 to 6 (sets :math:`R_g` and :math:`e_g`).
    lanes : int
        Link width :math:`w`: 1, 2, 4, 8, 12, 16 or 32.

    Returns
    -------
    float
        :math:`B_{\text{PCIe}}` (bytes/s, one direction).

    Assumptions
    -----------
    Only the line encoding is subtracted. Packet headers, flow-control credits and
    acknowledgements take several per cent more, so a DMA copy reaches somewhat less.

    References
    ----------
    Linux kernel ``drivers/pci/pci.h``, ``PCIE_SPEED2MBS_ENC``; the kernel logs
    "252.048 Gb/s available PCIe bandwidth" for a 16 GT/s x16 link.

    Examples
    --------
    >>> round(pcie_bytes_per_s(generation=5, lanes=16) / 1e9, 2)
    63.02
    >>> round(pcie_bytes_per_s(generation=4, lanes=16) * 8 / 1e9, 1)   # Gb/s, as the kernel logs
    252.1
    """
    rate, eff, w = _gen_lanes(generation, lanes)
    return rate * w * eff / 8.0


def pcie_raw_bidirectional_bytes_per_s(*, generation: int, lanes: int) -> float:
    r"""Raw rate of both directions together (bytes/s), as datasheets print it: :math:`2 R_g w / 8`.

    Examples
    --------
    >>> pcie_raw_bidirectional_bytes_per_s(generation=5, lanes=16) / 1e9   # "128 GB/s"
    128.0
    """
    rate, _, w = _gen_lanes(generation, lanes)
    return 2.0 * rate * w / 8.0


def weight_transfer_time_s(*, weight_bytes: float, link_bytes_per_s: float,
                           efficiency: float = 1.0) -> float:
    r"""Time (s) to move a model's weights once over a link: :math:`T = W / (\eta B)`.

    .. math:: T_W = \frac{W}{\eta \, B}          (the page labels this eq-pcie-weights)

    Parameters
    ----------
    weight_bytes : float
        Bytes of weights :math:`W` (> 0), e.g. parameters x bytes per parameter.
    link_bytes_per_s : float
        Bandwidth :math:`B` of the link or memory in the direction of travel (bytes/s, > 0).
    efficiency : float
        Fraction :math:`\eta` of :math:`B` a real copy reaches, in (0, 1]; 1 gives the bound.

    Returns
    -------
    float
        :math:`T_W` (s), a lower bound for :math:`\eta = 1`.

    Assumptions
    -----------
    One copy streaming at a constant rate; the start-up latency (microseconds) is negligible
    against gigabytes. A decode step reads every weight once, so :math:`T_W` over HBM is also
    the floor of one decode step's time, and over PCIe the floor it would have if the weights
    crossed PCIe on every step.

    Examples
    --------
    >>> round(weight_transfer_time_s(weight_bytes=140e9, link_bytes_per_s=64e9), 3)
    2.188
    >>> round(weight_transfer_time_s(weight_bytes=140e9, link_bytes_per_s=4.8e12) * 1e3, 2)
    29.17
    """
    w = positive("weight_bytes", weight_bytes)
    b = positive("link_bytes_per_s", link_bytes_per_s)
    eta = positive("efficiency", efficiency)
    if eta > 1:
        raise ValueError(f"efficiency must be a fraction in (0, 1], got {efficiency!r}")
    return w / (eta * b)


def staged_copy_time_s(*, n_bytes: float, hop_bytes_per_s: Sequence[float],
                       chunk_bytes: float | None = None, overlapped: bool = True) -> float:
    r"""Time (s) to copy ``n_bytes`` through a chain of hops (e.g. NVMe -> host -> GPU), in chunks.

    With :math:`k` hops of bandwidths :math:`B_1 \dots B_k`, chunks of :math:`c` bytes and the
    hops working at once on different chunks (a pipeline, as separate DMA engines do), the
    first chunk crosses every hop and the rest follow at the pace of the slowest:

    .. math:: T = \sum_{i=1}^{k} \frac{c}{B_i} + \left(\frac{W}{c} - 1\right)
              \frac{c}{\min_i B_i}          (the page labels this eq-pcie-staged)

    Without overlap (one engine, e.g. one CPU thread, does every hop in turn) the hops add:
    :math:`T = \sum_i W / B_i`.

    Parameters
    ----------
    n_bytes : float
        Bytes copied :math:`W` (> 0).
    hop_bytes_per_s : sequence of float
        Bandwidth of each hop :math:`B_i` (bytes/s, each > 0), at least one.
    chunk_bytes : float, optional
        Chunk size :math:`c` (> 0); ``None`` or anything >= ``n_bytes`` means one chunk
        (store and forward). Assumed to divide ``n_bytes`` (the last chunk is counted as full).
    overlapped : bool
        Whether the hops run concurrently on different chunks.

    Returns
    -------
    float
        :math:`T` (s).

    Assumptions
    -----------
    Each hop streams at its bandwidth with no per-chunk latency; buffers between hops are large
    enough never to stall. A direct path (GPUDirect Storage, GPUDirect RDMA) is the one-hop case.

    Examples
    --------
    >>> staged_copy_time_s(n_bytes=8e9, hop_bytes_per_s=[8e9])          # direct: 1 s
    1.0
    >>> staged_copy_time_s(n_bytes=8e9, hop_bytes_per_s=[8e9, 16e9])    # store and forward
    1.5
    >>> round(staged_copy_time_s(n_bytes=8e9, hop_bytes_per_s=[8e9, 16e9], chunk_bytes=8e6), 6)
    1.0005
    """
    _checks.boolean("overlapped", overlapped)
    _checks.sequence("hop_bytes_per_s", hop_bytes_per_s)
    w = positive("n_bytes", n_bytes)
    hops = list(hop_bytes_per_s)
    if not hops:
        raise ValueError("hop_bytes_per_s must hold at least one bandwidth, got []")
    bs = [positive(f"hop_bytes_per_s[{i}]", b) for i, b in enumerate(hops)]
    if not overlapped:
        return sum(w / b for b in bs)
    c = w if chunk_bytes is None else min(positive("chunk_bytes", chunk_bytes), w)
    n_chunks = max(1.0, math.ceil(w / c - 1e-9))
    return sum(c / b for b in bs) + (n_chunks - 1.0) * c / min(bs)
