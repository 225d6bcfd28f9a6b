r"""Occupancy: how many thread blocks of a kernel fit on one SM at once, and what limits them.

A CUDA kernel runs as a grid of thread blocks; each block is a group of threads that the
hardware splits into warps of 32. A block, once placed on a streaming multiprocessor (SM),
stays there until all its threads finish, holding its registers, its shared memory, its warp
slots and one block slot the whole time. The number of blocks resident at once is therefore
the smallest of four counts, one per resource:

.. math::

    B = \min\bigl(B_\text{warps},\ B_\text{regs},\ B_\text{smem},\ B_\max\bigr)
    \qquad\text{(eq-cuda-blocks-per-sm)}

with, for a block of :math:`T` threads, :math:`r` registers per thread and :math:`s` bytes of
shared memory,

.. math::

    W_b &= \lceil T / 32 \rceil, \qquad
    B_\text{warps} = \lfloor W_\max / W_b \rfloor, \\
    R_w &= \lceil 32 r / u_R \rceil\, u_R, \qquad
    B_\text{regs} = \Bigl\lfloor \frac{P\, \lfloor R_\mathrm{SM} / (P R_w) \rfloor}{W_b}
    \Bigr\rfloor, \\
    S_b &= \lceil (s + s_\text{res}) / u_S \rceil\, u_S, \qquad
    B_\text{smem} = \lfloor S_\mathrm{SM} / S_b \rfloor,

where :math:`u_R` (registers) and :math:`u_S` (bytes) are the allocation units, :math:`P` the
number of register-file sub-partitions (each holds whole warps), :math:`s_\text{res}` the
shared memory the driver reserves per block, and :math:`W_\max`, :math:`R_\mathrm{SM}`,
:math:`S_\mathrm{SM}`, :math:`B_\max` the SM's warp slots, registers, shared memory and block
slots (:class:`helpers.specs.SMLimits`). The *theoretical occupancy* is the share of warp
slots those blocks fill:

.. math::

    o = \frac{B\, W_b}{W_\max}                      \qquad\text{(eq-cuda-occupancy)}

Introduced in {ref}`sec-cuda-execution`.

References
----------
* NVIDIA, *CUDA C++ Best Practices Guide*, section "Calculating Occupancy": the worked
  example (compute capability 7.0, 37 registers per thread: 128-thread blocks give 12 blocks
  and 75 %, 320-thread blocks give 4 blocks and 63 %) and the 256-register unit per warp.
* NVIDIA, ``cuda_occupancy.h`` (CUDA Toolkit 13.0): ``cudaOccMaxBlocksPerSMWarpsLimit``,
  ``cudaOccMaxBlocksPerSMRegsLimit`` (registers per sub-partition), ``...SmemLimit`` (reserved
  shared memory and its 128-byte unit) and ``cudaOccMaxPotentialOccupancyBlockSize``, whose
  rules this module follows, leaving out partitioned global caching (pre-Volta), the
  shared-memory carveout preference and the barrier limit (one barrier per block never binds).
* NVIDIA, *CUDA C++ Programming Guide*, "Technical Specifications per Compute Capability".

Used by: chapters/cuda-execution.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..specs import SMLimits
from ._checks import positive_int

__all__ = ["Occupancy", "warps_per_block", "registers_per_warp", "smem_per_block_bytes",
           "occupancy", "best_block_size", "waves", "LIMITS"]

#: Names of the four limits, in the order :class:`Occupancy` reports them.
LIMITS = ("warps", "registers", "shared memory", "blocks")


def _ceil_to(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _limits(limits) -> SMLimits:
    if not isinstance(limits, SMLimits):
        raise ValueError(f"limits must be a helpers.specs.SMLimits, got {type(limits).__name__}")
    return limits


def warps_per_block(threads_per_block: int, warp_size: int = 32) -> int:
    r"""Warps a block occupies: :math:`W_b = \lceil T / 32 \rceil` (a partial warp costs a whole one).

    Examples
    --------
    >>> warps_per_block(128), warps_per_block(320), warps_per_block(33)
    (4, 10, 2)
    """
    t = positive_int("threads_per_block", threads_per_block)
    w = positive_int("warp_size", warp_size)
    return -(-t // w)


def registers_per_warp(registers_per_thread: int, *, warp_size: int = 32,
                       alloc_unit: int = 256) -> int:
    r"""Registers allocated to one warp: :math:`R_w = \lceil 32 r / u_R \rceil u_R`.

    Parameters
    ----------
    registers_per_thread : int
        :math:`r`, as the compiler reports it (``ptxas -v``, Triton's ``n_regs``), >= 1.
    warp_size : int
        Threads per warp (32).
    alloc_unit : int
        :math:`u_R`, the allocation unit in registers (256 on every compute capability since
        3.0, per ``cuda_occupancy.h``).

    Examples
    --------
    The Best Practices Guide's 37 registers per thread: 1,184 per warp, rounded to 1,280.

    >>> registers_per_warp(37)
    1280
    """
    r = positive_int("registers_per_thread", registers_per_thread)
    return _ceil_to(r * positive_int("warp_size", warp_size), positive_int("alloc_unit", alloc_unit))


def smem_per_block_bytes(smem_bytes: int, *, reserved_bytes: int = 0, alloc_unit_bytes: int = 128) -> int:
    r"""Shared memory a block takes from the SM (bytes): :math:`S_b = \lceil (s + s_\text{res}) / u_S \rceil u_S`.

    Parameters
    ----------
    smem_bytes : int
        :math:`s`, the block's static plus dynamic shared memory (bytes, >= 0).
    reserved_bytes : int
        :math:`s_\text{res}`, reserved by the driver for every block (1 KiB since Ampere).
    alloc_unit_bytes : int
        :math:`u_S`, the allocation unit (128 bytes since compute capability 8.0).

    Examples
    --------
    A block asking for 40,000 bytes on an H100 takes 41,088:

    >>> smem_per_block_bytes(40_000, reserved_bytes=1024, alloc_unit_bytes=128)
    41088
    """
    s = positive_int("smem_bytes", smem_bytes, minimum=0)
    res = positive_int("reserved_bytes", reserved_bytes, minimum=0)
    return _ceil_to(s + res, positive_int("alloc_unit_bytes", alloc_unit_bytes))


@dataclass(frozen=True)
class Occupancy:
    """The result of :func:`occupancy`: resident blocks per SM, each limit, and which binds."""

    threads_per_block: int
    registers_per_thread: int
    smem_bytes: int
    warps_per_block: int
    blocks_by_warps: int
    blocks_by_registers: int
    blocks_by_smem: int
    blocks_by_slots: int
    blocks_per_sm: int
    active_warps: int
    max_warps: int
    registers_per_block: int
    smem_per_block_bytes: int

    @property
    def fraction(self) -> float:
        """Theoretical occupancy :math:`o = B W_b / W_\\max`, in (0, 1]."""
        return self.active_warps / self.max_warps

    @property
    def by_limit(self) -> dict[str, int]:
        """Blocks per SM allowed by each resource alone, keyed by :data:`LIMITS`."""
        return dict(zip(LIMITS, (self.blocks_by_warps, self.blocks_by_registers,
                                 self.blocks_by_smem, self.blocks_by_slots)))

    @property
    def binding(self) -> tuple[str, ...]:
        """The limits that allow exactly :attr:`blocks_per_sm` blocks (ties listed together)."""
        return tuple(k for k, v in self.by_limit.items() if v == self.blocks_per_sm)


def occupancy(*, threads_per_block: int, registers_per_thread: int, smem_bytes: int = 0,
              limits: SMLimits) -> Occupancy:
    r"""Resident blocks per SM and theoretical occupancy of a kernel launch (eq-cuda-blocks-per-sm).

    .. math::

        B = \min(B_\text{warps}, B_\text{regs}, B_\text{smem}, B_\max), \qquad
        o = B W_b / W_\max

    Parameters
    ----------
    threads_per_block : int
        :math:`T`, in [1, ``limits.max_threads_per_block``].
    registers_per_thread : int
        :math:`r`, in [1, ``limits.max_registers_per_thread``].
    smem_bytes : int
        :math:`s`, shared memory per block (static plus dynamic), in
        [0, ``limits.max_smem_per_block_bytes``].
    limits : helpers.specs.SMLimits
        The SM's resources, e.g. :data:`helpers.specs.SM90` for an H100 or H200.

    Returns
    -------
    Occupancy
        ``blocks_per_sm`` (:math:`B`), the four per-limit counts, ``binding`` (which limits
        equal :math:`B`), ``fraction`` (:math:`o`) and the registers and shared memory one
        block is allocated.

    Raises
    ------
    ValueError
        For a block that cannot launch at all: too many threads, registers per thread or
        shared memory, or more registers per block than ``limits.max_registers_per_block``
        (counted, as the hardware check does, for warps rounded up to a multiple of the
        sub-partitions).

    Assumptions
    -----------
    Theoretical occupancy: every block lives as long as the others, the grid has enough blocks
    to fill every SM, and the kernel has the whole SM (no other kernel resident). The shared
    memory carveout is the largest the SM offers. The achieved occupancy a profiler reports is
    at most this.

    References
    ----------
    NVIDIA CUDA C++ Best Practices Guide, "Calculating Occupancy"; ``cuda_occupancy.h``
    (CUDA 13.0), ``cudaOccMaxActiveBlocksPerMultiprocessor``.

    Examples
    --------
    The Best Practices Guide's example on compute capability 7.0, 37 registers per thread:

    >>> from helpers.specs import SM70, SM90
    >>> o = occupancy(threads_per_block=128, registers_per_thread=37, limits=SM70)
    >>> o.blocks_per_sm, round(o.fraction, 2), o.binding
    (12, 0.75, ('registers',))
    >>> o = occupancy(threads_per_block=320, registers_per_thread=37, limits=SM70)
    >>> o.blocks_per_sm, round(o.fraction, 2)
    (4, 0.62)
    """
    lim = _limits(limits)
    t = positive_int("threads_per_block", threads_per_block)
    if t > lim.max_threads_per_block:
        raise ValueError(f"threads_per_block must be an integer in [1, "
                         f"{lim.max_threads_per_block}], got {threads_per_block!r}")
    r = positive_int("registers_per_thread", registers_per_thread)
    if r > lim.max_registers_per_thread:
        raise ValueError(f"registers_per_thread must be an integer in [1, "
                         f"{lim.max_registers_per_thread}], got {registers_per_thread!r}")
    s = positive_int("smem_bytes", smem_bytes, minimum=0)
    if s > lim.max_smem_per_block_bytes:
        raise ValueError(f"smem_bytes must be an integer in [0, {lim.max_smem_per_block_bytes}]"
                         f" for {lim.name}, got {smem_bytes!r}")

    wb = warps_per_block(t, lim.warp_size)
    by_warps = lim.max_warps_per_sm // wb

    rw = registers_per_warp(r, warp_size=lim.warp_size, alloc_unit=lim.register_alloc_unit)
    p = lim.register_sub_partitions
    if rw * _ceil_to(wb, p) > lim.max_registers_per_block:
        raise ValueError(f"a block of {t} threads at {r} registers per thread needs "
                         f"{rw * _ceil_to(wb, p)} registers (warps rounded up to {p} "
                         f"sub-partitions), more than the {lim.max_registers_per_block} one block "
                         f"may use on {lim.name}: the launch would fail")
    warps_per_partition = (lim.registers_per_sm // p) // rw
    by_regs = (warps_per_partition * p) // wb

    sb = smem_per_block_bytes(s, reserved_bytes=lim.smem_reserved_per_block_bytes,
                              alloc_unit_bytes=lim.smem_alloc_unit_bytes)
    by_smem = lim.smem_per_sm_bytes // sb if sb else lim.max_blocks_per_sm

    blocks = min(by_warps, by_regs, by_smem, lim.max_blocks_per_sm)
    return Occupancy(threads_per_block=t, registers_per_thread=r, smem_bytes=s,
                     warps_per_block=wb, blocks_by_warps=by_warps, blocks_by_registers=by_regs,
                     blocks_by_smem=by_smem, blocks_by_slots=lim.max_blocks_per_sm,
                     blocks_per_sm=blocks, active_warps=blocks * wb,
                     max_warps=lim.max_warps_per_sm, registers_per_block=rw * wb,
                     smem_per_block_bytes=sb)


def best_block_size(*, registers_per_thread: int, smem_bytes: int = 0, limits: SMLimits) -> Occupancy:
    """The block size (a multiple of the warp size) with the highest occupancy; ties go to the
    largest block, as ``cudaOccMaxPotentialOccupancyBlockSize`` picks them.

    Block sizes that cannot launch (too many registers per block) are skipped.

    Examples
    --------
    At 128 registers per thread a 1,024-thread block cannot launch on an H100; 512 threads
    fill the 16 warps the register file can hold:

    >>> from helpers.specs import SM90
    >>> o = best_block_size(registers_per_thread=128, limits=SM90)
    >>> o.threads_per_block, o.fraction, o.binding
    (512, 0.25, ('registers',))
    """
    lim = _limits(limits)
    best = None
    for t in range(lim.max_threads_per_block, 0, -lim.warp_size):
        try:
            o = occupancy(threads_per_block=t, registers_per_thread=registers_per_thread,
                          smem_bytes=smem_bytes, limits=lim)
        except ValueError:
            if t == lim.warp_size:  # even one warp cannot launch: the inputs are at fault
                raise
            continue
        if best is None or o.blocks_per_sm * t > best.blocks_per_sm * best.threads_per_block:
            best = o
        if o.active_warps == lim.max_warps_per_sm:
            break
    return best


def waves(n_blocks: int, blocks_per_sm: int, n_sms: int) -> int:
    r"""Rounds of blocks a grid takes when each SM holds ``blocks_per_sm`` at once:
    :math:`\lceil N_\text{blocks} / (B\, N_\mathrm{SM}) \rceil`.

    The last wave may be partly empty (the *tail*): a grid of one block more than a wave
    takes two.

    Examples
    --------
    An elementwise kernel over 4,096 x 4,096 elements in 256-thread blocks on an H100
    (132 SMs, 8 blocks each):

    >>> waves(4096 * 4096 // 256, 8, 132)
    63
    """
    n = positive_int("n_blocks", n_blocks)
    per_wave = positive_int("blocks_per_sm", blocks_per_sm) * positive_int("n_sms", n_sms)
    return -(-n // per_wave)
