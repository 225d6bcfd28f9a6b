"""A small real serving engine: paged KV cache, static and continuous batching.

:class:`PagedModel` runs a :class:`helpers.nn.decoder.Decoder`'s own modules (embedding, norms,
projections, MLP, rotary tables, head) over a *packed* batch: each sequence brings some new
tokens (a whole prompt, a chunk of one, or one decode token) at its own positions, their keys and
values are written into the :class:`~helpers.serving.paged.KVPool` slots named by the sequence's
block table, and each query attends to the keys gathered from the pool through that table. The
decoder's ``forward`` takes one ``start_pos`` for the whole batch; this one takes one per
sequence, which is what continuous batching needs.

:class:`Engine` holds the model, the pool and the allocator and runs a trace of
:class:`helpers.sim.workload.Request` in real time (arrivals replayed against
``time.perf_counter``) under one of two schedulers:

* ``"static"``: when the engine is idle, take up to ``max_batch`` arrived requests, reserve
  blocks for their whole length (prompt + output, the contiguous-allocation discipline), prefill
  them together and decode until the *last* of them is done; finished sequences idle in the
  batch, newcomers wait for the next batch;
* ``"continuous"`` (iteration-level, Orca; chunked prefill, Sarathi-Serve): at every step admit
  arrived requests while blocks last, run one decode token for every running sequence plus
  prefill chunks of waiting prompts up to a token budget, retire finished sequences at once,
  allocate blocks on demand; when the pool runs dry the youngest sequence is preempted (its
  blocks freed, its tokens recomputed later). With ``prefix_caching`` full prompt blocks are
  shared between requests with the same prefix.

Every emitted token is stamped with the engine's clock after a device synchronisation, and each
step is logged (decode sequences, prefill tokens, context tokens, duration), so
:func:`helpers.models.inference.trace_metrics` gives TTFT/TPOT and the lab fits the simulator's
step-time model from the log. Greedy decoding, no end-of-sequence token: each request emits
exactly its ``output_len`` tokens.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..models import kv_paging
from ..models._checks import positive, positive_int
from ..nn.decoder import Decoder, apply_rope
from .paged import BlockAllocator, BlockTable, KVPool, grow_or_preempt, plan_step

__all__ = ["PagedModel", "Sequence", "Engine", "SCHEDULERS", "KV_DTYPES", "serve"]

SCHEDULERS = ("static", "continuous")

#: Dtypes the KV pool may have: floating types that hold a key or value as it is (rounded).
#: An integer pool would truncate them (quantized KV needs scales, which this engine has not).
KV_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


class PagedModel:
    """A :class:`Decoder`'s weights run over packed sequences with a paged KV cache."""

    def __init__(self, model: Decoder):
        self.model = model
        self.cfg = model.cfg

    @torch.no_grad()
    def forward(self, pool: KVPool, chunks: list[tuple[list[int], int, BlockTable]]
                ) -> torch.Tensor:
        """Logits of the last new token of each chunk, ``(len(chunks), vocab)``.

        ``chunks`` holds, per sequence, ``(new token ids, start position, block table)``; the
        table must already have blocks for positions up to ``start + len(ids) - 1``, and the
        pool must already hold the keys and values of positions ``0 .. start - 1``.
        """
        m, cfg = self.model, self.cfg
        dev = m.embed.weight.device
        if not chunks:
            raise ValueError("forward needs at least one chunk")
        lens = [len(ids) for ids, _, _ in chunks]
        if min(lens) < 1:
            raise ValueError("every chunk needs at least one new token")
        B, T, N = len(chunks), max(lens), sum(lens)
        ctx = [start + n for (_, start, _), n in zip(chunks, lens)]
        S = max(ctx)
        # flat (packed) token ids, positions and write slots
        ids = torch.tensor([t for c in chunks for t in c[0]], dtype=torch.long, device=dev)
        pos_list = [start + i for (_, start, _), n in zip(chunks, lens) for i in range(n)]
        pos = torch.tensor(pos_list, dtype=torch.long, device=dev)
        write = torch.tensor([t.slot(p) for (_, start, t), n in zip(chunks, lens)
                              for p in range(start, start + n)], dtype=torch.long, device=dev)
        # padded views: query (B, T) -> flat index; keys (B, S) -> pool slot
        q_idx, k_slot = torch.zeros(B, T, dtype=torch.long), torch.zeros(B, S, dtype=torch.long)
        q_pos = torch.full((B, T), -1, dtype=torch.long)
        off = 0
        for i, ((_, start, table), n) in enumerate(zip(chunks, lens)):
            q_idx[i, :n] = torch.arange(off, off + n)
            q_pos[i, :n] = torch.arange(start, start + n)
            k_slot[i, :ctx[i]] = torch.tensor(table.slots(0, ctx[i]), dtype=torch.long)
            off += n
        q_idx, k_slot, q_pos = q_idx.to(dev), k_slot.to(dev), q_pos.to(dev)
        key_pos = torch.arange(S, device=dev)
        # a key is visible to a query if it is not ahead of it (padding queries have pos -1 and
        # see key 0 only, so their softmax stays finite; their outputs are discarded)
        visible = key_pos[None, None, :] <= q_pos.clamp(min=0)[:, :, None]  # (B, T, S)
        x = m.embed(ids)
        if m.pos_embed is not None:
            x = x + m.pos_embed(pos)
        cos, sin = m.rope_cos[pos][:, None, :], m.rope_sin[pos][:, None, :]
        H, Hkv, d = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        group = H // Hkv
        for layer, block in enumerate(m.blocks):
            a = block.attn
            h = block.attn_norm(x)
            q = a.wq(h).view(N, H, d)
            k = a.wk(h).view(N, Hkv, d)
            v = a.wv(h).view(N, Hkv, d)
            if a.rope:
                q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            pool.k[layer][write] = k.to(pool.k[layer].dtype)
            pool.v[layer][write] = v.to(pool.v[layer].dtype)
            keys = pool.k[layer][k_slot].to(q.dtype)    # (B, S, Hkv, d)
            vals = pool.v[layer][k_slot].to(q.dtype)
            keys = keys.permute(0, 2, 1, 3).repeat_interleave(group, dim=1)  # (B, H, S, d)
            vals = vals.permute(0, 2, 1, 3).repeat_interleave(group, dim=1)
            qb = q[q_idx].permute(0, 2, 1, 3)                                 # (B, H, T, d)
            scores = (qb @ keys.transpose(-2, -1)) / math.sqrt(d)
            scores = scores.masked_fill(~visible[:, None], float("-inf"))
            probs = F.softmax(scores.float(), dim=-1).type_as(qb)
            out = (probs @ vals).permute(0, 2, 1, 3).reshape(B, T, H * d)
            flat = out.new_empty(N, H * d)
            valid = q_pos >= 0
            flat[q_idx[valid]] = out[valid]
            x = x + a.wo(flat)
            x = x + block.mlp(block.mlp_norm(x))
        last = torch.tensor([i for i in torch.cumsum(torch.tensor(lens), 0).tolist()],
                            device=dev) - 1
        return m.head(m.norm(x[last]))


@dataclass
class Sequence:
    """One request inside the engine: its tokens, its block table and its timestamps."""

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
    def done(self) -> bool:
        return len(self.output) >= self.max_new_tokens

    @property
    def in_prefill(self) -> bool:
        return self.num_computed < len(self.prompt)


def _clear_output(s: Sequence) -> None:
    """A preempted sequence forgets its generated tokens: they are recomputed from scratch."""
    s.output, s.token_times_s = [], []


def _request_field(rid, check, name: str, value, **kw):
    """``check(name, value, **kw)`` with the request's id in front of its error."""
    try:
        return check(name, value, **kw)
    except ValueError as e:
        raise ValueError(f"request {rid!r}: {e}") from None


def _prompt_ids(rid, prompt, vocab_size: int) -> list[int]:
    """The request's prompt as a non-empty list of int token ids in ``[0, vocab_size)``."""
    try:
        items = list(prompt)
    except TypeError:
        raise ValueError(f"request {rid!r}: prompt must be a sequence of token ids, "
                         f"got {prompt!r}") from None
    if not items:
        raise ValueError(f"request {rid!r}: prompt is empty")
    toks = []
    for i, t in enumerate(items):
        try:
            v = int(t)
            ok = not isinstance(t, bool) and bool(v == t)
        except (TypeError, ValueError, OverflowError, RuntimeError):
            ok = False
        if not ok:
            raise ValueError(f"request {rid!r}: prompt token {i} must be an integer token id, "
                             f"got {t!r}")
        if not 0 <= v < vocab_size:
            raise ValueError(f"request {rid!r}: prompt token {i} is {v}, outside the "
                             f"vocabulary [0, {vocab_size})")
        toks.append(v)
    return toks


class Engine:
    """A paged-KV serving engine over one model (see the module docstring).

    Parameters
    ----------
    model : Decoder
        The model (its dtype and device are the engine's).
    num_blocks, block_size : int
        KV pool size: ``num_blocks * block_size`` token slots per layer.
    max_batch : int
        Most sequences running at once (both schedulers).
    token_budget : int
        Continuous batching: most tokens (decode + prefill chunks) in one step.
    prefix_caching : bool
        Continuous batching: share full prompt blocks between requests.
    """

    def __init__(self, model: Decoder, *, num_blocks: int, block_size: int = 16,
                 max_batch: int = 8, token_budget: int = 256, prefix_caching: bool = False,
                 kv_dtype: torch.dtype | None = None):
        self.model = PagedModel(model)
        self.cfg = model.cfg
        self.device = str(model.embed.weight.device)
        self.block_size = positive_int("block_size", block_size)
        self.num_blocks = positive_int("num_blocks", num_blocks)
        self.max_batch = positive_int("max_batch", max_batch)
        self.token_budget = positive_int("token_budget", token_budget)
        self.prefix_caching = bool(prefix_caching)
        self.kv_dtype = kv_dtype or model.embed.weight.dtype
        if self.kv_dtype not in KV_DTYPES:
            raise ValueError(f"kv_dtype must be a floating dtype, one of "
                             f"{', '.join(map(str, KV_DTYPES))}, got {self.kv_dtype!r}")
        self.pool = KVPool(self.cfg, num_blocks=num_blocks, block_size=block_size,
                           dtype=self.kv_dtype, device=self.device)

    # -- clock ----------------------------------------------------------------------------------
    def _now(self) -> float:
        if self.device.startswith("cuda"):
            torch.cuda.synchronize(self.device)
        return time.perf_counter() - self._t0

    # -- one step -------------------------------------------------------------------------------
    def _step(self, work: list[tuple[Sequence, int]], alloc: BlockAllocator) -> None:
        """Run ``n`` new tokens of each sequence, emit a token where a sequence's known tokens
        are all computed, log the step."""
        chunks = []
        for s, n in work:
            toks = s.tokens
            chunks.append((toks[s.num_computed:s.num_computed + n], s.num_computed, s.table))
        t_start = self._now()
        logits = self.model.forward(self.pool, chunks)
        nxt = logits.argmax(-1).tolist()
        t_end = self._now()
        n_dec = sum(1 for s, n in work if not s.in_prefill)
        n_pre = sum(n for s, n in work if s.in_prefill)
        ctx = sum(s.num_computed + n for s, n in work)
        for (s, n), tok in zip(work, nxt):
            was_prefill = s.in_prefill
            s.num_computed += n
            if was_prefill:
                alloc.register_prefix(s.table, s.prompt, s.num_computed)
            if s.num_computed == len(s.tokens) and not s.done:
                s.output.append(int(tok))
                s.token_times_s.append(t_end)
        self.steps.append({"t_start_s": t_start, "duration_s": t_end - t_start,
                           "n_decode": n_dec, "n_prefill_tokens": n_pre, "n_seqs": len(work),
                           "context_tokens": ctx, "blocks_used": alloc.num_in_use,
                           "tokens_stored": sum(s.num_computed for s in self._live)})

    def _arrived(self, pending: list[Sequence], now: float) -> list[Sequence]:
        out = []
        while pending and pending[0].arrival_s <= now:
            out.append(pending.pop(0))
        return out

    def _wait_for(self, pending: list[Sequence]) -> None:
        delay = pending[0].arrival_s - self._now()
        if delay > 0:
            time.sleep(delay)

    # -- schedulers -----------------------------------------------------------------------------
    def _run_static(self, pending: list[Sequence], alloc: BlockAllocator) -> None:
        queue: list[Sequence] = []
        while pending or queue:
            queue += self._arrived(pending, self._now())
            if not queue:
                self._wait_for(pending)
                continue
            batch = []
            while queue and len(batch) < self.max_batch:
                s = queue[0]
                s.table = BlockTable(self.block_size)
                if not alloc.grow(s.table, len(s.prompt) + s.max_new_tokens):
                    if not batch:
                        raise ValueError(f"request {s.id} needs more KV blocks than the pool "
                                         f"has ({self.num_blocks})")
                    s.table = None
                    break
                batch.append(queue.pop(0))
            now = self._now()
            for s in batch:
                s.admitted_s = now
            self._live = batch
            self._step([(s, len(s.prompt)) for s in batch], alloc)   # prefill all together
            while not all(s.done for s in batch):                     # decode to the longest
                queue += self._arrived(pending, self._now())
                self._step([(s, 1) for s in batch if not s.done], alloc)
            for s in batch:
                alloc.release(s.table)
            self._live = []
            self.finished += batch

    def _run_continuous(self, pending: list[Sequence], alloc: BlockAllocator) -> None:
        waiting: list[Sequence] = []
        running: list[Sequence] = []
        while pending or waiting or running:
            waiting += self._arrived(pending, self._now())
            if not waiting and not running:
                self._wait_for(pending)
                continue
            # admit (FIFO) while there is room for the sequence's next prompt block
            while waiting and len(running) < self.max_batch:
                s = waiting[0]
                s.table = BlockTable(self.block_size)
                s.shared_tokens = alloc.match_prefix(s.table, s.prompt)
                s.num_computed = s.shared_tokens
                if not alloc.grow(s.table, s.num_computed + 1):
                    alloc.release(s.table)
                    s.num_computed, s.table = 0, None
                    break
                s.admitted_s = s.admitted_s if s.admitted_s is not None else self._now()
                running.append(waiting.pop(0))
            if not running:
                raise ValueError(f"request {waiting[0].id} cannot get a KV block from a pool "
                                 f"of {self.num_blocks}")
            # build the step: every decode, then prefill chunks up to the token budget
            work = plan_step(running, self.token_budget)
            # give every chosen sequence its blocks; preempt the youngest when the pool is dry
            ready = grow_or_preempt(work, running, waiting, alloc, _clear_output)
            if not ready:
                continue
            self._live = running
            self._step(ready, alloc)
            for s in [s for s in running if s.done]:
                running.remove(s)
                alloc.release(s.table)
                self.finished.append(s)

    # -- request validation ---------------------------------------------------------------------
    def _admit_checked(self, requests, prompts, time_scale: float) -> list[Sequence]:
        """Every request checked before anything runs, as a :class:`Sequence`; a bad one raises
        ``ValueError`` naming the request and the field (``request 3: prompt is empty``)."""
        seqs, seen = [], set()
        vocab, max_len = self.cfg.vocab_size, self.cfg.max_seq_len
        for r, p in zip(requests, prompts):
            rid = r.id
            try:
                dup = rid in seen
            except TypeError:
                raise ValueError(f"request {rid!r}: id must be hashable") from None
            if dup:
                raise ValueError(f"request {rid!r}: duplicate request id")
            seen.add(rid)
            toks = _prompt_ids(rid, p, vocab)
            out_len = _request_field(rid, positive_int, "output_len", r.output_len)
            arrival = _request_field(rid, positive, "arrival_s", r.arrival_s, allow_zero=True)
            scaled = _request_field(rid, positive, "arrival_s * time_scale", arrival * time_scale,
                                    allow_zero=True)
            if len(toks) + out_len > max_len:
                raise ValueError(f"request {rid!r}: {len(toks)} + {out_len} tokens exceed "
                                 f"the model's max_seq_len {max_len}")
            need = kv_paging.blocks_needed(len(toks) + out_len, self.block_size)
            if need > self.num_blocks:
                raise ValueError(f"request {rid!r}: needs {need} KV blocks; the pool has "
                                 f"{self.num_blocks}")
            seqs.append(Sequence(rid, scaled, toks, out_len, r.prefix_id))
        try:
            sorted(seen)
        except TypeError:
            raise ValueError(f"request ids must be comparable with each other (the trace is "
                             f"returned sorted by id), got {sorted(map(repr, seen))}") from None
        return seqs

    # -- a whole trace --------------------------------------------------------------------------
    def serve(self, requests, prompts, scheduler: str = "continuous", *, time_scale: float = 1.0
              ) -> dict:
        """Serve ``requests`` (:class:`helpers.sim.workload.Request`, arrival order) whose
        prompts are ``prompts`` (token-id sequences) in real time; return the trace.

        ``time_scale`` (finite, >= 0) multiplies the arrival times. Every request is checked
        before anything runs (as vLLM checks its inputs): a non-empty prompt of integer token
        ids in ``[0, vocab_size)``, an integer ``output_len >= 1``, a finite ``arrival_s >= 0``,
        an id no other request has, and prompt plus output within ``max_seq_len`` and the pool;
        a bad request raises ``ValueError`` naming it and the field.

        Returns ``{"requests": [{id, arrival_s, token_times_s, output, admitted_s, preemptions,
        shared_tokens}], "steps": [...], "peak_blocks": int, "scheduler": ...}`` with times in
        seconds since the start.
        """
        if scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {SCHEDULERS}, got {scheduler!r}")
        if len(requests) != len(prompts):
            raise ValueError(f"{len(requests)} requests but {len(prompts)} prompts")
        time_scale = positive("time_scale", time_scale, allow_zero=True)
        seqs = self._admit_checked(requests, prompts, time_scale)
        seqs.sort(key=lambda s: s.arrival_s)
        alloc = BlockAllocator(self.num_blocks, self.block_size,
                               prefix_caching=self.prefix_caching and scheduler == "continuous")
        self.steps, self.finished, self._live = [], [], []
        self._t0 = time.perf_counter()
        if scheduler == "static":
            self._run_static(list(seqs), alloc)
        else:
            self._run_continuous(list(seqs), alloc)
        reqs = [{"id": s.id, "arrival_s": s.arrival_s, "token_times_s": s.token_times_s,
                 "output": s.output, "prompt_len": len(s.prompt), "admitted_s": s.admitted_s,
                 "preemptions": s.preemptions, "shared_tokens": s.shared_tokens}
                for s in sorted(self.finished, key=lambda s: s.id)]
        return {"scheduler": scheduler, "requests": reqs, "steps": self.steps,
                "peak_blocks": max((st["blocks_used"] for st in self.steps), default=0), "block_size": self.block_size,
                "num_blocks": self.num_blocks}


def serve(model: Decoder, requests, prompts, scheduler: str = "continuous", **engine_kw) -> dict:
    """Build an :class:`Engine` for ``model`` and serve one trace with it."""
    return Engine(model, **engine_kw).serve(requests, prompts, scheduler)
