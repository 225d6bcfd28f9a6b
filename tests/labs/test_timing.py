"""The timing lab's runner (CPU tier) and its grader."""

import time

import pytest

from helpers import specs
from helpers.labs import timing
from helpers.labs.analysis import timing as view


@pytest.fixture(scope="module")
def result():
    return timing.run("cpu")  # BOOK_SIZE=small: the root conftest sets it for every test


def test_cpu_run_measures_every_operation(result):
    m = result["measurements"]
    assert result["tier"] == "cpu" and result["lab"] == "timing"
    for name in ("matmul", "copy", "tiny_add", "l2_copy"):
        e = m[name]
        assert e["bench"]["median_s"] > 0 and e["bench"]["n_reps"] >= 5
        assert e["events_s"] is None and "backlogged_s" not in e  # no events on a CPU
        assert e["host_sync_s"] > 0 and e["cold_call_s"] > 0
    assert m["l2_copy"]["bench_flushed"]["median_s"] > 0


def test_toy_stream_shows_the_host_timer_lying(result):
    # Lower bounds only (a sleep never ends early, however busy the machine); the exact
    # behaviour of the three timers is tested on a fake clock in tests/bench/test_toy_stream.py.
    toy = result["measurements"]["toy_stream"]
    assert toy["events_s"] >= toy["kernel_s"] and toy["host_sync_s"] >= toy["kernel_s"]
    assert 0 < toy["host_no_sync_s"]


def test_predictions_put_the_big_matmul_on_the_compute_roof():
    sizes = {"matmul": dict(flop=2 * 8192**3, bytes=3 * 8192**2 * 2.0),
             "copy": dict(flop=0.0, bytes=2 * 2**30)}
    pred = view.predicted_times_s(sizes, specs.H200_SXM, "bf16")
    assert pred["matmul"] == pytest.approx(2 * 8192**3 / specs.H200_SXM.peak_flop_per_s("bf16"))
    assert pred["copy"] == pytest.approx(2 * 2**30 / specs.H200_SXM.hbm_bytes_per_s)


def right(run, synchronize):
    synchronize()
    t0 = time.perf_counter()
    run()
    synchronize()
    return time.perf_counter() - t0


def no_final_sync(run, synchronize):
    synchronize()
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def no_first_sync(run, synchronize):
    t0 = time.perf_counter()
    run()
    synchronize()
    return time.perf_counter() - t0


def test_grader_passes_a_right_timer_and_says_why_others_fail():
    assert timing.grade_timer(right).passed
    early = timing.grade_timer(no_final_sync)
    assert early.status == "FAIL" and "synchronize after run()" in str(early)
    late = timing.grade_timer(no_first_sync)
    assert late.status == "FAIL" and "synchronize before starting the clock" in str(late)
    crash = timing.grade_timer(lambda run, sync: 1 / 0)
    assert crash.status == "FAIL" and "ZeroDivisionError" in str(crash)
    with pytest.raises(ValueError):
        timing.grade_timer(right, kernel_s=0)


def descheduled(run, synchronize):
    # A right timer whose thread loses the CPU for 0.4 s before it reads the clock again, as on
    # a busy machine: the grade must not change (a time bound on the result failed it).
    synchronize()
    t0 = time.perf_counter()
    run()
    synchronize()
    time.sleep(0.4)
    return time.perf_counter() - t0


def in_nanoseconds(run, synchronize):
    synchronize()
    t0 = time.perf_counter_ns()
    run()
    synchronize()
    return (time.perf_counter_ns() - t0) * 1e-9


def clock_after_run(run, synchronize):
    synchronize()
    run()
    t0 = time.monotonic()
    synchronize()
    return time.monotonic() - t0


def test_the_grade_does_not_depend_on_how_busy_the_machine_is():
    assert timing.grade_timer(descheduled).passed
    assert timing.grade_timer(in_nanoseconds).passed
    odd = timing.grade_timer(clock_after_run)
    assert odd.status == "FAIL" and "read a clock, call run()" in str(odd)
    assert timing.grade_timer(lambda run, sync: 0.05).status == "FAIL"  # no clock read at all


def test_the_grader_restores_the_clocks():
    before = (time.perf_counter, time.monotonic, time.time_ns)
    timing.grade_timer(right)
    timing.grade_timer(lambda run, sync: 1 / 0)
    assert (time.perf_counter, time.monotonic, time.time_ns) == before
