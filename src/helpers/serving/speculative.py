"""Greedy speculative decoding of one :class:`~helpers.nn.decoder.Decoder` with another.

A small *draft* model proposes tokens and the *target* model checks them, several at a time
(Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding", section 2;
greedy decoding is the zero-temperature case, where checking a draft is comparing it with the
target's argmax). The two models must share a tokenizer. One *cycle*
(:func:`speculative_generate`):

1. the draft model decodes ``g`` tokens greedily, one step each, from its own KV cache;
2. the target model scores the last accepted token and the ``g`` drafts in one forward pass
   (``g + 1`` positions) from its KV cache;
3. the longest prefix of drafts equal to the target's own argmax is kept, plus the target's
   token after it (the correction at the first mismatch, or a bonus token if all ``g`` match);
4. both caches are rolled back by rewinding their positions (the contiguous
   :class:`~helpers.nn.decoder.KVCache` attends only to positions below the write position, so
   stale entries beyond it are never read and are overwritten later).

Greedy verification is exact: the output equals the target's own greedy output
(:meth:`~helpers.nn.decoder.Decoder.generate`) token for token. :func:`agreement` measures the
acceptance rate *teacher-forced*: the fraction of positions of a given text at which the draft's
argmax equals the target's. The speculative-decoding lab (:mod:`helpers.labs.speculative`)
times both against :mod:`helpers.models.speculative`.

>>> from helpers.nn import tinylm
>>> target = tinylm.load("book-lm")
>>> _, val = tinylm.split(tinylm.corpus_bytes())
>>> prompt = val[:16].view(1, -1)
>>> st = {}
>>> out = speculative_generate(target, target, prompt, 10, 4, stats=st)
>>> bool((out == target.generate(prompt, 10)).all()), st["per_cycle"]
(True, [5, 5])

Library only: no page imports it.
"""

from __future__ import annotations

__all__ = ["speculative_generate", "agreement"]


def speculative_generate(target, draft, prompt, max_new_tokens: int, draft_len: int,
                         stats: dict | None = None):
    """Greedy speculative decoding: ``prompt`` (``(1, P)``) plus ``max_new_tokens`` tokens.

    The output equals ``target.generate(prompt, max_new_tokens)`` (greedy, exact). If ``stats``
    is a dict it receives ``cycles``, ``proposed``, ``accepted``, ``tested`` (drafts that were
    compared: accepted ones plus the first rejected one of each cycle) and ``per_cycle``
    (tokens each cycle produced).
    """
    import torch

    from helpers.nn.decoder import KVCache

    if prompt.ndim != 2 or prompt.shape[0] != 1 or prompt.shape[1] < 2:
        raise ValueError(f"prompt must have shape (1, P) with P >= 2, got {tuple(prompt.shape)}")
    if draft_len < 1 or max_new_tokens < 1:
        raise ValueError(f"draft_len and max_new_tokens must be >= 1, got {draft_len}, "
                         f"{max_new_tokens}")
    P = prompt.shape[1]
    room = P + max_new_tokens + draft_len + 1
    dev = prompt.device
    with torch.no_grad():
        cache_t = KVCache(target.cfg, batch=1, max_seq_len=room, device=dev)
        cache_d = KVCache(draft.cfg, batch=1, max_seq_len=room, device=dev)
        # Invariant at the start of a cycle: the sequence has n tokens; the target's cache holds
        # positions 0..n-2 (all but the last token), the draft's holds 0..d_valid-1.
        target(prompt[:, :-1], cache=cache_t, start_pos=0)
        draft(prompt[:, :-1], cache=cache_d, start_pos=0)
        seq = torch.empty(1, room, dtype=prompt.dtype, device=dev)
        seq[:, :P] = prompt
        n, d_valid = P, P - 1
        cycles = accepted = tested = 0
        per_cycle = []
        while n < P + max_new_tokens:
            # 1. draft g tokens (the first step also catches the draft's cache up: 1 or 2 tokens)
            logits = draft(seq[:, d_valid:n], cache=cache_d, start_pos=d_valid)
            drafts = [logits[:, -1].argmax(-1, keepdim=True)]
            for i in range(1, draft_len):
                logits = draft(drafts[-1], cache=cache_d, start_pos=n + i - 1)
                drafts.append(logits[:, -1].argmax(-1, keepdim=True))
            proposal = torch.cat(drafts, dim=1)  # (1, g)
            # 2. verify: the last token and the g drafts in one pass of the target
            block = torch.cat([seq[:, n - 1:n], proposal], dim=1)
            choice = target(block, cache=cache_t, start_pos=n - 1).argmax(-1)  # (1, g + 1)
            # 3. keep the agreeing prefix and the target's next token (one host sync per cycle)
            match = (proposal == choice[:, :-1])[0].tolist()
            k = match.index(False) if False in match else draft_len
            seq[:, n:n + k] = proposal[:, :k]
            seq[:, n + k] = choice[0, k]
            # 4. roll back: rewind the positions (stale cache entries are never read)
            d_valid = n + min(k, draft_len - 1)
            n += k + 1
            cycles += 1
            accepted += k
            tested += k + (k < draft_len)
            per_cycle.append(k + 1)
    if stats is not None:
        stats.update(cycles=cycles, proposed=cycles * draft_len, accepted=accepted,
                     tested=tested, per_cycle=per_cycle)
    return seq[:, :P + max_new_tokens]



def agreement(target, draft, tokens, start: int = 0) -> tuple[float, int]:
    """Teacher-forced acceptance rate of greedy drafting on ``tokens`` (``(1, T)``): the
    fraction of positions ``start..T-1`` at which the draft's argmax equals the target's, given
    the same prefix. Returns ``(rate, positions)``."""
    import torch

    if not 0 <= start < tokens.shape[1]:
        raise ValueError(f"start must lie in [0, {tokens.shape[1]}), got {start}")
    with torch.no_grad():
        a = target(tokens).argmax(-1)
        b = draft(tokens).argmax(-1)
    same = (a == b)[0, start:]
    return float(same.float().mean()), int(same.numel())


