"""Aligning per-rank traces: synthetic Chrome traces with known offsets and known overlap."""

import pytest

from helpers.profiling import align
from helpers.profiling.trace import parse_trace


def gpu_trace(shift_us: float, compute, comm, extra_first_us: float = 0.0):
    """A GPU trace: compute kernels and NCCL kernels (times in us, before ``shift_us``).

    ``extra_first_us`` adds an early host event, so the trace's own origin moves.
    """
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
           "ts": shift_us - extra_first_us, "dur": 1.0}]
    for a, b in compute:
        ev.append({"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7,
                   "ts": shift_us + a, "dur": b - a, "args": {"stream": 7}})
    for a, b in comm:
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                   "pid": 0, "tid": 20, "ts": shift_us + a, "dur": b - a, "args": {"stream": 20}})
    return parse_trace({"traceEvents": ev})


def cpu_trace(shift_us: float, compute, comm):
    ev = []
    for a, b in compute:
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1,
                   "ts": shift_us + a, "dur": b - a})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1,
               "ts": shift_us + comm[0][0], "dur": 1.0})
    for a, b in comm:
        ev.append({"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 1,
                   "tid": 9, "ts": shift_us + a, "dur": b - a})
    return parse_trace({"traceEvents": ev})


# rank 0: anchor all-reduce [0, 10], compute [10, 100], bucket all-reduce [60, 110]
R0_COMPUTE, R0_COMM = [(10, 100)], [(0, 10), (60, 110)]
# rank 1 is slower: it reaches the anchor late (waits less), computes to 130
R1_COMPUTE, R1_COMM = [(50, 170)], [(45, 50), (120, 180)]


def test_alignment_puts_the_anchor_collective_end_at_the_same_instant():
    t0 = gpu_trace(1000.0, R0_COMPUTE, R0_COMM, extra_first_us=5.0)
    t1 = gpu_trace(9000.0, R1_COMPUTE, R1_COMM, extra_first_us=300.0)
    tl = align.align_ranks([t0, t1])
    # each trace counts from its own first event: rank 0's anchor ends 15 us in, rank 1's 350
    assert tl[0].offset_s == 0.0 and tl[0].anchor_s == pytest.approx(15e-6)
    assert tl[1].offset_s == pytest.approx(-335e-6)
    assert tl[1].comm[0][1] == pytest.approx(15e-6)
    # rank 1's compute starts at its anchor's end: the same instant as rank 0's anchor end
    assert tl[1].compute[0][0] == pytest.approx(tl[0].anchor_s)


def test_exposed_comm_and_slowest_rank_after_the_anchor():
    tl = align.align_ranks([gpu_trace(0.0, R0_COMPUTE, R0_COMM),
                            gpu_trace(777.0, R1_COMPUTE, R1_COMM)])
    exposed = align.exposed_comm_by_rank(tl)
    # rank 0: bucket [60, 110] vs compute to 100 -> 10 us exposed; rank 1: [120, 180] vs 170 -> 10
    assert exposed == pytest.approx([10e-6, 10e-6])
    rank, span = align.slowest_rank(tl)
    assert rank == 1 and span == pytest.approx(120e-6)  # rank 1 computes 120 us after the anchor
    # without cutting at the anchor, rank 0's anchor all-reduce counts too
    assert align.exposed_comm_by_rank(tl, after_anchor=False)[0] == pytest.approx(20e-6)


def test_cpu_traces_use_gloo_annotations_and_ignore_the_launch_op():
    t = cpu_trace(0.0, [(10, 100)], [(0, 10), (60, 110)])
    assert {e.name for e in align.comm_events(t)} == {"gloo:all_reduce"}
    assert all("c10d" not in e.name for e in align.compute_events(t))
    tl = align.align_ranks([t, cpu_trace(50.0, [(30, 100)], [(0, 30), (60, 110)])])
    assert tl[1].offset_s == pytest.approx(-20e-6)
    assert align.exposed_comm_by_rank(tl) == pytest.approx([10e-6, 10e-6])


def test_bad_input():
    with pytest.raises(ValueError):
        align.align_ranks([])
    with pytest.raises(ValueError):
        align.align_ranks([gpu_trace(0.0, R0_COMPUTE, [])])
    with pytest.raises(ValueError):
        align.align_ranks([gpu_trace(0.0, R0_COMPUTE, R0_COMM)], anchor_index=5)
    with pytest.raises(ValueError):
        align.slowest_rank([])
