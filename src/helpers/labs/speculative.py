"""Lab runner: greedy speculative decoding of ``book-lm`` with ``book-draft``.

The book's two small language models (:mod:`helpers.nn.tinylm`) share a byte tokenizer, so the
smaller one can draft for the larger. One *cycle* (:func:`speculative_generate`):

1. the draft model decodes ``g`` tokens greedily, one step each, from its own KV cache;
2. the target model scores the last accepted token and the ``g`` drafts in one forward pass
   (``g + 1`` positions) from its KV cache;
3. the longest prefix of drafts equal to the target's own argmax is kept, plus the target's
   token after it (the correction at the first mismatch, or a bonus token if all ``g`` match);
4. both caches are rolled back by rewinding their positions (the contiguous
   :class:`~helpers.nn.decoder.KVCache` attends only to positions below the write position, so
   stale entries beyond it are never read and are overwritten later).

Greedy verification is exact: the output must equal ``book-lm``'s own greedy output
(:meth:`~helpers.nn.decoder.Decoder.generate`) token for token. The runner checks that on
several prompts from the validation split before timing anything.

Measured, for draft lengths ``g`` in 1..8: the accepted and tested drafts and the tokens per
cycle; the time of a whole generation against plain greedy decoding (the speedup); the time of
one draft step, one target step and one verification pass, whose ratios are the cost ratio ``c``
and the verification ratio ``v`` of :mod:`helpers.models.speculative`. The acceptance rate is
also measured once independently of ``g``, *teacher-forced*: the fraction of positions of the
target's greedy text at which the draft's argmax equals the target's (:func:`agreement`).

Page: ``labs/speculative.md``. Run as
``python -m helpers.labs.speculative --out DIR [--size small|full] [--device cpu|cuda]``.

Additions to the lab framework, kept in this module: :func:`grade_tokens_per_cycle` (the
grader of the page's exercise), :func:`count_ops` (operators dispatched per step, the
launch-bound model of ``c``) and the analysis helpers (:func:`sweep_rows`,
:func:`comparison_rows`, :func:`comparison_table`, :func:`describe`).
"""

from __future__ import annotations

import math
from typing import Callable

from helpers.bench import sync
from helpers.labs import core
from helpers.labs.core import (MISSING, fmt, lab_device, new_result, page_numbers, progress,
                               run_cli, summarize)
from helpers.labs.grading import Verdict
from helpers.labs.report import Row, Table
from helpers.models import speculative as model

__all__ = ["LAB", "TARGET", "DRAFT", "draft_lengths", "rounds", "n_prompts", "n_timed_prompts",
           "prompt_len", "new_tokens", "load_models", "prompts", "model_inputs",
           "speculative_generate", "agreement", "count_ops", "measure_correctness",
           "measure_steps", "measure_sweep", "run", "reference_or_none", "sweep_rows",
           "prose_numbers", "MISSING", "reference_numbers", "PENDING", "agreement_summary",
           "TOKENS_TOLERANCE",
           "SPEEDUP_TOLERANCE", "comparison_rows", "comparison_table", "describe",
           "grade_tokens_per_cycle", "main"]

#: The lab's record: its page, size table and bench settings.
LAB = core.Lab(
    "speculative", pages=("labs/speculative.md",),
    sizes={"draft_lengths": ([1, 2, 4], [1, 2, 3, 4, 5, 6, 7, 8]), "n_prompts": (2, 4),
           "n_timed_prompts": (1, 2), "prompt_len": (32, 64), "new_tokens": (32, 256),
           "rounds": (1, 3), "step_calls": (5, 20)},
    budget_s=(0.05, 0.2), warmup_s=(0.01, 0.1), min_reps=(3, 3))
TARGET = "book-lm"
DRAFT = "book-draft"


# --- sizes ---------------------------------------------------------------------------------

def draft_lengths() -> list[int]:
    """Draft lengths ``g`` swept."""
    return LAB.size("draft_lengths")


def n_prompts() -> int:
    """Prompts from the validation split, all checked for exactness."""
    return LAB.size("n_prompts")


def n_timed_prompts() -> int:
    """How many of them the timed sweep generates from (the first ones)."""
    return LAB.size("n_timed_prompts")


def prompt_len() -> int:
    """Bytes of each prompt."""
    return LAB.size("prompt_len")


def new_tokens() -> int:
    """Tokens generated per prompt."""
    return LAB.size("new_tokens")


def rounds() -> int:
    """How many times every timing is repeated, interleaved with the others: a host-bound
    timing drifts with whatever else the machine does, so each quantity is the median over
    rounds spread across the whole measurement, not one stretch of it."""
    return LAB.size("rounds")


def _middle(rounds_: list, key):
    """The round whose ``key`` is the median of all rounds' (odd count: the middle one; even:
    the lower middle)."""
    return sorted(rounds_, key=key)[(len(rounds_) - 1) // 2]


def _median_round(summaries: list[dict]) -> dict:
    """The summary whose median time is the median of ``summaries``', with every round's
    median time under ``rounds_s``."""
    mid = dict(_middle(summaries, key=lambda b: b["median_s"]))
    mid["rounds_s"] = [b["median_s"] for b in summaries]
    return mid


# --- the models and the prompts ---------------------------------------------------------------

def load_models(device: str):
    """``(target, draft)``: ``book-lm`` and ``book-draft`` in float32 on ``device``."""
    import torch

    from helpers.nn import tinylm

    return (tinylm.load(TARGET, device=device, dtype=torch.float32),
            tinylm.load(DRAFT, device=device, dtype=torch.float32))


def prompts(device: str, n: int | None = None, length: int | None = None):
    """``n`` prompts of ``length`` bytes, evenly spaced through the validation split (each
    starting after a newline, so it begins a line of prose), as ``(1, length)`` tensors."""
    from helpers.nn import tinylm

    n = n_prompts() if n is None else n
    length = prompt_len() if length is None else length
    if n < 1 or length < 2:
        raise ValueError(f"need n >= 1 prompts of length >= 2, got n={n}, length={length}")
    _, val = tinylm.split(tinylm.corpus_bytes())
    out = []
    stride = (len(val) - length - 1) // n
    for i in range(n):
        start = i * stride
        nl = (val[start:start + stride - length] == 10).nonzero()
        if len(nl):
            start += int(nl[0]) + 1
        out.append(val[start:start + length].view(1, -1).to(device))
    return out


# --- speculative decoding -------------------------------------------------------------------

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


def count_ops(fn: Callable[[], object]) -> int:
    """Operators (aten calls) that ``fn()`` dispatches: on a launch-bound GPU each costs about
    the same host and launch time whatever its size, so their ratio models ``c``."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            _Count.n += 1
            return func(*args, **(kwargs or {}))

    with _Count():
        fn()
    return _Count.n


# --- measurements ---------------------------------------------------------------------------

def model_inputs(device: str = "cpu") -> dict:
    """What the page's prediction needs, measured from the models, not the machine: the
    teacher-forced acceptance rate on the target's greedy continuations of the lab's prompts,
    the operators each model dispatches per decode step, and their sizes."""
    import torch

    from helpers.nn.decoder import KVCache

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        target, draft = load_models(device)
        rates, positions = 0.0, 0
        for p in prompts(device):
            with torch.no_grad():
                ref = target.generate(p, new_tokens())
            r, n = agreement(target, draft, ref[:, :-1], start=p.shape[1] - 1)
            rates += r * n
            positions += n
        ops = {}
        for name, m in (("target", target), ("draft", draft)):
            cache = KVCache(m.cfg, batch=1, max_seq_len=8)
            tok = torch.tensor([[65]])
            with torch.no_grad():
                m(tok, cache=cache, start_pos=0)
                ops[name] = count_ops(lambda: m(tok, cache=cache, start_pos=1))
    finally:
        torch.set_num_threads(threads)
    return {"alpha": rates / positions, "positions": positions, "ops_target": ops["target"],
            "ops_draft": ops["draft"], "ops_ratio": ops["draft"] / ops["target"],
            "params_target": target.num_parameters(), "params_draft": draft.num_parameters(),
            "layers_target": target.cfg.n_layers, "layers_draft": draft.cfg.n_layers}


def measure_correctness(target, draft, prompt_list, n_new: int, lengths) -> dict:
    """Speculative output against ``target.generate`` for every prompt and draft length, and
    the teacher-forced agreement on the target's greedy text."""
    import torch

    cases, rates, positions = [], [], 0
    for i, p in enumerate(prompt_list):
        with torch.no_grad():
            ref = target.generate(p, n_new)
        # the positions whose next token is generated: P-1 .. P+n_new-2
        r, npos = agreement(target, draft, ref[:, :-1], start=p.shape[1] - 1)
        rates.append(r * npos)
        positions += npos
        for g in lengths:
            out = speculative_generate(target, draft, p, n_new, g)
            diff = (out != ref)[0].nonzero()
            first = int(diff[0]) if len(diff) else None
            cases.append({"prompt": i, "draft_len": g, "identical": first is None,
                          "first_difference": first})
    return {"cases": cases, "identical": all(c["identical"] for c in cases),
            "alpha_teacher_forced": sum(rates) / positions, "positions": positions}


def measure_steps(target, draft, prompt, device: str, lengths) -> dict:
    """Time of one decode step of each model, of the target's verification pass over
    ``g + 1`` tokens, and the operators each dispatches; at the middle of a generation."""
    import torch

    from helpers.nn.decoder import KVCache

    P = prompt.shape[1]
    pos = P + new_tokens() // 2
    room = pos + max(lengths) + 2
    gen = torch.Generator().manual_seed(19)
    history = torch.randint(32, 127, (1, pos), generator=gen).to(device)  # printable bytes
    history[:, :P] = prompt
    out = {}
    with torch.no_grad():
        caches = {}
        for name, m in (("target", target), ("draft", draft)):
            caches[name] = KVCache(m.cfg, batch=1, max_seq_len=room, device=device)
            m(history, cache=caches[name], start_pos=0)
        tok = history[:, -1:]
        steps = {}
        for name, m in (("draft", draft), ("target", target)):
            fn = (lambda m=m, c=caches[name]: m(tok, cache=c, start_pos=pos))
            ref = m(history[:, -1:].clone(), cache=caches[name], start_pos=pos)
            if not torch.allclose(fn(), ref, rtol=1e-5, atol=1e-5):
                raise RuntimeError(f"the {name} step does not repeat its own result")
            steps[name] = fn
            out[name] = {"ops": count_ops(fn) if device == "cpu"
                         else _ops_on_cpu(m, name, history, pos)}
        for g in lengths:
            block = history[:, -1:].repeat(1, g + 1)
            steps[str(g)] = (lambda b=block: target(b, cache=caches["target"], start_pos=pos))
        timed: dict[str, list] = {k: [] for k in steps}
        for _ in progress(range(rounds()), desc="step timings (rounds)"):
            for key, fn in steps.items():
                timed[key].append(summarize(LAB.bench(fn, device, f"step_{key}",
                                                   number=LAB.size("step_calls"))))
        for name in ("draft", "target"):
            out[name]["bench"] = _median_round(timed[name])
        verify = {str(g): _median_round(timed[str(g)]) for g in lengths}
        out["verify"] = verify
        out["rounds"] = rounds()
    t, d = out["target"]["bench"]["median_s"], out["draft"]["bench"]["median_s"]
    out["cost_ratio"] = d / t
    out["ops_ratio"] = out["draft"]["ops"] / out["target"]["ops"]
    out["verify_ratio"] = {g: v["median_s"] / t for g, v in verify.items()}
    out["position"] = pos
    return out


def _ops_on_cpu(m, name: str, history, pos: int) -> int:
    """Operators of one decode step, counted on a CPU copy (dispatch is the same)."""
    import copy

    from helpers.nn.decoder import KVCache

    mc = copy.deepcopy(m).to("cpu")
    h = history.to("cpu")
    cache = KVCache(mc.cfg, batch=1, max_seq_len=pos + 2)
    mc(h, cache=cache, start_pos=0)
    return count_ops(lambda: mc(h[:, -1:], cache=cache, start_pos=pos))


def measure_sweep(target, draft, prompt_list, device: str, n_new: int, lengths) -> dict:
    """Plain greedy decoding and speculative decoding at each draft length: time per
    generation (median over repetitions, summed over the prompts) and the cycle statistics."""
    import torch

    def plain_fn(p):
        return lambda: target.generate(p, n_new)

    refs, stats = [], []
    with torch.no_grad():
        for p in prompt_list:
            refs.append(target.generate(p, n_new))
    for g in lengths:
        stats_all = {"cycles": 0, "proposed": 0, "accepted": 0, "tested": 0, "per_cycle": []}
        for i, p in enumerate(prompt_list):
            st: dict = {}
            out = speculative_generate(target, draft, p, n_new, g, stats=st)
            if not torch.equal(out, refs[i]):
                raise RuntimeError(f"speculative output differs from greedy at g={g}, prompt {i}")
            for key in ("cycles", "proposed", "accepted", "tested"):
                stats_all[key] += st[key]
            stats_all["per_cycle"] += st["per_cycle"]
        stats.append(stats_all)
    # Timings: every round times plain decoding and every draft length once per prompt, so a
    # slow stretch of the machine lands in one round of each, not in all rounds of one.
    plain_r: list[list[dict]] = []
    spec_r: dict[int, list[list[dict]]] = {g: [] for g in lengths}
    with torch.no_grad():
        for _ in progress(range(rounds()), desc="generation timings (rounds)"):
            plain_r.append([summarize(LAB.bench(plain_fn(p), device, f"plain_{i}"))
                            for i, p in enumerate(prompt_list)])
            for g in lengths:
                spec_r[g].append([summarize(LAB.bench(
                    (lambda p=p, g=g: speculative_generate(target, draft, p, n_new, g)),
                    device, f"spec_{g}_{i}")) for i, p in enumerate(prompt_list)])

    def total(benches):
        return sum(b["median_s"] for b in benches)

    plain = _middle(plain_r, key=total)
    plain_s = total(plain)
    points = []
    for g, stats_all in zip(lengths, stats):
        per_cycle = stats_all.pop("per_cycle")
        hist = [per_cycle.count(k) for k in range(1, g + 2)]
        benches = _middle(spec_r[g], key=total)
        spec_s = total(benches)
        points.append({"draft_len": g, **stats_all, "tokens_per_cycle_hist": hist,
                       "tokens_per_cycle": sum(per_cycle) / len(per_cycle),
                       "alpha_tested": stats_all["accepted"] / stats_all["tested"],
                       "spec_s": spec_s, "plain_s": plain_s, "speedup": plain_s / spec_s,
                       "spec_rounds_s": [total(r) for r in spec_r[g]],
                       "plain_rounds_s": [total(r) for r in plain_r],
                       "spread": max(b["spread"] for b in benches + plain), "bench": benches})
    return {"plain": plain, "points": points}


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict.

    On a CPU the run uses one thread: these models are so small that a second thread only
    adds synchronization, and on a shared machine a busy neighbour core stalls every operator
    (measured: 20x slower generations with two threads on a loaded 2-core runner)."""
    import torch

    device = device or lab_device()
    threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)
    try:
        return _run(device)
    finally:
        torch.set_num_threads(threads)


def _run(device: str) -> dict:
    import torch

    torch.manual_seed(0)
    lengths = draft_lengths()
    result = new_result(LAB, device, target=TARGET, draft=DRAFT, draft_lengths=lengths,
                        n_prompts=n_prompts(), n_timed_prompts=n_timed_prompts(),
                        prompt_len=prompt_len(), new_tokens=new_tokens(), budget_s=LAB.budget(),
                        rounds=rounds(),
                        dtype="float32", batch=1, decoding="greedy",
                        cpu_threads=torch.get_num_threads() if device == "cpu" else None)
    target, draft = load_models(device)
    result["settings"].update(target_parameters=target.num_parameters(),
                              draft_parameters=draft.num_parameters(),
                              target_layers=target.cfg.n_layers, draft_layers=draft.cfg.n_layers)
    plist = prompts(device)
    m = result["measurements"]
    m["correctness"] = measure_correctness(target, draft, plist, new_tokens(), lengths)
    if not m["correctness"]["identical"]:
        bad = [c for c in m["correctness"]["cases"] if not c["identical"]]
        raise RuntimeError(f"speculative decoding differs from greedy decoding: {bad[:3]}")
    m["steps"] = measure_steps(target, draft, plist[0], device, lengths)
    m["sweep"] = measure_sweep(target, draft, plist[:n_timed_prompts()], device, new_tokens(),
                               lengths)
    sync(device)
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- analysis (the page's tables and plots) -------------------------------------------------

def sweep_rows(result: dict) -> list[dict]:
    """Per draft length: measured and predicted tokens per cycle and speedup.

    Predictions use the teacher-forced acceptance rate (``alpha``), the measured cost ratio
    ``c`` and either the paper's ``v = 1`` (``speedup_model``) or the measured verification
    ratio (``speedup_model_v``)."""
    m = result["measurements"]
    a = m["correctness"]["alpha_teacher_forced"]
    c = m["steps"]["cost_ratio"]
    t_target = m["steps"]["target"]["bench"]["median_s"]
    t_draft = m["steps"]["draft"]["bench"]["median_s"]
    n_tok = len(m["sweep"]["plain"]) * result["settings"]["new_tokens"]
    rows = []
    for p in m["sweep"]["points"]:
        g = p["draft_len"]
        v = m["steps"]["verify_ratio"][str(g)]
        rows.append({
            "draft_len": g, "alpha": a, "alpha_tested": p["alpha_tested"], "c": c, "v": v,
            "tokens_per_cycle": p["tokens_per_cycle"],
            "tokens_model": model.expected_tokens_per_cycle(a, g),
            "speedup": p["speedup"],
            "speedup_model": model.speedup(a, g, c),
            "speedup_model_v": model.speedup(a, g, c, v),
            "speedup_model_measured_n": p["tokens_per_cycle"] / model.cycle_cost(g, c, v),
            # evidence for the gap: a cycle's measured time against the sum of its parts
            "cycle_s": p["spec_s"] / p["cycles"],
            "cycle_parts_s": g * t_draft + v * t_target,
            "plain_token_s": p["plain_s"] / n_tok, "target_step_s": t_target,
        })
    return rows


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list[Row]:
    """Model | H200 | yours rows: tokens per cycle and speedup per draft length, and ``c``.

    Model values use each run's own measured acceptance rate, cost ratio and verification
    ratio (H200's when there is a reference, else the reader's); the model of ``c`` is the
    ratio of operators dispatched per step (the launch-bound limit)."""
    base = ref or mine
    if base is None:
        return []
    r_ref = {r["draft_len"]: r for r in sweep_rows(ref)} if ref else {}
    r_mine = {r["draft_len"]: r for r in sweep_rows(mine)} if mine else {}
    rows = []
    for g in sorted(set(r_ref) | set(r_mine)):
        a, b = r_ref.get(g, {}), r_mine.get(g, {})
        src = a or b
        rows.append(Row(f"tokens per cycle g={g}", "tokens", 1.0, model=src["tokens_model"],
                        h200=a.get("tokens_per_cycle"), yours=b.get("tokens_per_cycle")))
    for g in sorted(set(r_ref) | set(r_mine)):
        a, b = r_ref.get(g, {}), r_mine.get(g, {})
        src = a or b
        rows.append(Row(f"speedup g={g}", "x", 1.0, model=src["speedup_model_v"],
                        h200=a.get("speedup"), yours=b.get("speedup")))
    st_ref = ref["measurements"]["steps"] if ref else {}
    st_mine = mine["measurements"]["steps"] if mine else {}
    rows.append(Row("cost ratio c", "-", 1.0, model=(st_ref or st_mine)["ops_ratio"],
                    h200=st_ref.get("cost_ratio"), yours=st_mine.get("cost_ratio")))
    return rows


def comparison_table(ref: dict | None, mine: dict | None) -> Table:
    """The lab's table of :func:`comparison_rows` (one row saying so when nothing is measured)."""
    rows = comparison_rows(ref, mine) or [Row("no measurement yet", "-", 1.0)]
    return Table("Speculative decoding of book-lm with book-draft", rows,
                 yours_label="yours" if mine is not None else None)


#: Relative tolerance the page states for tokens per cycle against the formula.
TOKENS_TOLERANCE = 0.05
#: Relative tolerance the page states for the measured speedup against the formula fed with
#: the measured acceptance, cost ratio and verification ratio.
SPEEDUP_TOLERANCE = 0.10


def agreement_summary(ref: dict | None) -> dict | None:
    """How far the measurement is from the formulas over every draft length: the largest
    relative error of tokens per cycle (and its draft length, and whether the measurement lies
    above or below the formula at the longest draft), the largest of the speedup against
    :func:`helpers.models.speculative.speedup` with the measured ``v``, whether each is within
    :data:`TOKENS_TOLERANCE` / :data:`SPEEDUP_TOLERANCE`, and the largest gap between a
    cycle's measured time and the sum of its parts. None without a result."""
    rows = sweep_rows(ref) if ref is not None else []
    if not rows:
        return None

    def worst(key, model_key):
        errs = [(abs(r[key] / r[model_key] - 1), r["draft_len"]) for r in rows]
        return max(errs)

    tok_err, tok_g = worst("tokens_per_cycle", "tokens_model")
    s_err, s_g = worst("speedup", "speedup_model_v")
    cyc_err, cyc_g = worst("cycle_s", "cycle_parts_s")
    last = rows[-1]
    return {"tokens_err": tok_err, "tokens_err_g": tok_g,
            "tokens_within": tok_err <= TOKENS_TOLERANCE,
            "tokens_side_longest": "above" if last["tokens_per_cycle"] > last["tokens_model"]
            else "below",
            "speedup_err": s_err, "speedup_err_g": s_g,
            "speedup_within": s_err <= SPEEDUP_TOLERANCE,
            "cycle_err": cyc_err, "cycle_err_g": cyc_g, "longest_g": last["draft_len"]}


@page_numbers(["alpha", "n4", "n4_model", "alpha4", "c", "t_target_us", "t_draft_us", "v4",
               "s4", "s4_model", "s4_model_v", "cycle_us", "parts_us", "best_g", "best_s",
               "tok_err_pct", "tok_err_g", "tok_side", "longest_g", "s_err_pct", "s_err_g",
               "cycle_err_pct", "tok_verdict", "s_verdict", "tok_tol_pct", "s_tol_pct"])
def prose_numbers(ref: dict | None) -> dict[str, str]:
    """The H200 numbers the page's prose quotes, formatted (:data:`MISSING` while unmeasured):
    acceptance, tokens per cycle and speedup at g = 4 against the model, step times, the
    verification ratio, a cycle's time against its parts, and the best draft length."""
    from helpers import units

    rows = sweep_rows(ref)
    by_g = {r["draft_len"]: r for r in rows}
    r4 = by_g.get(4)
    best = max(rows, key=lambda r: r["speedup"]) if rows else None
    st = ref["measurements"]["steps"]
    values = {
        "alpha": (rows[0]["alpha"] if rows else None, ".3f"),
        "n4": (r4 and r4["tokens_per_cycle"], ".2f"),
        "n4_model": (r4 and r4["tokens_model"], ".2f"),
        "alpha4": (r4 and r4["alpha_tested"], ".3f"),
        "c": (st and st["cost_ratio"], ".3f"),
        "t_target_us": (st and st["target"]["bench"]["median_s"] / units.us, ".0f"),
        "t_draft_us": (st and st["draft"]["bench"]["median_s"] / units.us, ".0f"),
        "v4": (r4 and r4["v"], ".2f"),
        "s4": (r4 and r4["speedup"], ".2f"),
        "s4_model": (r4 and r4["speedup_model"], ".2f"),
        "s4_model_v": (r4 and r4["speedup_model_v"], ".2f"),
        "cycle_us": (r4 and r4["cycle_s"] / units.us, ".0f"),
        "parts_us": (r4 and r4["cycle_parts_s"] / units.us, ".0f"),
        "best_g": (best and best["draft_len"], "d"),
        "best_s": (best and best["speedup"], ".2f"),
    }
    a = agreement_summary(ref)  # None without a sweep, so each `a and ...` is None too
    values.update({
        "tok_err_pct": (a and 100 * a["tokens_err"], ".1f"),
        "tok_err_g": (a and a["tokens_err_g"], "d"),
        "tok_side": (a and a["tokens_side_longest"], "s"),
        "longest_g": (a and a["longest_g"], "d"),
        "s_err_pct": (a and 100 * a["speedup_err"], ".1f"),
        "s_err_g": (a and a["speedup_err_g"], "d"),
        "cycle_err_pct": (a and 100 * a["cycle_err"], ".1f"),
        "tok_verdict": (a and ("within" if a["tokens_within"] else "outside"), "s"),
        "s_verdict": (a and ("within" if a["speedup_within"] else "outside"), "s"),
        "tok_tol_pct": (100 * TOKENS_TOLERANCE, ".0f"),
        "s_tol_pct": (100 * SPEEDUP_TOLERANCE, ".0f"),
    })
    return {k: fmt(v, spec) for k, (v, spec) in values.items()}


#: The names ``labs/speculative.md`` and its reference notebook call; the page can switch to
#: ``prose_numbers`` and ``MISSING`` when its notebook is next regenerated, and these go.
reference_numbers, PENDING = prose_numbers, MISSING


def describe(result: dict) -> str:
    """A few lines summarizing a result."""
    m = result["measurements"]
    st = m["steps"]
    lines = [
        f"exact: {m['correctness']['identical']} on {len(m['correctness']['cases'])} "
        f"(prompt, g) cases; teacher-forced acceptance {m['correctness']['alpha_teacher_forced']:.3f}",
        f"target step {st['target']['bench']['median_s'] * 1e3:.3g} ms, draft step "
        f"{st['draft']['bench']['median_s'] * 1e3:.3g} ms: c = {st['cost_ratio']:.3f} "
        f"(operators ratio {st['ops_ratio']:.3f})",
    ]
    for r in sweep_rows(result):
        lines.append(f"g={r['draft_len']}: tokens/cycle {r['tokens_per_cycle']:.2f} "
                     f"(model {r['tokens_model']:.2f}), speedup {r['speedup']:.2f} "
                     f"(model {r['speedup_model']:.2f}, with measured v {r['speedup_model_v']:.2f})")
    return "\n".join(lines)


# --- grading --------------------------------------------------------------------------------

_GRID = [(a, g) for a in (0.0, 0.3, 0.6, 0.8, 0.95, 1.0) for g in (0, 1, 2, 5, 8)]


def grade_tokens_per_cycle(fn: Callable[[float, int], float]) -> Verdict:
    """Check a reader's ``fn(acceptance, draft_len)`` against equation (eq-qs-tokens) on a grid
    of acceptance rates (0 and 1 included) and draft lengths (0 included), and against a
    Monte Carlo of the cycle at one point."""
    from helpers.sim.speculative import simulate_cycles

    name = "expected tokens per cycle"
    for a, g in _GRID:
        try:
            got = float(fn(a, g))
        except Exception as exc:  # the reader's code crashed: that is the verdict
            return Verdict(name, "FAIL", [f"raised {type(exc).__name__} at acceptance={a}, "
                                          f"draft_len={g}: {exc}"])
        want = model.expected_tokens_per_cycle(a, g)
        if not math.isfinite(got) or abs(got - want) > 1e-9 * max(1.0, want):
            hint = ""
            if a == 1.0:
                hint = " (at acceptance 1 every draft passes: g + 1 tokens)"
            elif g == 0:
                hint = " (with no drafts a cycle is one plain step: 1 token)"
            return Verdict(name, "FAIL", [f"at acceptance={a}, draft_len={g} it gives {got:.6g}, "
                                          f"the cycle yields {want:.6g} on average{hint}"])
    sim = float(simulate_cycles(0.8, 5, 200_000, seed=7).mean())
    if abs(float(fn(0.8, 5)) - sim) > 0.02:
        return Verdict(name, "FAIL", ["disagrees with a Monte Carlo of the cycle at 0.8, 5"])
    return Verdict(name, "PASS", [f"matches the capped geometric mean on {len(_GRID)} "
                                  "points and a Monte Carlo of the cycle"])


def main(argv: list[str] | None = None) -> None:
    """``python -m helpers.labs.speculative --out DIR``."""
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
