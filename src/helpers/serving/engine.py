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
``time.perf_counter``) under one of the two policies of :class:`helpers.serving.scheduler.Scheduler`
(the same scheduler the simulator runs):

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

The engine's step executor (:class:`_ModelExecutor`) runs the model on the scheduler's planned
tokens. Every emitted token is stamped with the engine's clock after a device synchronisation,
and each step is logged (decode sequences, prefill tokens, context tokens, the KV slots its
padded attention gathers, duration, and the host time from the previous step's end, or from the
end of a wait for an arrival, to this step's start), so
:func:`helpers.models.inference.trace_metrics` gives TTFT/TPOT and the lab fits the simulator's
step-time model from the log. Greedy decoding, no end-of-sequence token: each request emits
exactly its ``output_len`` tokens.

Library only: no page imports it.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from ..models._checks import positive, positive_int
from ..nn.decoder import Decoder, apply_rope
from .paged import BlockAllocator, BlockTable, KVPool
from .scheduler import (SCHEDULERS, Scheduler, Sequence, Step, check_request_field,
                        check_request_fields, check_request_fits, check_request_ids)

__all__ = ["PagedModel", "Sequence", "Engine", "SCHEDULERS", "KV_DTYPES", "serve",
           "TIE_LOGIT_GAP", "reference_outputs", "mismatches", "near_tie"]

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


class _ModelExecutor:
    """The engine's step executor: runs the model on the planned tokens, on the wall clock."""

    def __init__(self, engine: "Engine", alloc: BlockAllocator):
        self.engine, self.alloc = engine, alloc
        self.steps: list[dict] = []
        self._t_ready = 0.0  # when the last step ended or the last wait for an arrival did

    def now(self) -> float:
        return self.engine._now()

    def wait_until(self, t_s: float) -> None:
        delay = t_s - self.now()
        if delay > 0:
            time.sleep(delay)
        self._t_ready = self.now()

    def run(self, step: Step) -> tuple[list[int], float]:
        chunks = [(s.tokens[s.num_computed:s.num_computed + n], s.num_computed, s.table)
                  for s, n in step.work]
        self._t_start = self.now()
        logits = self.engine.model.forward(self.engine.pool, chunks)
        nxt = [int(t) for t in logits.argmax(-1).tolist()]
        return nxt, self.now()

    def log(self, step: Step) -> None:
        self.steps.append({"t_start_s": self._t_start, "duration_s": step.t_end_s - self._t_start,
                           "n_decode": step.n_decode, "n_prefill_tokens": step.n_prefill_tokens,
                           "n_seqs": len(step.work), "context_tokens": step.context_tokens,
                           "kv_slots_read": step.kv_slots_read,
                           "query_slots": len(step.work) * max(n for _, n in step.work),
                           "host_gap_s": self._t_start - self._t_ready,
                           "blocks_used": self.alloc.num_in_use,
                           "tokens_stored": step.tokens_stored})
        self._t_ready = step.t_end_s


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

    # -- request validation ---------------------------------------------------------------------
    def _admit_checked(self, requests, prompts, time_scale: float) -> list[Sequence]:
        """Every request checked before anything runs, as a :class:`Sequence`; a bad one raises
        ``ValueError`` naming the request and the field (``request 3: prompt is empty``)."""
        requests = list(requests)
        check_request_ids([r.id for r in requests])
        seqs = []
        for r, p in zip(requests, prompts):
            rid = r.id
            toks = _prompt_ids(rid, p, self.cfg.vocab_size)
            out_len, arrival = check_request_fields(rid, r.output_len, r.arrival_s)
            scaled = check_request_field(rid, positive, "arrival_s * time_scale",
                                         arrival * time_scale, allow_zero=True)
            check_request_fits(rid, len(toks), out_len, block_size=self.block_size,
                               num_blocks=self.num_blocks, max_seq_len=self.cfg.max_seq_len,
                               max_seq_len_name="the model's max_seq_len")
            seqs.append(Sequence(rid, scaled, toks, out_len, r.prefix_id))
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
        seconds since the start. The schedule itself (:attr:`Scheduler.events`) stays in
        ``self.schedule``.
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
        executor = _ModelExecutor(self, alloc)
        sched = Scheduler(scheduler, alloc, executor, block_size=self.block_size,
                          max_batch=self.max_batch, token_budget=self.token_budget)
        self._t0 = time.perf_counter()
        finished = sched.run(seqs)
        self.steps, self.finished, self.schedule = executor.steps, finished, sched.events
        reqs = [{"id": s.id, "arrival_s": s.arrival_s, "token_times_s": s.token_times_s,
                 "output": s.output, "prompt_len": len(s.prompt), "admitted_s": s.admitted_s,
                 "preemptions": s.preemptions, "shared_tokens": s.shared_tokens}
                for s in sorted(self.finished, key=lambda s: s.id)]
        return {"scheduler": scheduler, "requests": reqs, "steps": self.steps,
                "peak_blocks": max((st["blocks_used"] for st in self.steps), default=0),
                "block_size": self.block_size, "num_blocks": self.num_blocks}


def serve(model: Decoder, requests, prompts, scheduler: str = "continuous", **engine_kw) -> dict:
    """Build an :class:`Engine` for ``model`` and serve one trace with it."""
    return Engine(model, **engine_kw).serve(requests, prompts, scheduler)


# -- checks of a served trace against the model's own greedy generation -------------------------
# A served output must equal ``generate`` of its prompt alone, except where it first leaves it
# at a rounding tie: batched kernels sum in another order, and where the two best logits are
# within TIE_LOGIT_GAP either token is a valid greedy choice.

def reference_outputs(model, requests, prompts) -> dict:
    """Each request's ``output_len`` tokens from :meth:`Decoder.generate
    <helpers.nn.decoder.Decoder.generate>` of its prompt alone (the exactness check's answer)."""
    dev = model.embed.weight.device
    return {r.id: model.generate(torch.tensor(np.asarray(p), device=dev)[None],
                                 r.output_len)[0, len(p):].tolist()
            for r, p in zip(requests, prompts)}


#: Largest gap between the two best logits at which a divergence from ``generate`` is taken
#: as a rounding tie (different but equally valid summation orders of batched kernels).
TIE_LOGIT_GAP = 1e-3


def mismatches(served: dict, reference: dict, model=None, prompts: dict | None = None
               ) -> list[int]:
    """Ids of served requests whose output differs from ``generate``'s. With ``model`` and
    ``prompts``, a request whose first differing token was a near tie in ``generate``'s own
    logits (top two within :data:`TIE_LOGIT_GAP`) is not counted: its later tokens follow a
    different but equally valid prefix."""
    bad = []
    for q in served["requests"]:
        want = reference[q["id"]]
        if q["output"] == want:
            continue
        if model is not None and prompts is not None and near_tie(model, prompts[q["id"]],
                                                                 q["output"], want):
            served.setdefault("near_ties", []).append(q["id"])
            continue
        bad.append(q["id"])
    return bad


def near_tie(model, prompt, got: list[int], want: list[int]) -> bool:
    """Whether ``got`` first leaves ``want`` at a token where ``generate``'s two best logits
    were within :data:`TIE_LOGIT_GAP`."""
    k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), None)
    if k is None:  # same tokens, different lengths: not a rounding tie
        return False
    dev = model.embed.weight.device
    toks = torch.tensor(list(np.asarray(prompt)) + want[:k], device=dev)[None]
    with torch.no_grad():
        top = model(toks)[0, -1].float().topk(2).values
    return float(top[0] - top[1]) <= TIE_LOGIT_GAP
