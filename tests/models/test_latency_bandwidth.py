"""Tests of helpers.models.latency_bandwidth: limits, a simulated packet pipe as the oracle,
the fit recovering known parameters, and the errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import latency_bandwidth as lb

lat = st.floats(1e-9, 1e-2)
bw = st.floats(1e6, 1e13)


@given(lat, bw)
def test_half_bandwidth_size_reaches_half_the_bandwidth(a, b):
    n = lb.half_bandwidth_bytes(a, b)
    assert lb.effective_bandwidth_bytes_per_s(n, a, b) == pytest.approx(b / 2)
    assert lb.transfer_time_s(n, a, b) == pytest.approx(2 * a)


@given(lat, bw)
def test_limits(a, b):
    assert lb.transfer_time_s(0.0, a, b) == a
    big = 1e9 * lb.half_bandwidth_bytes(a, b)
    assert lb.effective_bandwidth_bytes_per_s(big, a, b) == pytest.approx(b, rel=1e-6)
    assert lb.transfer_time_s(1.0, 0.0, b) == pytest.approx(1.0 / b)


def test_time_matches_a_simulated_pipe():
    """Packets of 1 kB enter a pipe at the bandwidth and arrive one latency later."""
    a, b, packet = 3e-6, 2e9, 1000.0
    for n_packets in (1, 7, 100):
        send_done = np.arange(1, n_packets + 1) * packet / b  # when each packet has left
        arrive_last = send_done[-1] + a
        assert arrive_last == pytest.approx(lb.transfer_time_s(n_packets * packet, a, b))


@given(lat, bw)
def test_fit_recovers_the_parameters(a, b):
    sizes = np.logspace(0, 3, 6) * lb.half_bandwidth_bytes(a, b) / 30
    fa, fb = lb.fit_latency_bandwidth(sizes, lb.transfer_time_s(sizes, a, b))
    assert fa == pytest.approx(a, rel=1e-6) and fb == pytest.approx(b, rel=1e-6)


def test_fit_is_robust_to_small_noise():
    rng = np.random.default_rng(0)
    sizes = np.logspace(2, 8, 12)
    t = lb.transfer_time_s(sizes, 1e-6, 1e10) * (1 + 0.02 * rng.standard_normal(12))
    fa, fb = lb.fit_latency_bandwidth(sizes, t)
    assert fa == pytest.approx(1e-6, rel=0.1) and fb == pytest.approx(1e10, rel=0.1)


def test_errors():
    with pytest.raises(ValueError, match="bandwidth_bytes_per_s"):
        lb.transfer_time_s(1.0, 1e-6, 0.0)
    with pytest.raises(ValueError, match="latency_s"):
        lb.transfer_time_s(1.0, -1e-6, 1e9)
    with pytest.raises(ValueError, match="n_bytes"):
        lb.transfer_time_s(-1.0, 1e-6, 1e9)
    with pytest.raises(ValueError, match="two distinct"):
        lb.fit_latency_bandwidth([1e3, 1e3], [1e-6, 1e-6])
    with pytest.raises(ValueError, match="grow"):
        lb.fit_latency_bandwidth([1e3, 1e6], [1e-3, 1e-6])
