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


# --- the page's analysis: claims over a result (helpers.labs.analysis.timing) ----------------

def _gpu_like_result():
    """A result with the layout of a GPU run, in round numbers (seconds)."""
    def op(bench, sync, events, no_sync, backlogged, **extra):
        return {"flop": 0.0, "bytes": 8e6, "dtype": "float32", "host_sync_s": sync,
                "events_s": events, "host_no_sync_s": no_sync, "backlogged_s": backlogged,
                "bench": {"median_s": bench}, **extra}
    m = {"matmul": op(1e-3, 1.02e-3, 1.01e-3, 50e-6, 0.99e-3),
         "copy": op(500e-6, 520e-6, 512e-6, 15e-6, 500e-6),
         "tiny_add": op(11e-6, 24e-6, 16e-6, 12e-6, 4e-6),
         "l2_copy": op(13e-6, 20e-6, 22e-6, 10e-6, 9e-6, bench_flushed={"median_s": 13e-6})}
    m["matmul"].update(flop=2.0 * 8192**3, dtype="bfloat16")
    return {"measurements": m}


def test_fixed_costs_come_from_the_tiny_kernel():
    fixed = view.fixed_costs_s(_gpu_like_result())
    assert fixed["sync"] == pytest.approx(20e-6) and fixed["event_pair"] == pytest.approx(12e-6)
    cpu = _gpu_like_result()
    cpu["measurements"]["tiny_add"].update(events_s=None, backlogged_s=None)
    assert view.fixed_costs_s(cpu) is None and view.predictions_s(cpu) == {}


def test_predictions_add_the_fixed_cost_and_respect_their_domains():
    pred = view.predictions_s(_gpu_like_result())
    assert pred["sync_host_timer", "matmul"] == pytest.approx(1e-3 + 20e-6)
    assert pred["event_pair", "copy"] == pytest.approx(500e-6 + 12e-6)
    assert pred["launch_bound_bench", "tiny_add"] == pytest.approx(12e-6)  # the host's call
    # the small kernels are not "long"; the L2 copy (9 of 10 us of its call) is not launch-bound
    assert {op for _, op in pred} == {"matmul", "copy", "tiny_add"}
    assert ("launch_bound_bench", "l2_copy") not in pred


def test_rows_name_declared_claims_and_bound_the_flushed_l2_copy():
    rows = view.comparison_rows(_gpu_like_result())
    assert all(r.claim in timing.LAB.claims for r in rows)
    assert {r.claim.key for r in rows} == {c.key for c in timing.LAB.claims}
    l2 = next(r for r in rows if r.quantity.startswith("l2 copy"))
    assert "flushed" in l2.quantity and l2.claim.kind == "bound"
    assert l2.model == pytest.approx(2 * 8e6 / 2 / specs.H200_SXM.hbm_bytes_per_s)


def test_shipped_reference_predictions_hold_and_bounds_are_not_passed():
    ref = timing.reference_or_none()
    if ref is None:
        pytest.skip("no H200 reference shipped")
    rows = view.comparison_rows(ref)
    kinds = {r.claim.kind for r in rows}
    assert kinds == {"bound", "prediction"}
    assert all(r.claim.holds(r.model, r.h200) for r in rows)


def test_prediction_summary_against_a_direct_computation():
    """The page's counts and errors (through helpers.labs.summary) equal a plain loop over the
    prediction rows of a GPU-like result; a prediction pushed out of its tolerance is counted
    out, and the largest error follows it."""
    from helpers.labs.report import relative_error

    result = _gpu_like_result()
    preds = [r for r in view.comparison_rows(result) if r.claim.kind == "prediction"
             and r.model is not None and r.h200 is not None]
    errors = sorted(abs(relative_error(r.model, r.h200)) for r in preds)
    got = view.prediction_summary(result)
    assert got["n"] == len(preds) == 5
    assert got["within"] == sum(abs(e) <= r.claim.tolerance
                                for e, r in zip((relative_error(r.model, r.h200) for r in preds),
                                                preds))
    assert got["max_abs_error"] == pytest.approx(errors[-1])
    assert got["median_abs_error"] == pytest.approx(errors[2])
    result["measurements"]["matmul"]["host_sync_s"] *= 2  # the host timer's prediction now misses
    worse = view.prediction_summary(result)
    assert worse["within"] == got["within"] - 1 and worse["max_abs_error"] > 0.4
