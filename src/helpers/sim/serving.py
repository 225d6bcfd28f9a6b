r"""Discrete-event simulator of a serving engine: static vs continuous batching, paged vs
contiguous KV allocation, prefix sharing and chunked prefill.

It follows the same policies as the real engine of :mod:`helpers.serving.engine`, step by step,
but instead of running a model it advances a virtual clock by a *step-time model*

.. math:: t_{\text{step}} = c_0 + c_d\, n_{\text{decode}} + c_p\, n_{\text{prefill}}

(:class:`StepModel`: a fixed cost per iteration, a cost per decoding sequence, a cost per
prefill token), whose coefficients the lab fits from the real engine's own step log
(:func:`fit_step_model`). Every emitted token gets the time its step ends, so
:func:`helpers.models.inference.trace_metrics` reads the simulated trace exactly as it reads a
measured one. After every step the simulator also records the KV memory: slots *reserved*
(whole blocks under paging, ``max_seq_len`` per sequence under contiguous preallocation) and
slots *used* (tokens actually stored), the gap being fragmentation.

>>> from helpers.sim.workload import batch_trace, fixed
>>> tr = batch_trace(2, prompt_len=fixed(4), output_len=fixed(3))
>>> out = simulate(tr, "continuous", StepModel(1.0, 0.0, 0.0), num_blocks=8, block_size=4)
>>> [r["token_times_s"] for r in out["requests"]]
[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..models import kv_paging
from ..models._checks import positive, positive_int
from ..serving.paged import BlockAllocator, BlockTable, grow_or_preempt, plan_step

__all__ = ["StepModel", "fit_step_model", "roofline_step_model", "simulate", "SCHEDULERS",
           "ALLOCATORS"]

SCHEDULERS = ("static", "continuous")
ALLOCATORS = ("paged", "contiguous")


@dataclass(frozen=True)
class StepModel:
    """``t = fixed_s + per_decode_s * n_decode + per_prefill_token_s * n_prefill`` seconds."""

    fixed_s: float
    per_decode_s: float
    per_prefill_token_s: float

    def __post_init__(self):
        for k in ("fixed_s", "per_decode_s", "per_prefill_token_s"):
            positive(k, getattr(self, k), allow_zero=True)

    def __call__(self, n_decode: int, n_prefill_tokens: int) -> float:
        return self.fixed_s + self.per_decode_s * n_decode + self.per_prefill_token_s * n_prefill_tokens


def fit_step_model(steps) -> StepModel:
    """Least-squares fit of :class:`StepModel` to logged steps (dicts with ``duration_s``,
    ``n_decode``, ``n_prefill_tokens``), with every coefficient kept non-negative (a negative
    one is dropped and the rest refitted)."""
    rows = [(1.0, float(s["n_decode"]), float(s["n_prefill_tokens"])) for s in steps]
    y = np.array([float(s["duration_s"]) for s in steps])
    if len(rows) < 3:
        raise ValueError(f"fitting three coefficients needs at least 3 steps, got {len(rows)}")
    X = np.array(rows)
    keep = [0, 1, 2]
    while True:
        coef = np.zeros(3)
        sol, *_ = np.linalg.lstsq(X[:, keep], y, rcond=None)
        coef[keep] = sol
        neg = [k for k in keep if coef[k] < 0]
        if not neg:
            return StepModel(*map(float, coef))
        keep = [k for k in keep if k != min(neg, key=lambda k: coef[k])]
        if not keep:
            return StepModel(0.0, 0.0, 0.0)


def roofline_step_model(cfg, gpu, *, context_tokens: int, bytes_per_element: float = 2.0
                        ) -> StepModel:
    """A :class:`StepModel` from the roofline of ``cfg`` on ``gpu``: ``c0`` reads the weights
    once from HBM, ``c_d`` reads one sequence's KV cache of ``context_tokens``, ``c_p`` is one
    prompt token's ``2N`` FLOP at the dense bf16 peak (each term alone, no overlap)."""
    from ..models import transformer as tf

    n = tf.parameter_count(cfg)
    ctx = positive_int("context_tokens", context_tokens)
    bw = gpu.hbm_bytes_per_s
    return StepModel(tf.weight_bytes(n, bytes_per_element) / bw,
                     tf.kv_cache_bytes_per_token(cfg, bytes_per_element) * ctx / bw,
                     2 * n / gpu.dense_flop_per_s["bf16"])


@dataclass
class _Seq:
    id: int
    arrival_s: float
    prompt: list
    output_len: int
    emitted: int = 0
    num_computed: int = 0
    table: BlockTable | None = None
    token_times_s: list = field(default_factory=list)
    preemptions: int = 0

    @property
    def length(self) -> int:
        return len(self.prompt) + self.emitted

    @property
    def done(self) -> bool:
        return self.emitted >= self.output_len

    @property
    def in_prefill(self) -> bool:
        return self.num_computed < len(self.prompt)


def _clear_emitted(s: _Seq) -> None:
    """A preempted sequence forgets the tokens it emitted: they are recomputed from scratch."""
    s.emitted, s.token_times_s = 0, []


def _prompt_ids(r) -> list[int]:
    """Stand-in token ids: equal across requests exactly on their shared prefix."""
    pre = [hash(("prefix", r.prefix_id, i)) for i in range(r.prefix_len)] if r.prefix_id is not None else []
    return pre + [hash(("own", r.id, i)) for i in range(r.prompt_len - len(pre))]


class _Contiguous:
    """Max-length preallocation: a sequence holds ``max_seq_len`` slots from admission on."""

    def __init__(self, capacity_slots: int, max_seq_len: int, block_size: int):
        self.max_seq_len, self.block_size = max_seq_len, block_size
        self.slots_free = capacity_slots
        self.capacity = capacity_slots
        self.peak_used = 0

    def grow(self, table: BlockTable, num_tokens: int) -> bool:
        if num_tokens > self.max_seq_len:
            raise ValueError(f"{num_tokens} tokens exceed the reservation of {self.max_seq_len}")
        if table.num_tokens == 0 and not table.blocks:
            if self.slots_free < self.max_seq_len:
                return False
            self.slots_free -= self.max_seq_len
            table.blocks = [-1]  # marks "reserved"
            self.peak_used = max(self.peak_used, self.capacity - self.slots_free)
        table.num_tokens = max(table.num_tokens, num_tokens)
        return True

    def release(self, table: BlockTable) -> None:
        if table.blocks:
            self.slots_free += self.max_seq_len
        table.blocks, table.num_tokens = [], 0

    def reserved_slots(self) -> int:
        return self.capacity - self.slots_free

    def match_prefix(self, table, tokens) -> int:
        return 0

    def register_prefix(self, *a) -> None:
        pass


def simulate(trace, scheduler: str, step_model: StepModel, *, num_blocks: int,
             block_size: int = 16, max_batch: int = 8, token_budget: int = 256,
             allocator: str = "paged", max_seq_len: int | None = None,
             prefix_caching: bool = False) -> dict:
    """Simulate serving ``trace`` (:class:`helpers.sim.workload.Request` list).

    Parameters mirror :class:`helpers.serving.engine.Engine`; ``allocator="contiguous"``
    reserves ``max_seq_len`` slots per sequence (default: the trace's longest prompt + output)
    out of the same ``num_blocks * block_size`` slots.

    Returns
    -------
    dict
        ``requests`` (``id``, ``arrival_s``, ``token_times_s``, ``preemptions``), ``steps``
        (``t_start_s``, ``duration_s``, ``n_decode``, ``n_prefill_tokens``, ``n_seqs``), and
        ``memory`` (per step end: ``t_s``, ``reserved_tokens``, ``used_tokens``,
        ``running``), ``peak_reserved_tokens``, ``makespan_s``.
    """
    if scheduler not in SCHEDULERS:
        raise ValueError(f"scheduler must be one of {SCHEDULERS}, got {scheduler!r}")
    if allocator not in ALLOCATORS:
        raise ValueError(f"allocator must be one of {ALLOCATORS}, got {allocator!r}")
    if not isinstance(step_model, StepModel):
        raise ValueError("step_model must be a StepModel")
    num_blocks, block_size = positive_int("num_blocks", num_blocks), positive_int("block_size", block_size)
    max_batch, token_budget = positive_int("max_batch", max_batch), positive_int("token_budget", token_budget)
    trace = sorted(trace, key=lambda r: (r.arrival_s, r.id))
    if not trace:
        raise ValueError("the trace is empty")
    longest = max(r.prompt_len + r.output_len for r in trace)
    capacity = num_blocks * block_size
    if allocator == "contiguous":
        max_seq_len = positive_int("max_seq_len", max_seq_len or longest)
        if max_seq_len < longest:
            raise ValueError(f"max_seq_len {max_seq_len} is shorter than a request ({longest})")
        if max_seq_len > capacity:
            raise ValueError(f"one reservation of {max_seq_len} slots exceeds the pool ({capacity})")
        alloc = _Contiguous(capacity, max_seq_len, block_size)
    else:
        if kv_paging.blocks_needed(longest, block_size) > num_blocks:
            raise ValueError(f"a request needs {kv_paging.blocks_needed(longest, block_size)} "
                             f"blocks; the pool has {num_blocks}")
        alloc = BlockAllocator(num_blocks, block_size,
                               prefix_caching=prefix_caching and scheduler == "continuous")
    pending = [_Seq(r.id, float(r.arrival_s), _prompt_ids(r), int(r.output_len)) for r in trace]
    steps, memory, finished = [], [], []
    now = 0.0
    live: list[_Seq] = []

    def reserved() -> int:
        if allocator == "contiguous":
            return alloc.reserved_slots()
        return alloc.num_in_use * block_size  # the prefix cache's idle blocks are free to take

    def step(work):
        nonlocal now
        n_dec = sum(1 for s, n in work if not s.in_prefill)
        n_pre = sum(n for s, n in work if s.in_prefill)
        dt = step_model(n_dec, n_pre)
        steps.append({"t_start_s": now, "duration_s": dt, "n_decode": n_dec,
                      "n_prefill_tokens": n_pre, "n_seqs": len(work)})
        now += dt
        for s, n in work:
            was_prefill = s.in_prefill
            s.num_computed += n
            if was_prefill:
                alloc.register_prefix(s.table, s.prompt, s.num_computed)
            if s.num_computed == s.length and not s.done:
                s.emitted += 1
                s.token_times_s.append(now)
        memory.append({"t_s": now, "reserved_tokens": reserved(),
                       "used_tokens": sum(s.num_computed for s in live), "running": len(live)})

    def arrived(queue):
        while pending and pending[0].arrival_s <= now:
            queue.append(pending.pop(0))

    if scheduler == "static":
        queue: list[_Seq] = []
        while pending or queue:
            arrived(queue)
            if not queue:
                now = max(now, pending[0].arrival_s)
                continue
            batch = []
            while queue and len(batch) < max_batch:
                s = queue[0]
                s.table = BlockTable(block_size)
                if not alloc.grow(s.table, len(s.prompt) + s.output_len):
                    s.table = None
                    break
                batch.append(queue.pop(0))
            live = batch
            step([(s, len(s.prompt)) for s in batch])
            while not all(s.done for s in batch):
                step([(s, 1) for s in batch if not s.done])
            for s in batch:
                alloc.release(s.table)
            live = []
            finished += batch
    else:
        waiting: list[_Seq] = []
        running: list[_Seq] = []
        live = running
        while pending or waiting or running:
            arrived(waiting)
            if not waiting and not running:
                now = max(now, pending[0].arrival_s)
                continue
            while waiting and len(running) < max_batch:
                s = waiting[0]
                s.table = BlockTable(block_size)
                s.num_computed = alloc.match_prefix(s.table, s.prompt)
                if not alloc.grow(s.table, s.num_computed + 1):
                    alloc.release(s.table)
                    s.num_computed, s.table = 0, None
                    break
                running.append(waiting.pop(0))
            work = plan_step(running, token_budget)
            ready = grow_or_preempt(work, running, waiting, alloc, _clear_emitted)
            if not ready:
                continue
            step(ready)
            for s in [s for s in running if s.done]:
                running.remove(s)
                alloc.release(s.table)
                finished.append(s)
    reqs = [{"id": s.id, "arrival_s": s.arrival_s, "token_times_s": s.token_times_s,
             "preemptions": s.preemptions} for s in sorted(finished, key=lambda s: s.id)]
    return {"scheduler": scheduler, "allocator": allocator, "requests": reqs, "steps": steps,
            "memory": memory, "makespan_s": now,
            "peak_reserved_tokens": max((m["reserved_tokens"] for m in memory), default=0)}
