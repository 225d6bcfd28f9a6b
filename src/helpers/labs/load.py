"""Lab runner: load and admission control on a pool of model servers.

A serving pool of ``c`` worker PROCESSES, each with its own copy of the book's language model
(``tinylm.load("book-lm")``, one CPU thread each), serves one request at a time: a prefill of
the prompt and a greedy decode of the request's output length (a real model call). All workers
take requests from ONE first-come-first-served queue, so the pool is a c-server queue. A load
generator in the parent process sends requests open-loop at Poisson times
(:func:`helpers.sim.workload.poisson_trace`, geometric output lengths) at several offered loads,
from below to well past the pool's capacity, twice: with an unbounded queue, and with admission
control (a request that finds ``capacity`` requests inside is turned away at once).

Steps:

1. start the pool; every worker checks its greedy output against the parent's
   :meth:`~helpers.nn.decoder.Decoder.generate` on a test prompt before anything is timed;
2. calibrate: keep exactly ``c`` requests in flight (no queue) and record each request's
   service time, its prefill time and the coefficient of variation of the service time;
3. drive each offered load and policy; record, per request, the arrival (the moment the
   parent sends it), the start and first-token times (stamped by the worker), the finish;
4. predict each run: Erlang C / M/M/c for the unbounded queue below saturation, the fluid
   approximation of a finite run above it, M/M/c/K with admission control, and the
   simulator (:func:`helpers.sim.queue.simulate_multi_server`) replaying the run's own
   arrival times with service times resampled from the calibration.

The SLO is on the time to first token (TTFT): a request meets it if its first token comes within
``slo_s`` of its arrival. The queueing models predict the wait; the TTFT is the wait plus the
prefill, so they use ``slo_s`` minus the mean prefill time. The admission cap is the rule
"reject when the predicted wait exceeds the SLO": with ``n`` inside, a new request waits for
about ``n - c + 1`` departures at ``c`` per mean service time.

Times are stamped with ``time.monotonic()``, one system-wide clock shared by the processes (the
quantity measured is each request's latency, not a kernel, so :func:`helpers.bench.bench` does
not apply). The GPU is not used: the reference run on the GPU machine runs its pool on that
machine's CPU cores; queueing needs servers, not a particular kind.

Page: ``labs/load.md``. Run as ``python -m helpers.labs.load --out DIR [--size small|full]``.

The page's grader is :func:`grade_erlang_c`; what the page computes from a result (its rows,
the evidence for the gaps, its prose numbers) is in :mod:`helpers.labs.analysis.load`.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import queue as pyqueue
import time

import numpy as np

from helpers.bench import pick
from helpers.labs import core
from helpers.labs.core import MISSING, new_result, progress, run_cli
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import queueing as qm
from helpers.models import slo as slom

__all__ = ["LAB", "TOLERANCE", "settings", "usable_cpus", "Pool", "calibrate", "drive", "predict", "run",
           "reference_or_none", "grade_erlang_c", "erlang_c_reference", "MISSING",
           "admission_capacity", "run_summary", "main"]

#: The tolerance of both goodput predictions (their ``why`` says where it comes from).
TOLERANCE = 0.10

#: The lab's record: its page, size table (no kernel is timed: ``bench`` does not apply) and
#: claims. Two predictions of each run's goodput: the queueing formulas with the calibration's
#: service rate (what a planner knows before the run), and the c-server FIFO queue replaying
#: the run's own arrivals and service times (which tests the queue, not the service rate).
LAB = core.Lab(
    "load", pages=("labs/load.md",),
    sizes={"output_mean_tokens": (4.0, 16.0), "output_cap_tokens": (24, 96),
           "calibration_requests": (16, 160), "requests_per_run": (32, 400),
           "load_factors": ([0.6, 0.9, 1.5, 2.5], [0.4, 0.6, 0.8, 0.9, 1.1, 1.4, 2.0, 3.0])},
    claims=(
        Claim("goodput_formula", "goodput of one run, as a share of the calibrated capacity",
              "prediction", model="helpers.models.slo.mgc_wait_slo_attainment",
              ceilings="the service-time distribution measured in the same run (the admitted "
                       "requests' mean service time and its squared coefficient of variation) "
                       "and their mean prefill time; the run's own arrival rate",
              tolerance=TOLERANCE,
              why="goodput is a count over one run of a few hundred requests, one Poisson "
                  "sample of a random queue (a few per cent of scatter), and the two-moment "
                  "approximation keeps the exponential wait's shape",
              miss=("without a cap near saturation the run's own service times put the pool "
                    "at its capacity, where a queue needs hundreds of times the run's length "
                    "to approach the steady state the formula describes: a Monte Carlo of "
                    "the same finite run from empty, with the run's own service mean and "
                    "variability, lands on the measurement, inside a band far wider than the "
                    "tolerance. Far past capacity without a cap the few requests that meet "
                    "the SLO are the first arrivals, whose service times were shorter than "
                    "the run's mean, and their count scatters by more than the tolerance "
                    "from run to run; the replay with each request's own service time lands "
                    "on both.")),
        Claim("goodput_replay", "goodput of one run, as a share of the calibrated capacity",
              "prediction", model="helpers.sim.queue.simulate_multi_server",
              ceilings="each admitted request's own arrival and service time measured in the "
                       "same run; the run's own mean prefill time",
              tolerance=TOLERANCE,
              why="a c-server FIFO queue fed the run's own arrivals and service times gives "
                  "every wait exactly unless the dispatcher idles workers or reorders "
                  "requests; what is left is the service time drawn for each turned-away "
                  "request (it never ran, and it changes who finds the queue full) and one "
                  "mean prefill for every request's SLO budget"),
    ))
SEED = 2026
PROMPT_LEN = 32


def usable_cpus() -> int:
    """CPUs this process may run on (``os.sched_getaffinity``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def settings() -> dict:
    """The sizes of this run (small on a CPU, full on the reference machine)."""
    cpus = usable_cpus()
    return {
        "servers": pick(small=2 if cpus >= 2 else 1, full=max(1, min(8, cpus - 2))),
        "usable_cpus": cpus,
        "prompt_len": PROMPT_LEN,
        **{k: LAB.size(k) for k in ("output_mean_tokens", "output_cap_tokens",
                                    "calibration_requests", "requests_per_run")},
        "load_factors": LAB.size("load_factors"),
        "slo_service_times": 1.0,  # SLO on TTFT = mean prefill + this many mean service times
        "model": "book-lm",
        "pool_device": "cpu",
    }


# --- the worker process -----------------------------------------------------------------------

def _serve(model, prompt, n_out: int):
    """Prefill ``prompt`` then greedily decode ``n_out`` tokens; returns (tokens, t_first)."""
    import torch

    from helpers.nn.decoder import KVCache

    with torch.inference_mode():
        x = torch.as_tensor(np.asarray(prompt, dtype=np.int64)).view(1, -1)
        P = x.shape[1]
        cache = KVCache(model.cfg, batch=1, max_seq_len=P + n_out, dtype=torch.float32,
                        device="cpu")
        logits = model(x, cache=cache, start_pos=0)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        t_first = time.monotonic()
        out = [int(nxt)]
        for step in range(1, n_out):
            logits = model(nxt, cache=cache, start_pos=P + step - 1)
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            out.append(int(nxt))
    return out, t_first


def _worker(index: int, tasks, results, check_prompt, check_len: int, model) -> None:
    import torch

    torch.set_num_threads(1)
    tokens, _ = _serve(model, check_prompt, check_len)
    results.put(("ready", index, tokens))
    while True:
        item = tasks.get()
        if item is None:
            break
        rid, prompt, n_out = item
        t0 = time.monotonic()
        _, t_first = _serve(model, prompt, n_out)
        results.put(("done", rid, index, t0, t_first, time.monotonic()))


class Pool:
    """``servers`` worker processes behind one FIFO task queue (a c-server queue)."""

    def __init__(self, servers: int, model_name: str = "book-lm", timeout_s: float = 120.0):
        import torch

        from helpers.nn import tinylm

        if servers < 1:
            raise ValueError(f"servers must be >= 1, got {servers!r}")
        self.servers = servers
        # fork: each worker starts as a copy of this process, with its own (copy-on-write)
        # copy of the model, in a fraction of the time a fresh interpreter needs to import torch
        ctx = mp.get_context("fork")
        self.tasks, self.results = ctx.Queue(), ctx.Queue()
        rng = np.random.default_rng(SEED)
        check_prompt = rng.integers(32, 127, size=PROMPT_LEN).tolist()
        check_len = 6
        model = tinylm.load(model_name)
        self.procs = [ctx.Process(target=_worker, daemon=True,
                                  args=(i, self.tasks, self.results, check_prompt, check_len,
                                        model))
                      for i in range(servers)]
        for p in self.procs:
            p.start()
        with torch.inference_mode():  # the reference decode, in this process, after the fork
            want = model.generate(torch.tensor([check_prompt]), check_len)[0, PROMPT_LEN:].tolist()
        for _ in range(servers):
            try:
                kind, index, got = self.results.get(timeout=timeout_s)
            except pyqueue.Empty:
                self.close()
                raise RuntimeError(f"a worker did not start within {timeout_s} s") from None
            if got != want:
                self.close()
                raise RuntimeError(f"worker {index} decoded {got}, the reference decodes {want}")
        self.checked = True

    def close(self) -> None:
        for _ in self.procs:
            self.tasks.put(None)
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
                p.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _prompts(n: int, seed: int) -> list[list[int]]:
    from helpers.nn import tinylm

    _, val = tinylm.split(tinylm.corpus_bytes())
    stream = val.numpy()
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, stream.size - PROMPT_LEN, size=n)
    return [stream[s:s + PROMPT_LEN].astype(np.int64).tolist() for s in starts]


def _lengths(s: dict, n: int, seed: int) -> list[int]:
    from helpers.sim.workload import geometric

    draw = geometric(s["output_mean_tokens"], cap=s["output_cap_tokens"])
    return [int(x) for x in draw(np.random.default_rng(seed), n)]


# --- calibration ------------------------------------------------------------------------------

def calibrate(pool: Pool, s: dict) -> dict:
    """Service times with exactly ``c`` requests in flight (every server busy, none waiting)."""
    n = s["calibration_requests"]
    prompts, lengths = _prompts(n, SEED + 1), _lengths(s, n, SEED + 1)
    sent, done, rows = 0, 0, []
    while sent < min(pool.servers, n):
        pool.tasks.put((sent, prompts[sent], lengths[sent]))
        sent += 1
    while done < n:
        _, rid, _, t0, t_first, t1 = pool.results.get(timeout=120)
        done += 1
        rows.append((t1 - t0, t_first - t0))
        if sent < n:
            pool.tasks.put((sent, prompts[sent], lengths[sent]))
            sent += 1
    service = np.array([r[0] for r in rows])
    prefill = np.array([r[1] for r in rows])
    mean = float(service.mean())
    return {"service_s": service.tolist(), "prefill_s": prefill.tolist(),
            "mean_service_s": mean, "service_cv": float(service.std() / mean),
            "mean_prefill_s": float(prefill.mean()),
            "mean_output_tokens": float(np.mean(lengths))}


# --- one run at one offered load --------------------------------------------------------------

def drive(pool: Pool, s: dict, rate_per_s: float, capacity: int | None, seed: int) -> dict:
    """Send ``requests_per_run`` requests open-loop at Poisson times; admit or reject each."""
    from helpers.sim.workload import fixed, geometric, poisson_trace

    n = s["requests_per_run"]
    trace = poisson_trace(rate_per_s, n, prompt_len=fixed(PROMPT_LEN), seed=seed,
                          output_len=geometric(s["output_mean_tokens"],
                                               cap=s["output_cap_tokens"]))
    prompts = _prompts(n, seed)
    arrival = np.full(n, np.nan)
    start, first, finish = (np.full(n, np.nan) for _ in range(3))
    admitted = np.zeros(n, dtype=bool)
    inside = 0

    def handle(msg) -> None:
        nonlocal inside
        _, rid, _, t0, t_first, t1 = msg
        start[rid], first[rid], finish[rid] = t0, t_first, t1
        inside -= 1

    t_origin = time.monotonic() + 0.02
    for r in trace:
        target = t_origin + r.arrival_s
        while True:  # wait for the arrival time, taking completions as they come
            rem = target - time.monotonic()
            if rem <= 0:
                break
            try:
                handle(pool.results.get(timeout=rem))
            except pyqueue.Empty:
                break
        while True:
            try:
                handle(pool.results.get_nowait())
            except pyqueue.Empty:
                break
        arrival[r.id] = time.monotonic()
        if capacity is not None and inside >= capacity:
            continue  # turned away at once
        admitted[r.id] = True
        inside += 1
        pool.tasks.put((r.id, prompts[r.id], r.output_len))
    while inside > 0:
        handle(pool.results.get(timeout=300))
    t0 = arrival[0]
    return {"rate_per_s": rate_per_s, "capacity": capacity, "n": n,
            "arrival_s": (arrival - t0).tolist(),
            "admitted": admitted.tolist(),
            "start_s": [None if math.isnan(x) else x - t0 for x in start],
            "first_s": [None if math.isnan(x) else x - t0 for x in first],
            "finish_s": [None if math.isnan(x) else x - t0 for x in finish]}


def _arr(xs) -> np.ndarray:
    return np.array([np.nan if x is None else x for x in xs], dtype=np.float64)


def run_summary(run: dict, slo_s: float) -> dict:
    """The measured outcome of one run: rates, blocking, attainment, goodput, throughput."""
    arrival = _arr(run["arrival_s"])
    admitted = np.asarray(run["admitted"], dtype=bool)
    first, start, finish = _arr(run["first_s"]), _arr(run["start_s"]), _arr(run["finish_s"])
    n = arrival.size
    span = float(arrival[-1] - arrival[0])
    rate = (n - 1) / span
    ttft = (first - arrival)[admitted]
    met = int(np.sum(ttft <= slo_s))
    return {"offered_rate_per_s": rate,
            "blocked_fraction": float(1.0 - admitted.mean()),
            "admitted_attainment": float(met / max(1, admitted.sum())),
            "offered_attainment": met / n,
            "goodput_per_s": met / n * rate,
            "throughput_per_s": float(admitted.sum()) / float(np.nanmax(finish) - arrival[0]),
            "mean_wait_s": float(np.mean((start - arrival)[admitted])),
            "p90_ttft_s": float(np.percentile(ttft, 90)),
            "mean_service_s": float(np.mean((finish - start)[admitted]))}


def predict(run: dict, cal: dict, servers: int, slo_s: float, seed: int = SEED) -> dict:
    """The models' outcome of one run (queueing formulas and the replaying simulator)."""
    from helpers.sim.queue import simulate_multi_server

    mu = 1.0 / cal["mean_service_s"]
    d = max(0.0, slo_s - cal["mean_prefill_s"])
    arrival = _arr(run["arrival_s"])
    n = arrival.size
    lam = (n - 1) / float(arrival[-1] - arrival[0])
    block, att = slom.wait_slo_attainment(d, lam, mu, servers, capacity=run["capacity"],
                                          n_requests=n)
    rng = np.random.default_rng(seed)
    service = np.asarray(cal["service_s"])[rng.integers(0, len(cal["service_s"]), size=n)]
    sim = simulate_multi_server(arrival, service, servers, capacity=run["capacity"])
    sim_att = sim.wait_attainment(d)
    return {"utilization": lam / (servers * mu),
            "model_blocked_fraction": block, "model_admitted_attainment": att,
            "model_goodput_per_s": slom.goodput_per_s(lam, block, att),
            "sim_blocked_fraction": sim.blocking_fraction(),
            "sim_admitted_attainment": sim_att,
            "sim_goodput_per_s": slom.goodput_per_s(lam, sim.blocking_fraction(), sim_att)}


def admission_capacity(servers: int, mean_service_s: float, wait_budget_s: float) -> int:
    """The cap (requests inside) of the rule "reject when the predicted wait exceeds the budget".

    A request that finds ``n >= c`` inside waits for ``n - c + 1`` departures, one every
    ``mean_service_s / c`` on average; admit while that is within ``wait_budget_s``.
    """
    if servers < 1 or mean_service_s <= 0 or wait_budget_s < 0:
        raise ValueError("need servers >= 1, mean_service_s > 0 and wait_budget_s >= 0")
    return servers + max(1, int(wait_budget_s * servers / mean_service_s))


def run(device: str) -> dict:
    """Calibrate the pool, then drive every load with and without admission control."""
    s = settings()
    result = new_result(LAB, device, **s)
    c = s["servers"]
    with Pool(c, s["model"]) as pool:
        cal = calibrate(pool, s)
        slo_s = cal["mean_prefill_s"] + s["slo_service_times"] * cal["mean_service_s"]
        cap = admission_capacity(c, cal["mean_service_s"], slo_s - cal["mean_prefill_s"])
        runs = []
        plan = [(f, pol) for f in s["load_factors"] for pol in ("none", "cap")]
        for i, (factor, policy) in enumerate(progress(plan, desc="load runs", total=len(plan))):
            rate = factor * c / cal["mean_service_s"]
            r = drive(pool, s, rate, cap if policy == "cap" else None, seed=SEED + 10 + i // 2)
            r.update(factor=factor, policy=policy)
            r["measured"] = run_summary(r, slo_s)
            r["predicted"] = predict(r, cal, c, slo_s)
            runs.append(r)
    result["measurements"] = {"calibration": cal, "slo_s": slo_s, "capacity": cap,
                              "servers": c, "runs": runs, "checked": True}
    return result


#: The shipped H200-machine result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading ----------------------------------------------------------------------------------

def erlang_c_reference(servers: int, offered_load: float) -> float:
    """The book's Erlang C (:func:`helpers.models.queueing.erlang_c`)."""
    return qm.erlang_c(servers, offered_load)


def grade_erlang_c(fn, trials: int = 200, seed: int | None = None) -> Verdict:
    """Check a reader's ``fn(servers, offered_load)`` against Erlang C: the published example
    (14 servers, 10 erlangs: 0.1741319), one server (it must equal the utilization) and fresh
    random (c, a) pairs with a < c."""
    name = "Erlang C"
    cases = [(14, 10.0, "the ErlangC package's example"), (1, 0.7, "one server (M/M/1)"),
             (2, 1.6, "two servers at 80 %")]
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        c = int(rng.integers(1, 64))
        cases.append((c, float(rng.uniform(0.01, 0.995) * c), "a random case"))
    for c, a, what in cases:
        want = qm.erlang_c(c, a)
        try:
            got = float(fn(c, a))
        except Exception as exc:  # noqa: BLE001 - any failure of the reader's code is a FAIL
            return Verdict(name, "FAIL", [f"erlang_c({c}, {a:.4g}) raised "
                                          f"{type(exc).__name__}: {exc}"])
        if not (math.isfinite(got) and abs(got - want) <= 1e-6 + 1e-6 * abs(want)):
            hint = ""
            if abs(got - a / c) < 1e-9 and c > 1:
                hint = (" (that is the utilization a/c: the M/M/1 answer; with c servers an "
                        "arrival waits only when all c are busy)")
            return Verdict(name, "FAIL", [f"erlang_c({c}, {a:.4g}) = {got:.6g}, expected "
                                          f"{want:.6g} for {what}{hint}"])
    return Verdict(name, "PASS", [f"matches the ErlangC package's published example and "
                                  f"{len(cases) - 1} other cases to 1e-6"])


def main(argv=None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
