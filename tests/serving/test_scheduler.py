"""One scheduler, two executors: the real engine and the simulator run the same schedule.

The engine runs on a virtual clock here (``time`` in the engine's module replaced by a clock that
only the model's forward and the engine's sleep advance, by a step cost the simulator's
:class:`StepModel` states exactly), so arrivals spread in time are admitted at the same steps in
both. All times are multiples of 1/8, so both clocks add them exactly."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from helpers.models import transformer as tm
from helpers.nn.decoder import Decoder
from helpers.serving import engine as E
from helpers.serving import scheduler as S
from helpers.serving.paged import BlockAllocator
from helpers.sim import serving as sim
from helpers.sim import workload as W

TINY = tm.LLAMA3_8B.scaled(name="tiny", n_layers=1, d_model=32, n_heads=4, n_kv_heads=2,
                           d_ff=48, vocab_size=101, max_seq_len=64)
FIXED_S, PER_TOKEN_S = 1.0, 0.125   # one step: 1 s + 1/8 s per token computed
STEP = sim.StepModel(FIXED_S, PER_TOKEN_S, PER_TOKEN_S)  # a decode computes one token


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return Decoder(TINY).eval()


def _trace(arrivals: bool):
    tr = W.poisson_trace(0.1, 8, prompt_len=W.uniform(3, 20), output_len=W.uniform(1, 9),
                         seed=4, n_prefixes=2, prefix_len=8)
    if not arrivals:
        return [replace(r, arrival_s=0.0) for r in tr]
    return [replace(r, arrival_s=round(r.arrival_s * 8) / 8) for r in tr]


def _prompts(trace):
    """Token ids that share exactly what the simulator's stand-in ids share: each prefix, and
    nothing else (random tokens from a vocabulary of 101 repeat a block of 4 with odds ~1e-8)."""
    rng = np.random.default_rng(0)
    prefixes = {}
    out = []
    for r in trace:
        own = rng.integers(0, TINY.vocab_size, r.prompt_len - r.prefix_len).tolist()
        if r.prefix_id is None:
            out.append(own)
            continue
        pre = prefixes.setdefault(r.prefix_id, rng.integers(0, TINY.vocab_size,
                                                            r.prefix_len).tolist())
        out.append(pre + own)
    return out


class _VirtualTime:
    """Stands in for the ``time`` module: ``perf_counter`` reads a clock that only ``sleep`` and
    the model advance."""

    def __init__(self):
        self.t = 0.0

    def perf_counter(self):
        return self.t

    def sleep(self, seconds):
        self.t += seconds


def _engine_run(model, monkeypatch, trace, scheduler, kw):
    clock = _VirtualTime()
    monkeypatch.setattr(E, "time", clock)
    e = E.Engine(model, **kw)
    forward = e.model.forward

    def timed_forward(pool, chunks):
        clock.t += FIXED_S + PER_TOKEN_S * sum(len(ids) for ids, _, _ in chunks)
        return forward(pool, chunks)

    monkeypatch.setattr(e.model, "forward", timed_forward)
    out = e.serve(trace, _prompts(trace), scheduler)
    monkeypatch.undo()
    return out, e.schedule


def _sim_run(monkeypatch, trace, scheduler, kw):
    made = []

    class Recording(S.Scheduler):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)

    monkeypatch.setattr(sim, "Scheduler", Recording)
    out = sim.simulate(trace, scheduler, STEP, **kw)
    monkeypatch.undo()
    return out, made[0].events


CASES = {  # name -> scheduler, engine/simulator settings
    "static": ("static", dict(num_blocks=40, max_batch=3)),
    "continuous": ("continuous", dict(num_blocks=40, max_batch=3, token_budget=8)),
    "continuous, prefix caching": ("continuous", dict(num_blocks=40, max_batch=4,
                                                      token_budget=16, prefix_caching=True)),
    "continuous, preemption": ("continuous", dict(num_blocks=9, max_batch=4, token_budget=6)),
    "continuous, preemption, prefix caching": ("continuous", dict(
        num_blocks=10, max_batch=4, token_budget=12, prefix_caching=True)),
}


@pytest.mark.parametrize("arrivals", [False, True], ids=["batch", "arrivals"])
@pytest.mark.parametrize("case", list(CASES))
def test_engine_and_simulator_run_the_same_schedule(model, monkeypatch, case, arrivals):
    scheduler, kw = CASES[case]
    kw = dict(kw, block_size=4)
    trace = _trace(arrivals)
    eng, eng_events = _engine_run(model, monkeypatch, trace, scheduler, kw)
    out, sim_events = _sim_run(monkeypatch, trace, scheduler, kw)
    # the schedule: admissions, each step's sequences and token counts, preemptions, retirements
    assert eng_events == sim_events
    assert [e for e in eng_events if e[0] == "step"], "nothing ran"
    # what each result reports of it
    assert [{k: st[k] for k in out["steps"][0]} for st in eng["steps"]] == out["steps"]
    assert [(q["id"], q["token_times_s"], q["preemptions"]) for q in eng["requests"]] == \
        [(q["id"], q["token_times_s"], q["preemptions"]) for q in out["requests"]]
    assert [len(q["output"]) for q in eng["requests"]] == [r.output_len for r in trace]
    # the cases do what their names say
    preempted = sum(q["preemptions"] for q in out["requests"])
    assert (preempted > 0) == ("preemption" in case)
    shared = sum(q["shared_tokens"] for q in eng["requests"])
    assert (shared > 0) == ("prefix caching" in case)
    if arrivals:  # the engine idled, waiting for an arrival, and later requests overlapped
        steps = out["steps"]
        assert any(b["t_start_s"] > a["t_start_s"] + a["duration_s"] for a, b in zip(steps, steps[1:]))
        assert max(st["n_seqs"] for st in steps) > 1


def test_the_schedule_log_names_every_event():
    """Two requests, one block each at most: the second waits for the first's block."""
    class Unit:
        t = 0.0

        def now(self):
            return self.t

        def wait_until(self, t_s):
            self.t = max(self.t, t_s)

        def run(self, step):
            self.t += 1.0
            return None, self.t

        def log(self, step):
            pass

    seqs = [S.Sequence(0, 0.0, [1, 2], 2), S.Sequence(1, 0.0, [3, 4], 1)]
    sched = S.Scheduler("continuous", BlockAllocator(1, 4), Unit(), block_size=4, max_batch=2)
    sched.run(seqs)
    assert sched.events == [("admit", 0), ("step", ((0, 2),)), ("step", ((0, 1),)),
                            ("finish", 0), ("admit", 1), ("step", ((1, 2),)), ("finish", 1)]


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="scheduler must be one of"):
        S.Scheduler("fifo", BlockAllocator(1, 4), None, block_size=4)


@pytest.mark.parametrize("edit", [dict(output_len=0), dict(arrival_s=float("nan")),
                                  dict(arrival_s=-0.5), dict(id=0), dict(prompt_len=30)],
                         ids=["output_len 0", "arrival NaN", "arrival < 0", "duplicate id",
                              "too big for the pool"])
@pytest.mark.parametrize("scheduler", S.SCHEDULERS)
def test_engine_and_simulator_refuse_the_same_requests_alike(model, edit, scheduler, deadline):
    trace = [W.Request(i, 0.0, 6, 3) for i in range(3)]
    trace[2] = replace(trace[2], **edit)
    with pytest.raises(ValueError) as eng:
        E.Engine(model, num_blocks=8, block_size=4).serve(trace, _prompts(trace), scheduler)
    with deadline(10.0), pytest.raises(ValueError) as simulated:
        sim.simulate(trace, scheduler, STEP, num_blocks=8, block_size=4)
    assert str(eng.value) == str(simulated.value)
    assert str(eng.value).startswith(f"request {0 if 'id' in edit else 2}: ")


@pytest.mark.parametrize("case", ["static", "continuous, preemption, prefix caching"])
def test_a_host_gap_between_steps_is_logged_and_simulated_alike(model, monkeypatch, case):
    """Issue 17: host time before each step (here 1/4 s on the virtual clock) is logged by the
    engine as ``host_gap_s`` and, given as the step model's gap, reproduced by the simulator:
    the same schedule, the same step log (contexts and KV slots read included), the same token
    times."""
    scheduler, kw = CASES[case]
    kw = dict(kw, block_size=4)
    trace, gap = _trace(True), 0.25
    run = E._ModelExecutor.run

    def late_run(self, step):
        self.engine._clock.t += gap  # the host's work before the step
        return run(self, step)

    clock = _VirtualTime()
    monkeypatch.setattr(E, "time", clock)
    monkeypatch.setattr(E._ModelExecutor, "run", late_run)
    e = E.Engine(model, **kw)
    e._clock = clock
    forward = e.model.forward

    def timed_forward(pool, chunks):
        clock.t += FIXED_S + PER_TOKEN_S * sum(len(ids) for ids, _, _ in chunks)
        return forward(pool, chunks)

    monkeypatch.setattr(e.model, "forward", timed_forward)
    eng = e.serve(trace, _prompts(trace), scheduler)
    monkeypatch.undo()
    out = sim.simulate(trace, scheduler, replace(STEP, gap_s=gap), **kw)
    assert [st["host_gap_s"] for st in eng["steps"]] == [gap] * len(eng["steps"])
    assert [{k: st[k] for k in out["steps"][0]} for st in eng["steps"]] == out["steps"]
    assert {"context_tokens", "kv_slots_read", "host_gap_s"} <= set(out["steps"][0])
    # the padded (B, S) block the attention gathers holds every context, the longest B times
    st = eng["steps"]
    assert all(x["kv_slots_read"] >= x["context_tokens"] and x["kv_slots_read"] % x["n_seqs"] == 0
               for x in st)
    assert any(x["kv_slots_read"] > x["context_tokens"] for x in st)
    assert [q["token_times_s"] for q in eng["requests"]] == \
        [q["token_times_s"] for q in out["requests"]]
    # without the gap the simulator runs ahead of the engine
    fast = sim.simulate(trace, scheduler, STEP, **kw)
    assert fast["makespan_s"] < out["makespan_s"]
