r"""How long a model's weights take to load: bytes over bandwidth, the page cache, and the cost
of turning bytes into tensors.

Symbols (the page {ref}`sec-storage-and-model-loading` uses the same): :math:`N` bytes of
weights (``n_bytes``), :math:`B_s` the storage read bandwidth (``storage_bytes_per_s``),
:math:`B_c` the rate of copying from the page cache (``cache_bytes_per_s``), :math:`h` the
fraction of the file already in the page cache (``cached_fraction``), :math:`B_d` the rate of
deserialisation (``deserialize_bytes_per_s``), :math:`t_0` a fixed start-up time
(``fixed_s``).

Used by: foundations/storage-and-model-loading.md.
"""

from __future__ import annotations

import math

from ._checks import fraction, positive
from . import _checks

__all__ = ["read_time_s", "cold_start_s"]


def read_time_s(n_bytes: float, *, storage_bytes_per_s: float, cache_bytes_per_s: float,
                cached_fraction: float = 0.0) -> float:
    r"""Seconds to read ``n_bytes`` when a fraction of them is already in the page cache.

    .. math:: T_{\text{read}} = N\left(\frac{1-h}{B_s} + \frac{h}{B_c}\right)
              (the page labels this eq-stor-read)

    Parameters
    ----------
    n_bytes : float
        :math:`N`, bytes to read (>= 0).
    storage_bytes_per_s : float
        :math:`B_s`, the device's sequential read bandwidth (bytes/s), > 0.
    cache_bytes_per_s : float
        :math:`B_c`, the rate at which ``read`` copies pages already in the page cache
        (bytes/s), > 0; a memory-copy rate.
    cached_fraction : float
        :math:`h` in [0, 1]: 0 is a cold read, 1 a warm one.

    Returns
    -------
    float
        :math:`T_{\text{read}}` (s).

    Assumptions
    -----------
    Sequential reads at the device's streaming rate (no seeks, no contention); cached and
    uncached pages are read one after the other, not overlapped; read-ahead hides per-request
    latency.

    References
    ----------
    The page cache as the kernel's cache of file pages: Love (2010), *Linux Kernel
    Development*, 3rd ed., chapter 16 ("The Page Cache and Page Writeback").

    Examples
    --------
    Sixteen gigabytes of weights from a drive that streams at 3.5 GB/s, half of them cached
    and copied at 10 GB/s:

    >>> round(read_time_s(16e9, storage_bytes_per_s=3.5e9, cache_bytes_per_s=10e9,
    ...                   cached_fraction=0.5), 2)
    3.09
    """
    n = positive("n_bytes", n_bytes, allow_zero=True)
    bs = positive("storage_bytes_per_s", storage_bytes_per_s)
    bc = positive("cache_bytes_per_s", cache_bytes_per_s)
    h = fraction("cached_fraction", cached_fraction)
    return n * ((1.0 - h) / bs + h / bc)


def cold_start_s(n_bytes: float, *, read_bytes_per_s: float,
                 deserialize_bytes_per_s: float = math.inf, fixed_s: float = 0.0,
                 overlap: bool = False) -> float:
    r"""Seconds from nothing to weights in memory: a fixed start-up, reading, deserialising.

    .. math:: T_{\text{cold}} = t_0 + \frac{N}{B_r} + \frac{N}{B_d}
              \quad\text{or, pipelined,}\quad t_0 + \frac{N}{\min(B_r, B_d)}
              (the page labels this eq-stor-cold)

    Parameters
    ----------
    n_bytes : float
        :math:`N`, bytes of weights (>= 0).
    read_bytes_per_s : float
        :math:`B_r`, the rate at which the bytes arrive (storage, page cache or network;
        :func:`read_time_s` gives it for a partly cached file), > 0.
    deserialize_bytes_per_s : float
        :math:`B_d`, the rate at which the loader turns bytes into tensors (bytes/s), > 0;
        ``inf`` for a format that is used in place (memory-mapped, no copy).
    fixed_s : float
        :math:`t_0`, start-up work that does not scale with :math:`N` (s), >= 0.
    overlap : bool
        If True the loader reads the next chunk while deserialising the last, so the slower
        stage alone sets the time (chunks small next to :math:`N`).

    Returns
    -------
    float
        :math:`T_{\text{cold}}` (s).

    Assumptions
    -----------
    Each stage runs at a constant rate; the pipelined form neglects filling and draining the
    pipeline (one chunk's time).

    References
    ----------
    The stages, and pipelining them chunk by chunk, follow the checkpoint loader of Fu et al.
    (2024), "ServerlessLLM: Low-Latency Serverless Inference for Large Language Models", OSDI.

    Examples
    --------
    >>> cold_start_s(16e9, read_bytes_per_s=4e9, deserialize_bytes_per_s=2e9, fixed_s=1.0)
    13.0
    >>> cold_start_s(16e9, read_bytes_per_s=4e9, deserialize_bytes_per_s=2e9, fixed_s=1.0,
    ...              overlap=True)
    9.0
    """
    _checks.boolean("overlap", overlap)
    n = positive("n_bytes", n_bytes, allow_zero=True)
    br = positive("read_bytes_per_s", read_bytes_per_s)
    bd = (math.inf if deserialize_bytes_per_s == math.inf
          else positive("deserialize_bytes_per_s", deserialize_bytes_per_s))
    t0 = positive("fixed_s", fixed_s, allow_zero=True)
    if overlap:
        return t0 + n / min(br, bd)
    return t0 + n / br + n / bd
