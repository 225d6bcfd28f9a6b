"""Work and span of reductions and scans, Brent's bound, histogram contention.

Oracles: the algorithms themselves, simulated step by step on arrays with every addition and
every parallel step counted; a greedy scheduler on the reduction tree; random keys counted
with numpy.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import parallel_patterns as pp


# --- simulations (the oracles) ---------------------------------------------------------------

def simulate_tree_reduction(values, fan_in=2):
    """Reduce level by level, each node summing up to ``fan_in`` inputs one after another.
    Returns (result, additions, dependent steps)."""
    level, adds, steps = list(values), 0, 0
    while len(level) > 1:
        nxt, longest = [], 0
        for i in range(0, len(level), fan_in):
            group = level[i:i + fan_in]
            acc = group[0]
            for v in group[1:]:
                acc += v
                adds += 1
            nxt.append(acc)
            longest = max(longest, len(group) - 1)
        steps += fan_in - 1 if len(level) > fan_in or longest == fan_in - 1 else longest
        level = nxt
    return level[0], adds, steps


def simulate_hillis_steele(values):
    """Inclusive scan by step doubling; returns (scan, additions, steps)."""
    x = np.array(values, dtype=np.int64)
    adds, steps, offset = 0, 0, 1
    while offset < len(x):
        new = x.copy()
        new[offset:] = x[offset:] + x[:-offset]
        adds += len(x) - offset
        steps += 1
        x, offset = new, offset * 2
    return x, adds, steps


def simulate_blelloch(values):
    """Exclusive scan by up-sweep and down-sweep (padded to a power of two with zeros);
    returns (scan, additions, steps)."""
    n = len(values)
    size = 1 << max(0, (n - 1).bit_length())
    a = np.zeros(size, dtype=np.int64)
    a[:n] = values
    adds = steps = 0
    d = 1
    while d < size:  # up-sweep
        idx = np.arange(2 * d - 1, size, 2 * d)
        a[idx] += a[idx - d]
        adds += len(idx)
        steps += 1
        d *= 2
    a[size - 1] = 0
    d = size // 2
    while d >= 1:  # down-sweep
        idx = np.arange(2 * d - 1, size, 2 * d)
        left = a[idx - d].copy()
        a[idx - d] = a[idx]
        a[idx] += left
        adds += len(idx)
        steps += 1
        d //= 2
    return a[:n], adds, steps


def greedy_schedule_steps(n, p):
    """Steps of a greedy schedule of the binary reduction tree on p processors: each level's
    additions are independent, so a level of w additions takes ceil(w / p) steps."""
    steps, level = 0, n
    while level > 1:
        w = level // 2
        steps += math.ceil(w / p)
        level -= w
    return steps


# --- reductions ------------------------------------------------------------------------------

@given(st.integers(1, 3000), st.integers(2, 40))
def test_tree_reduction_counts_match_the_simulation(n, k):
    values = list(range(1, n + 1))
    total, adds, steps = simulate_tree_reduction(values, k)
    assert total == n * (n + 1) // 2
    assert pp.tree_reduction_work(n, k) == adds == n - 1
    assert pp.tree_reduction_span(n, k) >= steps  # the model counts full nodes on every level
    if n == k ** pp.ceil_log(n, k):  # a full tree: exact
        assert pp.tree_reduction_span(n, k) == steps


@given(st.integers(1, 10**12), st.integers(2, 64))
def test_ceil_log_is_exact(n, b):
    levels = pp.ceil_log(n, b)
    assert b**levels >= n and (levels == 0 or b ** (levels - 1) < n)


def test_warp_and_block_steps():
    assert pp.warp_shuffle_steps() == 5  # 16, 8, 4, 2, 1
    assert pp.warp_shuffle_steps(64) == 6
    for b in (32, 64, 256, 1024):
        assert pp.block_reduction_steps(b) == int(math.log2(b))  # the hierarchy keeps log2 B
    assert pp.block_reduction_steps(1) == 5  # one warp still does its shuffles


@given(st.integers(1, 10**9), st.integers(2, 1 << 16))
def test_grid_passes_match_repeated_division(n, e):
    passes, left = 0, n
    while left > 1:
        left = -(-left // e)
        passes += 1
    assert pp.grid_reduction_passes(n, e) == passes


# --- scans -----------------------------------------------------------------------------------

@settings(max_examples=60)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=600))
def test_scans_match_their_simulations(values):
    n = len(values)
    hs, hs_adds, hs_steps = simulate_hillis_steele(values)
    assert np.array_equal(hs, np.cumsum(values))
    assert pp.hillis_steele_scan_work(n) == hs_adds
    assert pp.hillis_steele_scan_span(n) == hs_steps
    bl, bl_adds, bl_steps = simulate_blelloch(values)
    assert np.array_equal(bl, np.concatenate([[0], np.cumsum(values)[:-1]]))
    assert pp.blelloch_scan_work(n) == bl_adds
    assert pp.blelloch_scan_span(n) == bl_steps


def test_published_scan_numbers():
    # Harris, Sengupta and Owens (2007), GPU Gems 3, section 39.1: the example exclusive scan
    example = [3, 1, 7, 0, 4, 1, 6, 3]
    out, adds, steps = simulate_blelloch(example)
    assert out.tolist() == [0, 3, 4, 11, 11, 15, 16, 22]
    # Blelloch (1990): 2(n - 1) operations in 2 log2 n steps; GPU Gems 3, 39.2.2: 2(n-1) adds
    for n in (8, 1024, 1 << 20):
        assert pp.blelloch_scan_work(n) == 2 * (n - 1)
        assert pp.blelloch_scan_span(n) == 2 * int(math.log2(n))
        # 39.2.1: the naive scan's additions, sum over d of (n - 2^(d-1)) = n log2 n - (n - 1)
        assert pp.hillis_steele_scan_work(n) == n * int(math.log2(n)) - (n - 1)
    assert adds == 14 and steps == 6


@given(st.integers(2, 1 << 24))
def test_work_efficiency_limits(n):
    # the work-efficient scan stays within a constant factor of the sequential n - 1 additions;
    # the step-doubling one grows like log n
    padded = 1 << (n - 1).bit_length()
    assert pp.blelloch_scan_work(n) <= 2 * (padded - 1) < 4 * n
    assert pp.hillis_steele_scan_work(n) >= n - 1
    assert pp.hillis_steele_scan_span(n) <= pp.blelloch_scan_span(n) == 2 * pp.ceil_log(n)


# --- Brent's bound ---------------------------------------------------------------------------

@given(st.integers(2, 1 << 18), st.integers(1, 4096))
def test_greedy_schedule_lies_within_brents_bounds(n, p):
    w, s = pp.tree_reduction_work(n), pp.tree_reduction_span(n)
    t = greedy_schedule_steps(n, p)
    assert pp.brent_time_lower_bound(w, s, p) <= t <= pp.brent_time_bound(w, s, p)


def test_brent_limits():
    assert pp.brent_time_bound(1000, 10, 1) == 1010  # one processor: the work (plus the span)
    assert pp.brent_time_bound(1000, 10, 10**9) == pytest.approx(10, rel=1e-6)  # -> the span
    with pytest.raises(ValueError, match="span must be <= work"):
        pp.brent_time_bound(5, 10, 2)


# --- histograms ------------------------------------------------------------------------------

@given(st.integers(1, 4096), st.floats(0, 3))
def test_zipf_is_a_distribution_hottest_first(b, s):
    p = pp.zipf_probabilities(b, s)
    assert p.sum() == pytest.approx(1.0) and np.all(np.diff(p) <= 1e-15)
    assert 1.0 - 1e-12 <= pp.contention_factor(p) <= b * (1 + 1e-12)


def test_hottest_bin_against_random_keys():
    rng = np.random.default_rng(0)
    n, bins = 2_000_000, 256
    for s in (0.0, 1.0, 1.5):
        p = pp.zipf_probabilities(bins, s)
        counts = np.bincount(rng.choice(bins, size=n, p=p), minlength=bins)
        if s == 0:  # uniform: the fullest bin exceeds n / B by a few sqrt(n / B)
            assert n / bins < counts.max() < n / bins + 6 * math.sqrt(n / bins)
        else:
            assert counts.max() == pytest.approx(pp.hottest_bin_updates(n, p), rel=0.01)


def test_atomic_and_privatized_histogram_times():
    uniform, skewed = pp.zipf_probabilities(256, 0.0), pp.zipf_probabilities(256, 1.0)
    kw = dict(atomic_updates_per_s=1e9, same_address_s=1e-8)
    # uniform keys: throughput-bound; skewed: the hottest bin's chain decides
    assert pp.atomic_histogram_time_s(1e6, uniform, **kw) == pytest.approx(1e-3)
    t_skew = pp.atomic_histogram_time_s(1e6, skewed, **kw)
    assert t_skew == pytest.approx(1e6 * skewed[0] * 1e-8)
    # privatizing divides the chain by the copies, plus the merge
    t_priv = pp.privatized_histogram_time_s(1e6, skewed, copies=64, **kw)
    assert t_priv == pytest.approx(max(1e-3, 1e6 * skewed[0] / 64 * 1e-8) + 64 * 256 / 1e9)
    assert t_priv < t_skew  # back to the throughput bound
    assert pp.privatized_histogram_time_s(1e6, skewed, copies=1, **kw) == pytest.approx(t_skew + 256 / 1e9)
    # too many copies: the merge dominates
    many = pp.privatized_histogram_time_s(1e6, skewed, copies=10**5, **kw)
    assert many > t_priv


def test_value_errors():
    for fn, args in ((pp.tree_reduction_work, (0,)), (pp.tree_reduction_span, (8, 1)),
                     (pp.hillis_steele_scan_work, (1.5,)), (pp.blelloch_scan_work, (-4,)),
                     (pp.grid_reduction_passes, (10, 1)), (pp.zipf_probabilities, (0, 1.0)),
                     (pp.zipf_probabilities, (4, -1.0)), (pp.brent_time_bound, (10, 1, 0)),
                     (pp.warp_shuffle_steps, (1,)), (pp.ceil_log, (True,))):
        with pytest.raises(ValueError):
            fn(*args)
    with pytest.raises(ValueError, match="sum to 1"):
        pp.hottest_bin_updates(10, [0.5, 0.4])
    with pytest.raises(ValueError, match="non-empty"):
        pp.contention_factor([])
    with pytest.raises(ValueError, match="atomic_updates_per_s"):
        pp.atomic_histogram_time_s(10, [1.0], atomic_updates_per_s=0, same_address_s=1e-9)
