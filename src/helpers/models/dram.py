r"""DRAM and NUMA: peak bandwidth from the bus, lines in flight, and the remote-access penalty.

The models of {ref}`sec-dram-and-numa`:

* :func:`dram_peak_bytes_per_s`: the peak a memory system can move, from its transfer rate,
  bus width and channel count (labelled ``eq-dram-peak`` on the page);
* :func:`lines_in_flight`: Little's law for memory, the cache-line requests that must be
  outstanding to sustain a bandwidth at a latency (``eq-mem-little``);
* :func:`numa_mean_latency_s`, :func:`interleaved_remote_fraction` and
  :func:`slit_latency_ratio`: the mean latency of loads when a fraction of them go to another
  socket's memory (``eq-numa-latency``).

Symbols: :math:`R` transfers per second, :math:`w` bus width (bytes), :math:`c` channels,
:math:`B` bandwidth, :math:`t` latency, :math:`f` remote fraction, :math:`\rho` the
remote-to-local latency ratio.

Used by: foundations/dram-and-numa.md.
"""

from __future__ import annotations

from ._checks import fraction, positive, positive_int

__all__ = ["dram_peak_bytes_per_s", "lines_in_flight", "numa_mean_latency_s",
           "interleaved_remote_fraction", "slit_latency_ratio", "CPU_LINE_BYTES", "DDR_BUS_BYTES",
           "LINUX_LOCAL_DISTANCE", "LINUX_REMOTE_DISTANCE"]

#: Bytes of a CPU cache line on x86-64 and most Arm server cores (the book's one definition;
#: a GPU's L1 line is :data:`helpers.models.memory_access.GPU_L1_LINE_BYTES`).
CPU_LINE_BYTES = 64
#: Data width of one DDR channel (a 64-bit DIMM), in bytes; ECC bits are not data.
DDR_BUS_BYTES = 8.0
#: Linux's distance of a node to itself and its default distance to another node, used when
#: firmware provides no SLIT table (``include/linux/topology.h``; see :func:`slit_latency_ratio`).
LINUX_LOCAL_DISTANCE = 10
LINUX_REMOTE_DISTANCE = 20


def dram_peak_bytes_per_s(*, transfers_per_s: float, bus_bytes: float = DDR_BUS_BYTES,
                          channels: int = 1) -> float:
    r"""Peak bandwidth of a DRAM system (bytes/s): channels x transfers per second x bus width.

    .. math:: B_{\text{peak}} = c \, R \, w                    (the page labels this eq-dram-peak)

    Parameters
    ----------
    transfers_per_s : float
        :math:`R`, data transfers per second on each pin (the "1600" of DDR3-1600 is
        1600e6 transfers/s; DDR moves data on both clock edges, so it is twice the bus clock).
    bus_bytes : float
        :math:`w`, bytes moved per transfer by one channel (8 for a 64-bit DDR DIMM).
    channels : int
        :math:`c`, independent channels that transfer at once.

    Returns
    -------
    float
        :math:`B_{\text{peak}}` (bytes/s), decimal as on module labels.

    Assumptions
    -----------
    Every cycle of every channel carries data: no refresh, no bank conflicts, no read-write
    turnaround. Sustained bandwidth is lower; the page measures how much lower.

    References
    ----------
    Drepper (2007), "What every programmer should know about memory", section 2.2; the module
    name PC3-12800 of DDR3-1600 (12,800 MB/s) in Kingston's DDR3-1600 table.

    Examples
    --------
    >>> dram_peak_bytes_per_s(transfers_per_s=1600e6) / 1e9       # one DDR3-1600 module
    12.8
    """
    r = positive("transfers_per_s", transfers_per_s)
    w = positive("bus_bytes", bus_bytes)
    c = positive_int("channels", channels)
    return c * r * w


def lines_in_flight(mem_bytes_per_s: float, latency_s: float,
                    line_bytes: float = CPU_LINE_BYTES) -> float:
    r"""Cache-line requests that must be outstanding to sustain a bandwidth (dimensionless).

    .. math:: N = \frac{B \, t}{\ell}                           (the page labels this eq-mem-little)

    Little's law: requests in the system equal their arrival rate (:math:`B/\ell` lines per
    second) times the time each spends in it (:math:`t`).

    Parameters
    ----------
    mem_bytes_per_s : float
        :math:`B`, the bandwidth to sustain (bytes/s).
    latency_s : float
        :math:`t`, the time from a line's request to its arrival (s).
    line_bytes : float
        :math:`\ell`, bytes per request (a cache line, 64).

    Returns
    -------
    float
        :math:`N`, the mean number of line requests in flight.

    Assumptions
    -----------
    A steady state; the latency does not grow with the load (it does near saturation).

    References
    ----------
    Little (1961), "A proof for the queuing formula L = lambda W", Operations Research 9(3).

    Examples
    --------
    >>> lines_in_flight(12.8e9, 100e-9)
    20.0
    """
    b = positive("mem_bytes_per_s", mem_bytes_per_s)
    t = positive("latency_s", latency_s)
    ell = positive("line_bytes", line_bytes)
    return b * t / ell


def numa_mean_latency_s(local_latency_s: float, remote_latency_s: float,
                        remote_fraction: float) -> float:
    r"""Mean latency of loads when a fraction of them go to another NUMA node's memory (s).

    .. math:: \bar t = (1 - f)\, t_{\text{local}} + f \, t_{\text{remote}}
              = t_{\text{local}} \bigl(1 + f(\rho - 1)\bigr)   (the page labels this eq-numa-latency)

    Parameters
    ----------
    local_latency_s : float
        :math:`t_{\text{local}}`, latency of a load served by the node's own memory (s).
    remote_latency_s : float
        :math:`t_{\text{remote}}`, latency of a load served by another node's memory (s);
        at least the local latency.
    remote_fraction : float
        :math:`f` in [0, 1], the share of loads that go to remote memory.

    Returns
    -------
    float
        :math:`\bar t` (s).

    Assumptions
    -----------
    Loads are dependent (latency-bound) and the interconnect is not congested; under heavy
    traffic remote loads also queue on the link, so this is a lower bound.

    References
    ----------
    Lameter (2013), "NUMA (Non-Uniform Memory Access): An Overview", ACM Queue 11(7).

    Examples
    --------
    >>> round(numa_mean_latency_s(100e-9, 200e-9, 0.5) * 1e9, 6)   # interleaved over 2 nodes
    150.0
    """
    tl = positive("local_latency_s", local_latency_s)
    tr = positive("remote_latency_s", remote_latency_s)
    if tr < tl:
        raise ValueError(f"remote_latency_s must be >= local_latency_s ({tl!r}), got {tr!r}")
    f = fraction("remote_fraction", remote_fraction)
    return (1.0 - f) * tl + f * tr


def interleaved_remote_fraction(n_nodes: int) -> float:
    r"""Share of loads that are remote when pages are spread evenly over ``n_nodes`` nodes.

    .. math:: f = \frac{n - 1}{n}

    A thread on one node finds 1/n of the pages at home: what ``numactl --interleave=all`` or
    an allocation by a thread on another node produces for a uniform access pattern.

    >>> interleaved_remote_fraction(2)
    0.5
    """
    n = positive_int("n_nodes", n_nodes)
    return (n - 1) / n


def slit_latency_ratio(distance: float, local_distance: float = LINUX_LOCAL_DISTANCE) -> float:
    r"""The remote-to-local ratio :math:`\rho` implied by a NUMA distance (dimensionless).

    Firmware's SLIT table (what Linux shows in ``/sys/devices/system/node/node*/distance``)
    gives relative distances with a node's own memory at 10, so 20 reads as "twice as far".
    The kernel's documentation warns that the numbers are abstract and need not match any
    measured latency; this is the ratio the table *claims*, a prior to be measured.

    References
    ----------
    Linux kernel documentation, "SLIT - System Locality Information Table"; Linux
    ``LOCAL_DISTANCE`` 10 and ``REMOTE_DISTANCE`` 20, the defaults without a SLIT.

    >>> slit_latency_ratio(LINUX_REMOTE_DISTANCE)
    2.0
    """
    d = positive("distance", distance)
    d0 = positive("local_distance", local_distance)
    if d < d0:
        raise ValueError(f"distance must be >= local_distance ({d0!r}), got {d!r}")
    return d / d0
