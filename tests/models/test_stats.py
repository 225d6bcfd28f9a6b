"""Tests of helpers.models.stats: invariants, independent oracles and published numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import stats

# Finite, moderately sized samples; timings are positive but the statistics must not care.
values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
samples = st.lists(values, min_size=1, max_size=60)
positive = st.floats(min_value=1e-6, max_value=1e3, allow_nan=False, allow_infinity=False)
positive_samples = st.lists(positive, min_size=6, max_size=80)
FAST = settings(max_examples=60, deadline=None)


# --------------------------------------------------------------------------------------
# percentile
# --------------------------------------------------------------------------------------
class TestPercentile:
    @FAST
    @given(samples, st.floats(0, 100), st.floats(0, 100))
    def test_monotone_in_q(self, xs, q1, q2):
        lo, hi = sorted((q1, q2))
        assert stats.percentile(xs, lo) <= stats.percentile(xs, hi) + 1e-9 * (1 + max(map(abs, xs)))

    @FAST
    @given(samples, st.floats(0, 100))
    def test_bounded_by_min_and_max(self, xs, q):
        p = stats.percentile(xs, q)
        assert min(xs) <= p <= max(xs)

    @FAST
    @given(samples)
    def test_ends_are_min_and_max(self, xs):
        assert stats.percentile(xs, 0) == min(xs)
        assert stats.percentile(xs, 100) == max(xs)

    @FAST
    @given(samples, st.floats(0, 100), st.floats(1e-3, 1e3), st.floats(-1e3, 1e3))
    def test_affine_equivariance(self, xs, q, a, b):
        lhs = stats.percentile([a * x + b for x in xs], q)
        rhs = a * stats.percentile(xs, q) + b
        assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-6 * (1 + a * max(map(abs, xs))))

    @FAST
    @given(samples, st.floats(0, 100), st.randoms(use_true_random=False))
    def test_order_of_samples_does_not_matter(self, xs, q, rnd):
        shuffled = list(xs)
        rnd.shuffle(shuffled)
        assert stats.percentile(shuffled, q) == stats.percentile(xs, q)

    def test_matches_numpy_for_every_q(self):
        rng = np.random.default_rng(7)
        for n in (1, 2, 3, 10, 101, 1000):
            x = rng.lognormal(0.0, 0.8, n)
            for q in np.linspace(0, 100, 401):
                assert stats.percentile(x, q) == pytest.approx(
                    float(np.percentile(x, q, method="linear")), rel=1e-12, abs=1e-15)

    def test_numpy_documentation_example(self):
        # numpy.percentile's documented example: the median of [[10, 7, 4], [3, 2, 1]] is 3.5.
        assert stats.percentile([10, 7, 4, 3, 2, 1], 50) == 3.5

    @pytest.mark.parametrize("q", [-0.1, 100.1, float("nan")])
    def test_rejects_bad_q(self, q):
        with pytest.raises(ValueError, match="q must be"):
            stats.percentile([1.0, 2.0], q)

    @pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")], [[1.0, 2.0]]])
    def test_rejects_bad_samples(self, bad):
        with pytest.raises(ValueError, match="samples"):
            stats.percentile(bad, 50)


class TestSummary:
    def test_fields_agree_with_numpy(self):
        x = np.random.default_rng(3).gamma(2.0, 1.0, 500)
        s = stats.summarize(x)
        assert s.n == 500
        assert s.mean == pytest.approx(float(x.mean()))
        assert s.std == pytest.approx(float(x.std(ddof=1)))
        for name, q in [("p5", 5), ("p25", 25), ("median", 50), ("p75", 75), ("p95", 95),
                        ("p99", 99)]:
            assert getattr(s, name) == pytest.approx(float(np.percentile(x, q)))
        assert s.min == x.min() and s.max == x.max()
        assert s.iqr == pytest.approx(s.p75 - s.p25)

    def test_single_value(self):
        s = stats.summarize([4.0])
        assert (s.n, s.std, s.min, s.median, s.max) == (1, 0.0, 4.0, 4.0, 4.0)

    def test_median_resists_an_outlier_the_mean_does_not(self):
        s = stats.summarize([1.0, 1.0, 1.0, 1.0, 1000.0])
        assert s.median == 1.0 and s.mean > 100


# --------------------------------------------------------------------------------------
# binomial and order-statistic intervals
# --------------------------------------------------------------------------------------
def _exact_binomial_cdf(k, n, p):
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(0, k + 1))


class TestBinomial:
    @pytest.mark.parametrize("n", [1, 5, 20, 57])
    @pytest.mark.parametrize("p", [0.01, 0.3, 0.5, 0.9])
    def test_matches_exact_sum(self, n, p):
        for k in range(-1, n + 2):
            expected = _exact_binomial_cdf(min(max(k, -1), n), n, p) if k >= 0 else 0.0
            assert stats.binomial_cdf(k, n, p) == pytest.approx(expected, abs=1e-12)

    def test_large_n_is_fast_and_symmetric(self):
        # P(B <= n/2 - 1) + P(B <= n/2) = 1 for even n at p = 1/2, by symmetry.
        n = 10_000
        total = stats.binomial_cdf(n // 2 - 1, n) + stats.binomial_cdf(n // 2, n)
        assert total == pytest.approx(1.0, abs=1e-9)

    def test_published_table_value(self):
        # Binomial tables (e.g. Conover 1999, table A3): P(B <= 5 | n = 20, p = 0.5) = 0.0207.
        assert round(stats.binomial_cdf(5, 20, 0.5), 4) == 0.0207

    @pytest.mark.parametrize("n,p", [(-1, 0.5), (2.5, 0.5), (10, -0.1), (10, 1.5)])
    def test_rejects_bad_input(self, n, p):
        with pytest.raises(ValueError):
            stats.binomial_cdf(1, n, p)

    def test_degenerate_p(self):
        assert stats.binomial_cdf(3, 10, 0.0) == 1.0
        assert stats.binomial_cdf(3, 10, 1.0) == 0.0


def _brute_force_ranks(n, p, confidence):
    """Ranks of the conservative equal-tailed interval by direct search with math.comb."""
    alpha = (1 - confidence) / 2
    cdf, running = [], 0.0
    for i in range(n + 1):
        running += math.comb(n, i) * p**i * (1 - p) ** (n - i)
        cdf.append(running)
    lows = [l for l in range(1, n + 1) if cdf[l - 1] <= alpha]
    highs = [u for u in range(1, n + 1) if 1 - cdf[u - 1] <= alpha]
    if not lows or not highs:
        return None
    l, u = max(lows), min(highs)
    return l, u, cdf[u - 1] - cdf[l - 1]


class TestMedianCI:
    def test_published_n20(self):
        # Campbell and Gardner (1988) give the ranks of the median's 95 % interval as
        # n/2 - 1.96 sqrt(n)/2 and 1 + n/2 + 1.96 sqrt(n)/2, rounded to the nearest integer:
        # for n = 20, 5.62 and 15.38, so the 6th and the 15th values. A binomial table
        # (Conover 1999, table A3: P(B <= 5 | n = 20, p = 1/2) = 0.0207) gives the exact
        # level 1 - 2 x 0.0207 = 95.9 %, as textbook tables of the interval print it.
        n = 20
        lower = n / 2 - 1.96 * math.sqrt(n) / 2
        upper = 1 + n / 2 + 1.96 * math.sqrt(n) / 2
        assert (round(lower, 2), round(upper, 2)) == (5.62, 15.38)
        lo, hi, cover = stats.median_ci(np.arange(1, n + 1) * 1.0)
        assert (lo, hi) == (float(round(lower)), float(round(upper))) == (6.0, 15.0)
        assert round(cover * 100, 1) == 95.9
        assert cover == pytest.approx(1 - 2 * 0.0207, abs=1e-4)

    @pytest.mark.parametrize("n", list(range(6, 41)) + [99, 100, 250])
    @pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
    def test_ranks_agree_with_brute_force(self, n, confidence):
        expected = _brute_force_ranks(n, 0.5, confidence)
        x = np.arange(1, n + 1, dtype=float)
        if expected is None:
            with pytest.raises(ValueError):
                stats.median_ci(x, confidence)
            return
        lo, hi, cover = stats.median_ci(x, confidence)
        assert (lo, hi) == (float(expected[0]), float(expected[1]))
        assert cover == pytest.approx(expected[2], abs=1e-12)
        assert cover >= confidence
        # Symmetric ranks for the median: u = n - l + 1.
        assert hi == n - lo + 1

    @FAST
    @given(positive_samples)
    def test_contains_the_sample_median_and_uses_sample_values(self, xs):
        lo, hi, cover = stats.median_ci(xs)
        assert lo <= stats.percentile(xs, 50) <= hi
        assert lo in xs and hi in xs
        assert 0.95 <= cover <= 1.0

    @FAST
    @given(positive_samples, st.floats(1e-3, 1e3))
    def test_scales_with_the_sample(self, xs, a):
        lo, hi, cover = stats.median_ci(xs)
        lo2, hi2, cover2 = stats.median_ci([a * x for x in xs])
        assert (lo2, hi2) == pytest.approx((a * lo, a * hi), rel=1e-12)
        assert cover2 == cover

    @FAST
    @given(positive_samples)
    def test_higher_level_gives_a_wider_interval(self, xs):
        if len(xs) < 9:  # 99 % needs 9 samples
            return
        lo90, hi90, _ = stats.median_ci(xs, 0.90)
        lo99, hi99, _ = stats.median_ci(xs, 0.99)
        assert lo99 <= lo90 and hi90 <= hi99

    def test_coverage_by_simulation_on_a_skewed_distribution(self):
        # Lognormal(mu, sigma) has median exp(mu) and a long right tail, like timings.
        rng = np.random.default_rng(2024)
        true_median = math.exp(0.5)
        for n in (10, 30, 100):
            exact = stats.median_ci(np.arange(n, dtype=float)).confidence
            trials = 4000
            draws = rng.lognormal(0.5, 0.7, size=(trials, n))
            hits = 0
            for row in draws:
                hits += stats.median_ci(row).contains(true_median)
            rate = hits / trials
            se = math.sqrt(exact * (1 - exact) / trials)
            assert rate >= 0.95 - 3 * se          # at least the stated level
            assert abs(rate - exact) < 4 * se      # and the exact coverage it reports

    def test_too_few_samples(self):
        with pytest.raises(ValueError, match="at least 6 samples"):
            stats.median_ci([1.0, 2.0, 3.0, 4.0, 5.0])
        assert stats.median_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).confidence == pytest.approx(
            1 - 2 * 0.5**6)

    @pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5, float("nan")])
    def test_rejects_bad_level(self, confidence):
        with pytest.raises(ValueError, match="confidence"):
            stats.median_ci(range(20), confidence)

    def test_interval_helpers(self):
        ci = stats.Interval(1.0, 3.0, 0.95)
        assert ci.contains(2.0) and not ci.contains(3.5)
        assert ci.width == 2.0


class TestPercentileCI:
    @pytest.mark.parametrize("q", [10, 25, 75, 90, 99])
    @pytest.mark.parametrize("n", [30, 120, 400, 1000])
    def test_agrees_with_brute_force(self, q, n):
        expected = _brute_force_ranks(n, q / 100, 0.95)
        x = np.arange(1, n + 1, dtype=float)
        if expected is None:
            with pytest.raises(ValueError, match="needs at least"):
                stats.percentile_ci(x, q)
            return
        lo, hi, cover = stats.percentile_ci(x, q)
        assert (lo, hi) == (float(expected[0]), float(expected[1]))
        assert cover == pytest.approx(expected[2], abs=1e-9)

    @pytest.mark.parametrize("q", [50, 90, 99, 99.9])
    @pytest.mark.parametrize("confidence", [0.9, 0.95])
    def test_min_samples_is_the_threshold(self, q, confidence):
        n = stats.min_samples_for_ci(q, confidence)
        stats.percentile_ci(np.arange(n, dtype=float), q, confidence)
        if n > 1:
            with pytest.raises(ValueError):
                stats.percentile_ci(np.arange(n - 1, dtype=float), q, confidence)

    def test_contains_the_sample_percentile(self):
        x = np.random.default_rng(5).exponential(1.0, 1000)
        for q in (5, 50, 95, 99):
            lo, hi, _ = stats.percentile_ci(x, q)
            assert lo <= stats.percentile(x, q) <= hi

    def test_coverage_by_simulation_p90(self):
        rng = np.random.default_rng(11)
        true_p90 = -math.log(0.1)  # exponential(1)
        n, trials = 200, 3000
        hits = sum(stats.percentile_ci(row, 90).contains(true_p90)
                   for row in rng.exponential(1.0, size=(trials, n)))
        exact = stats.percentile_ci(np.arange(n, dtype=float), 90).confidence
        se = math.sqrt(exact * (1 - exact) / trials)
        assert hits / trials >= 0.95 - 3 * se
        assert abs(hits / trials - exact) < 4 * se

    @pytest.mark.parametrize("q", [0, 100])
    def test_rejects_the_extremes(self, q):
        with pytest.raises(ValueError):
            stats.percentile_ci(range(100), q)
        with pytest.raises(ValueError):
            stats.min_samples_for_ci(q)


# --------------------------------------------------------------------------------------
# normal and Student t
# --------------------------------------------------------------------------------------
def _t_pdf(t, df):
    logc = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return np.exp(logc - (df + 1) / 2 * np.log1p(t * t / df))


def _t_cdf_by_integration(t, df, n=200_001):
    """CDF by Simpson's rule on [0, |t|] of the t density, an oracle independent of the
    incomplete beta function used by the module."""
    grid = np.linspace(0.0, abs(t), n)
    f = _t_pdf(grid, df)
    h = grid[1] - grid[0]
    area = h / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())
    return 0.5 + math.copysign(area, t)


class TestStudentT:
    @pytest.mark.parametrize("df,p,table", [
        # NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.6.7.2.
        (9, 0.975, 2.262), (1, 0.975, 12.706), (2, 0.975, 4.303), (5, 0.975, 2.571),
        (10, 0.95, 1.812), (20, 0.995, 2.845), (30, 0.975, 2.042), (100, 0.975, 1.984),
        (10, 0.90, 1.372), (4, 0.999, 7.173),
    ])
    def test_published_table(self, df, p, table):
        assert round(stats.student_t_ppf(p, df), 3) == table

    def test_normal_limit_published(self):
        # The last (infinite df) row of the same table, and the standard normal's 1.960.
        assert round(stats.normal_ppf(0.975), 3) == 1.960
        assert round(stats.normal_ppf(0.95), 3) == 1.645
        assert stats.student_t_ppf(0.975, 1e7) == pytest.approx(stats.normal_ppf(0.975), abs=1e-5)

    @pytest.mark.parametrize("df", [1, 2.5, 7, 30, 300])
    @pytest.mark.parametrize("t", [-6.0, -2.0, -0.3, 0.0, 0.7, 1.5, 3.0, 10.0])
    def test_cdf_against_numerical_integration(self, df, t):
        assert stats.student_t_cdf(t, df) == pytest.approx(_t_cdf_by_integration(t, df),
                                                           abs=2e-10)

    @pytest.mark.parametrize("df", [1, 3, 9, 50])
    @pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.999])
    def test_ppf_against_numerical_integration(self, df, p):
        t = stats.student_t_ppf(p, df)
        assert _t_cdf_by_integration(t, df) == pytest.approx(p, abs=1e-9)

    @FAST
    @given(st.floats(-50, 50), st.floats(0.5, 500))
    def test_cdf_symmetry_and_bounds(self, t, df):
        c = stats.student_t_cdf(t, df)
        assert 0.0 <= c <= 1.0
        assert c + stats.student_t_cdf(-t, df) == pytest.approx(1.0, abs=1e-12)

    @FAST
    @given(st.floats(0.001, 0.999), st.floats(0.5, 500))
    def test_ppf_inverts_cdf(self, p, df):
        assert stats.student_t_cdf(stats.student_t_ppf(p, df), df) == pytest.approx(p, abs=1e-10)

    @FAST
    @given(st.floats(-20, 20), st.floats(-20, 20), st.floats(0.5, 100))
    def test_cdf_monotone(self, t1, t2, df):
        lo, hi = sorted((t1, t2))
        assert stats.student_t_cdf(lo, df) <= stats.student_t_cdf(hi, df) + 1e-15

    def test_heavier_tails_than_normal(self):
        for df in (1, 3, 10, 30):
            assert stats.student_t_ppf(0.975, df) > stats.normal_ppf(0.975)

    def test_infinite_t(self):
        assert stats.student_t_cdf(math.inf, 3) == 1.0
        assert stats.student_t_cdf(-math.inf, 3) == 0.0

    @pytest.mark.parametrize("p", [0.0, 1.0, -0.1, float("nan")])
    def test_ppf_rejects_bad_p(self, p):
        with pytest.raises(ValueError, match="p must be"):
            stats.student_t_ppf(p, 5)
        with pytest.raises(ValueError, match="p must be"):
            stats.normal_ppf(p)

    @pytest.mark.parametrize("df", [0, -1, float("nan"), -float("inf")])
    def test_rejects_bad_df(self, df):  # +inf is the normal limit (test_stats_i23.py)
        with pytest.raises(ValueError, match="df"):
            stats.student_t_cdf(1.0, df)
        with pytest.raises(ValueError, match="df"):
            stats.student_t_ppf(0.9, df)

    def test_rejects_nan_t(self):
        with pytest.raises(ValueError):
            stats.student_t_cdf(float("nan"), 3)


class TestMeanCI:
    @FAST
    @given(st.lists(values, min_size=2, max_size=50))
    def test_symmetric_around_the_mean(self, xs):
        lo, hi, level = stats.mean_ci(xs)
        m = float(np.mean(xs))
        assert lo <= m <= hi
        assert (m - lo) == pytest.approx(hi - m, rel=1e-9, abs=1e-6)
        assert level == 0.95

    @FAST
    @given(st.lists(positive, min_size=2, max_size=50), st.floats(1e-3, 1e3))
    def test_scales_with_the_sample(self, xs, a):
        lo, hi, _ = stats.mean_ci(xs)
        lo2, hi2, _ = stats.mean_ci([a * x for x in xs])
        assert (lo2, hi2) == pytest.approx((a * lo, a * hi), rel=1e-9, abs=1e-12)

    def test_matches_textbook_formula_with_table_value(self):
        x = np.array([9.1, 10.4, 9.8, 10.9, 10.2, 9.5, 10.0, 10.7, 9.9, 10.3])  # n = 10, df = 9
        lo, hi, _ = stats.mean_ci(x)
        half = 2.262 * x.std(ddof=1) / math.sqrt(10)
        assert lo == pytest.approx(x.mean() - half, rel=1e-4)
        assert hi == pytest.approx(x.mean() + half, rel=1e-4)

    def test_coverage_by_simulation_for_normal_data(self):
        rng = np.random.default_rng(9)
        trials = 4000
        hits = sum(stats.mean_ci(row).contains(3.0) for row in rng.normal(3.0, 2.0, (trials, 8)))
        assert abs(hits / trials - 0.95) < 4 * math.sqrt(0.95 * 0.05 / trials)

    def test_needs_two_samples(self):
        with pytest.raises(ValueError, match="at least 2"):
            stats.mean_ci([1.0])


class TestBootstrap:
    def test_reproducible_and_contains_the_median(self):
        x = np.random.default_rng(1).lognormal(0, 0.5, 80)
        a = stats.bootstrap_ci(x, seed=3)
        assert a == stats.bootstrap_ci(x, seed=3)
        assert a.low <= np.median(x) <= a.high

    def test_generic_statistic_matches_vectorized_path(self):
        x = np.random.default_rng(2).normal(0, 1, 40)
        fast = stats.bootstrap_ci(x, np.mean, seed=5)
        slow = stats.bootstrap_ci(x, lambda r: float(np.mean(r)), seed=5)
        assert fast.low == pytest.approx(slow.low) and fast.high == pytest.approx(slow.high)

    def test_close_to_the_t_interval_for_normal_data(self):
        x = np.random.default_rng(4).normal(10, 1, 400)
        b = stats.bootstrap_ci(x, np.mean, n_resamples=4000)
        t = stats.mean_ci(x)
        assert b.low == pytest.approx(t.low, abs=0.03) and b.high == pytest.approx(t.high, abs=0.03)

    @pytest.mark.parametrize("n_resamples", [10, 99, 500.5])
    def test_rejects_few_resamples(self, n_resamples):
        with pytest.raises(ValueError, match="n_resamples"):
            stats.bootstrap_ci([1.0, 2.0, 3.0], n_resamples=n_resamples)


# --------------------------------------------------------------------------------------
# MAD, modified z-scores, outliers
# --------------------------------------------------------------------------------------
class TestMAD:
    def test_published_constants(self):
        # Iglewicz and Hoaglin (1993), via NIST/SEMATECH e-Handbook 1.3.5.17: 0.6745 and 3.5.
        assert stats.MODIFIED_Z_CONSTANT == 0.6745
        assert stats.MODIFIED_Z_THRESHOLD == 3.5
        # 0.6745 is the standard normal's 75th percentile, so MAD / 0.6745 estimates sigma.
        assert round(stats.normal_ppf(0.75), 4) == stats.MODIFIED_Z_CONSTANT

    @FAST
    @given(samples, st.floats(-1e3, 1e3), st.floats(1e-3, 1e3))
    def test_shift_invariant_and_scale_equivariant(self, xs, b, a):
        m = stats.mad(xs)
        assert m >= 0
        assert stats.mad([a * x + b for x in xs]) == pytest.approx(
            a * m, rel=1e-9, abs=1e-6 * (1 + a * max(map(abs, xs))))

    def test_estimates_sigma_for_normal_data(self):
        x = np.random.default_rng(0).normal(5.0, 2.0, 200_000)
        assert stats.mad(x) / stats.MODIFIED_Z_CONSTANT == pytest.approx(2.0, rel=0.01)

    def test_modified_z_approaches_z_for_normal_data(self):
        x = np.random.default_rng(1).normal(0.0, 1.0, 100_000)
        z = stats.modified_z_scores(x)
        assert np.corrcoef(z, x)[0, 1] > 0.9999
        assert float(np.std(z)) == pytest.approx(1.0, rel=0.02)

    def test_false_alarm_rate_for_normal_data(self):
        # |Z| > 3.5 has probability 4.65e-4 for a standard normal.
        x = np.random.default_rng(2).normal(0.0, 1.0, 200_000)
        rate = float(stats.mad_outliers(x).mean())
        expected = math.erfc(3.5 / math.sqrt(2))
        assert rate == pytest.approx(expected, rel=0.25)

    @FAST
    @given(st.lists(st.floats(1.0, 2.0), min_size=7, max_size=50))
    def test_a_far_value_is_flagged(self, xs):
        spread = max(xs) - min(xs)
        if spread == 0:
            return
        flagged = stats.mad_outliers(xs + [max(xs) + 1000 * spread + 1000])
        assert flagged[-1]

    @FAST
    @given(positive_samples, st.floats(0.5, 5), st.floats(0.5, 5))
    def test_fewer_outliers_at_a_higher_threshold(self, xs, t1, t2):
        lo, hi = sorted((t1, t2))
        assert stats.mad_outliers(xs, hi).sum() <= stats.mad_outliers(xs, lo).sum()

    def test_zero_mad(self):
        z = stats.modified_z_scores([5.0, 5.0, 5.0, 5.0, 7.0])
        assert z.tolist() == [0.0, 0.0, 0.0, 0.0, math.inf]

    @pytest.mark.parametrize("threshold", [0, -1, float("nan")])
    def test_rejects_bad_threshold(self, threshold):
        with pytest.raises(ValueError, match="threshold"):
            stats.mad_outliers([1.0, 2.0, 3.0], threshold)


class TestTukeyAndSpread:
    def test_fences_against_numpy(self):
        x = np.random.default_rng(6).gamma(2, 1, 300)
        q1, q3 = np.percentile(x, [25, 75])
        lo, hi = stats.tukey_fences(x)
        assert lo == pytest.approx(q1 - 1.5 * (q3 - q1)) and hi == pytest.approx(q3 + 1.5 * (q3 - q1))

    @FAST
    @given(samples, st.floats(0.1, 3), st.floats(0.1, 3))
    def test_wider_fences_for_larger_k(self, xs, k1, k2):
        lo_k, hi_k = sorted((k1, k2))
        a, b = stats.tukey_fences(xs, lo_k), stats.tukey_fences(xs, hi_k)
        assert b[0] <= a[0] + 1e-9 and a[1] <= b[1] + 1e-9

    @FAST
    @given(positive_samples, st.floats(1e-3, 1e3))
    def test_relative_spread_is_unitless(self, xs, a):
        assert stats.relative_spread([a * x for x in xs]) == pytest.approx(
            stats.relative_spread(xs), rel=1e-9, abs=1e-12)

    def test_rejects_bad_input(self):
        with pytest.raises(ValueError, match="k must be"):
            stats.tukey_fences([1, 2, 3], 0)
        with pytest.raises(ValueError, match="zero median"):
            stats.relative_spread([-1.0, 0.0, 1.0])


# --------------------------------------------------------------------------------------
# speedup and the decision
# --------------------------------------------------------------------------------------
class TestSpeedup:
    def test_coverage_by_simulation(self):
        rng = np.random.default_rng(12)
        true = 1.25
        trials, hits = 300, 0
        for _ in range(trials):
            a = rng.lognormal(0.0, 0.3, 40)
            b = rng.lognormal(0.0, 0.3, 40) / true
            hits += stats.speedup_ci(a, b, n_resamples=1000, seed=int(rng.integers(1 << 30))
                                     ).contains(true)
        assert hits / trials >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / trials)

    @FAST
    @given(positive_samples, positive_samples, st.floats(1e-3, 1e3))
    def test_unchanged_when_both_samples_scale(self, a, b, c):
        one = stats.speedup_ci(a, b, n_resamples=200)
        two = stats.speedup_ci([c * x for x in a], [c * x for x in b], n_resamples=200)
        assert two.low == pytest.approx(one.low, rel=1e-9)
        assert two.high == pytest.approx(one.high, rel=1e-9)

    @FAST
    @given(positive_samples, st.floats(1.1, 10))
    def test_scaling_the_candidate_scales_the_speedup(self, a, s):
        one = stats.speedup_ci(a, a, n_resamples=200)
        two = stats.speedup_ci(a, [x / s for x in a], n_resamples=200)
        assert two.low == pytest.approx(s * one.low, rel=1e-9)
        assert two.high == pytest.approx(s * one.high, rel=1e-9)

    def test_rejects_non_positive_times(self):
        with pytest.raises(ValueError, match="positive"):
            stats.speedup_ci([1.0, 0.0, 2.0], [1.0, 2.0, 3.0])


class TestCompare:
    rng = np.random.default_rng(21)
    base = rng.lognormal(0.0, 0.05, 200)

    def test_faster(self):
        c = stats.compare(self.base, self.base / 1.3)
        assert c.verdict == "faster" and c.speedup == pytest.approx(1.3)
        assert not c.medians_cis_overlap

    def test_slower(self):
        assert stats.compare(self.base, self.base * 1.3).verdict == "slower"

    def test_equivalent(self):
        other = np.random.default_rng(22).lognormal(0.0, 0.05, 200)
        c = stats.compare(self.base, other, min_effect=0.05)
        assert c.verdict == "equivalent"
        assert c.medians_cis_overlap

    def test_inconclusive_with_few_noisy_samples(self):
        rng = np.random.default_rng(23)
        a, b = rng.lognormal(0, 0.5, 8), rng.lognormal(0, 0.5, 8) / 1.05
        assert stats.compare(a, b).verdict == "inconclusive"

    def test_small_effect_below_the_bar_is_not_faster(self):
        # Faster by 2 %, measured precisely: real, but below a 5 % bar worth acting on.
        c = stats.compare(self.base, self.base / 1.02, min_effect=0.05)
        assert c.verdict == "equivalent"
        assert stats.compare(self.base, self.base / 1.02, min_effect=0.0).verdict == "faster"

    def test_few_samples_still_report_medians(self):
        c = stats.compare([1.0, 1.1, 1.2], [0.5, 0.6, 0.55])
        assert math.isnan(c.baseline_ci.confidence)

    @pytest.mark.parametrize("min_effect", [-0.1, 10.0, float("nan")])
    def test_rejects_bad_effect(self, min_effect):
        with pytest.raises(ValueError, match="min_effect"):
            stats.compare(self.base, self.base, min_effect=min_effect)


# --------------------------------------------------------------------------------------
# least_squares
# --------------------------------------------------------------------------------------
class TestLeastSquares:
    def test_exact_fit_is_recovered(self):
        design = [[1.0, x, x * x] for x in (0.5, 1.0, 2.0, 3.5, 5.0)]
        target = [2.0 - 3.0 * x + 0.25 * x * x for _, x, _ in design]
        assert stats.least_squares(design, target) == pytest.approx([2.0, -3.0, 0.25], abs=1e-12)

    @FAST
    @given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(0, 20))
    def test_matches_lapack(self, seed, n, extra):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(n + extra, n))
        y = rng.normal(size=n + extra)
        want, *_ = np.linalg.lstsq(x, y, rcond=None)
        got = stats.least_squares(x.tolist(), y.tolist())
        assert np.allclose(got, want, rtol=1e-9, atol=1e-9 * (1 + np.abs(want).max()))

    def test_residual_is_orthogonal_to_the_columns(self):
        rng = np.random.default_rng(7)
        x = rng.normal(size=(30, 3))
        y = rng.normal(size=30)
        r = y - x @ np.array(stats.least_squares(x.tolist(), y.tolist()))
        assert np.abs(x.T @ r).max() < 1e-12

    def test_anscombe_regression_line(self):
        # Anscombe (1973), "Graphs in statistical analysis", The American Statistician 27(1),
        # p. 19: every one of the four data sets has the regression line y = 3 + 0.5 x.
        x = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5]
        y = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68]
        a, b = stats.least_squares([[1.0, v] for v in x], y)
        assert round(a, 2) == 3.00 and round(b, 3) == 0.500

    @pytest.mark.parametrize("design, target, match", [
        ([], [], "design"),
        ([[1.0, 2.0], [3.0]], [1.0, 2.0], "design"),
        ([[1.0, 2.0]], [1.0], "at least as many rows"),
        ([[1.0], [2.0]], [1.0], "target"),
        ([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], [1.0, 2.0, 3.0], "rank-deficient"),
        ([[1.0], [float("nan")]], [1.0, 2.0], "finite"),
    ])
    def test_rejects_bad_input(self, design, target, match):
        with pytest.raises(ValueError, match=match):
            stats.least_squares(design, target)
