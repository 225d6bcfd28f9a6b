"""helpers.models.collectives: limits, a step-by-step ring and tree simulator, nccl-tests' factors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.book import ROOT
from helpers.models import collectives as c

RANKS = st.integers(1, 64)
BYTES = st.floats(0, 1e10, allow_nan=False)
ALPHA = st.floats(0, 1e-3, allow_nan=False)
BETA = st.floats(0, 1e-8, allow_nan=False)
RING = [c.ring_allreduce_time_s, c.reduce_scatter_time_s, c.all_gather_time_s,
        c.all_to_all_time_s, c.broadcast_time_s, c.tree_allreduce_time_s]


# --- limits and invariants ----------------------------------------------------------------------

@pytest.mark.parametrize("fn", RING)
@given(n=BYTES, a=ALPHA, b=BETA)
@settings(max_examples=30, deadline=None)
def test_one_rank_communicates_nothing(fn, n, a, b):
    assert fn(n, 1, a, b) == 0.0


@given(p=st.integers(2, 64), a=st.floats(1e-7, 1e-4), b=st.floats(1e-12, 1e-9))
@settings(max_examples=50, deadline=None)
def test_large_messages_reach_the_bandwidth_term(p, a, b):
    n = 1e18  # latency negligible: T -> 2 (p-1)/p n beta, the Patarasuk-Yuan lower bound
    t = c.ring_allreduce_time_s(n, p, a, b)
    assert t == pytest.approx(2 * (p - 1) / p * n * b, rel=1e-6)
    # so busbw at that size is the link bandwidth whatever p is (nccl-tests' point)
    assert c.busbw_bytes_per_s(n, t, "all_reduce", p) == pytest.approx(1 / b, rel=1e-6)


@given(p=st.integers(2, 64), a=st.floats(1e-7, 1e-4), b=st.floats(1e-12, 1e-9))
@settings(max_examples=50, deadline=None)
def test_zero_bytes_cost_the_latency_steps(p, a, b):
    assert c.ring_allreduce_time_s(0.0, p, a, b) == pytest.approx(2 * (p - 1) * a)
    assert c.all_gather_time_s(0.0, p, a, b) == pytest.approx((p - 1) * a)
    assert c.tree_allreduce_time_s(0.0, p, a, b) == pytest.approx(2 * math.ceil(math.log2(p)) * a)


@given(n=st.floats(1, 1e10), p=st.integers(2, 64), a=ALPHA, b=BETA)
@settings(max_examples=50, deadline=None)
def test_all_reduce_is_reduce_scatter_then_all_gather(n, p, a, b):
    whole = c.ring_allreduce_time_s(n, p, a, b)
    parts = c.reduce_scatter_time_s(n, p, a, b) + c.all_gather_time_s(n, p, a, b)
    assert whole == pytest.approx(parts, rel=1e-12, abs=1e-300)


@given(p=st.integers(2, 64))
def test_tree_beats_ring_for_tiny_messages_and_loses_for_large_ones(p):
    a, b = 5e-6, 1 / 100e9
    if p >= 4:  # ceil(log2 p) < p - 1
        assert c.tree_allreduce_time_s(8.0, p, a, b) < c.ring_allreduce_time_s(8.0, p, a, b)
    if p >= 3:
        assert c.tree_allreduce_time_s(1e10, p, a, b) > c.ring_allreduce_time_s(1e10, p, a, b)


def test_times_grow_with_size_and_arrays_work():
    sizes = np.logspace(0, 9, 10)
    t = c.ring_allreduce_time_s(sizes, 8, 1e-6, 1e-10)
    assert t.shape == sizes.shape and np.all(np.diff(t) > 0)


@pytest.mark.parametrize("name", c.COLLECTIVES)
@given(n=st.floats(1, 1e10), p=st.integers(1, 64), a=ALPHA, b=BETA)
@settings(max_examples=20, deadline=None)
def test_collective_time_dispatches_to_the_named_model(name, n, p, a, b):
    direct = {"all_reduce": c.ring_allreduce_time_s, "all_gather": c.all_gather_time_s,
              "reduce_scatter": c.reduce_scatter_time_s, "all_to_all": c.all_to_all_time_s,
              "broadcast": c.broadcast_time_s, "reduce": c.broadcast_time_s}[name]
    assert c.collective_time_s(name, n, p, a, b) == pytest.approx(direct(n, p, a, b), rel=1e-12)


# --- an independent oracle: simulate the ring and the tree step by step --------------------------

def simulate_ring_allreduce(data: np.ndarray, alpha: float, beta: float, itemsize: int):
    """Run the ring reduce-scatter + all-gather on ``data`` (p rows): return (result, time, steps).

    Every step, each rank sends one chunk to its right neighbour; the step lasts alpha plus the
    largest chunk's bytes times beta (all links busy at once).
    """
    p, m = data.shape
    bufs = [row.astype(np.float64).copy() for row in data]
    bounds = np.linspace(0, m, p + 1).astype(int)
    chunk = [slice(bounds[i], bounds[i + 1]) for i in range(p)]
    t, steps = 0.0, 0
    for phase in ("reduce_scatter", "all_gather"):
        for s in range(p - 1):
            sends = []
            for r in range(p):
                k = (r - s) % p if phase == "reduce_scatter" else (r + 1 - s) % p
                sends.append(((r + 1) % p, k, bufs[r][chunk[k]].copy()))
            for dst, k, payload in sends:
                if phase == "reduce_scatter":
                    bufs[dst][chunk[k]] += payload
                else:
                    bufs[dst][chunk[k]] = payload
            t += alpha + max(x.size for _, _, x in sends) * itemsize * beta
            steps += 1
    return np.array(bufs), t, steps


def simulate_binomial_allreduce(data: np.ndarray, alpha: float, beta: float, itemsize: int):
    """Binomial-tree reduce to rank 0 then binomial broadcast; one round = alpha + n beta."""
    p, m = data.shape
    bufs = [row.astype(np.float64).copy() for row in data]
    rounds, mask = 0, 1
    while mask < p:  # reduce: ranks with bit `mask` send to rank - mask
        for r in range(p):
            if r % (2 * mask) == mask:
                bufs[r - mask] += bufs[r]
        rounds, mask = rounds + 1, mask * 2
    mask //= 2
    while mask >= 1:  # broadcast, the reverse
        for r in range(0, p, 2 * mask):
            if r + mask < p:
                bufs[r + mask] = bufs[r].copy()
        rounds, mask = rounds + 1, mask // 2
    return np.array(bufs), rounds * (alpha + m * itemsize * beta), rounds


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 8, 13])
def test_ring_model_matches_a_step_by_step_simulation(p):
    rng = np.random.default_rng(p)
    m = 60 * p  # divisible by p: every chunk is n/p
    data = rng.uniform(0.5, 1.5, size=(p, m))
    a, b = 3e-6, 2e-10
    got, t, steps = simulate_ring_allreduce(data, a, b, itemsize=8)
    np.testing.assert_allclose(got, np.broadcast_to(data.sum(0), got.shape), rtol=1e-12)
    assert steps == 2 * (p - 1)
    assert t == pytest.approx(c.ring_allreduce_time_s(m * 8.0, p, a, b), rel=1e-12, abs=0)


@pytest.mark.parametrize("p", [1, 2, 3, 4, 7, 8, 16])
def test_tree_model_matches_a_step_by_step_simulation(p):
    rng = np.random.default_rng(100 + p)
    data = rng.uniform(0.5, 1.5, size=(p, 37))
    got, t, rounds = simulate_binomial_allreduce(data, 2e-6, 1e-10, itemsize=8)
    np.testing.assert_allclose(got, np.broadcast_to(data.sum(0), got.shape), rtol=1e-12)
    assert t == pytest.approx(c.tree_allreduce_time_s(37 * 8.0, p, 2e-6, 1e-10), rel=1e-12, abs=0)


# --- published numbers ---------------------------------------------------------------------------

@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_busbw_factors_are_those_of_nccl_tests(p):
    # NVIDIA nccl-tests doc/PERFORMANCE.md, "Summary": AllReduce 2(n-1)/n; ReduceScatter,
    # AllGather and AlltoAll (n-1)/n; Broadcast and Reduce 1.
    assert c.busbw_factor("all_reduce", p) == 2 * (p - 1) / p
    for name in ("reduce_scatter", "all_gather", "all_to_all"):
        assert c.busbw_factor(name, p) == (p - 1) / p
    assert c.busbw_factor("broadcast", p) == c.busbw_factor("reduce", p) == 1.0


def test_mpich_cost_comments_reproduced():
    # MPICH's source states the costs of Thakur, Rabenseifner and Gropp (2005): ring allgather
    # (p-1) alpha + n (p-1)/p beta (allgather_intra_ring.c); binomial bcast lg p alpha +
    # n lg p beta (bcast_intra_binomial.c); pairwise alltoall (p-1) alpha + n' beta where n' is
    # what a rank sends to the others, i.e. (p-1)/p of its send buffer (alltoall_intra_pairwise.c).
    p, n, a, b = 16, 1e6, 1e-6, 1e-9
    assert c.all_gather_time_s(n, p, a, b) == pytest.approx((p - 1) * a + n * (p - 1) / p * b)
    assert c.broadcast_time_s(n, p, a, b) == pytest.approx(4 * a + n * 4 * b)
    assert c.all_to_all_time_s(n, p, a, b) == pytest.approx((p - 1) * a + (n * (p - 1) / p) * b)


def test_aliases_and_algbw():
    assert c.busbw_factor("AllReduce", 4) == c.busbw_factor("all-reduce", 4) == 1.5
    assert c.busbw_factor("all_gather_into_tensor", 4) == 0.75
    assert c.algbw_bytes_per_s(2e9, 0.5) == 4e9


# --- the fit ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["all_reduce", "all_gather", "reduce_scatter"])
@given(p=st.integers(2, 16), a=st.floats(1e-7, 1e-3), bw=st.floats(1e8, 1e12))
@settings(max_examples=25, deadline=None)
def test_fit_recovers_alpha_and_beta(name, p, a, bw):
    sizes = np.logspace(3, 9, 12)
    t = c.collective_time_s(name, sizes, p, a, 1 / bw)
    fit = c.fit_alpha_beta(sizes, t, p, name)
    assert fit.alpha_s == pytest.approx(a, rel=1e-6)
    assert fit.beta_s_per_byte == pytest.approx(1 / bw, rel=1e-6)
    assert np.max(np.abs(fit.residuals)) < 1e-9
    alpha, beta, res = fit  # unpacks as three
    assert res.shape == sizes.shape


def test_fit_of_noisy_times_is_close_and_residuals_show_the_noise():
    rng = np.random.default_rng(0)
    sizes = np.logspace(3, 8, 20)
    t = c.ring_allreduce_time_s(sizes, 4, 20e-6, 1 / 2e9) * rng.uniform(0.95, 1.05, sizes.size)
    fit = c.fit_alpha_beta(sizes, t, 4)
    assert fit.alpha_s == pytest.approx(20e-6, rel=0.1)
    assert 1 / fit.beta_s_per_byte == pytest.approx(2e9, rel=0.1)
    assert 0.01 < np.max(np.abs(fit.residuals)) < 0.1


def test_fit_of_times_that_shrink_with_size_puts_beta_at_zero_and_refits_alpha():
    """An oversubscribed CPU can time a large message faster than a small one; the free fit
    then wants a negative beta. The constrained optimum is beta = 0 with alpha refitted alone,
    which on relative errors is the harmonic mean of t / c_alpha: an independent oracle."""
    sizes = np.array([4e3, 1.6e4, 6.4e4, 2.56e5])
    t = np.array([4e-4, 3.5e-4, 3.0e-4, 2.6e-4])
    fit = c.fit_alpha_beta(sizes, t, 4)
    ca = 2 * (4 - 1)
    assert fit.beta_s_per_byte == 0.0
    assert fit.alpha_s == pytest.approx(np.sum(1 / t) / np.sum(1 / t ** 2) / ca, rel=1e-12)
    # no point of the feasible set fits better (grid search around the optimum)
    def cost(a, b):
        return np.sum(((ca * a + 2 * 3 / 4 * sizes * b) / t - 1) ** 2)
    best = cost(fit.alpha_s, 0.0)
    for a in fit.alpha_s * np.linspace(0.5, 1.5, 21):
        for b in np.linspace(0, 1e-9, 11):
            assert cost(a, b) >= best - 1e-15


# --- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", RING)
@pytest.mark.parametrize("args, match", [
    ((-1.0, 4, 1e-6, 1e-9), "message_bytes"),
    ((1.0, 0, 1e-6, 1e-9), "ranks"),
    ((1.0, 2.5, 1e-6, 1e-9), "ranks"),
    ((1.0, 4, -1e-6, 1e-9), "alpha_s"),
    ((1.0, 4, 1e-6, float("nan")), "beta_s_per_byte"),
])
def test_bad_arguments_name_themselves(fn, args, match):
    with pytest.raises(ValueError, match=match):
        fn(*args)


def test_bad_collective_and_fit_inputs():
    with pytest.raises(ValueError, match="collective"):
        c.busbw_factor("gather", 4)
    with pytest.raises(ValueError, match="time_s"):
        c.algbw_bytes_per_s(1.0, 0.0)
    with pytest.raises(ValueError, match="n_ranks"):
        c.fit_alpha_beta([1e3, 1e4], [1e-5, 2e-5], 1)
    with pytest.raises(ValueError, match="distinct sizes"):
        c.fit_alpha_beta([1e3, 1e3], [1e-5, 2e-5], 2)
    with pytest.raises(ValueError, match="same length"):
        c.fit_alpha_beta([1e3, 1e4], [1e-5], 2)


# --- per-regime fit and the flat region (issue 17) ------------------------------------------

SIZES_28 = np.array([2.0 ** k for k in range(3, 31)])  # 8 B to 1 GiB, the NCCL sweep


def piecewise(sizes, split, small, large, p=2, name="all_reduce"):
    """Times from two alpha-beta lines: ``small`` = (alpha, beta) below ``split``, ``large`` at
    and above it."""
    return np.where(sizes < split, c.collective_time_s(name, sizes, p, *small),
                    c.collective_time_s(name, sizes, p, *large))


@pytest.mark.parametrize("name", ["all_reduce", "all_gather", "reduce_scatter"])
@pytest.mark.parametrize("split_k", [5, 12, 20, 26])
def test_regime_fit_recovers_synthetic_piecewise_data_exactly(name, split_k):
    split = 2.0 ** split_k
    small, large = (20e-6, 1e-12), (4e-6, 1 / 360e9)  # a host floor, then a wire
    t = piecewise(SIZES_28, split, small, large, 4, name)
    f = c.fit_alpha_beta_regimes(SIZES_28, t, 4, name)
    assert f.split_bytes == split
    assert f.small.alpha_s == pytest.approx(small[0], rel=1e-9)
    assert f.small.beta_s_per_byte == pytest.approx(small[1], rel=1e-6)
    assert f.large.alpha_s == pytest.approx(large[0], rel=1e-6)
    assert f.large.beta_s_per_byte == pytest.approx(large[1], rel=1e-9)
    assert f.sse == pytest.approx(0.0, abs=1e-20)
    assert len(f.small.residuals) + len(f.large.residuals) == SIZES_28.size
    # the one-line fit through the same points misses, which is why the regimes exist
    assert np.max(np.abs(c.fit_alpha_beta(SIZES_28, t, 4, name).residuals)) > 0.1


def test_regime_fit_of_one_line_loses_nothing_and_matches_the_one_regime_fit():
    t = c.ring_allreduce_time_s(SIZES_28, 2, 5e-6, 1 / 300e9)
    f = c.fit_alpha_beta_regimes(SIZES_28, t, 2)
    whole = c.fit_alpha_beta(SIZES_28, t, 2)
    assert f.sse == pytest.approx(0.0, abs=1e-20)
    for part in (f.small, f.large):
        assert part.alpha_s == pytest.approx(whole.alpha_s, rel=1e-6)
        assert part.beta_s_per_byte == pytest.approx(whole.beta_s_per_byte, rel=1e-6)


def test_regime_fit_is_the_best_split_by_brute_force_oracle():
    rng = np.random.default_rng(3)
    t = piecewise(SIZES_28, 2.0 ** 22, (20e-6, 0.0), (2e-6, 1 / 300e9)) * rng.uniform(0.8, 1.25, 28)
    f = c.fit_alpha_beta_regimes(SIZES_28, t, 2)
    # the oracle: every split tried by hand, each side fitted alone, compared by total error
    best = None
    for k in range(2, 27):
        sse = 0.0
        for sl in (slice(0, k), slice(k, 28)):
            sse += float(np.sum(c.fit_alpha_beta(SIZES_28[sl], t[sl], 2).residuals ** 2))
        if best is None or sse < best[0]:
            best = (sse, SIZES_28[k])
    assert f.split_bytes == best[1] and f.sse == pytest.approx(best[0])
    # and it fits better than one line, never worse
    assert f.sse <= float(np.sum(c.fit_alpha_beta(SIZES_28, t, 2).residuals ** 2))


def test_regime_fit_limits_and_order():
    # the fewest points: two per regime; shuffled input gives the same fit
    n = np.array([1e3, 1e4, 1e6, 1e7])
    t = piecewise(n, 1e6, (10e-6, 0.0), (1e-6, 1e-9))
    f = c.fit_alpha_beta_regimes(n[::-1], t[::-1], 2)
    assert f.split_bytes == 1e6 and f.small.alpha_s == pytest.approx(10e-6)
    assert f.small.beta_s_per_byte == pytest.approx(0.0, abs=1e-20)  # flat: no bandwidth term
    # min_points moves the allowed splits: with 3 per side the split cannot be the true one
    n6 = np.array([1e3, 1e4, 1e5, 1e6, 1e7, 1e8])
    t6 = piecewise(n6, 1e5, (10e-6, 0.0), (1e-6, 1e-9))
    assert c.fit_alpha_beta_regimes(n6, t6, 2).split_bytes == 1e5
    g = c.fit_alpha_beta_regimes(n6, t6, 2, min_points=3)
    assert g.split_bytes == 1e6 and g.sse > 0


def test_regime_fit_bad_input():
    n = [1e3, 1e4, 1e5, 1e6]
    t = [1e-5, 1e-5, 2e-5, 3e-4]
    with pytest.raises(ValueError, match="need at least 4 distinct sizes"):
        c.fit_alpha_beta_regimes(n[:3], t[:3], 2)
    with pytest.raises(ValueError, match="need at least 6 distinct sizes.*min_points=3"):
        c.fit_alpha_beta_regimes(n, t, 2, min_points=3)
    with pytest.raises(ValueError, match="min_points"):
        c.fit_alpha_beta_regimes(n, t, 2, min_points=1)
    with pytest.raises(ValueError, match="n_ranks"):
        c.fit_alpha_beta_regimes(n, t, 1)
    with pytest.raises(ValueError, match="same length"):
        c.fit_alpha_beta_regimes(n, t[:3], 2)
    with pytest.raises(ValueError, match="times_s"):
        c.fit_alpha_beta_regimes(n, [1e-5, 0.0, 2e-5, 3e-4], 2)
    with pytest.raises(ValueError, match="collective"):
        c.fit_alpha_beta_regimes(n, t, 2, "gossip")


def test_flat_region_end():
    n = [8, 16, 32, 64, 128]
    # a floor, an outlier above the band inside it, then growth
    assert c.flat_region_end_bytes(n, [10e-6, 11e-6, 30e-6, 11.9e-6, 13e-6]) == 64.0
    # the band's edge is inclusive and rel_tol moves it
    assert c.flat_region_end_bytes(n, [10e-6, 12e-6, 14e-6, 20e-6, 40e-6]) == 16.0
    assert c.flat_region_end_bytes(n, [10e-6, 12e-6, 14e-6, 20e-6, 40e-6], rel_tol=0.4) == 32.0
    # zero tolerance: only times no larger than the smallest size's; order does not matter
    assert c.flat_region_end_bytes(n[::-1], [40e-6, 20e-6, 14e-6, 9e-6, 10e-6], rel_tol=0.0) == 16.0
    # a pure bandwidth line with no floor is flat only at its first size
    assert c.flat_region_end_bytes(n, [x * 1e-9 for x in n]) == 8.0
    # the model's own flat part: alpha-beta with the terms equal at n_half = c_a alpha / (c_b beta)
    sizes = SIZES_28
    t = c.ring_allreduce_time_s(sizes, 2, 10e-6, 1 / 100e9)
    end = c.flat_region_end_bytes(sizes, t, 0.2)
    n_half = 2 * 10e-6 * 100e9
    assert end <= 0.2 * n_half < 2 * end  # the band ends where the bandwidth term is 20 %


def test_flat_region_of_the_shipped_nccl_reference_is_8_bytes_to_4_mib():
    """The number the collectives pages print: the shipped 2-GPU all-reduce is flat to 4 MiB."""
    import json
    from pathlib import Path

    path = ROOT / "labs/reference/h200/collectives.json"
    run = json.loads(path.read_text())["measurements"]["runs"][0]
    assert run["backend"] == "nccl"
    pts = run["collectives"]["all_reduce"]
    end = c.flat_region_end_bytes([q["message_bytes"] for q in pts], [q["median_s"] for q in pts])
    assert end == 4 * 2**20


def test_flat_region_bad_input():
    with pytest.raises(ValueError, match="same nonzero length"):
        c.flat_region_end_bytes([8, 16], [1e-5])
    with pytest.raises(ValueError, match="rel_tol"):
        c.flat_region_end_bytes([8, 16], [1e-5, 1e-5], rel_tol=-0.1)
    with pytest.raises(ValueError, match="message_bytes"):
        c.flat_region_end_bytes([8, -16], [1e-5, 1e-5])


# --- the two-point line (the lab's prediction of its largest size) ---------------------------

@given(p=st.integers(2, 16), a=st.floats(1e-7, 1e-4), bw=st.floats(1e9, 1e12),
       k1=st.integers(10, 25), gap=st.integers(1, 4), ahead=st.floats(0, 4))
@settings(max_examples=60, deadline=None)
def test_two_points_on_an_alpha_beta_line_recover_it_anywhere(p, a, bw, k1, gap, ahead):
    n1, n2 = 2.0 ** k1, 2.0 ** (k1 + gap)
    line = [float(c.ring_allreduce_time_s(x, p, a, 1 / bw)) for x in (n1, n2)]
    n = n2 * 2 ** ahead
    assert c.two_point_time_s(n, (n1, n2), line) == pytest.approx(
        float(c.ring_allreduce_time_s(n, p, a, 1 / bw)), rel=1e-9)
    # at its own points it returns them; at zero bytes it is the latency terms
    assert c.two_point_time_s(n1, (n1, n2), line) == pytest.approx(line[0], rel=1e-12)
    assert c.two_point_time_s(0.0, (n2, n1), line[::-1]) == pytest.approx(2 * (p - 1) * a, rel=1e-6)


def test_two_point_prediction_of_the_h200_pair_from_its_own_run():
    """The shipped all-reduce's 256 and 512 MiB times predict its 1 GiB time within 3 %."""
    import json
    from pathlib import Path

    path = ROOT / "labs/reference/h200/collectives.json"
    pts = json.loads(path.read_text())["measurements"]["runs"][0]["collectives"]["all_reduce"]
    (n1, t1), (n2, t2), (n, t) = [(q["message_bytes"], q["median_s"]) for q in pts[-3:]]
    assert (n1, n2, n) == (2**28, 2**29, 2**30)
    assert c.two_point_time_s(n, (n1, n2), (t1, t2)) / t - 1 == pytest.approx(0.025, abs=0.005)


def test_two_point_bad_input():
    with pytest.raises(ValueError, match="distinct"):
        c.two_point_time_s(1e6, (1e3, 1e3), (1e-5, 2e-5))
    with pytest.raises(ValueError, match="sizes_bytes must be a pair.*3 values"):
        c.two_point_time_s(1e6, (1e3, 1e4, 1e5), (1e-5, 2e-5))
    with pytest.raises(ValueError, match="times_s must be a pair"):
        c.two_point_time_s(1e6, (1e3, 1e4), 1e-5)
    with pytest.raises(ValueError, match="times_s"):
        c.two_point_time_s(1e6, (1e3, 1e4), (0.0, 2e-5))
    with pytest.raises(ValueError, match="message_bytes"):
        c.two_point_time_s(-1.0, (1e3, 1e4), (1e-5, 2e-5))
