r"""Discrete-event simulator of a serving engine: static vs continuous batching, paged vs
contiguous KV allocation, prefix sharing and chunked prefill.

It runs the real engine's scheduler (:class:`helpers.serving.scheduler.Scheduler`: the same
admissions, steps, preemptions and retirements as :mod:`helpers.serving.engine` on the same
trace), but its step executor runs no model: it advances a virtual clock by a *step-time model*

.. math:: t_{\text{step}} = c_0 + c_d\, n_{\text{decode}} + c_p\, n_{\text{prefill}}
          + c_{c}\, n_{\text{context}}

(:class:`StepModel`: a fixed cost per iteration, a cost per decoding sequence, a cost per
prefill token, a cost per token of KV context the step's sequences attend over), plus, before each step, the host
time :math:`g_0 + g_s\, n_{\text{seqs}}` the engine spends between steps; the lab fits the
coefficients from the real engine's own step log (:func:`fit_step_model`). Every emitted token gets the time its step ends, so
:func:`helpers.models.inference.trace_metrics` reads the simulated trace exactly as it reads a
measured one. After every step the simulator also records the KV memory: slots *reserved*
(whole blocks under paging, ``max_seq_len`` per sequence under contiguous preallocation) and
slots *used* (tokens actually stored), the gap being fragmentation.

>>> from helpers.sim.workload import batch_trace, fixed
>>> tr = batch_trace(2, prompt_len=fixed(4), output_len=fixed(3))
>>> out = simulate(tr, "continuous", StepModel(1.0, 0.0, 0.0), num_blocks=8, block_size=4)
>>> [r["token_times_s"] for r in out["requests"]]
[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]

Used by: chapters/inference-metrics.md, chapters/scheduling-and-kv-cache.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models._checks import positive, positive_int
from ..models.stats import least_squares
from ..serving.paged import BlockAllocator, BlockTable
from ..serving.scheduler import (SCHEDULERS, Scheduler, Sequence, Step, check_request_field,
                                 check_request_fields, check_request_fits, check_request_ids)

__all__ = ["StepModel", "fit_step_model", "roofline_step_model", "simulate",
           "saturated_tokens_per_s", "as_queue_trace",
           "SCHEDULERS", "ALLOCATORS"]

ALLOCATORS = ("paged", "contiguous")


@dataclass(frozen=True)
class StepModel:
    """``t = fixed_s + per_decode_s * n_decode + per_prefill_token_s * n_prefill
    + per_context_token_s * context_tokens`` seconds a step runs, and
    ``gap_s + gap_per_seq_s * n_seqs`` seconds of host time before it (:meth:`gap`).

    ``context_tokens`` is the KV context the step's sequences attend over, summed over them
    (:attr:`Step.context_tokens <helpers.serving.scheduler.Step>`): each reads its own keys and
    values, and the engine builds each one's slot index token by token. The host gap is the
    scheduler's own work between two steps (admissions, planning, retirements), which grows
    with the sequences it walks. The last three coefficients default to 0, the three-term
    model."""

    fixed_s: float
    per_decode_s: float
    per_prefill_token_s: float
    per_context_token_s: float = 0.0
    gap_s: float = 0.0
    gap_per_seq_s: float = 0.0

    def __post_init__(self):
        for k in ("fixed_s", "per_decode_s", "per_prefill_token_s", "per_context_token_s", "gap_s",
                  "gap_per_seq_s"):
            positive(k, getattr(self, k), allow_zero=True)

    def __call__(self, n_decode: int, n_prefill_tokens: int, context_tokens: int = 0) -> float:
        return (self.fixed_s + self.per_decode_s * n_decode
                + self.per_prefill_token_s * n_prefill_tokens
                + self.per_context_token_s * context_tokens)

    def gap(self, n_seqs: int) -> float:
        """Host seconds between the previous step (or wait) and a step of ``n_seqs`` sequences."""
        return self.gap_s + self.gap_per_seq_s * n_seqs


def _nonneg_lstsq(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient kept non-negative (a negative one is dropped and
    the rest refitted); a column of zeros (a term the steps never exercise) gets 0."""
    keep = [k for k in range(X.shape[1]) if np.any(X[:, k])]
    while keep:
        coef = np.zeros(X.shape[1])
        sol = least_squares(X[:, keep].tolist(), list(y))
        coef[keep] = sol
        neg = [k for k in keep if coef[k] < 0]
        if not neg:
            return coef
        keep = [k for k in keep if k != min(neg, key=lambda k: coef[k])]
    return np.zeros(X.shape[1])


def fit_step_model(steps, *, context: bool = False, gaps=None) -> StepModel:
    """Least-squares fit of :class:`StepModel` to logged steps (dicts with ``duration_s``,
    ``n_decode``, ``n_prefill_tokens``; with ``context``, also ``context_tokens``), with every
    coefficient kept non-negative (a negative one is dropped and the rest refitted).

    ``gaps``, if given, is a step log (dicts with ``host_gap_s`` and ``n_seqs``) to which the
    host gap ``gap_s + gap_per_seq_s * n_seqs`` is fitted the same way; without it both are 0."""
    steps = list(steps)
    cols = [[1.0, float(s["n_decode"]), float(s["n_prefill_tokens"])]
            + ([float(s["context_tokens"])] if context else []) for s in steps]
    y = np.array([float(s["duration_s"]) for s in steps])
    n = 4 if context else 3
    if len(cols) < n:
        raise ValueError(f"fitting {n} coefficients needs at least {n} steps, got {len(cols)}")
    coef = list(map(float, _nonneg_lstsq(np.array(cols), y))) + ([] if context else [0.0])
    g = [0.0, 0.0]
    if gaps is not None:
        gaps = list(gaps)
        if len(gaps) < 2:
            raise ValueError(f"fitting the host gap needs at least 2 steps, got {len(gaps)}")
        g = list(map(float, _nonneg_lstsq(np.array([[1.0, float(s["n_seqs"])] for s in gaps]),
                                          np.array([float(s["host_gap_s"]) for s in gaps]))))
    return StepModel(*coef, *g)


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


def _prompt_ids(rid, prompt_len: int, prefix_id, prefix_len: int) -> list[int]:
    """Stand-in token ids: equal across requests exactly on their shared prefix."""
    pre = [hash(("prefix", prefix_id, i)) for i in range(prefix_len)] if prefix_id is not None else []
    return pre + [hash(("own", rid, i)) for i in range(prompt_len - len(pre))]


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


class _StepTimeExecutor:
    """The simulator's step executor: no model, a virtual clock advanced by the step model."""

    def __init__(self, step_model: StepModel, reserved):
        self.step_model, self.reserved = step_model, reserved
        self.now_s = 0.0
        self.steps: list[dict] = []
        self.memory: list[dict] = []

    def now(self) -> float:
        return self.now_s

    def wait_until(self, t_s: float) -> None:
        self.now_s = max(self.now_s, t_s)

    def run(self, step: Step) -> tuple[None, float]:
        gap = self.step_model.gap(len(step.work))
        self.now_s += gap
        dt = self.step_model(step.n_decode, step.n_prefill_tokens, step.context_tokens)
        self.steps.append({"t_start_s": self.now_s, "duration_s": dt, "n_decode": step.n_decode,
                           "n_prefill_tokens": step.n_prefill_tokens, "n_seqs": len(step.work),
                           "context_tokens": step.context_tokens,
                           "kv_slots_read": step.kv_slots_read, "host_gap_s": gap})
        self.now_s += dt
        return None, self.now_s

    def log(self, step: Step) -> None:
        self.memory.append({"t_s": self.now_s, "reserved_tokens": self.reserved(),
                            "used_tokens": step.tokens_stored, "running": step.n_live})


def _checked(trace, *, block_size: int, num_blocks: int | None, max_seq_len: int | None
             ) -> list[Sequence]:
    """The trace's requests checked as the engine checks them (:meth:`Engine._admit_checked
    <helpers.serving.engine.Engine._admit_checked>`), as sequences in arrival order (ties by
    id)."""
    trace = list(trace)
    if not trace:
        raise ValueError("the trace is empty")
    check_request_ids([r.id for r in trace])
    seqs = []
    for r in trace:
        prompt_len = check_request_field(r.id, positive_int, "prompt_len", r.prompt_len)
        out_len, arrival = check_request_fields(r.id, r.output_len, r.arrival_s)
        prefix_len = 0
        if r.prefix_id is not None:
            prefix_len = check_request_field(r.id, positive_int, "prefix_len", r.prefix_len,
                                             minimum=0)
            if prefix_len > prompt_len:
                raise ValueError(f"request {r.id!r}: prefix_len {prefix_len} exceeds "
                                 f"prompt_len {prompt_len}")
        check_request_fits(r.id, prompt_len, out_len, block_size=block_size,
                           num_blocks=num_blocks, max_seq_len=max_seq_len)
        seqs.append(Sequence(r.id, arrival, _prompt_ids(r.id, prompt_len, r.prefix_id, prefix_len),
                             out_len, r.prefix_id))
    return sorted(seqs, key=lambda s: (s.arrival_s, s.id))


def simulate(trace, scheduler: str, step_model: StepModel, *, num_blocks: int,
             block_size: int = 16, max_batch: int = 8, token_budget: int = 256,
             allocator: str = "paged", max_seq_len: int | None = None,
             prefix_caching: bool = False) -> dict:
    """Simulate serving ``trace`` (:class:`helpers.sim.workload.Request` list).

    Parameters mirror :class:`helpers.serving.engine.Engine`; ``allocator="contiguous"``
    reserves ``max_seq_len`` slots per sequence (default: the trace's longest prompt + output)
    out of the same ``num_blocks * block_size`` slots.

    Every request is checked before anything runs, as the engine checks its own: an id no other
    request has, an integer ``prompt_len >= 1`` and ``output_len >= 1``, ``prefix_len`` within
    the prompt, a finite ``arrival_s >= 0``, prompt plus output within ``max_seq_len`` (when
    given, or contiguous) and within the pool (paged); a bad request raises ``ValueError``
    naming it and the field (``request 3: needs 9 KV blocks; the pool has 8``).

    Returns
    -------
    dict
        ``requests`` (``id``, ``arrival_s``, ``token_times_s``, ``preemptions``), ``steps``
        (``t_start_s``, ``duration_s``, ``n_decode``, ``n_prefill_tokens``, ``n_seqs``,
        ``context_tokens``, ``kv_slots_read``, ``host_gap_s``), and
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
    if max_seq_len is not None:
        max_seq_len = positive_int("max_seq_len", max_seq_len)
    seqs = _checked(trace, block_size=block_size, max_seq_len=max_seq_len,
                    num_blocks=num_blocks if allocator == "paged" else None)
    capacity = num_blocks * block_size
    if allocator == "contiguous":
        max_seq_len = max_seq_len or max(len(s.prompt) + s.max_new_tokens for s in seqs)
        if max_seq_len > capacity:
            raise ValueError(f"one reservation of {max_seq_len} slots exceeds the pool ({capacity})")
    if allocator == "contiguous":
        alloc = _Contiguous(capacity, max_seq_len, block_size)

        def reserved() -> int:
            return alloc.reserved_slots()
    else:
        alloc = BlockAllocator(num_blocks, block_size,
                               prefix_caching=prefix_caching and scheduler == "continuous")

        def reserved() -> int:
            return alloc.num_in_use * block_size  # the prefix cache's idle blocks are free to take

    executor = _StepTimeExecutor(step_model, reserved)
    sched = Scheduler(scheduler, alloc, executor, block_size=block_size, max_batch=max_batch,
                      token_budget=token_budget)
    finished = sched.run(seqs)
    steps, memory, now = executor.steps, executor.memory, executor.now_s
    reqs = [{"id": s.id, "arrival_s": s.arrival_s, "token_times_s": s.token_times_s,
             "preemptions": s.preemptions} for s in sorted(finished, key=lambda s: s.id)]
    return {"scheduler": scheduler, "allocator": allocator, "requests": reqs, "steps": steps,
            "memory": memory, "makespan_s": now,
            "peak_reserved_tokens": max((m["reserved_tokens"] for m in memory), default=0)}


def saturated_tokens_per_s(step_model: StepModel, trace, *, max_batch: int = 8, **kw) -> float:
    """Output tokens per second of continuous batching while all ``max_batch`` slots are busy:
    ``trace`` (a closed batch, larger than ``max_batch``) simulated with ``step_model``, tokens
    emitted up to the end of the last step with a full batch over that time. ``kw`` as
    :func:`simulate`.

    >>> from helpers.sim.workload import batch_trace, fixed
    >>> round(saturated_tokens_per_s(StepModel(1e-3, 0.0, 0.0), batch_trace(
    ...     40, prompt_len=fixed(4), output_len=fixed(5)), max_batch=4, num_blocks=64,
    ...     block_size=4, token_budget=64))  # 4 tokens per step of 1 ms
    4000
    """
    out = simulate(trace, "continuous", step_model, max_batch=max_batch, **kw)
    full = [st for st in out["steps"] if st["n_seqs"] >= max_batch]
    if not full:
        raise ValueError(f"the trace never fills the {max_batch} slots: it needs more requests")
    t_cut = full[-1]["t_start_s"] + full[-1]["duration_s"]
    n = sum(t <= t_cut for q in out["requests"] for t in q["token_times_s"])
    return n / t_cut


def as_queue_trace(result: dict, *, warmup: int = 0):
    """A :func:`simulate` result as a :class:`helpers.sim.queue.QueueTrace`: each request's
    arrival, first token (the end of its wait) and last token (its departure), in arrival order.

    Its methods then measure Little's three quantities independently over the window from the
    first counted arrival to the last: ``mean_number_in_system()`` (L, the time average of the
    requests present), ``arrival_rate_per_s()`` (lambda, arrivals counted) and
    ``mean_time_in_system_s()`` (W, the mean of each request's end-to-end time).

    >>> from helpers.sim.workload import poisson_trace, fixed
    >>> out = simulate(poisson_trace(50.0, 200, prompt_len=fixed(4), output_len=fixed(3), seed=0),
    ...                "continuous", StepModel(1e-3, 0.0, 0.0), num_blocks=64, block_size=4)
    >>> q = as_queue_trace(out, warmup=20)
    >>> abs(q.mean_number_in_system() / (q.arrival_rate_per_s() * q.mean_time_in_system_s()) - 1) < 0.05
    True
    """
    from .queue import QueueTrace

    reqs = sorted(result["requests"], key=lambda r: (r["arrival_s"], r["id"]))
    warmup = positive_int("warmup", warmup, minimum=0)
    if warmup >= len(reqs) - 1:
        raise ValueError(f"warmup must leave at least two requests, got {warmup} of {len(reqs)}")
    arrival = np.array([r["arrival_s"] for r in reqs], dtype=float)
    first = np.array([r["token_times_s"][0] for r in reqs], dtype=float)
    last = np.array([r["token_times_s"][-1] for r in reqs], dtype=float)
    return QueueTrace(arrival, first, last, warmup)
