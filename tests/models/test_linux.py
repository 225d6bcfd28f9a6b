"""Tests of helpers.models.linux: limits, an independent oracle, published numbers, errors."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import linux as lm


@given(st.integers(1, 10**6), st.data(), st.integers(1, 8))
def test_capacity_matches_handing_out_descriptors_one_by_one(limit, data, per):
    used = data.draw(st.integers(0, min(limit, 2000)))
    if limit > 5000:  # the oracle below walks every slot; keep it small
        limit = 5000 + limit % 100
        used = min(used, limit)
    free = limit - used           # the kernel refuses any number >= the soft limit
    opened = 0
    while free >= per:            # each connection takes `per` of the lowest free numbers
        free -= per
        opened += 1
    assert lm.connection_capacity(limit, used, per) == opened


def test_capacity_limits_and_the_default_limit():
    assert lm.connection_capacity(1024, lm.STD_STREAMS) == 1021  # ulimit -n 1024, three streams
    assert lm.connection_capacity(10, 10) == 0
    assert lm.connection_capacity(11, 1, 5) == 2


def test_ticks_and_utilization():
    assert lm.ticks_to_s(0) == 0.0
    assert lm.ticks_to_s(100) == pytest.approx(1.0)       # USER_HZ = 100 on Linux
    assert lm.ticks_to_s(3, clk_tck=1000) == pytest.approx(0.003)
    assert lm.cpu_utilization(0.0, 1.0) == 0.0
    assert lm.cpu_utilization(4.0, 1.0) == 4.0            # four busy threads


def test_exit_and_lost_work_against_a_simulated_drain():
    rng = random.Random(1)
    for _ in range(200):
        remaining = [rng.uniform(0, 60) for _ in range(rng.randint(0, 6))]
        # Oracle: step time forward until every request is done or the grace period ends.
        t, dt, live = 0.0, 0.01, list(remaining)
        while any(r > t + 1e-12 for r in live) and t < lm.K8S_GRACE_S:
            t += dt
        assert lm.graceful_exit_s(remaining) == pytest.approx(min(t, lm.K8S_GRACE_S), abs=dt)
    assert lm.graceful_exit_s([]) == 0.0
    assert lm.graceful_exit_s([45.0, 3.0]) == lm.K8S_GRACE_S  # cut by the 30 s default
    assert lm.killed_work_s([]) == 0.0
    assert lm.killed_work_s([1.0, 2.5]) == 3.5


@pytest.mark.parametrize("call", [
    lambda: lm.connection_capacity(0, 0),
    lambda: lm.connection_capacity(10, 11),
    lambda: lm.connection_capacity(10, -1),
    lambda: lm.connection_capacity(10, 1, 0),
    lambda: lm.ticks_to_s(-1),
    lambda: lm.ticks_to_s(5, clk_tck=0),
    lambda: lm.cpu_utilization(1.0, 0.0),
    lambda: lm.cpu_utilization(-1.0, 1.0),
    lambda: lm.graceful_exit_s([1.0], grace_s=0),
    lambda: lm.graceful_exit_s([float("nan")]),
    lambda: lm.killed_work_s([-1.0]),
])
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()
