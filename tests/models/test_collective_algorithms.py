"""The cost models of the collective algorithms beyond ring and tree (helpers.models.collectives).

Three ways: limits and invariants; an oracle, the algorithms themselves run on threads over a
transport that counts every step and its bytes (helpers.distributed.algorithms.run_in_threads);
and the formulas the sources print (Thakur, Rabenseifner and Gropp 2005; MPICH's comments;
nccl-tests' bus bandwidth).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.models import collectives as m

ALGOS = tuple(m.ALGORITHM_TIMES)
ELEMENTS = 2520 * 4  # splits evenly into 1..9 blocks (and into p' blocks of each)


def _counted(name, p):
    from helpers.distributed.algorithms import allowed, run_in_threads

    if not allowed(name, p):
        pytest.skip(f"{name} runs on powers of two only")
    return run_in_threads(name, p, ELEMENTS)[1]


@pytest.mark.parametrize("p", range(1, 10))
@pytest.mark.parametrize("name", ALGOS)
def test_model_counts_the_steps_and_bytes_the_program_sends(name, p):
    """alpha's coefficient is the busiest rank's number of steps, beta's its bytes, counted
    while the real schedule runs (on threads) and its output is checked against the reference."""
    counts = _counted(name, p)
    f = m.ALGORITHM_TIMES[name]
    n_bytes = ELEMENTS * 4
    assert f(n_bytes, p, 1.0, 0.0) == counts.steps
    assert f(n_bytes, p, 0.0, 1.0) == pytest.approx(counts.step_bytes, rel=1e-12)


def test_the_oracle_sees_a_schedule_change():
    """The counts are not a restatement of the model: a ring on 6 ranks takes 10 steps, Bruck 3,
    and the non-power-of-two fold adds exactly two whole-buffer steps."""
    assert _counted("ring_all_reduce", 6).steps == 10
    assert _counted("bruck_all_gather", 6).steps == 3
    rd6, rd4 = _counted("recursive_doubling_all_reduce", 6), _counted("recursive_doubling_all_reduce", 4)
    assert rd6.steps - rd4.steps == 2
    assert rd6.step_bytes - rd4.step_bytes == 2 * ELEMENTS * 4


def test_source_formulas_for_powers_of_two():
    """Thakur et al. (2005) / MPICH comments, with lg p for p a power of two."""
    n, a, b, g = 3e6, 2e-6, 1e-9, 3e-10
    for p in (2, 4, 8, 64):
        lg = math.log2(p)
        assert m.recursive_doubling_allreduce_time_s(n, p, a, b, g) == pytest.approx(
            lg * a + n * lg * b + n * lg * g)
        assert m.rabenseifner_allreduce_time_s(n, p, a, b, g) == pytest.approx(
            2 * lg * a + 2 * n * (p - 1) / p * b + n * (p - 1) / p * g)
        assert m.recursive_doubling_allgather_time_s(n, p, a, b) == pytest.approx(
            lg * a + n * (p - 1) / p * b)
        assert m.bruck_alltoall_time_s(n, p, a, b) == pytest.approx(lg * a + n / 2 * lg * b)


def test_non_power_of_two_rabenseifner_against_mpich_comment():
    """MPICH prints (2 floor(lg p) + 2) alpha + (2 (p-1)/p + 2) n beta + n (1 + (p-1)/p) gamma.
    The alpha term matches; in the others the schedule runs on p' ranks, so the exact count
    (the oracle above agrees) has (p'-1)/p' where the comment writes (p-1)/p."""
    n, a, b, g = 1e6, 1e-6, 1e-9, 1e-10
    for p in (3, 5, 6, 7, 12):
        pof2 = 1 << (p.bit_length() - 1)
        fp = (pof2 - 1) / pof2
        printed_alpha = (2 * math.floor(math.log2(p)) + 2) * a
        assert m.rabenseifner_allreduce_time_s(n, p, a, 0, 0) == pytest.approx(printed_alpha)
        assert m.rabenseifner_allreduce_time_s(n, p, 0, b, g) == pytest.approx(
            (2 * fp + 2) * n * b + n * (1 + fp) * g)
    # and the difference from the literal comment is real for p = 6 (3/4 against 5/6)
    literal = (2 * 5 / 6 + 2) * n * b
    assert m.rabenseifner_allreduce_time_s(n, 6, 0, b) < literal


def test_limits():
    n = np.array([0.0, 1e3, 1e9])
    for name, f in m.ALGORITHM_TIMES.items():
        p = 8
        assert np.all(f(n, p, 0.0, 0.0) == 0)
        assert f(0.0, p, 1e-6, 1e-9) == pytest.approx(f(0.0, p, 1e-6, 0.0))  # only latency left
        assert np.all(np.diff(f(n, p, 1e-6, 1e-9)) > 0)  # more bytes, more time
        assert f(1e9, 1, 1e-6, 1e-9) == 0  # one rank sends nothing
    # Rabenseifner has the ring's bandwidth term and 2 lg p instead of 2(p-1) latencies
    for p in (2, 4, 8, 16):
        assert m.rabenseifner_allreduce_time_s(1e9, p, 0, 1e-9) == pytest.approx(
            m.ring_allreduce_time_s(1e9, p, 0, 1e-9))
        assert m.rabenseifner_allreduce_time_s(0, p, 1e-6, 0) <= m.ring_allreduce_time_s(0, p, 1e-6, 0)
        # Bruck and recursive doubling all-gathers coincide on powers of two
        assert m.bruck_allgather_time_s(1e6, p, 1e-6, 1e-9) == pytest.approx(
            m.recursive_doubling_allgather_time_s(1e6, p, 1e-6, 1e-9))
        assert m.bruck_alltoall_blocks_sent(p) == p // 2 * int(math.log2(p))
    # recursive doubling wins latency-bound, Rabenseifner bandwidth-bound (p >= 4)
    rd, rab = m.recursive_doubling_allreduce_time_s, m.rabenseifner_allreduce_time_s
    assert rd(8, 8, 1e-5, 1e-9) < rab(8, 8, 1e-5, 1e-9)
    assert rd(1e8, 8, 1e-5, 1e-9) > rab(1e8, 8, 1e-5, 1e-9)
    # the gamma term only adds
    assert rab(1e6, 6, 1e-6, 1e-9, 1e-10) > rab(1e6, 6, 1e-6, 1e-9)


def test_bruck_alltoall_blocks_by_brute_force():
    for p in range(1, 70):
        steps = (p - 1).bit_length()
        want = sum(1 for k in range(steps) for i in range(p) if i >> k & 1)
        assert m.bruck_alltoall_blocks_sent(p) == want


def test_in_network_busbw_factor_and_time():
    """nccl-tests' all-reduce busbw of an in-network all-reduce at the link's rate is
    2(p-1)/p times the link's bandwidth: 1 on 2 ranks, 1.75 on 8, tending to 2."""
    bw = 450e9
    for p in (2, 4, 8, 72):
        t = m.in_network_allreduce_time_s(1e9, p, 0.0, 1 / bw)
        busbw = m.busbw_bytes_per_s(1e9, t, "all_reduce", p)
        assert busbw / bw == pytest.approx(m.in_network_busbw_factor(p))
        ring = m.ring_allreduce_time_s(1e9, p, 0.0, 1 / bw)
        assert m.busbw_bytes_per_s(1e9, ring, "all_reduce", p) == pytest.approx(bw)
    assert m.in_network_busbw_factor(2) == 1.0 and m.in_network_busbw_factor(8) == 1.75
    assert m.in_network_busbw_factor(10**9) == pytest.approx(2.0)


def test_all_to_all_two_sizes():
    """nccl-tests sizes an all-to-all by the whole send buffer; its busbw is the bytes sent to
    the others over the time."""
    n, p, t = 8e6, 8, 1e-3
    sent = m.all_to_all_bytes_sent(n, p)
    assert sent == 7e6
    assert m.busbw_bytes_per_s(n, t, "all_to_all", p) == pytest.approx(sent / t)
    assert m.all_to_all_bytes_sent(n, 1) == 0
    # the pairwise model's bandwidth term is exactly those bytes
    assert m.all_to_all_time_s(n, p, 0.0, 1.0) == pytest.approx(sent)


@pytest.mark.parametrize("call, match", [
    (lambda: m.recursive_doubling_allgather_time_s(1e6, 6, 1e-6, 1e-9), "power of two"),
    (lambda: m.rabenseifner_allreduce_time_s(1e6, 8, 1e-6, 1e-9, -1.0), "gamma_s_per_byte"),
    (lambda: m.recursive_doubling_allreduce_time_s(1e6, 0, 1e-6, 1e-9), "n_ranks"),
    (lambda: m.bruck_alltoall_blocks_sent(0), "n_ranks"),
    (lambda: m.in_network_busbw_factor(1.5), "n_ranks"),
    (lambda: m.all_to_all_bytes_sent(-1.0, 4), "message_bytes"),
    (lambda: m.bruck_allgather_time_s(1e6, 4, float("nan"), 1e-9), "alpha_s"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
