"""Tests of helpers.models.memory_hierarchy: limits and invariants, a cache simulation as the
oracle, and the published example of Bryant and O'Hallaron reproduced."""

from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import memory_hierarchy as mh

pos = st.floats(1e-12, 1e-3, allow_nan=False)
frac = st.floats(0.0, 1.0)


# --- limits and invariants ---------------------------------------------------------------

@given(pos, pos)
def test_amat_limits(hit, penalty):
    assert mh.amat_s(hit, 0.0, penalty) == hit
    assert mh.amat_s(hit, 1.0, penalty) == pytest.approx(hit + penalty)


@given(pos, frac, frac, pos)
def test_amat_grows_with_the_miss_rate(hit, m1, m2, penalty):
    lo, hi = sorted((m1, m2))
    assert mh.amat_s(hit, lo, penalty) <= mh.amat_s(hit, hi, penalty)


@given(pos, frac, pos)
def test_one_level_hierarchy_is_the_one_level_formula(hit, m, mem):
    assert mh.amat_multilevel_s([hit], [m], mem) == pytest.approx(mh.amat_s(hit, m, mem))


@given(pos, pos, frac, frac, pos)
def test_two_levels_nest(h1, h2, m1, m2, mem):
    inner = mh.amat_s(h2, m2, mem)
    assert mh.amat_multilevel_s([h1, h2], [m1, m2], mem) == pytest.approx(mh.amat_s(h1, m1, inner))


@given(st.floats(1.0, 1e10), st.floats(1.0, 1e10))
def test_hit_fraction_is_capacity_over_working_set_capped_at_one(w, c):
    h = mh.random_access_hit_fraction(w, c)
    assert 0 < h <= 1
    assert h == pytest.approx(min(1.0, c / w))


@given(st.floats(1e3, 1e10))
def test_served_fractions_sum_to_one(w):
    f = mh.served_fractions(w, [48e3, 2e6, 32e6])
    assert sum(f) == pytest.approx(1.0) and all(x >= 0 for x in f)


def test_chase_model_plateaus_and_the_weighted_sum():
    sizes, lat, mem = [48e3, 2e6], [1e-9, 5e-9], 100e-9
    assert mh.chase_latency_s(16e3, sizes, lat, mem) == pytest.approx(1e-9)     # fits in L1
    assert mh.chase_latency_s(1e12, sizes, lat, mem) == pytest.approx(mem, rel=1e-5)
    for w in (1e5, 1e6, 4e6, 1e8):  # AMAT form equals sum of served fraction x latency
        f = mh.served_fractions(w, sizes)
        assert mh.chase_latency_s(w, sizes, lat, mem) == pytest.approx(
            f[0] * 1e-9 + f[1] * 5e-9 + f[2] * mem)
    ws = np.logspace(3, 10, 50)
    pred = [mh.chase_latency_s(w, sizes, lat, mem) for w in ws]
    assert all(b >= a - 1e-18 for a, b in zip(pred, pred[1:]))  # monotone in the working set


# --- oracle: a simulated LRU cache under random accesses ---------------------------------------

@pytest.mark.parametrize("cache_lines, ws_lines", [(64, 256), (100, 400), (50, 60)])
def test_hit_fraction_matches_a_simulated_lru_cache(cache_lines, ws_lines):
    rng = np.random.default_rng(0)
    cache: OrderedDict[int, None] = OrderedDict()
    hits = n = 0
    for k, line in enumerate(rng.integers(0, ws_lines, 60_000)):
        line = int(line)
        hit = line in cache
        if hit:
            cache.move_to_end(line)
        else:
            cache[line] = None
            if len(cache) > cache_lines:
                cache.popitem(last=False)
        if k >= 10_000:  # warm
            hits += hit
            n += 1
    assert hits / n == pytest.approx(mh.random_access_hit_fraction(ws_lines, cache_lines), abs=0.01)


def test_amat_matches_a_simulated_two_level_hierarchy():
    """Simulate loads through two LRU levels; the mean time equals AMAT with the counted rates."""
    rng = np.random.default_rng(1)
    l1, l2 = OrderedDict(), OrderedDict()
    t1, t2, tm = 1.0, 4.0, 80.0
    total = n = l1_miss = l2_miss = 0

    def touch(cache, line, size):
        hit = line in cache
        if hit:
            cache.move_to_end(line)
        else:
            cache[line] = None
            if len(cache) > size:
                cache.popitem(last=False)
        return hit

    for line in rng.integers(0, 500, 40_000):
        t = t1
        if not touch(l1, int(line), 40):
            l1_miss += 1
            t += t2
            if not touch(l2, int(line), 200):
                l2_miss += 1
                t += tm
        total += t
        n += 1
    amat = mh.amat_multilevel_s([t1, t2], [l1_miss / n, l2_miss / l1_miss], tm)
    assert total / n == pytest.approx(amat, rel=1e-12)


# --- published numbers ------------------------------------------------------------------------

def test_bryant_ohallaron_97_vs_99_percent_hits():
    # CS:APP 3rd ed., section 6.4.7: hit time 1 cycle, miss penalty 100 cycles.
    assert mh.amat_s(1.0, 0.03, 100.0) == pytest.approx(4.0)
    assert mh.amat_s(1.0, 0.01, 100.0) == pytest.approx(2.0)


# --- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(0.0, 0.1, 1.0), (1.0, 1.5, 1.0), (1.0, -0.1, 1.0),
                                  (1.0, 0.1, -1.0), (float("nan"), 0.1, 1.0)])
def test_amat_rejects_bad_input(args):
    with pytest.raises(ValueError):
        mh.amat_s(*args)


def test_multilevel_and_chase_reject_bad_input():
    with pytest.raises(ValueError, match="same length"):
        mh.amat_multilevel_s([1.0, 2.0], [0.1], 10.0)
    with pytest.raises(ValueError, match="at least one"):
        mh.amat_multilevel_s([], [], 10.0)
    with pytest.raises(ValueError, match="decrease"):
        mh.served_fractions(1e6, [2e6, 48e3])
    with pytest.raises(ValueError, match="decrease"):
        mh.chase_latency_s(1e6, [48e3, 2e6], [5e-9, 1e-9], 100e-9)
    with pytest.raises(ValueError, match="working_set_bytes"):
        mh.random_access_hit_fraction(0.0, 1e3)


def test_plateaus_recover_the_latencies_of_a_modelled_sweep():
    sizes, lat, mem = [48e3, 2e6, 32e6], [1e-9, 5e-9, 40e-9], 150e-9
    ws = np.logspace(3.5, 9, 40)
    measured = [mh.chase_latency_s(w, sizes, lat, mem) for w in ws]
    got, got_mem = mh.plateau_latencies_s(ws, measured, sizes)
    assert got == pytest.approx(lat, rel=0.15)
    assert got_mem == pytest.approx(mem, rel=0.05)
    with pytest.raises(ValueError):
        mh.plateau_latencies_s([1e3], [1e-9], sizes)
