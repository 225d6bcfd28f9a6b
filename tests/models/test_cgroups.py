"""Tests of helpers.models.cgroups: limits, a simulated CFS quota as the oracle, the kernel
documentation's examples, and the errors."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import cgroups as cg

works = st.floats(min_value=1e-4, max_value=50.0, allow_nan=False)
counts = st.integers(min_value=1, max_value=256)
periods = st.floats(min_value=1e-3, max_value=1.0, allow_nan=False)
quota_fracs = st.floats(min_value=0.01, max_value=64.0, allow_nan=False)  # quota in CPUs


# --- limits and invariants ---------------------------------------------------------------

@given(quota_fracs, periods)
def test_quota_cpus_is_quota_over_period(qc, period):
    assert cg.quota_cpus(qc * period, period) == pytest.approx(qc, rel=1e-12)


@given(counts, counts, quota_fracs)
def test_effective_cpus_is_the_tightest_limit(a, b, q):
    host, aff = max(a, b), min(a, b)
    eff = cg.effective_cpus(host_cpus=host, affinity_cpus=aff, quota_cpus=q)
    assert eff <= host and eff <= aff and eff <= q
    assert eff in (float(aff), q)
    assert cg.effective_cpus(host_cpus=host, affinity_cpus=aff) == aff


@given(works, counts, counts, quota_fracs, periods)
def test_throttled_time_is_bounded_by_both_rates(w, n, c, qc, period):
    p = min(n, c)
    t = cg.throttled_wall_s(cpu_work_s=w, n_threads=n, n_cores=c, quota_s=qc * period,
                            period_s=period)
    assert t >= w / p * (1 - 1e-9)                       # never faster than p CPUs
    assert t >= (w / qc - period) * (1 - 1e-9)           # the quota's average, less one period
    assert t <= max(w / p, w / qc + period) * (1 + 1e-9)  # and at most one period worse


@given(works, counts, counts, periods)
def test_no_quota_or_a_generous_one_is_plain_division(w, n, c, period):
    p = min(n, c)
    free = cg.throttled_wall_s(cpu_work_s=w, n_threads=n, n_cores=c, quota_s=math.inf,
                               period_s=period)
    roomy = cg.throttled_wall_s(cpu_work_s=w, n_threads=n, n_cores=c, quota_s=p * period,
                                period_s=period)
    assert free == pytest.approx(w / p) and roomy == pytest.approx(w / p)
    assert cg.throttle_slowdown(cpu_work_s=w, n_threads=n, n_cores=c, quota_s=math.inf,
                                period_s=period) == pytest.approx(1.0)


@given(works, counts, quota_fracs, quota_fracs, periods)
def test_more_quota_is_never_slower(w, n, q1, q2, period):
    lo, hi = sorted((q1, q2))
    t_lo = cg.throttled_wall_s(cpu_work_s=w, n_threads=n, n_cores=n, quota_s=lo * period,
                               period_s=period)
    t_hi = cg.throttled_wall_s(cpu_work_s=w, n_threads=n, n_cores=n, quota_s=hi * period,
                               period_s=period)
    assert t_hi <= t_lo * (1 + 1e-9)


def test_long_runs_approach_the_quota_rate():
    # W/T -> Q/P as the work grows: the long-run average the documentation describes.
    for w in (10.0, 100.0, 1000.0):
        t = cg.throttled_wall_s(cpu_work_s=w, n_threads=64, n_cores=64, quota_s=0.4, period_s=0.1)
        assert w / t == pytest.approx(4.0, rel=0.1 * 10 / w + 1e-9)


# --- oracle: a step-by-step simulation of the quota ----------------------------------------

def simulate(w, n, c, quota, period, dt):
    """Advance time in steps of dt; run p threads while the period's quota lasts."""
    p, t, used, left = min(n, c), 0.0, 0.0, w
    steps = 0
    while left > 1e-12:
        if steps and steps % round(period / dt) == 0:
            used = 0.0  # refill at each period boundary
        if used < quota - 1e-12:
            run = min(p * dt, quota - used, left)
            used += run
            left -= run
            if left <= 1e-12:
                return t + run / p
        t += dt
        steps += 1
    return t


@pytest.mark.parametrize("w, n, c, qc", [
    (0.8, 128, 128, 4.0), (0.8, 8, 2, 4.0), (1.0, 8, 8, 4.0), (2.35, 16, 16, 2.5),
    (0.05, 1, 1, 0.2), (3.0, 3, 64, 1.5),
])
def test_model_matches_a_simulated_quota(w, n, c, qc):
    period, dt = 0.1, 1e-4
    model = cg.throttled_wall_s(cpu_work_s=w, n_threads=n, n_cores=c, quota_s=qc * period,
                                period_s=period)
    sim = simulate(w, n, c, qc * period, period, dt)
    assert model == pytest.approx(sim, abs=2 * dt)


# --- published numbers: Linux Documentation/scheduler/sched-bwc.rst, "Examples" ----------------

def test_kernel_documentation_examples():
    # 1. 250 ms quota per 250 ms period: 1 CPU. 2. 1000 ms per 500 ms: 2 CPUs.
    # 3. 10 ms per 50 ms: 20 % of 1 CPU.
    assert cg.quota_cpus(0.250, 0.250) == pytest.approx(1.0)
    assert cg.quota_cpus(1.000, 0.500) == pytest.approx(2.0)
    assert cg.quota_cpus(0.010, 0.050) == pytest.approx(0.2)
    # The default: cpu.cfs_quota_us = -1 (cpu.max "max 100000") means no limit.
    assert cg.quota_cpus(math.inf, 0.1) == math.inf
    # Example 3 applied: one CPU-second of single-threaded work at 20 % takes ~5 s.
    t = cg.throttled_wall_s(cpu_work_s=1.0, n_threads=1, n_cores=1, quota_s=0.010, period_s=0.050)
    assert t == pytest.approx(4.96)


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    dict(quota_s=0.0, period_s=0.1), dict(quota_s=-1.0, period_s=0.1),
    dict(quota_s=0.1, period_s=0.0), dict(quota_s=float("nan"), period_s=0.1),
])
def test_quota_cpus_rejects_bad_input(kw):
    with pytest.raises(ValueError, match="_s must be"):
        cg.quota_cpus(**kw)


@pytest.mark.parametrize("kw, name", [
    (dict(host_cpus=0, affinity_cpus=1), "host_cpus"),
    (dict(host_cpus=4, affinity_cpus=8), "affinity_cpus"),
    (dict(host_cpus=4, affinity_cpus=2.5), "affinity_cpus"),
    (dict(host_cpus=4, affinity_cpus=4, quota_cpus=0.0), "quota_cpus"),
])
def test_effective_cpus_rejects_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        cg.effective_cpus(**kw)


@pytest.mark.parametrize("bad, name", [
    (dict(cpu_work_s=0.0), "cpu_work_s"), (dict(n_threads=0), "n_threads"),
    (dict(n_cores=0), "n_cores"), (dict(quota_s=-0.1), "quota_s"), (dict(period_s=0.0), "period_s"),
])
def test_throttled_wall_rejects_bad_input(bad, name):
    kw = dict(cpu_work_s=1.0, n_threads=4, n_cores=4, quota_s=0.2, period_s=0.1) | bad
    with pytest.raises(ValueError, match=name):
        cg.throttled_wall_s(**kw)
