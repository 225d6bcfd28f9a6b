"""Lab runner: checkpointing under injected failures (used by ``labs/checkpointing.md``).

Two experiments, both on the CPU (the training is a small model; the lab is about processes,
files and failures, and a CUDA device, if present, is not used: the reference run on the GPU
machine uses its CPU cores):

* **kills**: a controller starts the training process
  (:mod:`helpers.labs.checkpointing_worker`) and kills it with SIGKILL at seeded random
  moments, some of them in the middle of writing a checkpoint (the worker announces each write
  once its first chunk is on disk and, in this lab, pauses there as a slow file system would).
  Each time the process is started again, resumes from the newest checkpoint whose checksum
  verifies, and goes on. The final weights are compared, by a SHA-256 of their bytes, with a
  run never interrupted (started at the same time, in parallel). After every kill the
  controller checks every checkpoint the manifest names (none may be corrupt) and records the
  partial temporary file a killed write left behind (which the next start ignores and sweeps).
* **interval**: the trade-off between checkpointing often and losing work. The runner
  measures a training step, the checkpoint cost :math:`\\delta` (serialize, write, fsync,
  rename, manifest) and the restart cost :math:`R` (verify and load the newest checkpoint)
  with :func:`helpers.bench.bench`; then it trains, in this process, with failures injected at
  an artificial mean time between failures :math:`M` (a seeded exponential clock; a failure
  throws away the in-memory state and everything since the last complete checkpoint) at
  several checkpoint intervals around Young's and Daly's optimum, and records each run's wall
  time with the monotonic clock (the quantity measured is the whole run). Goodput is the
  failure-free, checkpoint-free time of the same steps over that wall time, to be compared
  with :func:`helpers.models.checkpointing.goodput` and with the spread that
  :func:`helpers.sim.failures.simulate_job` predicts for single runs.

Plus a demonstration that the checksum catches what the atomic write prevents
(:func:`measure_kill_in_place`): a writer that overwrites a checkpoint in place, killed halfway,
leaves a file that the store detects and skips; the atomic writer killed at the same point
leaves the old checkpoint intact.

Run as ``python -m helpers.labs.checkpointing --out DIR [--size small|full]``.

The page's grader, :func:`grade_atomic_save`, is kept here; its harness
(:func:`~helpers.labs.checkpointing_worker.kill_during_write`, a SIGKILL halfway through a
write in a forked child) and the in-place demonstration live beside the training process in
:mod:`helpers.labs.checkpointing_worker` and are re-exported here. What the page computes from
a result (its table rows and prose numbers) is in :mod:`helpers.labs.analysis.checkpointing`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from helpers.bench import bench
from helpers.book import SRC
from helpers.labs import core
from helpers.labs.core import lab_device, new_result, progress, run_cli, summarize
from helpers.labs.checkpointing_worker import (atomic_save_reference,
                                               kill_during_write, measure_kill_in_place)
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import checkpointing as ck

__all__ = ["LAB", "TOLERANCE", "settings", "measure_kills", "measure_costs", "measure_interval",
           "measure_kill_in_place", "run", "reference_or_none", "kill_during_write",
           "grade_atomic_save", "atomic_save_reference", "measure_one", "main"]

#: The tolerance of the goodput predictions (their ``why`` says where it comes from).
TOLERANCE = 0.15

#: The lab's record: its page, size table, benchmark settings and claims (the step, checkpoint and
#: restart costs are timed with :func:`helpers.bench.bench` on the CPU for ``budget_s``).
LAB = core.Lab(
    "checkpointing", pages=("labs/checkpointing.md",),
    sizes={"steps": (200, 900), "interval_steps": (20, 30), "kills": (6, 30),
           "write_pause_s": (0.25, 0.25),
           "work_s": (1.0, 4.0),  # useful work of each failure-injected run
           "failures_per_run": (12, 30),  # sets the artificial M = work / this
           "repeats": (1, 2), "sim_runs": (400, 1000)},
    budget_s=(0.4, 1.5),
    claims=(
        Claim("goodput_run_costs", "goodput of a failure-injected run (mean of its repeats)",
              "prediction", model="helpers.models.checkpointing.goodput",
              ceilings="the mean step, checkpoint and restart times each failure-injected run "
                       "paid (timed around each in the same run); the run's artificial MTBF",
              tolerance=TOLERANCE,
              why="the costs are the run's own, so what is left is the scatter of a run with "
                  "a few dozen exponential failures: the simulator's 5-95 % band for one run "
                  "reaches about +-17 % at the longest interval, about +-12 % for the mean "
                  "of two repeats; 15 % covers it"),
    ))
SEED = 2026


def settings() -> dict:
    """The sizes of this run (small on a CPU, full on the reference machine)."""
    size = LAB.size
    return {
        "steps": size("steps"),
        "interval_steps": size("interval_steps"),
        "kills": size("kills"),
        "write_kill_fraction": 0.4,
        "write_pause_s": size("write_pause_s"),
        "keep": 2,
        "work_s": size("work_s"),
        "failures_per_run": size("failures_per_run"),
        "min_mtbf_over_checkpoint": 30.0,  # ... unless M would fall below this many deltas
        "interval_factors": [0.25, 0.5, 1.0, 2.0, 4.0],  # times Daly's optimum
        "repeats": size("repeats"),
        "sim_runs": size("sim_runs"),
        "train_device": "cpu",
    }


# --- the kill experiment --------------------------------------------------------------------

def _worker_cmd(directory: Path, s: dict, pause: bool) -> list[str]:
    cmd = [sys.executable, "-m", "helpers.labs.checkpointing_worker", "--dir", str(directory),
           "--steps", str(s["steps"]), "--interval", str(s["interval_steps"]),
           "--keep", str(s["keep"])]
    if pause:
        cmd += ["--write-pause-s", str(s["write_pause_s"])]
    return cmd


def _env() -> dict:
    src = str(SRC)
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else ""),
            "OMP_NUM_THREADS": "1"}


def _start(cmd: list[str]) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1, env=_env())


def _check_store(directory: Path) -> tuple[int, int]:
    """(checkpoints the manifest names, how many of them fail their checksum)."""
    from helpers.checkpoint import CheckpointStore

    store = CheckpointStore(directory)
    entries = store.entries()
    bad = sum(store.verify(e) is None for e in entries) + len(store.corrupt)
    return len(entries), bad


def measure_kills(s: dict | None = None, seed: int = SEED) -> dict:
    """Kill the training process ``s["kills"]`` times, restart it each time, compare digests."""
    from helpers.checkpoint import CheckpointStore

    s = s or settings()
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="labckpt-") as tmp:
        ref_dir, run_dir = Path(tmp) / "uninterrupted", Path(tmp) / "killed"
        reference = _start(_worker_cmd(ref_dir, s, pause=False))  # in parallel, never killed
        lives, kills_left = [], s["kills"]
        bar = progress(range(s["kills"] + 1), desc="kills", total=s["kills"] + 1)
        final_digest = None
        while True:
            kind = None
            if kills_left > 0:
                kind = "write" if rng.random() < s["write_kill_fraction"] else "step"
            target = (int(rng.integers(1, 3)) if kind == "write"
                      else int(rng.integers(1, 2 * s["interval_steps"] + 1)))
            t0 = time.monotonic()
            proc = _start(_worker_cmd(run_dir, s, pause=(kind == "write")))
            life = {"kind": kind or "none", "target": target, "resumed_step": None,
                    "last_step": None, "saved": [], "killed": False}
            writes_seen, ready_s = 0, None
            for line in proc.stdout:
                words = line.split()
                if not words:
                    continue
                if words[0] == "resumed":
                    life["resumed_step"] = int(words[1])
                    life["corrupt_skipped"] = int(words[2])
                    life["debris_swept"] = int(words[3])
                    ready_s = time.monotonic() - t0
                elif words[0] == "step":
                    life["last_step"] = int(words[1])
                    if kind == "step" and int(words[1]) - life["resumed_step"] >= target:
                        proc.send_signal(signal.SIGKILL)
                        life["killed"] = True
                        break
                elif words[0] == "writing":
                    writes_seen += 1
                    if kind == "write" and writes_seen >= target:
                        proc.send_signal(signal.SIGKILL)
                        life["killed"] = True
                        life["write_step"], life["write_total_bytes"] = int(words[1]), int(words[3])
                        break
                elif words[0] == "saved":
                    life["saved"].append(int(words[1]))
                elif words[0] == "done":
                    final_digest = words[1]
            proc.wait()
            err = proc.stderr.read()
            proc.stdout.close()
            proc.stderr.close()
            if not life["killed"] and proc.returncode != 0:
                raise RuntimeError(f"the training process failed (exit {proc.returncode}):\n{err}")
            life["returncode"] = proc.returncode
            life["start_to_ready_s"] = ready_s
            if life["killed"]:
                kills_left -= 1
                store = CheckpointStore(run_dir)
                temps = store.temp_files()
                life["temp_files_left"] = len(temps)
                life["temp_bytes_left"] = [p.stat().st_size for p in temps]
                n, bad = _check_store(run_dir)
                life["checkpoints_named"], life["corrupt_after_kill"] = n, bad
            lives.append(life)
            bar.update(1)
            if not life["killed"]:
                break
        bar.close()
        out, _ = reference.communicate()
        if reference.returncode != 0:
            raise RuntimeError(f"the uninterrupted run failed (exit {reference.returncode})")
        ref_digest = out.split()[-1]
    killed = [l for l in lives if l["killed"]]
    write_kills = [l for l in killed if l["kind"] == "write"]
    recomputed = 0
    for prev, nxt in zip(lives, lives[1:]):
        recomputed += max(0, (prev["last_step"] or prev["resumed_step"]) - nxt["resumed_step"])
    return {
        "lives": lives,
        "kills": len(killed),
        "kills_during_write": len(write_kills),
        "write_kills_leaving_partial_file": sum(
            1 for l in write_kills
            if l["temp_files_left"] and max(l["temp_bytes_left"]) < l["write_total_bytes"]),
        "corrupt_checkpoints_found": sum(l["corrupt_after_kill"] for l in killed),
        "corrupt_checkpoints_used": 0 if final_digest == ref_digest else None,
        "corrupt_skipped_on_resume": sum(l.get("corrupt_skipped", 0) for l in lives),
        "debris_swept": sum(l.get("debris_swept", 0) for l in lives),
        "steps": s["steps"],
        "steps_recomputed": recomputed,
        "digest_uninterrupted": ref_digest,
        "digest_killed": final_digest,
        "bit_identical": final_digest == ref_digest,
        "restart_to_ready_s": [l["start_to_ready_s"] for l in lives[1:]
                               if l["start_to_ready_s"] is not None],
    }


# --- costs and the interval trade-off -------------------------------------------------------

def measure_costs(directory: Path) -> dict:
    """Median times of a training step, a checkpoint save and a restart (verify + load)."""
    from helpers.checkpoint import CheckpointStore
    from helpers.labs.checkpointing_worker import Trainer

    trainer = Trainer()
    store = CheckpointStore(directory, keep=2)
    budget = LAB.budget()
    step = bench(trainer.step, device="cpu", name="train_step", budget_s=budget, env=False)
    save = bench(lambda: store.save(trainer.step_no, trainer.state()), device="cpu",
                 name="checkpoint_save", budget_s=budget, env=False)
    fresh = None

    def restart():  # what a restart does: build the process's objects, verify, load
        nonlocal fresh
        fresh = Trainer()
        got = store.load_latest()
        fresh.load(got[1])
        return got[0]

    want = trainer.step_no
    load = bench(restart, device="cpu", name="restart_load", budget_s=budget, env=False,
                 check=lambda step_no: _require(step_no == want, "restart loaded the wrong step"))
    _require(fresh.digest() == trainer.digest(), "a restored model differs from the saved one")
    return {"step": summarize(step), "checkpoint": summarize(save), "restart": summarize(load),
            "checkpoint_bytes": store.entries()[-1]["bytes"]}


def _require(ok: bool, what: str) -> None:
    if not ok:
        raise AssertionError(what)


def _run_with_failures(directory: Path, steps: int, interval: int, mtbf_s: float,
                       rng: np.random.Generator) -> dict:
    """Train ``steps`` steps checkpointing every ``interval``, failures every ~``mtbf_s``.

    Besides the run's wall time it records the time spent in steps, checkpoints and restarts
    (monotonic clock around each), so that the model can also be evaluated with the costs this
    very run paid (a shared machine's speed drifts between the cost measurement and the run).
    """
    from helpers.checkpoint import CheckpointStore
    from helpers.labs.checkpointing_worker import Trainer

    clock = time.monotonic
    store = CheckpointStore(directory, keep=2)
    trainer = Trainer()
    store.save(0, trainer.state())  # the starting point, before the clock starts
    failures = during_checkpoint = recomputed = saves = restarts = executed = 0
    step_time = save_time = restart_time = 0.0
    t0 = clock()
    next_fail = t0 + rng.exponential(mtbf_s)
    last_good = 0
    while trainer.step_no < steps:
        a = clock()
        trainer.step()
        b = clock()
        step_time += b - a
        executed += 1
        lost_save = False
        if b < next_fail and (trainer.step_no % interval == 0 or trainer.step_no == steps):
            store.save(trainer.step_no, trainer.state())
            c = clock()
            save_time += c - b
            saves += 1
            if c >= next_fail:  # it struck during the write: the checkpoint never completed
                store._write_manifest([e for e in store.entries()
                                       if e["step"] != trainer.step_no])
                # nor its file (the store would find it by its header and resume from it)
                store.path_for(trainer.step_no).unlink()
                lost_save = True
                during_checkpoint += 1
            else:
                last_good = trainer.step_no
        if clock() >= next_fail or lost_save:
            while True:  # fail, restart from the last good checkpoint; it may fail again
                failures += 1
                recomputed += trainer.step_no - last_good
                a = clock()
                next_fail = a + rng.exponential(mtbf_s)
                trainer = Trainer()
                step, state = store.load_latest()
                trainer.load(state)
                restart_time += clock() - a
                restarts += 1
                if step != last_good:
                    raise AssertionError(f"restarted at step {step}, expected {last_good}")
                if clock() < next_fail:
                    break
    wall = clock() - t0
    if store.corrupt:
        raise AssertionError(f"corrupt checkpoints met: {store.corrupt}")
    mean_step = step_time / executed
    return {"wall_s": wall, "failures": failures, "failures_during_checkpoint": during_checkpoint,
            "steps_recomputed": recomputed, "checkpoints": saves,
            "run_step_s": mean_step, "run_checkpoint_s": save_time / max(saves, 1),
            "run_restart_s": restart_time / max(restarts, 1) if restarts else None,
            "work_s": steps * mean_step, "digest": trainer.digest()}


def measure_interval(directory: Path, costs: dict, s: dict | None = None,
                     seed: int = SEED) -> dict:
    """Goodput at several checkpoint intervals under failures at an artificial MTBF."""
    from helpers.sim.failures import simulate_job

    s = s or settings()
    step_s = costs["step"]["median_s"]
    delta = costs["checkpoint"]["median_s"]
    restart = costs["restart"]["median_s"]
    steps = max(10, int(round(s["work_s"] / step_s)))
    # the artificial MTBF: about failures_per_run failures per run, but never so short beside a
    # checkpoint that no interval can make progress (a slow disk would stall the run)
    mtbf = max(steps * step_s / s["failures_per_run"], s["min_mtbf_over_checkpoint"] * delta)
    work = steps * step_s
    tau_daly = ck.daly_interval_s(delta, mtbf)
    rng = np.random.default_rng(seed + 1)
    points, digests = [], set()
    todo = [(f, r) for f in s["interval_factors"] for r in range(s["repeats"])]
    for factor, rep in progress(todo, desc="intervals"):
        k = max(1, int(round(factor * tau_daly / step_s)))
        sub = Path(directory) / f"interval-{k}-{rep}"
        got = _run_with_failures(sub, steps, k, mtbf, rng)
        digests.add(got["digest"])
        # the model with the costs measured beforehand, and with the costs this run paid
        tau = k * step_s
        run_tau = k * got["run_step_s"]
        run_delta = got["run_checkpoint_s"]
        run_restart = got["run_restart_s"] if got["run_restart_s"] is not None else restart
        sim = simulate_job(work_s=got["work_s"], interval_s=run_tau, checkpoint_s=run_delta,
                           restart_s=run_restart, mtbf_s=mtbf, n_runs=s["sim_runs"],
                           seed=seed + k + rep)
        g_runs = got["work_s"] / sim.wall_s
        points.append({"factor": factor, "repeat": rep, "interval_steps": k, "interval_s": tau,
                       "run_interval_s": run_tau, **got,
                       "goodput": got["work_s"] / got["wall_s"],
                       "model_goodput": ck.goodput(tau, delta, restart, mtbf),
                       "model_goodput_run_costs": ck.goodput(run_tau, run_delta, run_restart,
                                                             mtbf),
                       "sim_goodput_p05": float(np.quantile(g_runs, 0.05)),
                       "sim_goodput_p95": float(np.quantile(g_runs, 0.95)),
                       "sim_mean_goodput": sim.mean_goodput})
    if len(digests) != 1:
        raise AssertionError("runs with failures ended with different weights")
    return {"step_s": step_s, "checkpoint_s": delta, "restart_s": restart, "mtbf_s": mtbf,
            "steps": steps, "work_s": work, "young_interval_s": ck.young_interval_s(delta, mtbf),
            "daly_interval_s": tau_daly, "points": points, "final_digest": digests.pop()}


# --- run ------------------------------------------------------------------------------------

def run(device: str | None = None) -> dict:
    """Both experiments and the in-place demonstration; the training stays on the CPU."""
    device = device or lab_device()
    s = settings()
    result = new_result(LAB, device, **s,
                        note="training, checkpoints and kills run on the CPU (one thread per "
                             "process) on every tier; wall times of failure-injected runs use "
                             "the monotonic clock")
    m = result["measurements"]
    m["kills"] = measure_kills(s)
    with tempfile.TemporaryDirectory(prefix="labckpt-") as tmp:
        m["costs"] = measure_costs(Path(tmp) / "costs")
        m["interval"] = measure_interval(Path(tmp), m["costs"], s)
    m["kill_in_place"] = measure_kill_in_place()
    return result


#: The reference result measured on the GPU machine, or None (with a one-line note) before it
#: is measured.
reference_or_none = LAB.reference


def measure_one(interval_steps: int, result: dict, seed: int = 1) -> dict:
    """One more failure-injected run at ``interval_steps``, with the artificial MTBF and the
    work of ``result``'s interval experiment (the page's predict-then-measure exercise)."""
    if not (isinstance(interval_steps, int) and interval_steps >= 1):
        raise ValueError(f"interval_steps must be an int >= 1, got {interval_steps!r}")
    iv = result["measurements"]["interval"]
    with tempfile.TemporaryDirectory(prefix="labckpt-") as tmp:
        got = _run_with_failures(Path(tmp), iv["steps"], interval_steps, iv["mtbf_s"],
                                 np.random.default_rng(seed))
    got["goodput"] = got["work_s"] / got["wall_s"]
    got["model_goodput"] = ck.goodput(interval_steps * got["run_step_s"],
                                      got["run_checkpoint_s"],
                                      got["run_restart_s"] or iv["restart_s"], iv["mtbf_s"])
    return got


# --- grading ----------------------------------------------------------------------------------

def grade_atomic_save(save: Callable[[str, bytes], object], trials: int = 2) -> Verdict:
    """Grade a reader's ``save(path, data)``: it must write ``data`` to ``path`` so that a
    SIGKILL halfway through leaves the old contents intact, and it must fsync the data."""
    name = "atomic save"
    rng = np.random.default_rng()
    calls = {"fsync": 0}
    real_fsync = os.fsync

    def counting_fsync(fd):
        calls["fsync"] += 1
        return real_fsync(fd)

    with tempfile.TemporaryDirectory(prefix="labckpt-grade-") as tmp:
        for trial in range(trials):
            path = Path(tmp) / f"ckpt-{trial}.bin"
            old = rng.bytes(int(rng.integers(50_000, 200_000)))
            new = rng.bytes(int(rng.integers(50_000, 200_000)))
            os.fsync = counting_fsync
            try:
                save(str(path), old)
                if path.read_bytes() != old:
                    return Verdict(name, "FAIL", ["a save to a new path did not leave exactly the "
                                                  "bytes given in the file"])
                save(str(path), new)
                if path.read_bytes() != new:
                    return Verdict(name, "FAIL", ["overwriting an existing file did not leave "
                                                  "exactly the new bytes"])
                save(str(path), old)
            except Exception as exc:
                return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
            finally:
                os.fsync = real_fsync
            if calls["fsync"] == 0:
                return Verdict(name, "FAIL", ["never called os.fsync: after a power loss the "
                                              "file may hold nothing of what was written"])
            got = kill_during_write(save, path, new)
            if not got["killed"]:
                return Verdict(name, "FAIL", ["the save never wrote its bytes through open() or "
                                              "os.write, so it could not be interrupted; write "
                                              "them with open(..., 'wb')"])
            if got["bytes"] is None:
                return Verdict(name, "FAIL", ["a SIGKILL halfway through the write left no file "
                                              "at the path: the old checkpoint was removed "
                                              "before the new one was complete"])
            if got["bytes"] != old:
                return Verdict(name, "FAIL", [
                    "a SIGKILL halfway through the write left the file holding bytes that are "
                    "neither the old contents nor the new: a restart would read a corrupt "
                    "checkpoint"])
    return Verdict(name, "PASS", [f"on {trials} random payloads the bytes arrive exactly, "
                                  "os.fsync is called, and a SIGKILL halfway through the write "
                                  "leaves the old file intact"])


def main(argv: list[str] | None = None):
    return run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
