"""Tests of helpers.bench.timing.

* The CPU path, completely. No assertion depends on the machine being idle: the logic (what
  is timed, how repetitions are counted and sized) runs on a fake clock that moves only when
  the work "sleeps" on it, so every duration is exact; real sleeps give only lower bounds
  (``time.sleep`` never undersleeps, and a busy machine only adds time); a real hardware
  effect compares the fastest repetitions, which load cannot make faster.
* The CUDA path's logic on a CPU: ``torch.cuda.Event``, ``synchronize`` and
  ``current_stream`` are replaced by a faithful asynchronous fake built on
  :class:`helpers.bench.ToyStream`, so the code that builds the events, records them around
  each repetition, synchronizes once and converts milliseconds to seconds really runs, and
  work that only *enqueues* is timed by its device duration (exactly, on the fake clock).
* The CUDA path on a real GPU (``gpu`` marker, skipped with a reason without one).
"""

from __future__ import annotations

import gc
import json
import math
import resource
import threading
import time

import numpy as np
import pytest

from helpers.bench import timing
from helpers.bench.timing import BenchResult, CacheFlusher, bench
from helpers.bench.toy_stream import ToyEvent, ToyStream, sleep_kernel

try:
    import torch
except ImportError:  # pragma: no cover - torch is in the book's pins
    torch = None

HAS_GPU = torch is not None and torch.cuda.is_available()
gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU; torch.cuda.is_available() "
                                                   "is False on this machine")
QUICK = dict(warmup_s=0.005, budget_s=0.03, env=False)


def _exactly(value_s: float):
    # the still clock's durations (tests/bench/conftest.py) are exact to the last few bits
    return pytest.approx(value_s, rel=1e-12, abs=0)


# --------------------------------------------------------------------------------------
# CPU path
# --------------------------------------------------------------------------------------
class TestCpuPath:
    def test_result_is_consistent(self):
        r = bench(lambda: sum(range(2000)), name="sum", **QUICK)
        assert isinstance(r, BenchResult)
        assert r.name == "sum" and r.device == "cpu" and r.timer == "perf_counter"
        assert len(r.samples_s) == r.n_reps >= 5
        assert r.min_s <= r.p20_s <= r.median_s <= r.p80_s <= r.max_s
        assert r.median_s == pytest.approx(float(np.median(r.samples_s)))
        assert r.mean_s == pytest.approx(float(np.mean(r.samples_s)))
        assert r.ci_low_s <= r.median_s <= r.ci_high_s
        assert r.env == {} and not r.flushed_cache and r.flush_bytes == 0.0 and not r.checked

    def test_a_sleep_is_never_measured_shorter_than_it_is(self):
        # The real clock: a lower bound only (a busy machine oversleeps, never undersleeps).
        r = bench(lambda: time.sleep(0.002), warmup_s=0.01, budget_s=0.06, env=False)
        assert r.min_s >= 0.002 and r.first_call_s >= 0.002
        assert min(r.warmup_samples_s) >= 0.002

    def test_every_sample_is_the_work_s_duration_on_a_fake_clock(self, still_clock):
        # What the upper bound "median < 2 ms + 20 ms" stood for, exactly: nothing but the work
        # is inside a sample, and nanoseconds become seconds.
        r = bench(lambda: still_clock.sleep(0.002), warmup_s=0.01, budget_s=0.06, env=False)
        assert r.first_call_s == _exactly(0.002)
        assert r.samples_s == tuple(_exactly(0.002) for _ in range(r.n_reps))
        assert r.warmup_samples_s == tuple(_exactly(0.002) for _ in range(r.warmup_reps))
        assert r.median_s == r.min_s == r.max_s == _exactly(0.002)
        assert r.spread == 0.0 and r.n_outliers == 0

    def test_number_divides_by_the_calls_per_repetition(self, still_clock):
        r = bench(lambda: still_clock.sleep(0.001), number=4, warmup_s=0.005, budget_s=0.05,
                  env=False)
        assert r.number == 4
        assert r.min_s == r.max_s == _exactly(0.001)  # 4 ms per repetition, over 4 calls
        assert r.first_call_s == _exactly(0.001)      # the first call is one call

    def test_number_never_measures_a_call_shorter_than_it_is(self):
        r = bench(lambda: time.sleep(0.001), number=4, warmup_s=0.005, budget_s=0.05, env=False)
        assert r.number == 4 and r.min_s >= 0.001

    def test_first_call_is_reported_apart(self, still_clock):
        calls = []

        def fn():
            calls.append(1)
            still_clock.sleep(0.05 if len(calls) == 1 else 0.0005)

        r = bench(fn, **QUICK)
        assert r.first_call_s == _exactly(0.05)
        assert r.max_s == r.median_s == _exactly(0.0005)  # the slow call is not a sample
        assert max(r.warmup_samples_s) == _exactly(0.0005)
        assert len(calls) == 1 + r.warmup_reps + r.n_reps

    def test_first_call_is_timed_on_the_real_clock_too(self):
        calls = []

        def fn():
            calls.append(1)
            time.sleep(0.05 if len(calls) == 1 else 0.0005)

        r = bench(fn, **QUICK)
        assert r.first_call_s >= 0.05 and r.min_s >= 0.0005

    def test_warm_up_lasts_warmup_s(self, still_clock):
        # 1 ms repetitions until 30.5 ms have passed: the 31st ends the warm-up.
        r = bench(lambda: still_clock.sleep(0.001), warmup_s=0.0305, budget_s=0.01, env=False)
        assert r.warmup_reps == 31
        assert len(r.warmup_samples_s) == r.warmup_reps
        assert min(r.warmup_samples_s) == _exactly(0.001)

    def test_budget_sizes_the_repetitions(self, still_clock):
        # 2 ms per repetition in the warm-up, a 101 ms budget: ceil(50.5) = 51 repetitions.
        r = bench(lambda: still_clock.sleep(0.002), warmup_s=0.01, budget_s=0.101, env=False)
        assert r.n_reps == 51

    def test_repetition_bounds(self):
        assert bench(lambda: None, max_reps=7, min_reps=3, **QUICK).n_reps == 7
        r = bench(lambda: time.sleep(0.001), min_reps=20, warmup_s=0.0, budget_s=1e-6, env=False)
        assert r.n_reps == 20

    def test_zero_warm_up_still_runs_one_warm_up_repetition(self):
        assert bench(lambda: None, warmup_s=0.0, budget_s=0.001, env=False).warmup_reps == 1

    def test_flush_runs_before_each_repetition_outside_the_timing(self, monkeypatch,
                                                                  still_clock):
        flushes = []

        class SlowFlusher:
            def __init__(self, device, n_bytes):
                self.n_bytes = float(n_bytes or 123.0)

            def __call__(self):
                flushes.append(1)
                still_clock.sleep(0.004)

        monkeypatch.setattr(timing, "CacheFlusher", SlowFlusher)
        r = bench(lambda: still_clock.sleep(0.001), flush_cache=True, warmup_s=0.01,
                  budget_s=0.052, env=False)
        assert r.flushed_cache and r.flush_bytes == 123.0
        assert len(flushes) == r.warmup_reps + r.n_reps
        assert r.max_s == _exactly(0.001)  # the 4 ms flush is not in the samples
        # The budget counts the flushes: 5 ms per repetition, ceil(52 / 5) = 11 repetitions
        # (53 if the flushes were left out of the sizing).
        assert r.n_reps == 11

    def test_real_cache_flusher_writes_its_buffer(self):
        f = CacheFlusher("cpu", 1e6)
        f._buf[:] = 0.0
        f()
        assert f.n_bytes == 1e6 and f._buf.nbytes == 1e6 and np.all(f._buf == 1.0)
        assert CacheFlusher().n_bytes == 64e6

    def test_flushing_makes_a_cache_resident_read_slower(self):
        # A real hardware effect, so it compares the fastest repetitions: a busy machine only
        # ever adds time, and the warm read's best needs one undisturbed 10-us repetition. (On
        # a 2-core EPYC: warm best 11 us, cold best 32 us.)
        x = np.random.default_rng(0).random(64 * 1024)  # 512 KiB: fits in L2
        warm = bench(x.sum, warmup_s=0.01, budget_s=0.1, env=False)
        cold = bench(x.sum, flush_cache=True, flush_bytes=32e6, warmup_s=0.01, budget_s=0.2,
                     env=False)
        assert cold.min_s > warm.min_s

    def test_check_receives_the_first_result(self):
        seen = []
        r = bench(lambda: 42, check=seen.append, **QUICK)
        assert seen == [42] and r.checked

    def test_failing_check_stops_the_measurement(self):
        calls = []

        def wrong():
            calls.append(1)
            return np.zeros(3)

        def check(out):
            if not np.any(out):
                raise AssertionError("all zeros")

        with pytest.raises(AssertionError, match="all zeros"):
            bench(wrong, check=check, **QUICK)
        assert len(calls) == 1

    def test_garbage_collector_is_paused_while_timing_and_restored(self):
        states = []
        assert gc.isenabled()
        bench(lambda: states.append(gc.isenabled()), **QUICK)
        assert states[0] is True and not any(states[1:])
        assert gc.isenabled()
        states.clear()
        bench(lambda: states.append(gc.isenabled()), disable_gc=False, **QUICK)
        assert all(states)

    def test_gc_state_is_restored_after_an_error(self):
        def boom():
            if boom.calls:
                raise KeyError("later call")
            boom.calls += 1

        boom.calls = 0
        with pytest.raises(KeyError):
            bench(boom, **QUICK)
        assert gc.isenabled()

    def test_outliers_are_counted_and_do_not_move_the_median(self, still_clock):
        count = [0]

        def fn():
            count[0] += 1
            still_clock.sleep(0.02 if count[0] % 10 == 0 else 0.001)

        # Calls 1 (first) and 2 (warm-up) are not samples; calls 3..42 hold 10, 20, 30, 40.
        r = bench(fn, warmup_s=0.0, budget_s=0.06, min_reps=40, max_reps=40, env=False)
        assert r.n_outliers == 4
        assert r.median_s == _exactly(0.001) and r.max_s == _exactly(0.02)
        assert r.mean_s == _exactly((36 * 0.001 + 4 * 0.02) / 40)

    def test_environment_is_recorded(self):
        r = bench(lambda: None, warmup_s=0.0, budget_s=0.001)
        assert r.env["device"] == "cpu" and "python" in r.env

    def test_serialization(self):
        r = bench(lambda: None, **QUICK)
        d = json.loads(r.to_json())
        assert d["n_reps"] == r.n_reps and len(d["samples_s"]) == r.n_reps
        assert d["spread"] == pytest.approx(r.spread)
        assert r.to_dict()["samples_s"] == list(r.samples_s)

    def test_derived_numbers(self):
        r = _result(median_s=2.0, p20_s=1.8, p80_s=2.4, ci_low_s=1.9, ci_high_s=2.1)
        assert r.spread == pytest.approx(0.3)
        assert r.rate(10.0) == 5.0
        assert r.ci_relative_halfwidth == pytest.approx(0.05)
        assert "median 2 s" in r.summary() and "95% CI" in r.summary()

    def test_derived_numbers_at_zero_median(self):
        r = _result(median_s=0.0, p20_s=0.0, p80_s=0.0, ci_low_s=None, ci_high_s=None)
        assert math.isnan(r.spread) and r.ci_relative_halfwidth is None
        with pytest.raises(ValueError, match="resolution"):
            r.rate(1.0)
        assert "CI" not in r.summary()

    def test_lesson_one_interface(self):
        # The names the other lessons rely on.
        r = bench(lambda: None, device="cpu", name="x", warmup_s=0.001, budget_s=0.005,
                  flush_cache=False, env=False)
        for attr in ("median_s", "spread", "n_reps", "first_call_s"):
            assert hasattr(r, attr)
        assert callable(r.rate) and callable(r.to_dict)


def _result(**kw):
    base = dict(name="r", device="cpu", timer="perf_counter", n_reps=10, number=1,
                first_call_s=1.0, warmup_reps=1, median_s=1.0, mean_s=1.0, min_s=0.5, max_s=3.0,
                p20_s=0.9, p80_s=1.1, ci_low_s=0.95, ci_high_s=1.05, ci_level=0.95,
                n_outliers=0, flushed_cache=False, flush_bytes=0.0, checked=False,
                samples_s=(1.0,) * 10)
    base.update(kw)
    return BenchResult(**base)


class TestBadInput:
    @pytest.mark.parametrize("kw,match", [
        (dict(warmup_s=-1.0), "warmup_s"), (dict(budget_s=0.0), "budget_s"),
        (dict(budget_s=float("nan")), "budget_s"), (dict(warmup_s=float("inf")), "warmup_s"),
        (dict(min_reps=0), "min_reps"), (dict(max_reps=0), "max_reps"),
        (dict(min_reps=10, max_reps=5), "min_reps <= max_reps"), (dict(number=0), "number"),
        (dict(number=True), "number"), (dict(min_reps=2.5), "min_reps"),
        (dict(ci_level=1.0), "ci_level"), (dict(device="tpu"), "device"),
        (dict(device="cuda:x"), "device"), (dict(device=0), "device"),
        (dict(flush_cache=True, flush_bytes=-5.0), "n_bytes"),
    ])
    def test_value_errors(self, kw, match):
        with pytest.raises(ValueError, match=match):
            bench(lambda: None, **{**QUICK, **kw})

    def test_not_callable(self):
        with pytest.raises(TypeError, match="callable"):
            bench(42, **QUICK)

    @pytest.mark.skipif(HAS_GPU, reason="checks the error raised when there is no GPU")
    def test_cuda_without_a_gpu(self):
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            bench(lambda: None, device="cuda", **QUICK)


# --------------------------------------------------------------------------------------
# CUDA path, on a CPU, through an asynchronous fake of torch.cuda
# --------------------------------------------------------------------------------------
class FakeCuda:
    """Stands in for ``torch.cuda``: one asynchronous stream, events that time it, syncs."""

    def __init__(self):
        self.stream = ToyStream()
        self.sync_devices: list = []
        self.stream_devices: list = []
        self.events_made = 0

    def is_available(self):
        return True

    def current_stream(self, device=None):
        self.stream_devices.append(device)
        return self.stream

    def synchronize(self, device=None):
        self.sync_devices.append(device)
        self.stream.synchronize()

    def Event(self, enable_timing=False):  # noqa: N802 - mirrors torch.cuda.Event
        self.events_made += 1
        return ToyEvent(enable_timing=enable_timing)


@pytest.fixture
def fake_cuda(monkeypatch):
    if torch is None:  # pragma: no cover
        pytest.skip("torch is not installed")
    fake = FakeCuda()
    for attr in ("is_available", "current_stream", "synchronize", "Event"):
        monkeypatch.setattr(torch.cuda, attr, getattr(fake, attr))
    yield fake
    fake.stream.close()


class TestCudaPathWithFake:
    def test_events_time_the_device_work_not_the_launch(self, fake_cuda, still_clock):
        kernel = sleep_kernel(0.003)

        def launch():
            fake_cuda.stream.launch(kernel)  # returns at once, like a CUDA launch

        r = bench(launch, device="cuda", warmup_s=0.01, budget_s=0.06, env=False)
        assert r.timer == "cuda-event" and r.device == "cuda"
        # milliseconds converted to seconds, each event pair around one kernel exactly
        assert r.min_s == r.max_s == _exactly(0.003)
        assert r.first_call_s == _exactly(0.003)  # host timer, but synchronized

    def test_events_never_measure_less_than_the_device_work(self, fake_cuda):
        # The real clock: lower bounds only.
        r = bench(lambda: fake_cuda.stream.launch(sleep_kernel(0.003)), device="cuda",
                  warmup_s=0.01, budget_s=0.06, env=False)
        assert r.min_s >= 0.003 * 0.999 and r.first_call_s >= 0.003

    def test_the_host_clock_alone_times_only_the_enqueueing(self, fake_cuda):
        # Launches of work that cannot run yet (it waits on a gate): a host-timed bench of them
        # returns with every one still pending, so no sample can hold device time. (The timer
        # opens the gate if bench ever waited for the device, which then fails the count.)
        gate = threading.Event()
        opener = threading.Timer(30.0, gate.set)
        opener.start()
        try:
            host = bench(lambda: fake_cuda.stream.launch(gate.wait), device="cpu",
                         warmup_s=0.0, budget_s=0.005, min_reps=5, max_reps=5, env=False)
            assert fake_cuda.stream.pending() == 1 + host.warmup_reps + 5
        finally:
            gate.set()
            opener.cancel()
        fake_cuda.stream.synchronize()

    def test_two_events_per_repetition_and_one_sync_for_all(self, fake_cuda):
        r = bench(lambda: fake_cuda.stream.launch(sleep_kernel(0.0005)), device="cuda",
                  warmup_s=0.0, budget_s=0.005, min_reps=12, max_reps=12, env=False)
        assert r.n_reps == 12
        # warm-up: 1 repetition of 2 events; timed phase: 12 x 2 events.
        assert fake_cuda.events_made == 2 * (r.warmup_reps + 12)
        # syncs: 2 around the first call, 1 per warm-up repetition, 2 around the timed phase,
        # 1 at its end inside the timer.
        assert len(fake_cuda.sync_devices) == 2 + r.warmup_reps + 3

    def test_the_device_string_reaches_the_stream_and_the_syncs(self, fake_cuda):
        bench(lambda: None, device="cuda:1", warmup_s=0.0, budget_s=0.001, env=False)
        assert set(fake_cuda.sync_devices) == {"cuda:1"}
        assert set(fake_cuda.stream_devices) == {"cuda:1"}

    def test_number_batches_launches_between_one_pair_of_events(self, fake_cuda, still_clock):
        r = bench(lambda: fake_cuda.stream.launch(sleep_kernel(0.001)), device="cuda",
                  number=5, warmup_s=0.0, budget_s=0.02, min_reps=6, max_reps=6, env=False)
        assert fake_cuda.events_made == 2 * (r.warmup_reps + 6)
        assert r.min_s == r.max_s == _exactly(0.001)  # 5 ms between the events, over 5 calls

    def test_flush_is_enqueued_before_the_start_event(self, fake_cuda, monkeypatch,
                                                      still_clock):
        class DeviceFlusher:
            calls = 0

            def __init__(self, device, n_bytes):
                assert device == "cuda"
                self.n_bytes = 256e6

            def __call__(self):
                DeviceFlusher.calls += 1
                fake_cuda.stream.launch(sleep_kernel(0.005))  # device work, not timed

        monkeypatch.setattr(timing, "CacheFlusher", DeviceFlusher)
        r = bench(lambda: fake_cuda.stream.launch(sleep_kernel(0.002)), device="cuda",
                  flush_cache=True, warmup_s=0.0, budget_s=0.03, min_reps=6, env=False)
        assert DeviceFlusher.calls == r.warmup_reps + r.n_reps
        assert r.min_s == r.max_s == _exactly(0.002)  # the 5 ms flush is not timed
        assert r.flush_bytes == 256e6

    def test_a_kernel_error_surfaces(self, fake_cuda):
        def bad():
            fake_cuda.stream.launch(lambda: 1 / 0)

        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            bench(bad, device="cuda", **QUICK)


# --------------------------------------------------------------------------------------
# host clocks
# --------------------------------------------------------------------------------------
class TestClocks:
    @pytest.mark.parametrize("clock", sorted(timing.CLOCKS))
    def test_every_clock_advances_with_a_plausible_step(self, clock):
        res = timing.timer_resolution_s(5_000, clock)
        assert 0 < res < 0.02  # Windows' time.time ticks every 15.6 ms; Linux's in ns

    def test_perf_counter_is_fine_grained_on_this_machine(self):
        assert timing.timer_resolution_s() < 1e-5
        assert 0 <= timing.clock_read_cost_s() < 1e-4

    def test_against_a_fake_clock_with_known_tick(self, monkeypatch):
        state = {"reads": 0}

        def coarse():  # advances by 100 ns every third read: tick 100 ns, most steps zero
            state["reads"] += 1
            return (state["reads"] // 3) * 100

        monkeypatch.setitem(timing.CLOCKS, "fake", coarse)
        steps = timing.clock_steps_ns(3001, "fake")
        assert set(np.unique(steps)) == {0, 100}
        assert timing.timer_resolution_s(3001, "fake") == pytest.approx(100e-9)
        assert timing.clock_read_cost_s(3001, "fake") == 0.0

    def test_a_stopped_clock(self, monkeypatch):
        monkeypatch.setitem(timing.CLOCKS, "stopped", lambda: 7)
        with pytest.raises(RuntimeError, match="never advanced"):
            timing.timer_resolution_s(10, "stopped")

    @pytest.mark.parametrize("kw", [dict(n=1), dict(n=2.5), dict(clock="sundial")])
    def test_bad_input(self, kw):
        with pytest.raises(ValueError):
            timing.clock_steps_ns(**{"n": 10, **kw})


# --------------------------------------------------------------------------------------
# CUDA path on a real GPU
# --------------------------------------------------------------------------------------
@gpu
@needs_gpu
class TestRealGpu:
    def test_events_time_a_device_copy_at_a_sane_bandwidth(self):
        n_bytes = 1 << 30
        src = torch.randn(n_bytes // 4, device="cuda")
        dst = torch.empty_like(src)
        r = bench(lambda: dst.copy_(src), device="cuda", warmup_s=0.05, budget_s=0.3, env=True)
        assert torch.equal(dst, src)
        bw = r.rate(2 * n_bytes)  # read once, written once
        assert 50e9 < bw < 20e12, bw  # any GPU with HBM or GDDR
        if "H200" in r.env["device_name"]:  # the book's reference part: near its datasheet
            from helpers.specs import H200_SXM

            peak = H200_SXM.hbm_bytes_per_s
            assert 0.5 * peak < bw < 1.05 * peak, (bw, peak)

    def test_host_timer_without_sync_measures_far_less_than_events(self):
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
        b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
        for _ in range(3):
            a @ b
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        a @ b
        host_s = time.perf_counter() - t0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        event_s = start.elapsed_time(end) * 1e-3
        assert host_s < event_s / 4, (host_s, event_s)

    def test_bench_agrees_with_a_synchronized_host_loop(self):
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
        r = bench(lambda: a @ a, device="cuda", warmup_s=0.05, budget_s=0.2, env=False)
        reps = 50
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            a @ a
        torch.cuda.synchronize()
        host_per_call = (time.perf_counter() - t0) / reps
        assert 0.5 < host_per_call / r.median_s < 2.0, (host_per_call, r.median_s)

    def test_the_cache_flush_is_outside_the_timed_region(self):
        # Measured on an H200 (2026-11-30): an 8 MB copy timed alone, launch after launch,
        # took 12 us per call; with a 256 MB flush before each repetition it took 9 us. The
        # flush does not slow the copy down: on an idle GPU each event pair around one launch
        # also catches the host's launch latency, and the long flush kernel keeps the queue
        # busy so the events see only the copy. What must hold is that the flush itself is
        # never billed to the measurement.
        src = torch.randn(2 * 1024 * 1024, device="cuda")  # 8 MB: fits in any recent L2
        dst = torch.empty_like(src)
        flusher = CacheFlusher("cuda")
        flush_alone = bench(flusher, device="cuda", budget_s=0.1, env=False)
        cold = bench(lambda: dst.copy_(src), device="cuda", budget_s=0.1, flush_cache=True,
                     env=False)
        assert cold.flushed_cache and cold.flush_bytes == 256e6
        assert cold.median_s < 0.5 * flush_alone.median_s, (cold.median_s, flush_alone.median_s)

    def test_batching_calls_removes_launch_latency_from_a_tiny_kernel(self):
        # One launch per event pair on an idle GPU times the host's launch too; fifty launches
        # per pair keep the GPU busy, so the time per call approaches the kernel's own.
        src = torch.randn(2 * 1024 * 1024, device="cuda")
        dst = torch.empty_like(src)
        single = bench(lambda: dst.copy_(src), device="cuda", budget_s=0.1, env=False)
        batched = bench(lambda: dst.copy_(src), device="cuda", budget_s=0.1, number=50, env=False)
        assert batched.median_s <= 1.05 * single.median_s, (batched.median_s, single.median_s)

    def test_first_call_includes_one_time_work(self):
        x = torch.randn(1 << 20, device="cuda")
        # A kernel used for the first time in the process: its module is loaded lazily (and
        # the host pays the launch and a synchronization), milliseconds against microseconds.
        r = bench(lambda: torch.special.zeta(x, 2.0 + x.abs()), device="cuda", budget_s=0.05,
                  env=False)
        assert r.first_call_s > 3 * r.median_s, (r.first_call_s, r.median_s)


# --------------------------------------------------------------------------------------
# the correctness check
# --------------------------------------------------------------------------------------
class TestMatches:
    ref = np.linspace(1.0, 2.0, 12).reshape(3, 4)

    def test_accepts_a_close_result(self):
        timing.matches(self.ref, rtol=1e-6)(self.ref * (1 + 1e-8))

    @pytest.mark.parametrize("bad,match", [
        (np.linspace(1.0, 2.0, 12), "shape"), (np.full((3, 4), np.nan), "NaN"),
        (np.linspace(1.0, 2.0, 12).reshape(3, 4) * 1.01, "differs"),
        (np.zeros((3, 4)), "differs"),
    ])
    def test_rejects(self, bad, match):
        with pytest.raises(AssertionError, match=match):
            timing.matches(self.ref)(bad)

    def test_torch_tensors(self):
        if torch is None:  # pragma: no cover
            pytest.skip("torch is not installed")
        t = torch.tensor(self.ref, dtype=torch.float32)
        timing.matches(self.ref, rtol=1e-6)(t)
        timing.matches(t)(self.ref.astype(np.float32))

    @pytest.mark.parametrize("ref", [np.zeros(4), np.array([]), np.array([1.0, np.inf])])
    def test_a_useless_reference_is_refused(self, ref):
        with pytest.raises(ValueError, match="reference"):
            timing.matches(ref)

    def test_bad_tolerances(self):
        with pytest.raises(ValueError, match="rtol"):
            timing.matches(self.ref, rtol=-1.0)

    def test_works_as_bench_check(self):
        x = np.arange(1.0, 100.0)
        r = bench(lambda: x * 2, check=timing.matches(x + x), **QUICK)
        assert r.checked
        with pytest.raises(AssertionError):
            bench(lambda: x * 2.5, check=timing.matches(x + x), **QUICK)


class TestFreshPages:
    def test_zeroed_writable_and_sized(self):
        a = timing.fresh_pages(1 << 20)
        assert a.nbytes == 1 << 20 and a.flags.writeable and not a.any()
        a[:] = 3.0
        assert a.sum() == 3.0 * a.size

    def test_first_touch_faults_and_the_second_does_not(self):
        # What makes the first pass slower, counted instead of timed (a busy machine changes
        # the times, not the count): the kernel's minor page faults of this thread. The first
        # pass over 32 MB faults at least once per 2 MiB (a transparent huge page), and once
        # per 4 KiB page where there are none; the second pass never.
        who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
        a = timing.fresh_pages(32e6)
        f0 = resource.getrusage(who).ru_minflt
        a.fill(1.0)
        f1 = resource.getrusage(who).ru_minflt
        a.fill(2.0)
        f2 = resource.getrusage(who).ru_minflt
        assert f1 - f0 >= 32e6 / 2**21
        assert f2 - f1 == 0
        # The control: memory numpy already touched does not fault at all.
        b = np.ones(a.size)
        f0 = resource.getrusage(who).ru_minflt
        b.fill(2.0)
        assert resource.getrusage(who).ru_minflt - f0 == 0

    @pytest.mark.parametrize("n", [0, 7, float("nan"), float("inf")])
    def test_bad_size(self, n):
        with pytest.raises(ValueError):
            timing.fresh_pages(n)


# --- interleaved ---------------------------------------------------------------------------

def test_interleaved_alternates_the_order_and_counts_rounds():
    from helpers.bench import interleaved

    calls = []
    out = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                      rounds=3, warmup_rounds=1)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]  # warm-up round, then A B / B A
    assert set(out) == {"a", "b"} and all(len(v) == 3 for v in out.values())
    assert all(t >= 0 for v in out.values() for t in v)


class _DriftingClock:
    """A fake ``time`` module whose clock only moves when the work runs, each call costing
    ``step_s`` more than the one before: a machine that slows down steadily, exactly."""

    def __init__(self, step_s: float = 1e-3):
        self.now_s, self.cost_s, self.step_s = 0.0, 0.0, step_s

    def perf_counter(self) -> float:
        return self.now_s

    def work(self) -> None:
        self.cost_s += self.step_s
        self.now_s += self.cost_s


def test_interleaved_spreads_a_drift_over_both_variants(monkeypatch):
    # Timed one after the other, the second of two identical variants would look slower on a
    # drifting machine; interleaved (A B, B A, ...), the two medians agree exactly. A fake clock
    # makes this exact and independent of how busy the machine is.
    from helpers.bench import interleaved, timing
    from helpers.models.stats import percentile

    clock = _DriftingClock()
    monkeypatch.setattr(timing, "time", clock)
    out = interleaved({"a": clock.work, "b": clock.work}, rounds=8, warmup_rounds=0)
    assert percentile(out["b"], 50) == pytest.approx(percentile(out["a"], 50), rel=1e-12)

    # The control: the same drift timed back to back makes the second variant look slower.
    clock = _DriftingClock()
    monkeypatch.setattr(timing, "time", clock)
    first = interleaved({"a": clock.work}, rounds=8, warmup_rounds=0)["a"]
    second = interleaved({"b": clock.work}, rounds=8, warmup_rounds=0)["b"]
    assert percentile(second, 50) / percentile(first, 50) > 2


@pytest.mark.parametrize("kwargs, match", [
    ({"fns": {}, "rounds": 3}, "at least one"),
    ({"fns": {"a": 3}, "rounds": 3}, "callable"),
    ({"fns": {"a": lambda: None}, "rounds": 1}, "rounds"),
    ({"fns": {"a": lambda: None}, "rounds": 3, "warmup_rounds": -1}, "warmup_rounds"),
])
def test_interleaved_rejects_bad_input(kwargs, match):
    from helpers.bench import interleaved

    fns = kwargs.pop("fns")
    with pytest.raises(ValueError, match=match):
        interleaved(fns, **kwargs)
