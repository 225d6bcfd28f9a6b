"""Lab runner: greedy speculative decoding of ``book-lm`` with ``book-draft``.

The book's two small language models (:mod:`helpers.nn.tinylm`) share a byte tokenizer, so the
smaller one can draft for the larger. The algorithm, draft ``g`` tokens then verify them in one
pass of the target, is :func:`helpers.serving.speculative.speculative_generate`; greedy
verification is exact, and the runner checks that its output equals ``book-lm``'s own greedy
output token for token on several prompts from the validation split before timing anything.

Measured, for draft lengths ``g`` in 1..8: the accepted and tested drafts and the tokens per
cycle; the time of a whole generation against plain greedy decoding (the speedup); the time of
one draft step, one target step and one verification pass, whose ratios are the cost ratio ``c``
and the verification ratio ``v`` of :mod:`helpers.models.speculative`. The acceptance rate is
also measured once independently of ``g``, *teacher-forced*
(:func:`helpers.serving.speculative.agreement`), and the operators each step dispatches
(:func:`helpers.profiling.dispatch.count_ops`) give the launch-bound model of ``c``.

Page: ``labs/speculative.md``. Run as
``python -m helpers.labs.speculative --out DIR [--size small|full] [--device cpu|cuda]``.
The page's grader is :func:`grade_tokens_per_cycle`; what the page computes from a result (the
sweep's rows, the table, the numbers its prose quotes) is in
:mod:`helpers.labs.analysis.speculative`.
"""

from __future__ import annotations

import math
from typing import Callable

from helpers.bench import sync
from helpers.labs import core
from helpers.labs.core import lab_device, new_result, progress, run_cli, summarize
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import speculative as model
from helpers.profiling.dispatch import count_ops
from helpers.serving.speculative import agreement, speculative_generate

__all__ = ["LAB", "TARGET", "DRAFT", "draft_lengths", "rounds", "n_prompts", "n_timed_prompts",
           "prompt_len", "new_tokens", "load_models", "prompts", "model_inputs",
           "measure_correctness",
           "measure_steps", "measure_sweep", "run", "reference_or_none",
           "grade_tokens_per_cycle", "main"]

#: The lab's record: its page, size table and bench settings.
LAB = core.Lab(
    "speculative", pages=("labs/speculative.md",),
    sizes={"draft_lengths": ([1, 2, 4], [1, 2, 3, 4, 5, 6, 7, 8]), "n_prompts": (2, 4),
           "n_timed_prompts": (1, 2), "prompt_len": (32, 64), "new_tokens": (32, 256),
           "rounds": (1, 3), "step_calls": (5, 20)},
    budget_s=(0.05, 0.2), warmup_s=(0.01, 0.1), min_reps=(3, 3),
    claims=(
        Claim("tokens_per_cycle", "tokens per draft-and-verify cycle", "prediction",
              model="helpers.models.speculative.expected_tokens_per_cycle",
              ceilings="the acceptance rate measured in the same run (teacher-forced: the "
                       "draft's argmax against the target's greedy text)",
              tolerance=0.10,
              why="a mean over a finite text: 118 to 285 cycles per draft length leave a "
                  "standard error of about 1.3 % (g = 1) to 6 % (g = 8) around the formula "
                  "(tokens_per_cycle_std over the square root of the cycles), and the "
                  "teacher-forced acceptance is itself a mean over 512 positions (about "
                  "±2 %); acceptances that come in runs are an assumption the formula leaves out"),
        Claim("speedup", "speculative over plain greedy decoding, whole generations", "prediction",
              model="helpers.models.speculative.speedup",
              ceilings="measured in the same run: the acceptance rate, the cost ratio c (draft "
                       "step over target step) and the verification ratio v per draft length",
              tolerance=0.10,
              why="a ratio of host-bound timings, each the median of interleaved rounds that "
                  "drift with the machine (the H200 run's first round of the target step took "
                  "nearly twice its others); c and v are medians of their own, and the tokens "
                  "per cycle's error carries through"),
        Claim("cost_ratio", "cost ratio c, draft step over target step", "prediction",
              model="helpers.models.speculative.launch_bound_cost_ratio",
              ceilings="operators each step dispatches, counted in the same run (count_ops)",
              tolerance=0.10,
              why="launch-bound steps cost their launches, but not every operator costs the "
                  "same host time, and the work outside the operators (the step's Python) is "
                  "the same for both models, which pulls c toward 1"),
    ))
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


# --- measurements ---------------------------------------------------------------------------

def _greedy_agreement(target, draft, prompt_list, n_new: int) -> tuple[list, float, int]:
    """The target's greedy continuation of each prompt, and the teacher-forced acceptance rate
    on them (positions ``P-1 .. P+n_new-2``, whose next token is generated, pooled over the
    prompts): ``(continuations, rate, positions)``."""
    import torch

    refs, accepted, positions = [], 0.0, 0
    for p in prompt_list:
        with torch.no_grad():
            ref = target.generate(p, n_new)
        rate, n = agreement(target, draft, ref[:, :-1], start=p.shape[1] - 1)
        refs.append(ref)
        accepted += rate * n
        positions += n
    return refs, accepted / positions, positions


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
        _, alpha, positions = _greedy_agreement(target, draft, prompts(device), new_tokens())
        ops = {}
        for name, m in (("target", target), ("draft", draft)):
            cache = KVCache(m.cfg, batch=1, max_seq_len=8)
            tok = torch.tensor([[65]])
            with torch.no_grad():
                m(tok, cache=cache, start_pos=0)
                ops[name] = count_ops(lambda: m(tok, cache=cache, start_pos=1))
    finally:
        torch.set_num_threads(threads)
    return {"alpha": alpha, "positions": positions, "ops_target": ops["target"],
            "ops_draft": ops["draft"], "ops_ratio": ops["draft"] / ops["target"],
            "params_target": target.num_parameters(), "params_draft": draft.num_parameters(),
            "layers_target": target.cfg.n_layers, "layers_draft": draft.cfg.n_layers}


def measure_correctness(target, draft, prompt_list, n_new: int, lengths) -> dict:
    """Speculative output against ``target.generate`` for every prompt and draft length, and
    the teacher-forced agreement on the target's greedy text."""
    refs, alpha, positions = _greedy_agreement(target, draft, prompt_list, n_new)
    cases = []
    for i, (p, ref) in enumerate(zip(prompt_list, refs)):
        for g in lengths:
            out = speculative_generate(target, draft, p, n_new, g)
            diff = (out != ref)[0].nonzero()
            first = int(diff[0]) if len(diff) else None
            cases.append({"prompt": i, "draft_len": g, "identical": first is None,
                          "first_difference": first})
    return {"cases": cases, "identical": all(c["identical"] for c in cases),
            "alpha_teacher_forced": alpha, "positions": positions}


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
