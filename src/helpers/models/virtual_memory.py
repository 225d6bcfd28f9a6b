r"""Virtual memory: page-table depth, TLB reach, first-touch faults, and block allocation.

The models of {ref}`sec-virtual-memory`:

* :func:`page_table_levels`: how many table lookups translate one address
  (``eq-vm-levels`` on the page);
* :func:`tlb_reach_bytes`: how much memory a TLB's cached translations cover (``eq-vm-reach``);
* :func:`first_touch_faults` and :func:`first_touch_s`: the page faults, and their time, of
  touching freshly allocated memory (``eq-vm-first-touch``);
* :func:`block_allocation_waste`: the memory a fixed-size-block allocator leaves unused, the
  accounting behind paged KV caches (``eq-vm-waste``).

Symbols: :math:`P` page size (bytes), :math:`V` virtual-address bits, :math:`e` bytes per
page-table entry, :math:`E` TLB entries, :math:`n` bytes touched, :math:`t_f` time per fault,
:math:`b` tokens per block, :math:`\ell_i` tokens of sequence :math:`i`.

Used by: foundations/virtual-memory.md.
"""

from __future__ import annotations

import math
from typing import Sequence

from ._checks import positive, positive_int
from . import _checks

__all__ = ["page_table_levels", "tlb_reach_bytes", "first_touch_faults", "first_touch_s",
           "block_allocation_waste", "PAGE_4K", "PAGE_2M", "PTE_BYTES"]

#: The base page of x86-64 and most Arm Linux systems, and the x86-64 "huge" page (bytes).
PAGE_4K = 4096.0
PAGE_2M = 2.0 * 2**20
#: Bytes per page-table entry on 64-bit x86 and Arm.
PTE_BYTES = 8.0


def _log2_int(name: str, value: float) -> int:
    v = positive(name, value)
    k = round(math.log2(v))
    if k > 1023 or 2.0**k != v:
        raise ValueError(f"{name} must be a power of two, got {value!r}")
    return k


def page_table_levels(virtual_address_bits: int, page_bytes: float = PAGE_4K,
                      pte_bytes: float = PTE_BYTES, table_bytes: float = PAGE_4K) -> int:
    r"""Levels of a radix page table that translates ``virtual_address_bits``-bit addresses.

    .. math:: L = \left\lceil \frac{V - \log_2 P}{\log_2 (T / e)} \right\rceil
              \qquad\text{(the page labels this eq-vm-levels)}

    The low :math:`\log_2 P` bits are the offset inside the page; every level is a table of
    :math:`T` bytes holding :math:`T/e` entries and so resolves :math:`\log_2(T/e)` bits.

    Parameters
    ----------
    virtual_address_bits : int
        :math:`V`, the bits of a virtual address the hardware translates (48 on x86-64 with
        four-level paging).
    page_bytes : float
        :math:`P`, the page size (bytes), a power of two.
    pte_bytes : float
        :math:`e`, bytes per table entry, a power of two.
    table_bytes : float
        :math:`T`, bytes of one table (a 4 KiB page on x86-64, also when the leaf maps a
        2 MiB page), a power of two.

    Returns
    -------
    int
        :math:`L`, the dependent memory reads a TLB miss costs (before caches help).

    Assumptions
    -----------
    Every table has the same size; a larger page maps more at the leaf and removes the lowest
    levels.

    References
    ----------
    Bryant and O'Hallaron (2015), Computer Systems: A Programmer's Perspective, 3rd ed.,
    section 9.7.1 (the Core i7's four-level page table for 48-bit addresses).

    Examples
    --------
    >>> page_table_levels(48), page_table_levels(48, PAGE_2M), page_table_levels(57)
    (4, 3, 5)
    """
    v = positive_int("virtual_address_bits", virtual_address_bits)
    p = _log2_int("page_bytes", page_bytes)
    e = _log2_int("pte_bytes", pte_bytes)
    t = _log2_int("table_bytes", table_bytes)
    if e >= t:
        raise ValueError(f"pte_bytes must be smaller than table_bytes, got {pte_bytes!r} >= "
                         f"{table_bytes!r}")
    if v <= p:
        raise ValueError(f"virtual_address_bits must exceed log2(page_bytes) = {p}, got {v!r}")
    return math.ceil((v - p) / (t - e))


def tlb_reach_bytes(entries: int, page_bytes: float = PAGE_4K) -> float:
    r"""Bytes of memory a TLB covers: entries x page size.

    .. math:: R = E \, P \qquad\text{(bytes; the page labels this eq-vm-reach)}

    A working set larger than :math:`R` that is touched at random misses the TLB and pays a
    page walk on many loads.

    Parameters
    ----------
    entries : int
        :math:`E`, translations the TLB holds.
    page_bytes : float
        :math:`P`, the page size each entry maps (bytes).

    Returns
    -------
    float
        :math:`R` (bytes).

    References
    ----------
    Hennessy and Patterson (2012), Computer Architecture, 5th ed., section 2.6, figure 2.19
    (the Core i7's TLBs: 64 first-level data entries, 512 second-level entries, 4 KiB pages).

    Examples
    --------
    >>> tlb_reach_bytes(512) / 2**20          # the i7's second-level TLB, 4 KiB pages
    2.0
    """
    e = positive_int("entries", entries)
    p = positive("page_bytes", page_bytes)
    return e * p


def first_touch_faults(n_bytes: float, page_bytes: float = PAGE_4K) -> int:
    r"""Page faults taken by writing every page of ``n_bytes`` of fresh, page-aligned memory.

    .. math:: F = \lceil n / P \rceil

    >>> first_touch_faults(64 * 2**20), first_touch_faults(64 * 2**20, PAGE_2M)
    (16384, 32)
    """
    _checks.finite_ratio("n_bytes", positive("n_bytes", n_bytes),
                         "page_bytes", positive("page_bytes", page_bytes))
    n = positive("n_bytes", n_bytes)
    p = positive("page_bytes", page_bytes)
    return math.ceil(n / p)


def first_touch_s(n_bytes: float, fault_s: float, page_bytes: float = PAGE_4K) -> float:
    r"""Time to first-touch ``n_bytes`` of fresh memory: one fault per page (s).

    .. math:: t = \lceil n / P \rceil \, t_f
              \qquad\text{(the page labels this eq-vm-first-touch)}

    Parameters
    ----------
    n_bytes : float
        :math:`n`, bytes allocated and then written once.
    fault_s : float
        :math:`t_f`, the time of one fault (s): kernel entry, finding a free frame, zeroing it,
        writing the page-table entry, returning. Measured on the page.
    page_bytes : float
        :math:`P`, the page size (bytes).

    Returns
    -------
    float
        :math:`t` (s).

    Assumptions
    -----------
    Faults are serial and each costs the same; the write itself is negligible next to the
    fault. A larger page makes fewer faults, each zeroing more memory, so :math:`t_f` depends
    on :math:`P`.

    References
    ----------
    Bryant and O'Hallaron (2015), section 9.3.4 (page faults) and 9.8 (demand-zero pages).

    Examples
    --------
    >>> round(first_touch_s(64 * 2**20, 0.25e-6) * 1e3, 3)     # 16384 faults of 0.25 us
    4.096
    """
    f = positive("fault_s", fault_s)
    return first_touch_faults(n_bytes, page_bytes) * f


def block_allocation_waste(seq_tokens: Sequence[int], block_tokens: int) -> float:
    r"""Fraction of allocated slots left empty when each sequence gets whole blocks.

    .. math:: w = 1 - \frac{\sum_i \ell_i}{b \sum_i \lceil \ell_i / b \rceil}
              \qquad\text{(the page labels this eq-vm-waste)}

    A paged KV cache gives each sequence blocks of :math:`b` token slots as it grows, as an
    operating system gives a process pages; only each sequence's last block is partly empty.

    Parameters
    ----------
    seq_tokens : sequence of int
        :math:`\ell_i`, tokens held by each sequence (each >= 1).
    block_tokens : int
        :math:`b`, token slots per block.

    Returns
    -------
    float
        :math:`w` in [0, 1): the share of allocated slots holding no token.

    References
    ----------
    Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving with
    PagedAttention", SOSP, section 4 (waste bounded by one block per sequence).

    Examples
    --------
    >>> round(block_allocation_waste([17, 32, 100], 16), 4)
    0.1534
    """
    _checks.sequence("seq_tokens", seq_tokens)
    b = positive_int("block_tokens", block_tokens)
    lens = [positive_int("seq_tokens[i]", x) for x in seq_tokens]
    if not lens:
        raise ValueError("seq_tokens must hold at least one sequence, got an empty sequence")
    allocated = b * sum(math.ceil(x / b) for x in lens)
    return 1.0 - sum(lens) / allocated
