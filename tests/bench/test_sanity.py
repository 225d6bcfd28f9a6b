"""Sanity bounds of the CPU probes: a backwards, NaN or noise-sized effect is not 'shown'."""

import math
from types import SimpleNamespace

import pytest

from helpers.bench import sanity
from helpers.bench.timing import bench


def result(median, lo, hi, ci=True):
    return SimpleNamespace(median_s=median, ci_low_s=lo if ci else None,
                           ci_high_s=hi if ci else None, p20_s=lo, p80_s=hi)


@pytest.mark.parametrize("values, want", [
    ((1.0,), True), ((1e-12, 3.0), True), ((0.0,), False), ((-1.0,), False),
    ((math.nan,), False), ((math.inf,), False), ((), False), (("x",), False), ((None,), False),
])
def test_finite_positive(values, want):
    assert sanity.finite_positive(*values) is want


def test_the_issue_17_cases_are_not_shown():
    # dram-and-numa: the near chase (280 ns) slower than the far one (228 ns)
    assert not sanity.clearly_less(280e-9, 228e-9)
    # storage: a cold read 0.977 times a warm one
    assert not sanity.clearly_less(1.0, 0.977)
    # memory-hierarchy: a NaN working set or latency
    assert not sanity.clearly_less(1.0, math.nan) and not sanity.clearly_less(math.nan, 1.0)


def test_margin_decides_near_ties():
    assert sanity.clearly_less(1.0, 1.06) and not sanity.clearly_less(1.0, 1.04)
    assert sanity.clearly_less(1.0, 1.04, margin=0.0)
    assert not sanity.clearly_less(1.0, 1.0, margin=0.0)


def test_overlapping_intervals_are_noise_even_when_the_medians_differ():
    a, b = result(100.0, 80.0, 130.0), result(120.0, 110.0, 140.0)
    assert sanity.clearly_less(100.0, 120.0)                          # medians alone: yes
    assert not sanity.clearly_less(100.0, 120.0, a_result=a, b_result=b)
    b = result(200.0, 190.0, 210.0)
    assert sanity.clearly_less(100.0, 200.0, a_result=a, b_result=b)


def test_per_step_values_scale_with_their_results():
    # a result per call of 1000 steps, compared as seconds per step
    a, b = result(1e-3, 0.9e-3, 1.1e-3), result(2e-3, 1.9e-3, 2.1e-3)
    assert sanity.clearly_less(1e-6, 2e-6, a_result=a, b_result=b)
    wide = result(2e-3, 0.5e-3, 3e-3)
    assert not sanity.clearly_less(1e-6, 2e-6, a_result=a, b_result=wide)


def test_without_confidence_intervals_the_p20_p80_band_is_used():
    a, b = result(1.0, 0.9, 1.5, ci=False), result(1.4, 1.3, 1.5, ci=False)
    assert not sanity.clearly_less(1.0, 1.4, a_result=a, b_result=b)
    assert sanity.clearly_less(1.0, 1.4, a_result=result(1.0, 0.9, 1.1, ci=False), b_result=b)


def test_real_bench_results():
    import time

    fast = bench(lambda: None, budget_s=0.02, warmup_s=0.0, env=False)
    slow = bench(lambda: time.sleep(2e-3), budget_s=0.05, warmup_s=0.0, env=False, min_reps=5)
    assert sanity.clearly_less(fast.median_s, slow.median_s, a_result=fast, b_result=slow)
    assert not sanity.clearly_less(slow.median_s, fast.median_s, a_result=slow, b_result=fast)


@pytest.mark.parametrize("margin", [-0.1, 1.0, math.nan])
def test_bad_margin(margin):
    with pytest.raises(ValueError, match="margin"):
        sanity.clearly_less(1.0, 2.0, margin=margin)
