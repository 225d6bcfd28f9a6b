"""Tests of helpers.sim.pipeline: each schedule is a valid execution (every operation once, its
inputs first, one operation per rank at a time), its makespan and memory, and errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.sim import pipeline as pipe

CASES = [("gpipe", 4, 8, 1), ("1f1b", 4, 8, 1), ("1f1b", 3, 2, 1), ("interleaved", 4, 8, 2),
         ("interleaved", 2, 6, 3), ("gpipe", 1, 3, 1)]


@pytest.mark.parametrize("schedule, p, m, v", CASES)
def test_timeline_is_a_valid_execution(schedule, p, m, v):
    tl = pipe.simulate(schedule, pp=p, n_microbatches=m, chunks=v, forward_s=1.0,
                       backward_s=2.0)
    end = {(o.kind, o.microbatch, o.chunk * p + o.stage): o for o in tl.ops}
    assert len(end) == len(tl.ops) == 2 * m * v * p            # every op exactly once
    last = v * p - 1
    for (kind, j, vs), o in end.items():
        if kind == "F" and vs > 0:
            assert o.start_s >= end[("F", j, vs - 1)].end_s
        if kind == "B":
            assert o.start_s >= end[("F", j, vs)].end_s
            if vs < last:
                assert o.start_s >= end[("B", j, vs + 1)].end_s
    for s in range(p):                                          # one op at a time per rank
        ops = tl.stage_ops(s)
        assert all(a.end_s <= b.start_s for a, b in zip(ops, ops[1:]))
        assert tl.busy_s(s) == pytest.approx(m * 3.0)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 8), m=st.integers(1, 20), tf=st.floats(0.1, 2.0),
       tb=st.floats(0.1, 4.0))
def test_gpipe_and_1f1b_take_m_plus_p_minus_1_slots(p, m, tf, tb):
    """With equal stages, both schedules end after (m + p - 1)(t_f + t_b)."""
    for schedule in ("gpipe", "1f1b"):
        tl = pipe.simulate(schedule, pp=p, n_microbatches=m, forward_s=tf, backward_s=tb)
        assert tl.makespan_s == pytest.approx((m + p - 1) * (tf + tb))


def test_1f1b_holds_fewer_activations_than_gpipe():
    g = pipe.simulate("gpipe", pp=4, n_microbatches=16)
    f = pipe.simulate("1f1b", pp=4, n_microbatches=16)
    assert [g.peak_in_flight(s) for s in range(4)] == [16] * 4
    assert [f.peak_in_flight(s) for s in range(4)] == [4, 3, 2, 1]


def test_interleaving_shrinks_the_bubble():
    base = pipe.simulate("1f1b", pp=4, n_microbatches=8).bubble_fraction()
    two = pipe.simulate("interleaved", pp=4, n_microbatches=8, chunks=2).bubble_fraction()
    assert two < base


def test_stage_orders_alternate_in_the_steady_state():
    orders = pipe.stage_orders("1f1b", pp=4, n_microbatches=8)
    assert [k for k, _, _ in orders[0]][:5] == ["F", "F", "F", "F", "B"]
    assert [k for k, _, _ in orders[3]][:4] == ["F", "B", "F", "B"]


@pytest.mark.parametrize("kw, match", [
    (dict(schedule="zigzag", pp=2, n_microbatches=2), "schedule"),
    (dict(schedule="1f1b", pp=0, n_microbatches=2), "pp"),
    (dict(schedule="1f1b", pp=2, n_microbatches=2, chunks=2), "chunks"),
    (dict(schedule="interleaved", pp=4, n_microbatches=6, chunks=2), "multiple"),
    (dict(schedule="gpipe", pp=2, n_microbatches=2, forward_s=0), "forward_s"),
])
def test_bad_input_raises(kw, match):
    schedule = kw.pop("schedule")
    with pytest.raises(ValueError, match=match):
        pipe.simulate(schedule, **kw)
