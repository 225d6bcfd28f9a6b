"""Issue 23: pipeline point-to-point bytes per direction beside both, ZeRO's communication
volume in its large-N_d limit as the paper states it, and a 4D (TP x CP x PP x DP) layout
checked against the GPU count (Llama 3's table 4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import parallelism as par
from helpers.sim import pipeline as pipe

FAST = settings(max_examples=60, deadline=None)


# --- pipeline bytes per direction -----------------------------------------------------------

def test_per_direction_is_the_papers_bsh_per_microbatch():
    # Narayanan et al. (2021) section 3.2 prints a formula, not a number: "the total amount of
    # communication that needs to be performed between every pair of consecutive devices (for
    # either the forward or backward pass) for each microbatch is bsh". With its 1T model's
    # s = 2048, h = 25600 and b = 1, in 16-bit elements:
    s, h, b = 2048, 25600, 1
    one = par.pipeline_p2p_bytes_per_direction(n_tokens=b * s, d_model=h, n_microbatches=1)
    assert one == b * s * h * 2
    m = 7
    assert par.pipeline_p2p_bytes_per_direction(n_tokens=b * s, d_model=h,
                                                n_microbatches=m) == m * one


@FAST
@given(st.integers(1, 8192), st.integers(1, 16384), st.integers(1, 64),
       st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_both_directions_are_twice_one(t, h, m, b):
    one = par.pipeline_p2p_bytes_per_direction(n_tokens=t, d_model=h, n_microbatches=m,
                                               bytes_per_element=b)
    both = par.pipeline_p2p_bytes_per_rank(n_tokens=t, d_model=h, n_microbatches=m,
                                           bytes_per_element=b)
    assert both == 2 * one


@pytest.mark.parametrize("schedule,pp,m", [("gpipe", 4, 6), ("1f1b", 4, 8), ("1f1b", 3, 5)])
def test_oracle_counting_the_sends_of_a_simulated_schedule(schedule, pp, m):
    # walk the simulated schedule; a forward on stage i sends its output (an allocated bf16
    # tensor of T x h) to stage i + 1, a backward on stage i sends its input gradient to i - 1
    T, h = 96, 40
    act = torch.empty(T, h, dtype=torch.bfloat16)
    sent = {}  # (boundary, direction) -> bytes
    for op in pipe.simulate(schedule, pp=pp, n_microbatches=m).ops:
        if op.kind == "F" and op.stage < pp - 1:
            key = (op.stage, "forward")
        elif op.kind == "B" and op.stage > 0:
            key = (op.stage - 1, "backward")
        else:
            continue
        sent[key] = sent.get(key, 0) + act.nbytes
    want = par.pipeline_p2p_bytes_per_direction(n_tokens=T, d_model=h, n_microbatches=m)
    assert set(sent) == {(i, d) for i in range(pp - 1) for d in ("forward", "backward")}
    assert set(sent.values()) == {want}
    # an interior stage sends one direction over each of its two boundaries: both = 2 x one
    interior = sent[(1, "forward")] + sent[(0, "backward")]
    assert interior == par.pipeline_p2p_bytes_per_rank(n_tokens=T, d_model=h, n_microbatches=m)


def test_per_direction_bad_input():
    with pytest.raises(ValueError, match="n_microbatches"):
        par.pipeline_p2p_bytes_per_direction(n_tokens=8, d_model=8, n_microbatches=0)
    with pytest.raises(ValueError, match="bytes_per_element"):
        par.pipeline_p2p_bytes_per_direction(n_tokens=8, d_model=8, n_microbatches=1,
                                             bytes_per_element=0.0)


# --- ZeRO's communication volume in the large-N_d limit ----------------------------------------

def test_published_volumes_2psi_and_3psi():
    # Rajbhandari et al. (2020) 7.1: data parallelism moves "2 Psi" per step; 7.2.1: P_os+g
    # "the same communication volume"; 7.2.2: P_os+g+p "3 Psi", "1.5x". In elements (b = 1):
    psi = 7.5e9
    for stage, k in ((0, 2), (1, 2), (2, 2), (3, 3)):
        assert par.zero_comm_bytes_per_rank_limit(psi, zero_stage=stage,
                                                  bytes_per_element=1.0) == k * psi
    assert par.zero_comm_bytes_per_rank_limit(psi, zero_stage=3) / \
        par.zero_comm_bytes_per_rank_limit(psi, zero_stage=0) == 1.5


@FAST
@given(st.floats(1.0, 1e12), st.integers(1, 4096), st.sampled_from([0, 1, 2, 3]))
def test_finite_degree_is_the_limit_times_n_minus_1_over_n(psi, dp, stage):
    exact = par.data_parallel_comm_bytes_per_rank(psi, dp=dp, zero_stage=stage)
    limit = par.zero_comm_bytes_per_rank_limit(psi, zero_stage=stage)
    assert exact == pytest.approx(limit * (dp - 1) / dp, rel=1e-12)
    assert exact <= limit


def test_the_limit_is_approached_as_the_degree_grows():
    limit = par.zero_comm_bytes_per_rank_limit(1e9, zero_stage=3)
    gaps = [limit - par.data_parallel_comm_bytes_per_rank(1e9, dp=n, zero_stage=3)
            for n in (8, 64, 1024, 10**6)]
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] / limit == pytest.approx(1e-6)


def test_oracle_counting_a_ring():
    # simulate a ring reduce-scatter and all-gather (and a second all-gather for stage 3)
    # chunk by chunk, counting the elements rank 0 sends
    psi = 1200
    for n in (2, 3, 8, 24):
        chunk = psi / n
        sent = 0.0
        for _phase in ("reduce-scatter", "all-gather"):
            sent += (n - 1) * chunk
        assert sent == pytest.approx(par.data_parallel_comm_bytes_per_rank(
            psi, dp=n, zero_stage=0, bytes_per_element=1.0))
        sent += (n - 1) * chunk  # stage 3: the parameters gathered again for the backward
        assert sent == pytest.approx(par.data_parallel_comm_bytes_per_rank(
            psi, dp=n, zero_stage=3, bytes_per_element=1.0))
        assert sent < par.zero_comm_bytes_per_rank_limit(psi, zero_stage=3,
                                                         bytes_per_element=1.0)


def test_limit_bad_input():
    with pytest.raises(ValueError, match="zero_stage"):
        par.zero_comm_bytes_per_rank_limit(1e9, zero_stage=4)
    with pytest.raises(ValueError, match="n_params"):
        par.zero_comm_bytes_per_rank_limit(-1.0, zero_stage=1)


# --- the 4D layout ------------------------------------------------------------------------

# Dubey et al. (2024), "The Llama 3 Herd of Models", table 4: GPUs, TP, CP, PP, DP, sequence
# length, batch size per DP; every row prints "16M" tokens per batch. (The GPU, TP, CP, PP and
# tokens-per-batch columns are also in Balaji's SC'24 slide as transcribed by G. Lockwood.)
LLAMA3_ROWS = [(8192, 8, 1, 16, 64, 8192, 32), (16384, 8, 1, 16, 128, 8192, 16),
               (16384, 8, 16, 16, 8, 131072, 16)]


@pytest.mark.parametrize("n,tp,cp,pp,dp,s,bdp", LLAMA3_ROWS)
def test_llama3_table_4_rows(n, tp, cp, pp, dp, s, bdp):
    lay = par.parallel_layout_4d(n_devices=n, tp=tp, cp=cp, pp=pp, dp=dp, seq_len=s,
                                 batch_per_dp=bdp)
    assert lay["tokens_per_batch"] == 2**24  # the printed "16M" is 16 Mi tokens
    assert round(lay["tokens_per_batch"] / 2**20) == 16
    assert lay["ranks_per_replica"] * dp == n
    assert lay["seq_len_per_rank"] == 8192  # CP 16 cuts 131,072 tokens to the 8K of the others


def test_llama3_cp_row_changes_dp_not_the_batch():
    # section 3.3.2's long-context stage: CP 16 takes its GPUs from DP (128 -> 8), and the
    # batch in tokens is unchanged
    short = par.parallel_layout_4d(n_devices=16384, tp=8, cp=1, pp=16, dp=128, seq_len=8192,
                                   batch_per_dp=16)
    long = par.parallel_layout_4d(n_devices=16384, tp=8, cp=16, pp=16, dp=8, seq_len=131072,
                                  batch_per_dp=16)
    assert short["tokens_per_batch"] == long["tokens_per_batch"]
    assert long["batch_sequences"] * 16 == short["batch_sequences"]


def test_oracle_sharding_a_batch_over_the_mesh():
    # build the mesh explicitly: every rank gets one (tp, cp, pp, dp) coordinate, the batch is
    # an array of token ids split over dp (sequences) and cp (positions); count what the ranks
    # of one pipeline stage and one tensor slice hold
    tp, cp, pp, dp, bdp, s = 2, 4, 3, 2, 3, 32
    n = tp * cp * pp * dp
    coords = list(itertools.product(range(pp), range(dp), range(cp), range(tp)))
    assert len(coords) == n
    batch = np.arange(dp * bdp * s).reshape(dp * bdp, s)
    held = set()
    for ip, id_, ic, it in coords:
        if ip == 0 and it == 0:
            shard = batch[id_ * bdp:(id_ + 1) * bdp, ic * s // cp:(ic + 1) * s // cp]
            assert shard.shape[1] == par.parallel_layout_4d(
                n_devices=n, tp=tp, cp=cp, pp=pp, dp=dp, seq_len=s,
                batch_per_dp=bdp)["seq_len_per_rank"]
            held |= set(shard.ravel().tolist())
    lay = par.parallel_layout_4d(n_devices=n, tp=tp, cp=cp, pp=pp, dp=dp, seq_len=s,
                                 batch_per_dp=bdp)
    assert len(held) == lay["tokens_per_batch"] == batch.size


@FAST
@given(*(st.integers(1, 16) for _ in range(4)))
def test_product_must_match(tp, cp, pp, dp):
    n = tp * cp * pp * dp
    par.parallel_layout_4d(n_devices=n, tp=tp, cp=cp, pp=pp, dp=dp, seq_len=cp * 8,
                           batch_per_dp=1)
    with pytest.raises(ValueError, match="n_devices"):
        par.parallel_layout_4d(n_devices=n + 1, tp=tp, cp=cp, pp=pp, dp=dp, seq_len=cp * 8,
                               batch_per_dp=1)


def test_layout_bad_input():
    with pytest.raises(ValueError, match="n_devices must equal"):
        par.parallel_layout_4d(n_devices=16384, tp=8, cp=16, pp=16, dp=16, seq_len=131072,
                               batch_per_dp=16)
    with pytest.raises(ValueError, match="seq_len"):
        par.parallel_layout_4d(n_devices=16, tp=1, cp=16, pp=1, dp=1, seq_len=1000,
                               batch_per_dp=1)
    with pytest.raises(ValueError, match="cp"):
        par.parallel_layout_4d(n_devices=16, tp=1, cp=0, pp=16, dp=1, seq_len=1000,
                               batch_per_dp=1)
    with pytest.raises(ValueError, match="batch_per_dp"):
        par.parallel_layout_4d(n_devices=1, tp=1, cp=1, pp=1, dp=1, seq_len=8,
                               batch_per_dp=math.nan)
