"""Tests of helpers.profiling.trace: the profile reader and its models.

Three ways: a synthetic GPU trace built here whose gaps, kernels and launches are known by
construction (the oracle is the hand-built truth); a real trace recorded in the test on this
CPU with torch.profiler (the operators found are the operators issued); limits (empty trace,
one kernel) and the ValueErrors. The published-number analogue: NVML's definition of
utilisation reproduced on a trace whose busy fraction is known.
"""

from __future__ import annotations

import gzip
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.profiling import trace as tr

US = 1e-6


# --- a synthetic GPU trace: two decode steps, each ending with aten::item ----------------------

def _x(name, cat, ts, dur, *, pid=100, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid,
            "args": args}


def _step(t0, corr0):
    """One step at host time t0 (µs): three launches, three kernels, an item() with a sync."""
    ev = []
    # kernel (start, dur) on stream 7, launched at host t0 + 0, 10, 20 (5 µs each)
    kernels = [("gemm", t0 + 6, 30), ("add", t0 + 36, 2), ("add", t0 + 38, 2)]
    for i, (name, ks, kd) in enumerate(kernels):
        c = corr0 + i
        ev.append(_x("cudaLaunchKernel", "cuda_runtime", t0 + 10 * i, 5, correlation=c))
        ev.append(_x(name, "kernel", ks, kd, pid=0, tid=7, stream=7, correlation=c, device=0))
        ev.append({"ph": "s", "cat": "ac2g", "id": c, "ts": t0 + 10 * i, "pid": 100, "tid": 1,
                   "name": "ac2g"})
        ev.append({"ph": "f", "cat": "ac2g", "id": c, "ts": ks, "pid": 0, "tid": 7,
                   "name": "ac2g", "bp": "e"})
    c = corr0 + 3
    ev += [_x("aten::item", "cpu_op", t0 + 30, 40),
           _x("aten::_local_scalar_dense", "cpu_op", t0 + 31, 38),
           _x("cudaMemcpyAsync", "cuda_runtime", t0 + 32, 3, correlation=c),
           _x("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", t0 + 40, 1, pid=0, tid=7,
              stream=7, correlation=c),
           _x("cudaStreamSynchronize", "cuda_runtime", t0 + 36, 32)]
    return ev


def synthetic(n_steps=2, period=120):
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}]
    for k in range(n_steps):
        ev += _step(1000 + k * period, 10 * k + 1)
    return {"schemaVersion": 1, "traceEvents": ev}


class TestSyntheticGpuTrace:
    t = tr.parse_trace(synthetic())

    def test_events_and_links(self):
        assert self.t.has_device
        assert len(self.t.of("kernel")) == 6 and len(self.t.of("memcpy")) == 2
        assert len(self.t.flows) == 8           # 6 launches + 2 memcpys, by correlation
        assert self.t.meta["n_flow_events"] == 6
        assert self.t.events[0].start_s == 0.0  # times from the first event
        # window: first launch (1000) to the end of the last item() (1120 + 70)
        assert self.t.wall_s == pytest.approx(190 * US)

    def test_top_kernels(self):
        top = tr.top_ops(self.t, 2)
        assert [o.name for o in top] == ["gemm", "add"]
        assert top[0].count == 2 and top[0].total_s == pytest.approx(60 * US)
        assert top[1].count == 4 and top[1].mean_s == pytest.approx(2 * US)
        work = 2 * (30 + 2 + 2 + 1)
        assert top[0].share == pytest.approx(60 / work)

    def test_busy_and_utilization(self):
        busy = 2 * 35 * US  # 6..41 in each step
        assert tr.busy_time_s(self.t) == pytest.approx(busy)
        assert tr.utilization(self.t) == pytest.approx(busy / (190 * US))

    def test_gap_between_steps_is_attributed_to_the_sync(self):
        gaps = tr.idle_gaps(self.t, 10 * US)
        assert len(gaps) == 1
        g = gaps[0]
        assert g.start_s == pytest.approx(41 * US) and g.dur_s == pytest.approx(85 * US)
        assert g.sync == "aten::item"
        assert g.host[:3] == ("aten::item", "aten::_local_scalar_dense", "cudaStreamSynchronize")
        # a threshold above the gap finds nothing; at zero the 0-length joins are not gaps
        assert tr.idle_gaps(self.t, 100 * US) == []
        assert len(tr.idle_gaps(self.t, 0.0)) == 1

    def test_launches(self):
        L = tr.launch_stats(self.t)
        assert L.n == 8
        assert L.median_launch_s == pytest.approx(5 * US)
        # kernels: 30, 2, 2 (x2) and memcpys 1 (x2): 6 of 8 shorter than their 5 µs (or 3 µs) call
        assert L.frac_shorter_than_launch == pytest.approx(6 / 8)
        assert min(x.delay_s for x in L.launches) == pytest.approx(6 * US)

    def test_a_graph_launch_is_compared_with_all_its_kernels(self):
        ev = [_x("cudaGraphLaunch", "cuda_runtime", 0, 8, correlation=5)]
        ev += [_x(f"k{i}", "kernel", 10 + 3 * i, 2, pid=0, tid=7, stream=7, correlation=5)
               for i in range(5)]
        t = tr.parse_trace(ev)
        assert t.flows == {5: (0, (1, 2, 3, 4, 5))}
        L = tr.launch_stats(t)
        assert L.n == 1 and L.launches[0].n_kernels == 5
        assert L.launches[0].kernel_s == pytest.approx(10 * US)   # 5 x 2 µs > the 8 µs call
        assert L.frac_shorter_than_launch == 0
        assert L.launches[0].delay_s == pytest.approx(10 * US)

    def test_blocked_time(self):
        # aten::item (40 µs) holds the sync; nested calls are counted once
        assert tr.blocked_time_s(self.t) == pytest.approx(2 * 40 * US)

    def test_finding_names_the_sync_and_predicts_from_the_model(self):
        r = tr.analyse(self.t)
        f = tr.finding(r)
        assert f.cause == "host-sync"
        assert "aten::item" in f.evidence and "aten::item" in f.explanation
        expect = tr.sync_removed_time_s(wall_s=190 * US, blocked_s=80 * US, busy_s=70 * US)
        assert f.predicted_wall_s == pytest.approx(expect) == pytest.approx(110 * US)
        assert f.predicted_speedup == pytest.approx(190 / 110)
        for part in ("Symptom:", "Evidence:", "Cause:", "Prediction:"):
            assert part in f.text()

    def test_fixed_version_is_found_launch_bound_not_sync_bound(self):
        # Same kernels, but the host launches step 2 without waiting: no item(), no gap.
        ev = [e for e in synthetic(period=40)["traceEvents"]
              if e.get("name") not in ("aten::item", "aten::_local_scalar_dense",
                                       "cudaStreamSynchronize")]
        r = tr.analyse(tr.parse_trace(ev))
        assert r.sync_gap_s == 0 and r.blocked_s == 0
        assert tr.finding(r).cause == "launch-bound"

    def test_gzip_file_roundtrip(self, tmp_path):
        p = tmp_path / "t.json.gz"
        with gzip.open(p, "wt") as fh:
            json.dump(synthetic(), fh)
        t2 = tr.load_trace(p)
        assert t2.events == self.t.events and t2.meta["path"] == str(p)


# --- a real trace recorded on this CPU --------------------------------------------------------

@pytest.fixture(scope="module")
def cpu_trace(tmp_path_factory):
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, record_function

    x = torch.randn(32, 32)
    n_add, n_steps = 7, 3
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(n_steps):
            with record_function("step"):
                for _ in range(n_add):
                    x = torch.add(x, 1.0)
                float(x.sum().item())
    path = tmp_path_factory.mktemp("trace") / "cpu.json"
    prof.export_chrome_trace(str(path))
    return tr.load_trace(path), n_add, n_steps


class TestRealCpuTrace:
    def test_ops_found_equal_ops_issued(self, cpu_trace):
        t, n_add, n_steps = cpu_trace
        assert not t.has_device
        names = [e.name for e in t.of("cpu_op")]
        assert names.count("aten::add") == n_add * n_steps
        assert names.count("aten::item") == n_steps
        assert len(tr.step_times_s(t)) == n_steps

    def test_cpu_trace_analyses_operators_and_says_so(self, cpu_trace):
        t, n_add, n_steps = cpu_trace
        r = tr.analyse(t, top_n=50)
        assert r.subject.startswith("CPU operators")
        by = {o.name: o for o in r.top}
        assert by["aten::add"].count == n_add * n_steps
        assert sum(o.share for o in r.top) == pytest.approx(1.0)
        # self times: the sum of the top-level operators' durations equals the sum of all
        # self times (nothing counted twice, nothing lost)
        top_level = sum(e.dur_s for e in tr.work_events(t))
        assert sum(o.total_s for o in r.top) == pytest.approx(top_level, rel=1e-6)
        assert r.blocked_s == 0 and r.sync_gap_s == 0 and r.launches.n == 0
        assert 0 < r.utilization <= 1
        assert tr.finding(r).cause in ("cpu-overhead", "kernel-bound")


# --- limits and invariants --------------------------------------------------------------------

def test_empty_trace():
    t = tr.parse_trace({"traceEvents": []})
    assert t.wall_s == 0 and not t.has_device and tr.utilization(t) == 0
    assert tr.top_ops(t) == [] and tr.idle_gaps(t) == [] and tr.launch_stats(t).n == 0
    with pytest.raises(ValueError):
        tr.finding(tr.analyse(t))


def test_cpu_trace_with_time_between_operators_is_interpreter_overhead():
    # three operators of 10 µs with 20 µs of nothing between them: busy 30 of 70 µs
    ev = [_x("aten::add", "cpu_op", 30 * i, 10) for i in range(3)]
    r = tr.analyse(tr.parse_trace(ev))
    assert r.busy_s == pytest.approx(30 * US) and r.wall_s == pytest.approx(70 * US)
    assert len(r.gaps) == 2 and r.gap_s == pytest.approx(40 * US)
    f = tr.finding(r)
    assert f.cause == "cpu-overhead" and f.predicted_wall_s == pytest.approx(30 * US)


def test_one_kernel_is_fully_busy_and_kernel_bound():
    t = tr.parse_trace([_x("k", "kernel", 5, 20, pid=0, tid=7, stream=7)])
    r = tr.analyse(t)
    assert r.utilization == 1.0 and r.gaps == () and r.top[0].share == 1.0
    f = tr.finding(r)
    assert f.cause == "kernel-bound" and f.predicted_wall_s == pytest.approx(10 * US)


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(1, 50)), min_size=1, max_size=30),
       st.integers(1, 40))
def test_busy_plus_gaps_fill_the_device_span(kernels, threshold):
    """On one stream, busy time + gaps above the threshold + the small gaps = first to last."""
    ev = [_x(f"k{i}", "kernel", s, d, pid=0, tid=7, stream=7) for i, (s, d) in enumerate(kernels)]
    t = tr.parse_trace(ev)
    span = (max(s + d for s, d in kernels) - min(s for s, _ in kernels)) * US
    busy = tr.busy_time_s(t)
    gaps = tr.idle_gaps(t, 0.0)
    assert busy + sum(g.dur_s for g in gaps) == pytest.approx(span)
    big = tr.idle_gaps(t, threshold * US)
    assert all(g.dur_s > threshold * US for g in big)
    assert {g.start_s for g in big} <= {g.start_s for g in gaps}
    assert 0 < tr.utilization(t) <= 1


# --- the models --------------------------------------------------------------------------------

class TestModels:
    def test_launch_bound_limits(self):
        assert tr.launch_bound_time_s(n_kernels=0, launch_s=1e-6, kernel_s=1e-6) == 0
        # slower side sets the pace, symmetric in its two times
        assert (tr.launch_bound_time_s(n_kernels=10, launch_s=5e-6, kernel_s=2e-6)
                == tr.launch_bound_time_s(n_kernels=10, launch_s=2e-6, kernel_s=5e-6))
        assert tr.launch_bound_time_s(n_kernels=3, launch_s=1e-6, kernel_s=4e-6,
                                      sync_gaps_s=2e-6) == pytest.approx(14e-6)

    def test_launch_bound_matches_the_synthetic_oracle(self):
        # Launching every 10 µs kernels of 2 µs: the device starts one per launch interval.
        n, period, kd = 20, 10, 2
        ev = [_x("k", "kernel", 8 + period * i, kd, pid=0, tid=7, stream=7) for i in range(n)]
        t = tr.parse_trace(ev)
        span = t.wall_s + (period - kd) * US  # the last interval ends at the next launch
        assert span == pytest.approx(tr.launch_bound_time_s(n_kernels=n, launch_s=period * US,
                                                            kernel_s=kd * US))
        assert tr.utilization(t) * t.wall_s == pytest.approx(n * kd * US)

    def test_nvml_definition_reproduced(self):
        # NVML: percent of the sample period during which one or more kernels was executing.
        # Two overlapping kernels on two streams count once.
        ev = [_x("a", "kernel", 0, 40, pid=0, tid=7, stream=7),
              _x("b", "kernel", 20, 40, pid=0, tid=8, stream=8),
              _x("c", "kernel", 90, 10, pid=0, tid=7, stream=7)]
        t = tr.parse_trace(ev)
        assert tr.utilization(t) == pytest.approx(tr.gpu_utilization(70e-6, 100e-6)) == 0.7

    def test_sync_removed_bounds(self):
        assert tr.sync_removed_time_s(wall_s=1.0, blocked_s=0.0, busy_s=0.5) == 1.0
        assert tr.sync_removed_time_s(wall_s=1.0, blocked_s=0.9, busy_s=0.5) == 0.5

    @pytest.mark.parametrize("kw", [
        dict(n_kernels=-1, launch_s=1e-6, kernel_s=1e-6),
        dict(n_kernels=1, launch_s=0.0, kernel_s=1e-6),
        dict(n_kernels=1, launch_s=1e-6, kernel_s=math.nan),
        dict(n_kernels=1, launch_s=1e-6, kernel_s=1e-6, sync_gaps_s=-1.0)])
    def test_launch_bound_errors(self, kw):
        with pytest.raises(ValueError):
            tr.launch_bound_time_s(**kw)

    @pytest.mark.parametrize("busy, wall", [(-1e-3, 1.0), (2.0, 1.0), (0.5, 0.0)])
    def test_utilization_errors(self, busy, wall):
        with pytest.raises(ValueError):
            tr.gpu_utilization(busy, wall)

    def test_sync_removed_errors(self):
        with pytest.raises(ValueError, match="blocked_s"):
            tr.sync_removed_time_s(wall_s=1.0, blocked_s=2.0, busy_s=0.5)


# --- malformed input ---------------------------------------------------------------------------

@pytest.mark.parametrize("obj", [
    {"events": []},                                  # no traceEvents
    {"traceEvents": "x"},                            # not a list
    [42],                                            # an event that is not an object
    [{"ph": "X", "ts": 0, "dur": 1}],                # no name
    [{"ph": "X", "name": "k", "ts": "soon", "dur": 1}],
    [{"ph": "X", "name": "k", "ts": 0, "dur": -1}],
    [{"ph": "X", "name": "k", "ts": math.inf, "dur": 1}],
])
def test_malformed_traces_raise(obj):
    with pytest.raises(ValueError):
        tr.parse_trace(obj)


def test_unreadable_files_raise(tmp_path):
    with pytest.raises(ValueError, match="existing"):
        tr.load_trace(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON trace"):
        tr.load_trace(bad)


@pytest.mark.parametrize("n", [0, -3, 1.5])
def test_top_n_must_be_a_positive_integer(n):
    with pytest.raises(ValueError):
        tr.top_ops(tr.parse_trace([]), n)


# --- the reader against a simulated host and device --------------------------------------------

def _trace_of_schedule(sched):
    """Chrome events for a simulated run: launches linked to kernels, syncs as blocking calls."""
    ev, corr = [], 0
    launches = [(a, b) for a, b, lab in sched.host if lab == "launch"]
    for (a, b), (ka, kb, _) in zip(launches, sched.device):
        corr += 1
        ev.append(_x("cudaLaunchKernel", "cuda_runtime", a * 1e6, (b - a) * 1e6,
                     correlation=corr))
        ev.append(_x("k", "kernel", ka * 1e6, (kb - ka) * 1e6, pid=0, tid=7, stream=7,
                     correlation=corr))
    for a, b, lab in sched.host:
        if lab == "sync":
            ev.append(_x("cudaStreamSynchronize", "cuda_runtime", a * 1e6, (b - a) * 1e6))
    return tr.parse_trace(ev)


@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 20), st.integers(1, 20),
       st.integers(0, 40))
def test_sync_fix_prediction_is_a_lower_bound_on_the_simulated_fix(steps, k, launch, kern, py):
    from helpers.figures.profiling import schedule

    kw = dict(n_steps=steps, kernels_per_step=k, launch_s=launch * US, kernel_s=kern * US,
              python_s=py * US)
    flawed, fixed = schedule(sync_every_step=True, **kw), schedule(sync_every_step=False, **kw)
    t = _trace_of_schedule(flawed)
    # the reader recovers the simulation: kernels, busy time, blocked time
    assert len(t.of("kernel")) == steps * k and tr.launch_stats(t).n == steps * k
    assert tr.busy_time_s(t) == pytest.approx(steps * k * kern * US)
    blocked = sum(b - a for a, b, lab in flawed.host if lab == "sync")
    assert tr.blocked_time_s(t) == pytest.approx(blocked, abs=1e-12)
    # the host-only work (python + launches) and the device work both bound the fixed run
    pred = tr.sync_removed_time_s(wall_s=t.wall_s, blocked_s=tr.blocked_time_s(t),
                                  busy_s=tr.busy_time_s(t))
    assert pred <= fixed.end_s * (1 + 1e-9)
    assert fixed.end_s <= flawed.end_s * (1 + 1e-9)
