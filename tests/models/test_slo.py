"""Tests of helpers.models.slo: limits, the simulator as oracle, DistServe's definition."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import queueing as qm
from helpers.models import slo
from helpers.sim import queue as qs


@given(st.floats(0, 1e4), st.floats(0, 1), st.floats(0, 1))
def test_goodput_never_exceeds_the_offered_rate(lam, block, att):
    g = slo.goodput_per_s(lam, block, att)
    assert 0.0 <= g <= lam * (1 + 1e-12)


def test_unbounded_queue_collapses_past_saturation_and_a_cap_does_not():
    mu, c, d = 1.0, 4, 1.0
    loads = [2.0, 3.0, 3.9, 4.0, 6.0, 12.0]
    free = [slo.wait_slo_goodput_per_s(d, lam, mu, c) for lam in loads]
    capped = [slo.wait_slo_goodput_per_s(d, lam, mu, c, capacity=8) for lam in loads]
    assert free[-1] == 0.0 and free[-2] == 0.0 and free[1] > free[2]
    assert min(capped[3:]) > 0.5 * c * mu  # keeps most of the capacity useful
    assert all(g <= c * mu for g in capped)


def test_overload_fluid_share_matches_the_simulator():
    lam, mu, c, n, d = 8.0, 1.0, 4, 2000, 20.0
    rng = np.random.default_rng(5)
    arrival = np.cumsum(rng.exponential(1 / lam, size=n))
    tr = qs.simulate_multi_server(arrival, rng.exponential(1 / mu, size=n), c)
    assert tr.wait_attainment(d) == pytest.approx(
        slo.overload_wait_attainment(d, lam, mu, c, n), abs=0.02)


def test_distserve_definition_is_rate_times_attainment():
    # DistServe (Zhong et al. 2024, section 2): goodput counts only requests within the SLOs;
    # with no admission control it is the offered rate times the attainment.
    lam, mu, c, d = 3.0, 1.0, 4, 0.5
    assert slo.wait_slo_goodput_per_s(d, lam, mu, c) == pytest.approx(
        lam * qm.mmc_wait_attainment(d, lam, mu, c))


def test_errors():
    with pytest.raises(ValueError, match="blocking_probability"):
        slo.goodput_per_s(1.0, 1.5, 0.5)
    with pytest.raises(ValueError, match="not overloaded"):
        slo.overload_wait_attainment(1.0, 1.0, 1.0, 2, 10)
