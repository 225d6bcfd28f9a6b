"""Tests of helpers.models.scheduling: limits, simulations as oracles, the kernel's numbers."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import scheduling as sm


def _kernel_factor(ncpus):
    # kernel/sched/fair.c get_update_sysctl_factor(), SCHED_TUNABLESCALING_LOG:
    # cpus = min_t(unsigned int, num_online_cpus(), 8); factor = 1 + ilog2(cpus)
    cpus = min(ncpus, 8)
    return 1 + (cpus.bit_length() - 1)


@pytest.mark.parametrize("ncpus", [1, 2, 3, 4, 5, 7, 8, 9, 64, 256])
def test_base_slice_matches_the_kernels_integer_rule(ncpus):
    assert sm.base_slice_s(ncpus) == pytest.approx(750_000e-9 * _kernel_factor(ncpus))
    assert sm.base_slice_s(ncpus, 0.70e-3) == pytest.approx(700_000e-9 * _kernel_factor(ncpus))


def test_base_slice_published_default():
    # "(default: 0.75 msec * (1 + ilog(ncpus)), units: nanoseconds)": 3 ms from 8 CPUs up.
    assert sm.base_slice_s(8) == pytest.approx(3e-3) == pytest.approx(sm.base_slice_s(1000))
    assert sm.base_slice_s(1) == pytest.approx(0.75e-3)


def _simulate_round_robin(n, c, q):
    """Threads 0..n-1 spread round-robin over c cores; each core's queue runs slices of q in
    order; the newcomer is last on the fullest core. Its wait is the slices ahead of it."""
    queues = [[] for _ in range(c)]
    for t in range(n):
        queues[t % c].append(t)
    fullest = max(queues, key=len)
    return q * (len(fullest) - 1)


@given(n=st.integers(1, 200), c=st.integers(1, 64), q=st.floats(1e-5, 1e-1))
def test_wait_bound_matches_a_queue_simulation(n, c, q):
    assert sm.round_robin_wait_bound_s(n, c, q) == pytest.approx(_simulate_round_robin(n, c, q))


@given(n=st.integers(1, 500), c=st.integers(1, 128))
def test_cpu_share_limits(n, c):
    phi = sm.cpu_share(n, c)
    assert 0 < phi <= 1
    assert n * phi <= c + 1e-9                    # never more CPU than exists
    assert (phi == 1) == (n <= c)


def _simulate_time_slicing(w, k, q, s):
    """Round robin over k always-busy tenants; tenant 0 is the job and goes first."""
    t, left, turn = 0.0, w, 0
    while True:
        if turn == 0:
            run = min(q, left)
            t += run
            left -= run
            if left <= 1e-15:
                return t
        else:
            t += q
        t += s
        turn = (turn + 1) % k


@given(w=st.floats(1e-4, 1.0), k=st.integers(1, 8), q=st.floats(1e-3, 5e-2),
       s=st.floats(0, 1e-3))
def test_time_slicing_matches_a_simulation(w, k, q, s):
    got = sm.time_sliced_completion_s(work_s=w, n_tenants=k, slice_s=q, switch_s=s)
    assert got == pytest.approx(_simulate_time_slicing(w, k, q, s), rel=1e-9, abs=1e-12)


def test_time_slicing_limits():
    assert sm.time_sliced_completion_s(work_s=0.01, n_tenants=1, slice_s=0.002) == pytest.approx(0.01)
    # a job shorter than one slice never waits
    assert sm.time_sliced_completion_s(work_s=0.001, n_tenants=8, slice_s=0.002) == 0.001
    # long jobs: about k times the work
    t = sm.time_sliced_completion_s(work_s=10.0, n_tenants=4, slice_s=0.002)
    assert t / 10.0 == pytest.approx(4, rel=1e-3)
    assert sm.partitioned_completion_s(work_s=0.01, gpu_fraction=1.0) == 0.01


@pytest.mark.parametrize("fn, kw", [
    (sm.base_slice_s, dict(n_cpus=0)), (sm.base_slice_s, dict(n_cpus=2, normalized_slice_s=0)),
    (sm.cpu_share, dict(n_runnable=0, n_cores=2)), (sm.cpu_share, dict(n_runnable=2, n_cores=1.5)),
    (sm.round_robin_wait_bound_s, dict(n_runnable=2, n_cores=2, slice_s=-1)),
    (sm.time_sliced_completion_s, dict(work_s=0, n_tenants=2, slice_s=1e-3)),
    (sm.time_sliced_completion_s, dict(work_s=1, n_tenants=2, slice_s=1e-3, switch_s=-1)),
    (sm.partitioned_completion_s, dict(work_s=1, gpu_fraction=0)),
    (sm.partitioned_completion_s, dict(work_s=1, gpu_fraction=1.5)),
    (sm.partitioned_completion_s, dict(work_s=math.nan, gpu_fraction=0.5)),
])
def test_bad_input_raises(fn, kw):
    with pytest.raises(ValueError):
        fn(**kw)
