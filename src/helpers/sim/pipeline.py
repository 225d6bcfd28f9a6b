r"""A schedule simulator for pipeline parallelism: GPipe, 1F1B and interleaved 1F1B.

A model of :math:`L` layers is cut into :math:`p` stages, one per rank (with interleaving,
into :math:`v p` chunks, rank :math:`i` holding chunks :math:`i, i + p, \dots`). A step runs
:math:`m` micro-batches through every chunk forward and then backward. A *schedule* fixes, for
each rank, the order of its operations; the simulator then starts every operation as early as
its two constraints allow:

* its rank is free (one operation at a time), and
* its input exists: forward of micro-batch :math:`j` on chunk :math:`k` needs the forward of
  :math:`j` on chunk :math:`k-1`; the backward needs the backward on chunk :math:`k+1` and its
  own forward.

Nothing in the simulator knows the bubble formula; the page and the tests compare its measured
idle time with :func:`helpers.models.parallelism.pipeline_bubble_fraction`.

>>> tl = simulate("1f1b", pp=4, n_microbatches=8)
>>> round(tl.bubble_fraction(), 4), tl.peak_in_flight(0), tl.peak_in_flight(3)
(0.2727, 4.0, 1.0)

Used by: chapters/parallelism.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models._checks import positive as _positive
from ..models._checks import positive_int as _positive_int

__all__ = ["SCHEDULES", "Op", "Timeline", "stage_orders", "simulate"]

#: Schedules the simulator knows.
SCHEDULES = ("gpipe", "1f1b", "interleaved")


@dataclass(frozen=True)
class Op:
    """One forward (``"F"``) or backward (``"B"``) of one micro-batch on one chunk of a rank."""

    stage: int
    kind: str
    microbatch: int
    chunk: int
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Timeline:
    """The simulated step: every operation with its start and end, and measurements on them."""

    schedule: str
    pp: int
    n_microbatches: int
    chunks: int
    ops: tuple[Op, ...]

    @property
    def makespan_s(self) -> float:
        """Time from the first operation's start to the last one's end (s)."""
        return max(o.end_s for o in self.ops) - min(o.start_s for o in self.ops)

    def stage_ops(self, stage: int) -> list[Op]:
        """The operations of rank ``stage``, in time order."""
        return sorted((o for o in self.ops if o.stage == stage), key=lambda o: o.start_s)

    def busy_s(self, stage: int) -> float:
        """Seconds rank ``stage`` spends computing."""
        return sum(o.end_s - o.start_s for o in self.ops if o.stage == stage)

    def bubble_fraction(self, stage: int | None = None) -> float:
        """Idle share of the step on rank ``stage`` (all ranks pooled when None), measured."""
        stages = range(self.pp) if stage is None else [stage]
        busy = sum(self.busy_s(s) for s in stages)
        return 1.0 - busy / (len(stages) * self.makespan_s)

    def peak_in_flight(self, stage: int) -> float:
        """Most micro-batches whose activations rank ``stage`` holds at once (from a forward's
        start to its backward's end), in units of a whole stage's activations: a chunk of an
        interleaved stage counts ``1 / chunks``."""
        events = []
        for o in self.ops:
            if o.stage == stage:
                events.append((o.start_s, 1, o.kind == "F"))
                events.append((o.end_s, 0, o.kind == "B"))
        held = peak = 0
        for _t, order, counts in sorted(events):
            if counts:
                held += 1 if order == 1 else -1
                peak = max(peak, held)
        return peak / self.chunks


def _virtual_order(k: int, pp: int, chunks: int, backward: bool) -> tuple[int, int]:
    """(micro-batch, chunk) of the k-th forward or backward of a rank (Megatron's order)."""
    group = k // (pp * chunks)
    chunk = (k // pp) % chunks
    if backward:
        chunk = chunks - 1 - chunk
    return group * pp + k % pp, chunk


def stage_orders(schedule: str, *, pp: int, n_microbatches: int,
                 chunks: int = 1) -> list[list[tuple[str, int, int]]]:
    """For each rank, its operations in order as ``(kind, micro-batch, chunk)``.

    * ``"gpipe"``: every forward, then every backward (Huang et al. 2019).
    * ``"1f1b"``: rank :math:`i` runs :math:`p - i - 1` warm-up forwards, then alternates one
      forward and one backward, then drains the remaining backwards (PipeDream-Flush,
      Narayanan et al. 2021, section 2.2.1).
    * ``"interleaved"``: the same with :math:`v` chunks per rank, micro-batches taken in groups
      of :math:`p` per chunk (Narayanan et al. 2021, section 2.2.2; needs :math:`m` a multiple
      of :math:`p`).
    """
    p = _positive_int("pp", pp)
    m = _positive_int("n_microbatches", n_microbatches)
    v = _positive_int("chunks", chunks)
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if schedule != "interleaved" and v != 1:
        raise ValueError(f"chunks must be 1 for schedule {schedule!r}, got {chunks!r}")
    if schedule == "interleaved" and m % p:
        raise ValueError(f"n_microbatches must be a multiple of pp={p} for the interleaved "
                         f"schedule, got {n_microbatches!r}")
    orders = []
    for s in range(p):
        if schedule == "gpipe":
            orders.append([("F", j, 0) for j in range(m)] + [("B", j, 0) for j in range(m)])
            continue
        total = m * v
        warm = p - s - 1 if schedule == "1f1b" else (p - s - 1) * 2 + (v - 1) * p
        warm = min(warm, total)
        fwd = [("F", *_virtual_order(k, p, v, False)) for k in range(total)]
        bwd = [("B", *_virtual_order(k, p, v, True)) for k in range(total)]
        order = fwd[:warm]
        for i in range(total - warm):
            order += [fwd[warm + i], bwd[i]]
        order += bwd[total - warm:]
        orders.append(order)
    return orders


def simulate(schedule: str, *, pp: int, n_microbatches: int, forward_s: float = 1.0,
             backward_s: float = 2.0, chunks: int = 1) -> Timeline:
    """Run one step of ``schedule`` and return its :class:`Timeline`.

    ``forward_s`` and ``backward_s`` are the times of one micro-batch through one whole stage
    (a chunk takes ``1 / chunks`` of them). Point-to-point transfers take no time.
    """
    orders = stage_orders(schedule, pp=pp, n_microbatches=n_microbatches, chunks=chunks)
    tf = _positive("forward_s", forward_s) / chunks
    tb = _positive("backward_s", backward_s) / chunks
    p, v = int(pp), int(chunks)
    last = v * p - 1
    done: dict[tuple[str, int, int], float] = {}   # (kind, micro-batch, virtual stage) -> end
    free = [0.0] * p
    nxt = [0] * p
    ops: list[Op] = []
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(p):
            while nxt[s] < len(orders[s]):
                kind, j, c = orders[s][nxt[s]]
                vs = c * p + s
                if kind == "F":
                    deps = [("F", j, vs - 1)] if vs > 0 else []
                else:
                    deps = [("F", j, vs)] + ([("B", j, vs + 1)] if vs < last else [])
                if any(d not in done for d in deps):
                    break
                start = max([free[s]] + [done[d] for d in deps])
                end = start + (tf if kind == "F" else tb)
                done[(kind, j, vs)] = end
                free[s] = end
                ops.append(Op(stage=s, kind=kind, microbatch=j, chunk=c, start_s=start,
                              end_s=end))
                nxt[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:  # pragma: no cover - the built-in orders never deadlock
            raise RuntimeError(f"schedule {schedule!r} deadlocked")
    return Timeline(schedule=schedule, pp=p, n_microbatches=int(n_microbatches), chunks=v,
                    ops=tuple(ops))
