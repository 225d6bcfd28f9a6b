r"""Aligning per-rank profiler traces on one clock, and reading communication off them.

Each rank of a distributed job writes its own ``torch.profiler`` trace, and
:func:`~helpers.profiling.trace.parse_trace` counts each trace's times from its own first
event, so two ranks' timelines do not share an origin. A collective gives them one: no rank
can leave an all-reduce before the last rank has entered it, so the *end* of the same
collective is (to within the collective's last step) the same instant on every rank. This
module shifts every rank's trace so that the end of a chosen collective, the *anchor*, lands at
the same time as on rank 0, then splits each rank's work into computation and communication and
measures:

* the exposed communication of each rank (communication with no computation under it,
  :func:`helpers.models.distributed_analysis.exposed_comm_s`);
* each rank's span from the anchor to its last event, and the slowest rank (the straggler that
  every other rank waits for in the next collective).

What counts as communication: on a GPU trace, device kernels whose name matches
:data:`COMM_PATTERN` (``ncclDevKernel_AllReduce...``); on a CPU trace (gloo), the
``gloo:all_reduce`` annotations that gloo's worker threads record. Computation: every other
work event (:func:`~helpers.profiling.trace.work_events`), minus host-side launches of
collectives (``c10d::allreduce_``), which only queue the work.

.. math:: \Delta_r = t^{(0)}_{\text{anchor}} - t^{(r)}_{\text{anchor}},\qquad
   t' = t + \Delta_r

References
----------
* PyTorch, ``torch.profiler`` documentation (one trace per process; ``export_chrome_trace``).
* Holistic Trace Analysis documentation, "Communication computation overlap" and "Trace
  alignment": per-rank traces of one job, compared on a common timeline.

Library only: no page imports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..models import distributed_analysis as da
from .trace import Event, Trace, work_events

__all__ = ["COMM_PATTERN", "RankTimeline", "comm_events", "compute_events", "align_ranks",
           "exposed_comm_by_rank", "slowest_rank"]

#: Names of events that are communication (device kernels, gloo annotations) or its launch.
COMM_PATTERN = re.compile(r"nccl|gloo|c10d::|allreduce|all_reduce|AllReduce", re.IGNORECASE)
_GLOO_WORK = re.compile(r"^gloo:", re.IGNORECASE)


@dataclass(frozen=True)
class RankTimeline:
    """One rank's computation and communication intervals, on the common clock (seconds)."""

    rank: int
    offset_s: float
    anchor_s: float
    compute: tuple[tuple[float, float], ...]
    comm: tuple[tuple[float, float], ...]

    @property
    def end_s(self) -> float:
        """The end of the rank's last interval (the anchor if it has none)."""
        ends = [b for _, b in self.compute + self.comm]
        return max(ends, default=self.anchor_s)

    def after(self, t_s: float) -> "RankTimeline":
        """The same timeline cut at ``t_s``: intervals clipped to start no earlier than it."""
        cut = lambda ivs: tuple((max(a, t_s), b) for a, b in ivs if b > t_s)
        return RankTimeline(self.rank, self.offset_s, self.anchor_s, cut(self.compute),
                            cut(self.comm))


def comm_events(trace: Trace) -> list[Event]:
    """The events that are communication work: NCCL kernels, or gloo's all-reduce annotations."""
    if trace.has_device:
        return [e for e in trace.of("kernel") if COMM_PATTERN.search(e.name)]
    return [e for e in trace.of("annotation", "cpu_op") if _GLOO_WORK.search(e.name)]


def compute_events(trace: Trace) -> list[Event]:
    """Work events that are not communication (nor the host-side launch of a collective)."""
    return [e for e in work_events(trace) if not COMM_PATTERN.search(e.name)]


def align_ranks(traces: Sequence[Trace], *, anchor_index: int = 0) -> list[RankTimeline]:
    """Put the traces of ranks 0..n-1 on rank 0's clock, anchored at the end of a collective.

    Parameters
    ----------
    traces : sequence of Trace
        One parsed trace per rank, in rank order (at least one).
    anchor_index : int
        Which communication event (in start order on each rank) is the shared instant: its end
        is made to coincide on every rank. 0, the first collective, suits a trace that starts
        with a small all-reduce recorded for the purpose.

    Returns
    -------
    list of RankTimeline
        With ``offset_s`` the shift added to the rank's times (0 for rank 0).

    Raises
    ------
    ValueError
        No traces, or a rank with fewer than ``anchor_index + 1`` communication events.
    """
    if not traces:
        raise ValueError("traces must hold at least one rank's trace")
    if isinstance(anchor_index, bool) or not isinstance(anchor_index, int) or anchor_index < 0:
        raise ValueError(f"anchor_index must be an integer >= 0, got {anchor_index!r}")
    anchors = []
    for r, tr in enumerate(traces):
        comm = sorted(comm_events(tr), key=lambda e: e.start_s)
        if len(comm) <= anchor_index:
            raise ValueError(f"rank {r}'s trace has {len(comm)} communication events; the anchor "
                             f"needs at least {anchor_index + 1}")
        anchors.append(comm[anchor_index].end_s)
    out = []
    for r, tr in enumerate(traces):
        off = anchors[0] - anchors[r]
        shift = lambda evs: tuple(da.union_intervals((e.start_s + off, e.end_s + off) for e in evs))
        out.append(RankTimeline(r, off, anchors[0], shift(compute_events(tr)),
                                shift(comm_events(tr))))
    return out


def exposed_comm_by_rank(timelines: Sequence[RankTimeline], *, after_anchor: bool = True
                         ) -> list[float]:
    """Exposed communication of each rank (s); by default only after the anchor collective."""
    out = []
    for tl in timelines:
        t = tl.after(tl.anchor_s) if after_anchor else tl
        out.append(da.exposed_comm_s(t.compute, t.comm))
    return out


def slowest_rank(timelines: Sequence[RankTimeline]) -> tuple[int, float]:
    """``(rank, span_s)`` of the rank whose last computation ends latest after the anchor.

    That rank is the straggler: the others finish their own work earlier and wait for it in
    the next collective.
    """
    if not timelines:
        raise ValueError("timelines must hold at least one rank")
    spans = []
    for tl in timelines:
        ends = [b for _, b in tl.compute if b >= tl.anchor_s]
        spans.append(max(ends, default=tl.anchor_s) - tl.anchor_s)
    r = max(range(len(spans)), key=lambda i: spans[i])
    return r, spans[r]
