"""Lab runner: serve the book's model with static and continuous batching; compare with the
simulator.

What :func:`run` does, on any device:

1. **check**: serve a small batch with both schedulers (and prefix caching); every output must
   equal :meth:`helpers.nn.decoder.Decoder.generate` of its prompt alone, token for token
   (float32 weights and KV cache, so greedy decoding is exact). Nothing is timed before;
2. **calibrate**: after :data:`WARMUP_S` of untimed serving, serve a closed batch drawn from
   the trace's length distributions, fit the step time :math:`c_0 + c_d n_d + c_p n_p + c_c
   n_{context}` and the host gap :math:`g_0 + g_s n_{seqs}` to its steps, and set the Poisson
   rate to :data:`LOAD` of the capacity that model reaches on a simulated saturated batch;
3. **measure**: serve the trace (:func:`helpers.sim.workload.poisson_trace`, prompts from
   book-lm's validation text, shared prefixes) in real time with each scheduler on the real
   engine (:mod:`helpers.serving.engine`), every output checked against ``generate``;
4. **simulate**: fit each scheduler's host gap to a second closed batch served after the trace
   and the step time to the *static* run's steps (none of the continuous run's), and run the
   simulator (:mod:`helpers.sim.serving`) on the trace with them; also, for comparison, with
   the second batch's own model and with the earlier three-term fit to both runs' steps;
5. **memory**: the KV blocks the paged engine held at its peak against max-length contiguous
   reservations for the same running sequences.

Metrics come from :func:`helpers.models.inference.trace_metrics` for engine and simulator
alike. Page: ``labs/serving.md``; run as ``python -m helpers.labs.serving --out DIR
[--size small|full] [--device cpu|cuda]``; grader :func:`grade_blocks_needed`; what the page
computes from a result is in :mod:`helpers.labs.analysis.serving`.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from helpers.labs import core
from helpers.labs.core import lab_device, new_result, progress, run_cli
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import inference, kv_paging

__all__ = ["LAB", "LOAD", "TOLERANCE", "settings", "check_engine", "calibrate", "make_trace",
           "run", "reference_or_none", "grade_blocks_needed", "main"]

#: Offered load: the arrival rate as a fraction of the continuous engine's estimated capacity.
LOAD = 0.7
#: The page's tolerance for the simulator's throughput and TTFT/TPOT against the engine.
TOLERANCE = 0.15

_SIM = "helpers.sim.serving.simulate"
_FITTED = ("the step time c0 + c_d n_decode + c_p n_prefill + c_c n_context least-squares "
           "fitted to the static run's steps (none of the continuous run's), and the host gap "
           "g0 + g_s n_seqs before each step fitted to each scheduler's steps on a closed "
           "calibration batch served after the trace in the same run")
_WHY = ("the simulator replays the run's own trace with step times fitted on the static run, so "
        "what is left is the fit's per-step error (a few per cent at the median) and the drift "
        "of the host's speed between the two runs (a few per cent); 15 % covers both")

#: The lab's record: its page, size table (the engine's steps are timed by its own clock) and
#: claims: the simulator, driven by the step time fitted to the static run's steps and the host
#: gap fitted to a calibration batch, predicts the engine's throughput and latency percentiles.
LAB = core.Lab(
    "serving", pages=("labs/serving.md",),
    sizes={"n_requests": (24, 240), "prompt_len": ((8, 40), (16, 160)),
           "output_mean": (12.0, 48.0), "output_cap": (40, 200), "prefix_len": (16, 64),
           "max_batch": (8, 32), "token_budget": (64, 512), "num_blocks": (64, 1024)},
    claims=(
        Claim("throughput", "output tokens per second of a scheduler on the trace",
              "prediction", model=_SIM, ceilings=_FITTED, tolerance=TOLERANCE,
              why=_WHY + "; throughput sums every step, so per-step errors average out"),
        Claim("median_latency", "median TTFT and median TPOT of a scheduler on the trace",
              "prediction", model=_SIM, ceilings=_FITTED, tolerance=TOLERANCE, why=_WHY),
        Claim("tail_latency", "90th-percentile TTFT and TPOT of a scheduler on the trace",
              "prediction", model=_SIM, ceilings=_FITTED, tolerance=TOLERANCE, why=_WHY,
              miss=("continuous batching's p90 TTFT and TPOT: the tail is made by the requests "
                    "that arrive while all max_batch slots are busy and wait for one. The "
                    "engine's steps with a full batch ran longer than the linear fit (which "
                    "has no term for the KV context the attention reads, and none for the host "
                    "time between steps), so in the engine the batch stayed full for more "
                    "steps and more arrivals queued for a slot than in the simulator; the "
                    "step log shows both (full-batch steps and their time against the fit), "
                    "and static batching, whose waits are whole batches, is predicted within "
                    "a few per cent. A step model with a context-length term would close it.")),
    ))
SCHEDULERS = ("static", "continuous")


def settings() -> dict:
    """The run's sizes (small on a CPU, full on a GPU)."""
    size = LAB.size
    return dict(n_requests=size("n_requests"), prompt_len=size("prompt_len"),
                output_mean=size("output_mean"), output_cap=size("output_cap"),
                n_prefixes=2, prefix_len=size("prefix_len"), block_size=16,
                max_batch=size("max_batch"), token_budget=size("token_budget"),
                num_blocks=size("num_blocks"), seed=2026, load=LOAD)


@contextlib.contextmanager
def _threads(device: str):
    """One intra-op thread on a CPU: the small model gains nothing from more, and a shared
    2-core machine would make them fight."""
    import torch

    old = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _model(device: str):
    import torch
    from helpers.nn import tinylm

    return tinylm.load("book-lm", device=device, dtype=torch.float32)


def _validation_tokens():
    from helpers.nn import tinylm

    _, val = tinylm.split(tinylm.corpus_bytes())
    return val.numpy()


def _engine(model, s: dict, prefix_caching: bool = True):
    from helpers.serving.engine import Engine

    return Engine(model, num_blocks=s["num_blocks"], block_size=s["block_size"],
                  max_batch=s["max_batch"], token_budget=s["token_budget"],
                  prefix_caching=prefix_caching)


def make_trace(s: dict, rate_per_s: float, tokens):
    """The measured trace and its prompts."""
    from helpers.sim import workload as W

    tr = W.poisson_trace(rate_per_s, s["n_requests"], seed=s["seed"], **_lengths(s))
    return tr, W.prompt_tokens(tr, tokens, seed=s["seed"])


def check_engine(model, s: dict, tokens) -> dict:
    """Serve a small closed batch with every scheduler; raise unless every output equals
    ``generate``'s. Returns what was checked."""
    from helpers.serving.engine import mismatches, reference_outputs
    from helpers.sim import workload as W

    tr = W.batch_trace(6, prompt_len=W.uniform(3, 40), output_len=W.uniform(1, 12), seed=1,
                       n_prefixes=1, prefix_len=s["block_size"] + 3)
    prompts = W.prompt_tokens(tr, tokens, seed=1)
    ref = reference_outputs(model, tr, prompts)
    checked = []
    for sched, prefix in (("static", False), ("continuous", False), ("continuous", True)):
        eng = _engine(model, dict(s, token_budget=24), prefix_caching=prefix)
        bad = mismatches(eng.serve(tr, prompts, sched), ref, model,
                          {r.id: p for r, p in zip(tr, prompts)})
        if bad:
            raise AssertionError(f"{sched} batching (prefix caching {prefix}) served requests "
                                 f"{bad} with outputs that differ from generate()")
        checked.append(f"{sched}{' + prefix caching' if prefix else ''}")
    return {"requests": len(tr), "schedulers": checked, "exact_token_match": True}


#: The step-log keys a result keeps per step.
STEP_KEYS = ("t_start_s", "duration_s", "n_decode", "n_prefill_tokens", "blocks_used",
             "tokens_stored", "n_seqs", "context_tokens", "kv_slots_read", "query_slots",
             "host_gap_s")


def _log(steps) -> list[dict]:
    return [{k: st[k] for k in STEP_KEYS} for st in steps]


def _lengths(s: dict) -> dict:
    """The trace's length distributions (prompt, output, shared prefixes)."""
    from helpers.sim import workload as W

    lo, hi = s["prompt_len"]
    return dict(prompt_len=W.uniform(lo, hi), n_prefixes=s["n_prefixes"],
                output_len=W.geometric(s["output_mean"], cap=s["output_cap"]),
                prefix_len=s["prefix_len"])


def _sim_kw(s: dict) -> dict:
    return dict(num_blocks=s["num_blocks"], block_size=s["block_size"], max_batch=s["max_batch"],
                token_budget=s["token_budget"], prefix_caching=True)


#: Seconds the engine serves the calibration batch before anything is timed (warm-up by time).
WARMUP_S = 3.0


def _calibration_batch(s: dict, tokens, n: int, seed: int):
    """A closed batch of ``n`` requests drawn from the trace's length distributions."""
    from helpers.sim import workload as W

    tr = W.batch_trace(n, seed=seed, **_lengths(s))
    return tr, W.prompt_tokens(tr, tokens, seed=seed)


def calibrate(model, s: dict, tokens) -> dict:
    """Serve a closed batch (the trace's length distributions, another seed) continuously
    after :data:`WARMUP_S` of serving it untimed; fit the four-term step model with host gap
    to its steps; capacity: :func:`helpers.sim.serving.saturated_tokens_per_s` with it on
    ``16 max_batch`` requests drawn alike, over the mean output length the rate at
    :data:`LOAD`. ``linear_capacity_tokens_per_s``, kept for comparison, is the earlier
    estimate: ``max_batch`` decodes per step of a three-term fit (no context, no gap)."""
    from helpers.sim import workload as W
    from helpers.sim.serving import StepModel, fit_step_model, saturated_tokens_per_s

    tr, prompts = _calibration_batch(s, tokens, 4 * s["max_batch"], seed=7)
    eng = _engine(model, s)
    t0 = time.perf_counter()
    while True:  # warm-up (allocator, kernels, clocks)
        eng.serve(tr, prompts, "continuous")
        if time.perf_counter() - t0 >= WARMUP_S:
            break
    steps = eng.serve(tr, prompts, "continuous")["steps"]
    fit, model4 = fit_step_model(steps), fit_step_model(steps, context=True, gaps=steps)
    tokens_per_s = saturated_tokens_per_s(
        model4, W.batch_trace(16 * s["max_batch"], seed=8, **_lengths(s)), **_sim_kw(s))
    return {"fit": fit.__dict__, "step_model": model4.__dict__,
            "capacity_tokens_per_s": tokens_per_s,
            "linear_capacity_tokens_per_s": s["max_batch"] / max(fit(s["max_batch"], 0), 1e-9),
            "steps": _log(steps), "rate_per_s": s["load"] * tokens_per_s / s["output_mean"]}


def calibrate_after(model, s: dict, tokens) -> dict:
    """A second closed batch served with each scheduler after the trace (the machine as warm
    as during it): each scheduler's host gap fitted to its steps (with a four-term step time
    fitted to both logs, for comparison), and the logs."""
    from helpers.sim.serving import fit_step_model

    tr, prompts = _calibration_batch(s, tokens, 2 * s["max_batch"], seed=9)
    eng = _engine(model, s)
    logs = {sched: eng.serve(tr, prompts, sched)["steps"] for sched in SCHEDULERS}
    both = [st for sched in SCHEDULERS for st in logs[sched]]
    return {"step_models": {sched: fit_step_model(both, context=True, gaps=logs[sched]).__dict__
                            for sched in SCHEDULERS},
            "steps": {sched: _log(st) for sched, st in logs.items()}}


def _memory(served: dict, max_seq_len: int, model_max_seq_len: int) -> dict:
    """Peak KV slots: paged (blocks held), tokens stored, and contiguous reservations of
    ``max_seq_len`` (and of the model's maximum) for the same running sequences."""
    steps, bs = served["steps"], served["block_size"]
    peak, running = max(steps, key=lambda st: st["blocks_used"]), max(st["n_seqs"] for st in steps)
    return {"peak_blocks": served["peak_blocks"],
            "paged_reserved_tokens": served["peak_blocks"] * bs,
            "tokens_stored_at_peak": peak["tokens_stored"], "max_running": running,
            "contiguous_reserved_tokens": running * max_seq_len, "max_seq_len": max_seq_len,
            "contiguous_reserved_tokens_model_max": running * model_max_seq_len,
            "model_max_seq_len": model_max_seq_len}


def run(device: str | None = None) -> dict:
    """Check, calibrate, measure both schedulers, fit, simulate; return the result."""
    from helpers.serving.engine import mismatches, reference_outputs
    from helpers.sim import workload as W
    from helpers.sim.serving import StepModel, fit_step_model, saturated_tokens_per_s, simulate
    from helpers.sim.workload import to_dicts

    device = device or lab_device()
    s = settings()
    result = new_result(LAB, device, **s, dtype="float32", tolerance=TOLERANCE)
    tokens = _validation_tokens()
    with _threads(device):
        model = _model(device)
        meas = result["measurements"]
        meas["check"] = check_engine(model, s, tokens)
        meas["calibration"] = cal = calibrate(model, s, tokens)
        trace, prompts = make_trace(s, cal["rate_per_s"], tokens)
        meas["trace"] = to_dicts(trace)
        ref = reference_outputs(model, trace, prompts)
        served = {}
        for sched in progress(SCHEDULERS, desc="schedulers"):
            out = _engine(model, s).serve(trace, prompts, sched)
            bad = mismatches(out, ref, model, {r.id: p for r, p in zip(trace, prompts)})
            if bad:
                raise AssertionError(f"{sched}: requests {bad} differ from generate()")
            served[sched] = out
        meas["calibration_after"] = after = calibrate_after(model, s, tokens)
        # the previous model, for comparison: three terms fitted to the measured runs' own steps
        own = fit_step_model([st for o in served.values() for st in o["steps"]])
        meas["own_steps_linear_fit"] = own.__dict__
        # the step time fitted to the static run's steps (the continuous run's tail is never
        # fitted), the host gap to each scheduler's calibration steps (its loop is its own code)
        base = fit_step_model(served["static"]["steps"], context=True)
        meas["step_models"] = {sched: dict(base.__dict__, gap_s=g["gap_s"],
                                           gap_per_seq_s=g["gap_per_seq_s"])
                               for sched, g in after["step_models"].items()}
        meas["fit"] = meas["step_models"]["continuous"]
        meas["saturated_tokens_per_s"] = saturated_tokens_per_s(
            StepModel(**meas["fit"]), W.batch_trace(16 * s["max_batch"], seed=8, **_lengths(s)),
            **_sim_kw(s))
        max_seq_len = max(r.prompt_len + r.output_len for r in trace)
        kw = _sim_kw(s)
        for sched, out in served.items():
            fit = StepModel(**meas["step_models"][sched])
            sim = simulate(trace, sched, fit, **kw)
            steps = out["steps"]
            pred = np.array([fit(st["n_decode"], st["n_prefill_tokens"], st["context_tokens"])
                             for st in steps])
            dur = np.array([st["duration_s"] for st in steps])
            meas[sched] = {
                "engine": inference.trace_metrics(out["requests"]),
                "simulator": inference.trace_metrics(sim["requests"]),
                "simulator_own_linear_fit": inference.trace_metrics(
                    simulate(trace, sched, own, **kw)["requests"]),
                "simulator_calibration_fit": inference.trace_metrics(
                    simulate(trace, sched, StepModel(**after["step_models"][sched]), **kw)
                    ["requests"]),
                "n_steps": len(steps), "sim_n_steps": len(sim["steps"]),
                "step_fit_median_abs_error": float(np.median(np.abs(pred / dur - 1))),
                "engine_busy_s": float(dur.sum()),
                "engine_wall_s": max(t for q in out["requests"] for t in q["token_times_s"]),
                "preemptions": sum(q["preemptions"] for q in out["requests"]),
                "outputs_equal_generate": len(out["requests"]) - len(out.get("near_ties", [])),
                "near_tie_divergences": len(out.get("near_ties", [])),
                "shared_prefix_tokens": sum(q["shared_tokens"] for q in out["requests"]),
                "memory": _memory(out, max_seq_len, model.cfg.max_seq_len),
                "steps": _log(steps),
                "requests": [{k: q[k] for k in ("id", "arrival_s", "token_times_s", "admitted_s",
                                               "preemptions")} for q in out["requests"]],
                "sim_memory": sim["memory"],
            }
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading ----------------------------------------------------------------------------------
def grade_blocks_needed(candidate) -> Verdict:
    """Check a reader's ``blocks_needed(num_tokens, block_size)`` against the model on every
    ``num_tokens`` from 0 to 4 blocks and several block sizes (exact multiples included)."""
    name = "blocks_needed"
    wrong = []
    for b in (1, 2, 7, 16, 32):
        for n in range(0, 4 * b + 2):
            want = kv_paging.blocks_needed(n, b)
            try:
                got = candidate(n, b)
            except Exception as exc:  # a crash is a wrong answer, reported as such
                got = f"{type(exc).__name__}"
            if got != want:
                wrong.append((n, b, got, want))
    if wrong:
        n, b, got, want = wrong[0]
        return Verdict(name, "FAIL", [f"{len(wrong)} of the cases are wrong; the first: "
                                      f"{n} tokens in blocks of {b} need {want} blocks, "
                                      f"got {got}"])
    return Verdict(name, "PASS", ["every token count from 0 to 4 blocks, block sizes 1 to 32, "
                                  "exact multiples included"])


def main(argv=None) -> int:
    run_cli(LAB, run, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
