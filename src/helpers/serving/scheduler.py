"""One scheduler for the serving engine and its simulator: static and continuous batching over a
pluggable step executor.

:class:`Scheduler` decides *what* runs: which requests are admitted, which tokens each step
computes (:func:`~helpers.serving.paged.plan_step`), who is preempted when the KV pool runs dry
(:func:`~helpers.serving.paged.grow_or_preempt`), and when a sequence retires. A *step executor*
decides *how* a step runs and what it costs:

* the real engine's executor (:mod:`helpers.serving.engine`) runs the model on the planned
  tokens and reads the wall clock (waiting for arrivals in real time);
* the simulator's executor (:mod:`helpers.sim.serving`) runs no model: it adds the step-time
  model to a virtual clock (and jumps to the next arrival).

An executor has four methods (:class:`StepExecutor`): ``now()``, the clock in seconds;
``wait_until(t_s)``, idle until an arrival; ``run(step) -> (tokens, t_end_s)``, execute a
:class:`Step` and return the next token of each sequence of ``step.work`` (or ``None`` when it
computes no token ids) and the time the step ends; and ``log(step)``, called once the scheduler
has advanced the sequences, to record the step in the executor's own format.

The two policies:

* ``"static"``: when idle, take up to ``max_batch`` arrived requests, reserve KV for their whole
  length (prompt + output), prefill them together and decode until the *last* of them is done;
  finished sequences idle in the batch, newcomers wait for the next batch;
* ``"continuous"`` (iteration-level, Orca; chunked prefill, Sarathi-Serve): at every step admit
  arrived requests (FIFO) while the pool has a block for their next token, plan one decode token
  per running sequence plus prefill chunks up to ``token_budget``, grow every planned sequence
  or preempt the youngest, retire finished sequences at once.

The allocator is the paged :class:`~helpers.serving.paged.BlockAllocator` (with or without
prefix caching) or anything with its ``grow``, ``release``, ``match_prefix`` and
``register_prefix`` (the simulator's max-length contiguous reservation). The scheduler also keeps
:attr:`Scheduler.events`, the schedule itself, executor-independent: ``("admit", id)``,
``("step", ((id, n_tokens), ...))``, ``("preempt", id)``, ``("finish", id)`` in order, so two
executors can be shown to have run the same schedule.

>>> from helpers.serving.paged import BlockAllocator
>>> class Unit:                       # every step takes one second; no token ids
...     t = 0.0
...     def now(self): return self.t
...     def wait_until(self, t_s): self.t = max(self.t, t_s)
...     def run(self, step): self.t += 1.0; return None, self.t
...     def log(self, step): pass
>>> seqs = [Sequence(0, 0.0, [1, 2, 3], 2), Sequence(1, 0.5, [4, 5], 1)]
>>> sched = Scheduler("continuous", BlockAllocator(4, 4), Unit(), block_size=4)
>>> [(s.id, s.token_times_s) for s in sched.run(seqs)]     # in the order they finished
[(0, [1.0, 2.0]), (1, [2.0])]
>>> [e for e in sched.events if e[0] == "step"]
[('step', ((0, 3),)), ('step', ((0, 1), (1, 2)))]

Library only: no page imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..models import kv_paging
from ..models._checks import positive, positive_int
from .paged import BlockTable, grow_or_preempt, plan_step

__all__ = ["SCHEDULERS", "Sequence", "Step", "StepExecutor", "Scheduler", "check_request_ids",
           "check_request_field", "check_request_fields", "check_request_fits"]

SCHEDULERS = ("static", "continuous")


@dataclass
class Sequence:
    """One request inside the scheduler: its tokens, its block table and its timestamps.

    The simulator's sequences emit placeholder tokens (``None``): only their number matters."""

    id: int
    arrival_s: float
    prompt: list[int]
    max_new_tokens: int
    prefix_id: int | None = None
    output: list[int] = field(default_factory=list)
    token_times_s: list[float] = field(default_factory=list)
    num_computed: int = 0        # tokens whose keys and values are in the pool
    table: BlockTable | None = None
    admitted_s: float | None = None
    preemptions: int = 0
    shared_tokens: int = 0       # prompt tokens found in the prefix cache at admission

    @property
    def tokens(self) -> list[int]:
        return self.prompt + self.output

    @property
    def length(self) -> int:
        """``len(self.tokens)``, without building the list."""
        return len(self.prompt) + len(self.output)

    @property
    def done(self) -> bool:
        return len(self.output) >= self.max_new_tokens

    @property
    def in_prefill(self) -> bool:
        return self.num_computed < len(self.prompt)


def clear_output(s: Sequence) -> None:
    """A preempted sequence forgets its generated tokens: they are recomputed from scratch."""
    s.output, s.token_times_s = [], []


@dataclass
class Step:
    """One step as planned (``work``, counts taken before it runs) and, once it has run, the
    state after it (``tokens_stored`` and ``n_live`` over the live sequences: the static batch,
    idle members included, or the running set; ``t_end_s``). ``kv_slots_read`` is the number
    of KV slots a padded attention over the step reads: ``len(work)`` times the longest
    context, the ``(B, S)`` block that :class:`helpers.serving.engine.PagedModel` gathers."""

    work: list[tuple[Sequence, int]]
    n_decode: int
    n_prefill_tokens: int
    context_tokens: int
    tokens_stored: int = 0
    n_live: int = 0
    t_end_s: float = 0.0
    kv_slots_read: int = 0


class StepExecutor(Protocol):
    """What runs a step and keeps the clock (see the module docstring)."""

    def now(self) -> float: ...

    def wait_until(self, t_s: float) -> None: ...

    def run(self, step: Step) -> tuple[list | None, float]: ...

    def log(self, step: Step) -> None: ...


class Scheduler:
    """Static or continuous batching of :class:`Sequence` s over ``alloc`` and ``executor``.

    Parameters
    ----------
    policy : str
        ``"static"`` or ``"continuous"``.
    alloc
        The KV allocator (:class:`~helpers.serving.paged.BlockAllocator` or the simulator's
        contiguous one).
    executor : StepExecutor
        Runs the steps and keeps the clock.
    block_size : int
        Token slots per block of the sequences' tables.
    max_batch : int
        Most sequences running at once (both policies).
    token_budget : int
        Continuous batching: most tokens (decode + prefill chunks) in one step.

    One scheduler serves one trace (:meth:`run`); :attr:`events` and :attr:`finished` are
    that trace's.
    """

    def __init__(self, policy: str, alloc, executor: StepExecutor, *, block_size: int,
                 max_batch: int = 8, token_budget: int = 256):
        if policy not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {SCHEDULERS}, got {policy!r}")
        self.policy, self.alloc, self.executor = policy, alloc, executor
        self.block_size = positive_int("block_size", block_size)
        self.max_batch = positive_int("max_batch", max_batch)
        self.token_budget = positive_int("token_budget", token_budget)
        self.events: list[tuple] = []
        self.finished: list[Sequence] = []

    def run(self, seqs) -> list[Sequence]:
        """Serve ``seqs`` (in the order they are to be admitted, by arrival); return them in the
        order they finished."""
        pending = list(seqs)
        pending.reverse()  # pop() takes the earliest
        if self.policy == "static":
            self._run_static(pending)
        else:
            self._run_continuous(pending)
        return self.finished

    # -- helpers --------------------------------------------------------------------------------
    def _arrived(self, pending: list[Sequence]) -> list[Sequence]:
        now, out = self.executor.now(), []
        while pending and pending[-1].arrival_s <= now:
            out.append(pending.pop())
        return out

    def _admitted(self, s: Sequence) -> None:
        if s.admitted_s is None:  # a preempted sequence keeps its first admission time
            s.admitted_s = self.executor.now()
        self.events.append(("admit", s.id))

    def _preempted(self, s: Sequence) -> None:
        clear_output(s)
        self.events.append(("preempt", s.id))

    def _retire(self, s: Sequence) -> None:
        self.alloc.release(s.table)
        self.finished.append(s)
        self.events.append(("finish", s.id))

    def _step(self, work: list[tuple[Sequence, int]], live: list[Sequence]) -> None:
        """Run ``n`` new tokens of each sequence; a sequence whose known tokens are then all
        computed emits one, stamped with the step's end."""
        step = Step(work, n_decode=sum(1 for s, n in work if not s.in_prefill),
                    n_prefill_tokens=sum(n for s, n in work if s.in_prefill),
                    context_tokens=sum(s.num_computed + n for s, n in work),
                    kv_slots_read=len(work) * max((s.num_computed + n for s, n in work),
                                                  default=0))
        tokens, t_end = self.executor.run(step)
        if tokens is None:
            tokens = [None] * len(work)
        for (s, n), tok in zip(work, tokens):
            was_prefill = s.in_prefill
            s.num_computed += n
            if was_prefill:
                self.alloc.register_prefix(s.table, s.prompt, s.num_computed)
            if s.num_computed == s.length and not s.done:
                s.output.append(tok)
                s.token_times_s.append(t_end)
        step.tokens_stored = sum(s.num_computed for s in live)
        step.n_live, step.t_end_s = len(live), t_end
        self.events.append(("step", tuple((s.id, n) for s, n in work)))
        self.executor.log(step)

    # -- the two policies -----------------------------------------------------------------------
    def _run_static(self, pending: list[Sequence]) -> None:
        alloc, queue = self.alloc, []
        while pending or queue:
            queue += self._arrived(pending)
            if not queue:
                self.executor.wait_until(pending[-1].arrival_s)
                continue
            batch = []
            while queue and len(batch) < self.max_batch:
                s = queue[0]
                s.table = BlockTable(self.block_size)
                if not alloc.grow(s.table, len(s.prompt) + s.max_new_tokens):
                    s.table = None
                    if not batch:
                        raise ValueError(f"request {s.id!r} does not fit the empty KV pool")
                    break
                batch.append(queue.pop(0))
            for s in batch:
                self._admitted(s)
            self._step([(s, len(s.prompt)) for s in batch], batch)   # prefill all together
            while not all(s.done for s in batch):                     # decode to the longest
                self._step([(s, 1) for s in batch if not s.done], batch)
            for s in batch:
                self._retire(s)

    def _run_continuous(self, pending: list[Sequence]) -> None:
        alloc, waiting, running = self.alloc, [], []
        while pending or waiting or running:
            waiting += self._arrived(pending)
            if not waiting and not running:
                self.executor.wait_until(pending[-1].arrival_s)
                continue
            # admit (FIFO) while there is room for the sequence's next token
            while waiting and len(running) < self.max_batch:
                s = waiting[0]
                s.table = BlockTable(self.block_size)
                s.shared_tokens = alloc.match_prefix(s.table, s.prompt)
                s.num_computed = s.shared_tokens
                if not alloc.grow(s.table, s.num_computed + 1):
                    alloc.release(s.table)
                    s.num_computed, s.table = 0, None
                    break
                running.append(waiting.pop(0))
                self._admitted(s)
            if not running:
                raise ValueError(f"request {waiting[0].id!r} cannot get a KV block from the "
                                 f"empty pool")
            # every decode, then prefill chunks up to the token budget; grow them or preempt
            work = plan_step(running, self.token_budget)
            ready = grow_or_preempt(work, running, waiting, alloc, self._preempted)
            if not ready:
                continue
            self._step(ready, running)
            for s in [s for s in running if s.done]:
                running.remove(s)
                self._retire(s)


# -- request checks shared by the engine and the simulator ----------------------------------------

def check_request_field(rid, check, name: str, value, **kw):
    """``check(name, value, **kw)`` with the request's id in front of its error."""
    try:
        return check(name, value, **kw)
    except ValueError as e:
        raise ValueError(f"request {rid!r}: {e}") from None


def check_request_ids(ids) -> None:
    """Request ids must be hashable, distinct and comparable with each other (traces are
    returned sorted by id); ``ValueError`` naming the first bad one otherwise."""
    seen = set()
    for rid in ids:
        try:
            dup = rid in seen
        except TypeError:
            raise ValueError(f"request {rid!r}: id must be hashable") from None
        if dup:
            raise ValueError(f"request {rid!r}: duplicate request id")
        seen.add(rid)
    try:
        sorted(seen)
    except TypeError:
        raise ValueError(f"request ids must be comparable with each other (the trace is "
                         f"returned sorted by id), got {sorted(map(repr, seen))}") from None


def check_request_fields(rid, output_len, arrival_s) -> tuple[int, float]:
    """A request's ``output_len`` (an integer >= 1) and ``arrival_s`` (finite, >= 0), converted;
    ``ValueError`` naming the request and the field otherwise."""
    return (check_request_field(rid, positive_int, "output_len", output_len),
            check_request_field(rid, positive, "arrival_s", arrival_s, allow_zero=True))


def check_request_fits(rid, prompt_len: int, output_len: int, *, block_size: int,
                       num_blocks: int | None, max_seq_len: int | None,
                       max_seq_len_name: str = "max_seq_len") -> None:
    """``ValueError`` naming the request unless its prompt plus output are within
    ``max_seq_len`` (when there is one) and fit a pool of ``num_blocks`` blocks (when paged)."""
    if max_seq_len is not None and prompt_len + output_len > max_seq_len:
        raise ValueError(f"request {rid!r}: {prompt_len} + {output_len} tokens exceed "
                         f"{max_seq_len_name} {max_seq_len}")
    if num_blocks is not None:
        need = kv_paging.blocks_needed(prompt_len + output_len, block_size)
        if need > num_blocks:
            raise ValueError(f"request {rid!r}: needs {need} KV blocks; the pool has "
                             f"{num_blocks}")
