"""Issue 23: joint TTFT-and-TPOT SLO attainment, goodput read from a latency-throughput
curve, disaggregated goodput and replica planning (DistServe); Erlang C inverted."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import queueing as qm
from helpers.models import slo

FAST = settings(max_examples=60, deadline=None)


# --- DistServe's printed numbers ----------------------------------------------------------

def test_published_disaggregation_example():
    # Zhong et al. (2024) section 1: one A100 colocated: 1.6 rps; prefill-only 5.6 rps,
    # decode-only 10 rps; 2 prefill + 1 decode GPUs: 10 rps, 3.3 per GPU, 2.1x
    g = slo.disaggregated_goodput_per_s(5.6, 10.0, 2, 1)
    assert g == 10.0
    assert round(g / 3, 1) == 3.3
    assert round(g / 3 / 1.6, 1) == 2.1
    # one prefill GPU would cap the pair at 5.6
    assert slo.disaggregated_goodput_per_s(5.6, 10.0, 1, 1) == 5.6


def test_replicas_for_a_target_load():
    assert slo.replicas_needed(45.0, 10.0) == 5
    assert slo.replicas_needed(50.0, 10.0) == 5  # exactly full
    assert slo.replicas_needed(50.0001, 10.0) == 6
    assert slo.replicas_needed(0.0, 10.0) == 0


def test_replica_planning_reproduces_distserves_2p1d():
    # Zhong et al. (2024) section 1: at the 10 rps the decode GPU sustains, each phase needs
    # ceil(target / its per-GPU goodput) instances: 2 prefill (5.6 rps each) and 1 decode
    # (10 rps), the "2 prefill instances and 1 decode instance" the paper deploys
    target = 10.0
    n_p, n_d = slo.replicas_needed(target, 5.6), slo.replicas_needed(target, 10.0)
    assert (n_p, n_d) == (2, 1)
    assert slo.disaggregated_goodput_per_s(5.6, 10.0, n_p, n_d) >= target
    # one instance fewer on either side misses the target
    assert slo.disaggregated_goodput_per_s(5.6, 10.0, n_p - 1, n_d) < target
    # the colocated GPU (1.6 rps) would need ceil(10 / 1.6) = 7 GPUs for the 3 of 2P1D
    assert slo.replicas_needed(target, 1.6) == 7


# --- joint attainment ---------------------------------------------------------------------

@FAST
@given(st.lists(st.tuples(st.floats(0, 2), st.floats(0, 0.2)), min_size=1, max_size=60),
       st.floats(0, 2), st.floats(0, 0.2))
def test_joint_attainment_bounds(pairs, d1, d2):
    ttft, tpot = np.array(pairs).T
    joint = slo.joint_slo_attainment(ttft, tpot, d1, d2)
    a1, a2 = np.mean(ttft <= d1), np.mean(tpot <= d2)
    assert max(0.0, a1 + a2 - 1) - 1e-12 <= joint <= min(a1, a2) + 1e-12
    # oracle: count the requests one by one
    assert joint == sum(1 for t, p in pairs if t <= d1 and p <= d2) / len(pairs)


def test_joint_is_not_the_product():
    # the two misses fall on different requests: 80 % each, 60 % jointly (not 64 %)
    ttft = [0.1] * 8 + [9.0] * 2
    tpot = [9.0] * 2 + [0.01] * 8
    assert slo.joint_slo_attainment(ttft, tpot, 1.0, 0.1) == pytest.approx(0.6)


# --- goodput from a curve -----------------------------------------------------------------

def test_goodput_from_a_simulated_curve():
    # attainment of an M/M/1 wait objective against the rate, sampled, read back at 90 %:
    # the closed-form inverse (mm1_max_arrival_rate_per_s) is the oracle
    mu, d = 10.0, 0.5
    rates = np.linspace(0.5, 9.5, 400)
    att = [qm.mmc_wait_attainment(d, lam, mu, 1) for lam in rates]
    read = slo.goodput_from_curve_per_s(rates, att, 0.9)
    exact = qm.mmc_max_arrival_rate_per_s(mu, 1, d, 0.9)
    assert read == pytest.approx(exact, rel=1e-3)


def test_goodput_curve_edges():
    assert slo.goodput_from_curve_per_s([1.0, 2.0], [0.5, 0.4], 0.9) == 0.0
    assert slo.goodput_from_curve_per_s([1.0, 2.0], [1.0, 0.95], 0.9) == 2.0
    assert slo.goodput_from_curve_per_s([1.0, 2.0, 3.0], [0.95, 0.85, 0.99], 0.9) == pytest.approx(1.5)


# --- Erlang C inverted --------------------------------------------------------------------

def test_published_erlang_c_inverted():
    # ErlangC R package 0.1.0 README: 14 agents at 10 erlangs wait with probability 0.1741319,
    # and reach a 0.88835 service level within 20 s (100 calls per 30 min, 180 s each)
    assert qm.erlang_c_max_load(14, 0.1741319) == pytest.approx(10.0, abs=1e-5)
    lam = qm.mmc_max_arrival_rate_per_s(1 / 180, 14, 20.0, 0.88835)
    assert lam * 1800 == pytest.approx(100.0, abs=0.01)


@FAST
@given(st.integers(1, 60), st.floats(0.01, 0.99))
def test_erlang_c_max_load_inverts(c, p):
    a = qm.erlang_c_max_load(c, p)
    assert 0 <= a < c
    assert qm.erlang_c(c, a) == pytest.approx(p, abs=1e-9)


def test_max_rate_agrees_with_servers_needed():
    # 14 agents meet 80 % within 20 s at 100 calls/30 min and 13 do not (mmc_servers_needed):
    # so 14 carry more than that rate and 13 less
    mu, lam = 1 / 180, 100 / 1800
    assert qm.mmc_servers_needed(lam, mu, 20.0, 0.80) == 14
    assert qm.mmc_max_arrival_rate_per_s(mu, 14, 20.0, 0.80) > lam
    assert qm.mmc_max_arrival_rate_per_s(mu, 13, 20.0, 0.80) < lam


def test_one_server_closed_form():
    # M/M/1: P(Wq <= d) = 1 - rho exp(-(mu - lam) d); at d = 0 the largest rho is 1 - alpha
    assert qm.mmc_max_arrival_rate_per_s(4.0, 1, 0.0, 0.75) == pytest.approx(1.0, rel=1e-9)
    assert qm.erlang_c_max_load(1, 0.3) == pytest.approx(0.3, rel=1e-9)


def test_bad_input():
    with pytest.raises(ValueError, match="wait_probability"):
        qm.erlang_c_max_load(4, 1.0)
    with pytest.raises(ValueError, match="servers"):
        qm.erlang_c_max_load(10**5, 0.5)
    with pytest.raises(ValueError, match="attainment"):
        qm.mmc_max_arrival_rate_per_s(1.0, 2, 1.0, 0.0)
    with pytest.raises(ValueError, match="same length"):
        slo.joint_slo_attainment([0.1, 0.2], [0.01], 1.0, 1.0)
    with pytest.raises(ValueError, match="increase"):
        slo.goodput_from_curve_per_s([2.0, 1.0], [0.9, 0.8], 0.9)
    with pytest.raises(ValueError, match="n_decode"):
        slo.disaggregated_goodput_per_s(5.6, 10.0, 2, 0)
