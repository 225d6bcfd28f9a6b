"""Issue 23: Student's t accepts infinite degrees of freedom, its normal limit."""

import math

import pytest

from helpers.models import stats


def test_infinite_df_is_the_published_normal_row():
    # NIST/SEMATECH e-Handbook 1.3.6.7.2, the "infinity" row: 1.282, 1.645, 1.960, 2.326, 2.576
    for p, table in [(0.90, 1.282), (0.95, 1.645), (0.975, 1.960), (0.99, 2.326),
                     (0.995, 2.576)]:
        assert round(stats.student_t_ppf(p, math.inf), 3) == table


@pytest.mark.parametrize("t", [-3.0, -1.0, 0.0, 0.5, 2.0])
def test_infinite_df_cdf_is_the_limit_of_large_df(t):
    assert stats.student_t_cdf(t, math.inf) == pytest.approx(stats.student_t_cdf(t, 1e8),
                                                             abs=1e-7)
    assert stats.student_t_cdf(t, math.inf) == pytest.approx(0.5 * math.erfc(-t / math.sqrt(2)),
                                                             abs=1e-15)


def test_infinite_df_ppf_inverts_cdf():
    for p in (0.6, 0.9, 0.999):
        q = stats.student_t_ppf(p, math.inf)
        assert stats.student_t_cdf(q, math.inf) == pytest.approx(p, abs=1e-12)
        assert q < stats.student_t_ppf(p, 30)  # lighter tails than any finite df


def test_negative_infinite_df_is_refused():
    with pytest.raises(ValueError, match="df"):
        stats.student_t_ppf(0.9, -math.inf)
    with pytest.raises(ValueError, match="df"):
        stats.student_t_cdf(0.9, -math.inf)
