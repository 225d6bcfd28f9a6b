r"""Launch overhead: the time of many small kernels launched one by one, or from a CUDA graph.

A chain of ``n`` dependent kernels, each with device time :math:`t_k`, launched eagerly from
the host, each launch costing the host :math:`t_l`: the host and the device form a two-stage
pipeline, so the slower stage sets the pace (the lab page labels this ``eq-lablaunch-eager``)

.. math:: T_\text{eager}(n) = n \, \max(t_l, t_k) + t_s

where :math:`t_s` is the fixed cost at the end (a synchronization, the last kernel's tail).
The same chain captured in a CUDA graph is submitted with one launch of cost :math:`t_g`;
inside the graph each kernel costs :math:`t_{kg}` (its work plus the device's own gap between
graph nodes) (``eq-lablaunch-graph``)

.. math:: T_\text{graph}(n) = t_g + n \, t_{kg}

The graph pays when :math:`T_\text{graph} < T_\text{eager}`, i.e. for
:math:`n > n^* = (t_g - t_s) / (\max(t_l, t_k) - t_{kg})` (``eq-lablaunch-crossover``), and a
kernel stops being launch-bound once its device time exceeds the launch cost,
:math:`t_k > t_l`.

The two parameters of each line are fitted from measurements by ordinary least squares over
``n`` (:func:`fit_line`): the slope is the per-kernel cost, the intercept the fixed cost.

Symbols (notation page): :math:`n` ``n_kernels``, :math:`t_l` ``launch_s``, :math:`t_k`
``kernel_s``, :math:`t_s` ``sync_s``, :math:`t_g` ``graph_launch_s``, :math:`t_{kg}`
``kernel_in_graph_s``.

References
----------
NVIDIA, *CUDA C++ Programming Guide*, section "CUDA Graphs": work defined once as a graph is
launched many times with one submission, so the per-kernel launch work is paid once.
PyTorch, *CUDA semantics*, section "CUDA Graphs": capture with ``torch.cuda.graph`` after a
warm-up on a side stream.
CUDA.jl documentation, "Graphs": an RK4 integration of 10 steps (80 broadcast kernels) takes
about 260 µs launched normally and 70 µs launched as a graph, with 3.5 µs of CPU time; the
tests reproduce these three numbers from the model (``tests/models/test_launch.py``).

Used by: labs/launch-overhead.md.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import positive, positive_array, positive_int
from . import stats

__all__ = ["eager_time_s", "serial_time_s", "graph_time_s", "graph_speedup", "crossover_n_kernels",
           "launch_bound_fraction", "fit_line", "graph_kernel_time_s", "launch_crossover_bytes",
           "eager_step_time_s"]


def eager_time_s(n_kernels, launch_s: float, kernel_s: float, sync_s: float = 0.0):
    r"""Seconds to run ``n_kernels`` dependent kernels launched one by one from the host.

    .. math:: T_\text{eager}(n) = n \max(t_l, t_k) + t_s

    Parameters
    ----------
    n_kernels : int or array of int
        Number of kernels :math:`n` (>= 1).
    launch_s : float
        Host time to launch one kernel, :math:`t_l` (s).
    kernel_s : float
        Device time of one kernel, :math:`t_k` (s).
    sync_s : float
        Fixed cost added once, :math:`t_s` (s, >= 0).

    Returns
    -------
    float or ndarray
        :math:`T_\text{eager}` (s).

    Assumptions
    -----------
    The launch queue never fills and the host does nothing else, so host and device form a
    two-stage pipeline whose slower stage sets the pace; steady state (warm caches, compiled
    kernels).

    Examples
    --------
    >>> round(eager_time_s(100, 5e-6, 2e-6) * 1e6, 6)
    500.0
    """
    n = _n(n_kernels)
    launch_s = positive("launch_s", launch_s)
    kernel_s = positive("kernel_s", kernel_s)
    sync_s = positive("sync_s", sync_s, allow_zero=True)
    return n * max(launch_s, kernel_s) + sync_s


def serial_time_s(n_kernels, launch_s: float, kernel_s: float, sync_s: float = 0.0):
    r"""Seconds for ``n_kernels`` operations when one thread both dispatches and runs each one.

    .. math:: T_\text{serial}(n) = n \, (t_l + t_k) + t_s

    The CPU tier's case: PyTorch on a CPU dispatches an operator (argument checks, dispatch,
    allocation: :math:`t_l`) and then runs its kernel (:math:`t_k`) on the same thread, so the
    two costs add instead of overlapping as host and device do in :func:`eager_time_s`.

    Examples
    --------
    >>> round(serial_time_s(100, 5e-6, 2e-6) * 1e6, 6)
    700.0
    """
    n = _n(n_kernels)
    launch_s = positive("launch_s", launch_s)
    kernel_s = positive("kernel_s", kernel_s, allow_zero=True)
    sync_s = positive("sync_s", sync_s, allow_zero=True)
    return n * (launch_s + kernel_s) + sync_s


def graph_time_s(n_kernels, graph_launch_s: float, kernel_in_graph_s: float):
    r"""Seconds to run ``n_kernels`` dependent kernels replayed from one CUDA graph.

    .. math:: T_\text{graph}(n) = t_g + n \, t_{kg}

    Parameters
    ----------
    n_kernels : int or array of int
        Number of kernels :math:`n` (>= 1).
    graph_launch_s : float
        Fixed cost of launching the graph, :math:`t_g` (s, >= 0).
    kernel_in_graph_s : float
        Cost of one kernel inside the graph, :math:`t_{kg}` (s): its device time plus the gap
        between nodes.

    Returns
    -------
    float or ndarray
        :math:`T_\text{graph}` (s).

    Examples
    --------
    >>> round(graph_time_s(100, 10e-6, 2.5e-6) * 1e6, 6)
    260.0
    """
    n = _n(n_kernels)
    graph_launch_s = positive("graph_launch_s", graph_launch_s, allow_zero=True)
    kernel_in_graph_s = positive("kernel_in_graph_s", kernel_in_graph_s)
    return graph_launch_s + n * kernel_in_graph_s


def graph_speedup(n_kernels, launch_s: float, kernel_s: float, graph_launch_s: float,
                  kernel_in_graph_s: float, sync_s: float = 0.0):
    r"""Eager time over graph time for ``n_kernels`` kernels (> 1 when the graph wins).

    .. math:: S(n) = T_\text{eager}(n) / T_\text{graph}(n)

    Examples
    --------
    >>> round(graph_speedup(100, 5e-6, 2e-6, 10e-6, 2.5e-6), 3)
    1.923
    """
    return (eager_time_s(n_kernels, launch_s, kernel_s, sync_s)
            / graph_time_s(n_kernels, graph_launch_s, kernel_in_graph_s))


def crossover_n_kernels(launch_s: float, kernel_s: float, graph_launch_s: float,
                        kernel_in_graph_s: float, sync_s: float = 0.0) -> float:
    r"""The number of kernels above which the graph is faster than eager launches.

    .. math:: n^* = \frac{t_g - t_s}{\max(t_l, t_k) - t_{kg}}

    Returns ``0.0`` when the graph wins for every ``n`` (its fixed cost is no larger than the
    eager one and its per-kernel cost smaller), and ``math.inf`` when it never wins (its
    per-kernel cost is no smaller than the eager one).

    Examples
    --------
    >>> round(crossover_n_kernels(5e-6, 2e-6, 10e-6, 2.5e-6), 6)
    4.0
    """
    launch_s = positive("launch_s", launch_s)
    kernel_s = positive("kernel_s", kernel_s)
    graph_launch_s = positive("graph_launch_s", graph_launch_s, allow_zero=True)
    kernel_in_graph_s = positive("kernel_in_graph_s", kernel_in_graph_s)
    sync_s = positive("sync_s", sync_s, allow_zero=True)
    saving = max(launch_s, kernel_s) - kernel_in_graph_s
    if saving <= 0:
        return math.inf
    return max(0.0, (graph_launch_s - sync_s) / saving)


def launch_bound_fraction(launch_s: float, kernel_s: float) -> float:
    r"""Fraction of an eager chain's time the device sits idle waiting for launches.

    .. math:: f = \max(0, t_l - t_k) / \max(t_l, t_k)

    Zero once a kernel takes longer than its launch (the device is then never starved).

    Examples
    --------
    >>> round(launch_bound_fraction(5e-6, 2e-6), 12)
    0.6
    >>> launch_bound_fraction(5e-6, 8e-6)
    0.0
    """
    launch_s = positive("launch_s", launch_s)
    kernel_s = positive("kernel_s", kernel_s)
    return max(0.0, launch_s - kernel_s) / max(launch_s, kernel_s)


# --- a kernel's size against its launch (the launch-overhead lab's claims) ----------------

def graph_kernel_time_s(n_bytes: float, kernel_in_graph_s: float, mem_bytes_per_s: float) -> float:
    r"""Seconds one kernel costs inside a CUDA graph when it streams ``n_bytes`` from memory.

    .. math:: t_{kg}(B) = t_{kg} + B / M

    The fixed device cost of a graph node (:math:`t_{kg}`, measured on a tiny kernel) plus the
    kernel's memory time at bandwidth :math:`M` (the roofline's memory term, with no overlap
    between the node's fixed cost and its traffic).

    Parameters
    ----------
    n_bytes : float
        Bytes the kernel reads and writes, :math:`B` (>= 0).
    kernel_in_graph_s : float
        Cost of a tiny kernel inside a graph, :math:`t_{kg}` (s, > 0).
    mem_bytes_per_s : float
        Memory bandwidth the kernel streams at, :math:`M` (bytes/s, > 0).

    Returns
    -------
    float
        :math:`t_{kg}(B)` (s).

    Assumptions
    -----------
    The kernel's bytes come from the memory whose bandwidth is :math:`M` (HBM for a working set
    larger than the L2 cache) and the fixed cost does not overlap the traffic.

    References
    ----------
    Williams, Waterman and Patterson, "Roofline", CACM 52(4), 2009 (the memory time
    :math:`B/M`); NVIDIA, *CUDA C++ Programming Guide*, "CUDA Graphs" (a node's launch work
    is done once, at instantiation, leaving the device's own per-node cost).

    Examples
    --------
    >>> round(graph_kernel_time_s(4.0e6, 1e-6, 4e12) * 1e6, 6)
    2.0
    """
    n_bytes = positive("n_bytes", n_bytes, allow_zero=True)
    kernel_in_graph_s = positive("kernel_in_graph_s", kernel_in_graph_s)
    mem_bytes_per_s = positive("mem_bytes_per_s", mem_bytes_per_s)
    return kernel_in_graph_s + n_bytes / mem_bytes_per_s


def launch_crossover_bytes(launch_s: float, kernel_in_graph_s: float,
                           mem_bytes_per_s: float) -> float:
    r"""Bytes per kernel at which its device time equals the host's launch time.

    .. math:: B^* = (t_l - t_{kg})\, M

    Below :math:`B^*` an eagerly launched kernel is launch-bound (:func:`eager_time_s` paces it
    at :math:`t_l`); above it the device time :func:`graph_kernel_time_s` exceeds the launch
    and launches stop mattering. Returns ``0.0`` when a launch already costs no more than the
    tiniest kernel (no size is launch-bound).

    Parameters
    ----------
    launch_s : float
        Host time to launch one kernel, :math:`t_l` (s, > 0).
    kernel_in_graph_s : float
        The fixed part of a kernel's device time in a graph, :math:`t_{kg}` (s, > 0): a tiny
        kernel's time, or the intercept of a line through large kernels' times (the lab's).
    mem_bytes_per_s : float
        Memory bandwidth, :math:`M` (bytes/s, > 0).

    Returns
    -------
    float
        :math:`B^*` (bytes).

    References
    ----------
    The equality of the two pipeline stages of :func:`eager_time_s`,
    :math:`\max(t_l, t_k)`, with :math:`t_k` from :func:`graph_kernel_time_s`.

    Examples
    --------
    >>> round(launch_crossover_bytes(8e-6, 1e-6, 4e12) / 1e6, 6)
    28.0
    >>> launch_crossover_bytes(1e-6, 2e-6, 4e12)
    0.0
    """
    launch_s = positive("launch_s", launch_s)
    kernel_in_graph_s = positive("kernel_in_graph_s", kernel_in_graph_s)
    mem_bytes_per_s = positive("mem_bytes_per_s", mem_bytes_per_s)
    return max(0.0, launch_s - kernel_in_graph_s) * mem_bytes_per_s


def fit_line(n_kernels, times_s) -> tuple[float, float]:
    r"""Least-squares line :math:`T = a + b\,n` through measured times; returns ``(a, b)``.

    ``b`` (s per kernel) is the slope, ``a`` (s) the fixed cost; ``a`` may come out slightly
    negative from noise and is returned as fitted.

    Parameters
    ----------
    n_kernels : array of int
        At least two distinct kernel counts (>= 1).
    times_s : array of float
        The measured time of each count (s, > 0).

    Examples
    --------
    >>> a, b = fit_line([1, 10, 100], [7e-6, 25e-6, 205e-6])
    >>> round(a * 1e6, 6), round(b * 1e6, 6)
    (5.0, 2.0)
    """
    n = np.asarray(_n(n_kernels), dtype=np.float64).ravel()
    t = np.asarray(positive_array("times_s", times_s), dtype=np.float64).ravel()
    if n.shape != t.shape:
        raise ValueError(f"n_kernels and times_s must have the same length, got {n.size} and {t.size}")
    if np.unique(n).size < 2:
        raise ValueError(f"n_kernels needs at least two distinct values, got {n.tolist()!r}")
    design = np.stack([np.ones_like(n), n], axis=1)
    a, b = stats.least_squares(design.tolist(), t.tolist())
    return float(a), float(b)


# --- labs3: a step of unequal kernels, launched eagerly (the decode lab's prediction) -------

def eager_step_time_s(n_kernels: int, launch_s: float, device_s: float) -> float:
    r"""Seconds of one step of ``n_kernels`` unequal kernels launched one by one from the host.

    .. math:: T_\text{eager} = \max\left(n\,t_l,\ T_\text{dev}\right)

    The two-stage pipeline of :func:`eager_time_s` (host launches, device runs; the slower
    stage sets the pace) when the kernels differ: the host needs :math:`n t_l` to launch them
    all, the device :math:`T_\text{dev}`, the step's time with no launch cost (its CUDA graph
    replay). With equal kernels, :math:`T_\text{dev} = n t_k`, it is :func:`eager_time_s`.

    Parameters
    ----------
    n_kernels : int
        Kernels the step launches, :math:`n` (>= 1).
    launch_s : float
        Host time per launch, :math:`t_l` (s, > 0): for a PyTorch model, the framework's
        per-operator work as well as the driver's launch.
    device_s : float
        The step's device time without launch cost, :math:`T_\text{dev}` (s, > 0).

    Returns
    -------
    float
        :math:`T_\text{eager}` (s).

    Assumptions
    -----------
    The launch queue never fills and the host does nothing else; no overlap is lost where the
    two stages take about as long (there the step is a little slower than the model).

    References
    ----------
    NVIDIA, *CUDA C++ Programming Guide*, section "Asynchronous Concurrent Execution": kernel
    launches return to the host before the kernel completes, so host and device overlap.

    Examples
    --------
    The decode lab's H200 step at one sequence: 506 kernels at 16.2 µs of host time each,
    1.96 ms of device time (the graph replay): the host sets the pace, about 8.2 ms.

    >>> round(eager_step_time_s(506, 16.2e-6, 1.96e-3) * 1e3, 2)
    8.2
    """
    n = positive_int("n_kernels", n_kernels)
    launch_s = positive("launch_s", launch_s)
    device_s = positive("device_s", device_s)
    return max(n * launch_s, device_s)


def _n(n_kernels):
    """``n_kernels`` as an int (scalar) or a float64 array of integers >= 1."""
    arr = np.asarray(n_kernels)
    if arr.ndim == 0:
        return positive_int("n_kernels", n_kernels)
    arr = np.asarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr) | (arr < 1) | (arr != np.round(arr))
    if arr.size == 0 or np.any(bad):
        first = arr[bad].flat[0] if arr.size else "an empty array"
        raise ValueError(f"n_kernels must be integers >= 1, got {first!r}")
    return arr
