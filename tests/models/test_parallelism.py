"""Tests of helpers.models.parallelism: limits, oracles (allocated tensors, a sharded flat
buffer, the schedule simulator, Monte Carlo routing) and the published numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import parallelism as par
from helpers.sim import pipeline as pipe


# --- ZeRO: the published numbers ------------------------------------------------------------

@pytest.mark.parametrize("stage, gb", [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_figure_1(stage, gb):
    """Rajbhandari et al. (2020) figure 1: 7.5B parameters, N_d = 64, K = 12."""
    got = par.zero_model_state_bytes_per_rank(7.5e9, dp=64, zero_stage=stage) / 1e9
    assert round(got, 1) == gb


def test_zero_stage_3_is_an_exact_shard_of_figure_1s_baseline():
    """Figure 1 shows stage 3 rounded to 1.9 GB; the equation gives 120 GB / 64 exactly."""
    got = par.zero_model_state_bytes_per_rank(7.5e9, dp=64, zero_stage=3)
    assert got == 120e9 / 64 == 1.875e9


def test_zero_communication_is_1_5x_for_stage_3():
    """Section 7.2: stages 1 and 2 move 2 Psi like data parallelism, stage 3 moves 3 Psi."""
    base = par.data_parallel_comm_bytes_per_rank(1e9, dp=64, zero_stage=0)
    assert par.data_parallel_comm_bytes_per_rank(1e9, dp=64, zero_stage=1) == base
    assert par.data_parallel_comm_bytes_per_rank(1e9, dp=64, zero_stage=2) == base
    assert par.data_parallel_comm_bytes_per_rank(1e9, dp=64, zero_stage=3) == 1.5 * base
    assert base == par.ring_allreduce_bytes_per_rank(2e9, 64)


# --- ZeRO: limits -----------------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(psi=st.floats(1.0, 1e12), dp=st.integers(1, 4096))
def test_zero_stages_order_and_limits(psi, dp):
    m = [par.zero_model_state_bytes_per_rank(psi, dp=dp, zero_stage=s) for s in range(4)]
    assert m[0] == pytest.approx(16 * psi)
    assert all(a >= b * (1 - 1e-12) for a, b in zip(m, m[1:]))      # each stage saves more
    assert m[3] * dp == pytest.approx(m[0])                        # stage 3 is a pure shard
    assert m[1] >= 4 * psi and m[2] >= 2 * psi                     # what stays replicated


def test_one_rank_means_no_saving():
    assert len({par.zero_model_state_bytes_per_rank(1e6, dp=1, zero_stage=s)
                for s in range(4)}) == 1


def test_mesh_state_divides_by_tp_and_pp():
    full = par.model_state_bytes_per_rank(8e9, dp=4, zero_stage=2)
    assert par.model_state_bytes_per_rank(8e9, dp=4, tp=2, pp=4, zero_stage=2) == \
        pytest.approx(full / 8)


# --- the oracle: bytes a PyTorch model really allocates ---------------------------------------

def _mlp(dtype):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(),
                               torch.nn.Linear(256, 64)).to(dtype)


def _nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def _adam_state_tensors(opt):
    """Adam's per-parameter moments (the scalar 'step' counters are not per-parameter)."""
    return [v for st_ in opt.state.values() for k, v in st_.items() if k != "step"]


def test_fp32_adam_allocates_4_4_8_bytes_per_parameter():
    model = _mlp(torch.float32)
    n = sum(p.numel() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(8, 64)).square().mean().backward()
    opt.step()
    measured = (_nbytes(model.parameters()) + _nbytes(p.grad for p in model.parameters())
                + _nbytes(_adam_state_tensors(opt)))
    assert measured == par.zero_model_state_bytes_per_rank(
        n, dp=1, zero_stage=0, weight_bytes_per_param=4, grad_bytes_per_param=4,
        optimizer_state_bytes_per_param=8)


def test_mixed_precision_adam_allocates_16_bytes_per_parameter():
    """bf16 working weights and gradients, fp32 master weights that Adam updates: 2 + 2 + 12."""
    model = _mlp(torch.bfloat16)
    n = sum(p.numel() for p in model.parameters())
    master = [p.detach().float().requires_grad_(True) for p in model.parameters()]
    opt = torch.optim.Adam(master, lr=1e-3)
    model(torch.randn(8, 64, dtype=torch.bfloat16)).float().square().mean().backward()
    for m_, p in zip(master, model.parameters()):
        m_.grad = p.grad.float()
    opt.step()
    for m_ in master:                                # the fp32 grads are freed after the step
        m_.grad = None
    measured = (_nbytes(model.parameters()) + _nbytes(p.grad for p in model.parameters())
                + _nbytes(master) + _nbytes(_adam_state_tensors(opt)))
    assert measured == par.zero_model_state_bytes_per_rank(n, dp=1, zero_stage=0) == 16 * n


@pytest.mark.parametrize("dp", [2, 3, 4, 8])
@pytest.mark.parametrize("stage", [1, 2, 3])
def test_sharding_a_flat_state_matches_each_stage(dp, stage):
    """Emulate ZeRO: flatten each state, pad to a multiple of dp, give each rank one slice."""
    model = _mlp(torch.bfloat16)
    n = sum(p.numel() for p in model.parameters())
    flat_w = torch.cat([p.detach().flatten() for p in model.parameters()])
    flat_g = torch.zeros_like(flat_w)
    flat_opt = torch.zeros(n, 3, dtype=torch.float32)   # master, momentum, variance
    pad = (-n) % dp

    def shard(t):
        padded = torch.cat([t, t.new_zeros((pad,) + tuple(t.shape[1:]))])
        return list(torch.chunk(padded, dp))

    per_rank = []
    for r in range(dp):
        parts = [flat_opt if stage == 0 else shard(flat_opt)[r],
                 shard(flat_g)[r] if stage >= 2 else flat_g,
                 shard(flat_w)[r] if stage >= 3 else flat_w]
        per_rank.append(_nbytes(parts))
    model_bytes = par.zero_model_state_bytes_per_rank(n, dp=dp, zero_stage=stage)
    padded_bytes = par.zero_model_state_bytes_per_rank(n + pad, dp=dp, zero_stage=stage)
    assert len(set(per_rank)) == 1
    assert model_bytes <= per_rank[0] <= padded_bytes
    if stage == 3:      # nothing replicated: the shards add up to the padded whole state
        assert sum(per_rank) == 16 * (n + pad)


# --- activations ----------------------------------------------------------------------------

def test_activations_korthikanti_table_2_forms():
    kw = dict(seq_len=2048, micro_batch=1, d_model=12288, n_heads=96)
    s, b, h, a = 2048, 1, 12288, 96
    assert par.activation_bytes_per_layer(**kw) == s * b * h * (34 + 5 * a * s / h)
    for t in (2, 4, 8):
        tp = par.activation_bytes_per_layer(**kw, tp=t)
        sp = par.activation_bytes_per_layer(**kw, tp=t, sequence_parallel=True)
        assert tp == pytest.approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
        assert sp == pytest.approx(par.activation_bytes_per_layer(**kw) / t)
        assert sp < tp
        # the selective-recomputation rows of table 2: sbh(10 + 24/t) and sbh 34/t
        assert par.activation_bytes_per_layer(**kw, tp=t, store_attention_scores=False) == \
            pytest.approx(s * b * h * (10 + 24 / t))
        assert par.activation_bytes_per_layer(**kw, tp=t, sequence_parallel=True,
                                              store_attention_scores=False) == \
            pytest.approx(s * b * h * 34 / t)


def test_context_parallel_halves_the_linear_terms_and_quarters_the_scores():
    kw = dict(micro_batch=1, d_model=4096, n_heads=32)
    full = par.activation_bytes_per_layer(seq_len=8192, **kw)
    half = par.activation_bytes_per_layer(seq_len=8192, cp=2, **kw)
    assert half == par.activation_bytes_per_layer(seq_len=4096, **kw)
    assert full / 4 < half < full / 2


# --- pipeline: the simulator is the oracle --------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 8), m=st.integers(1, 24), tf=st.floats(0.1, 3.0),
       ratio=st.floats(0.5, 3.0), schedule=st.sampled_from(["gpipe", "1f1b"]))
def test_bubble_formula_matches_the_simulator(p, m, tf, ratio, schedule):
    tl = pipe.simulate(schedule, pp=p, n_microbatches=m, forward_s=tf, backward_s=tf * ratio)
    assert tl.bubble_fraction() == pytest.approx(
        par.pipeline_bubble_fraction(pp=p, n_microbatches=m), abs=1e-9)
    for s in range(p):
        assert tl.peak_in_flight(s) == par.pipeline_in_flight_microbatches(
            pp=p, n_microbatches=m, schedule=schedule, stage=s)


@settings(max_examples=30, deadline=None)
@given(p=st.integers(1, 6), groups=st.integers(1, 4), v=st.integers(1, 4))
def test_interleaved_bubble_matches_the_simulator(p, groups, v):
    m = p * groups
    tl = pipe.simulate("interleaved", pp=p, n_microbatches=m, chunks=v)
    assert tl.bubble_fraction() == pytest.approx(
        par.pipeline_bubble_fraction(pp=p, n_microbatches=m, chunks=v), abs=1e-9)


def test_bubble_limits_and_published_rules():
    assert par.pipeline_bubble_fraction(pp=1, n_microbatches=7) == 0.0
    assert par.pipeline_bubble_fraction(pp=8, n_microbatches=10**9) < 1e-8
    # GPipe section 2.3: "negligible when M >= 4K": at most 1/5 of the step.
    for k in range(2, 64):
        assert par.pipeline_bubble_fraction(pp=k, n_microbatches=4 * k) < 0.2
    # Narayanan et al. section 2.2: bubble over ideal time is (p-1)/m, and /v interleaved.
    assert par.pipeline_bubble_ratio(pp=8, n_microbatches=32) == 7 / 32
    assert par.pipeline_bubble_ratio(pp=8, n_microbatches=32, chunks=4) == 7 / 128


# --- communication ----------------------------------------------------------------------------

def test_ring_allreduce_tends_to_twice_the_message():
    assert par.ring_allreduce_bytes_per_rank(1e6, 1) == 0.0
    assert par.ring_allreduce_bytes_per_rank(1e6, 10**6) == pytest.approx(2e6, rel=1e-5)


def test_tensor_parallel_traffic_is_four_allreduces_of_the_hidden_state():
    v = par.tensor_parallel_comm_bytes_per_layer(n_tokens=1024, d_model=2048, tp=4)
    assert v == 4 * par.ring_allreduce_bytes_per_rank(1024 * 2048 * 2.0, 4)
    assert par.tensor_parallel_comm_bytes_per_layer(n_tokens=1024, d_model=2048, tp=1) == 0


def test_pipeline_and_expert_traffic():
    assert par.pipeline_p2p_bytes_per_rank(n_tokens=10, d_model=8, n_microbatches=3,
                                           bytes_per_element=2) == 2 * 3 * 10 * 8 * 2
    assert par.expert_alltoall_bytes_per_layer(n_tokens=100, d_model=8, ep=1) == 0
    two = par.expert_alltoall_bytes_per_layer(n_tokens=100, d_model=8, ep=2)
    assert par.expert_alltoall_bytes_per_layer(n_tokens=100, d_model=8, ep=2, top_k=2) == 2 * two


# --- mixture of experts: capacity, drops, balance --------------------------------------------

def test_capacity_is_tokens_per_expert_times_the_factor():
    assert par.expert_capacity_tokens(n_tokens=1024, n_experts=8) == 128
    assert par.expert_capacity_tokens(n_tokens=1024, n_experts=8, capacity_factor=1.25) == 160
    assert par.expert_capacity_tokens(n_tokens=1024, n_experts=8, top_k=2) == 256


def test_dropped_tokens_counts_the_overflow():
    assert par.dropped_tokens([4, 4, 4, 4], 4) == 0
    assert par.dropped_tokens([16, 0, 0, 0], 4) == 12
    assert par.dropped_tokens(np.array([7, 2, 3]), 0) == 12


@pytest.mark.parametrize("cf", [1.0, 1.25, 2.0])
def test_expected_drops_match_monte_carlo_routing(cf):
    """Route 4096 tokens uniformly to 64 experts, many times; count the overflow."""
    t, e = 4096, 64
    rng = np.random.default_rng(0)
    cap = par.expert_capacity_tokens(n_tokens=t, n_experts=e, capacity_factor=cf)
    loads = rng.multinomial(t, [1 / e] * e, size=4000)
    sim = np.maximum(loads - cap, 0).sum(axis=1).mean() / t
    model = par.expected_dropped_fraction_uniform(n_tokens=t, n_experts=e, capacity_factor=cf)
    assert model == pytest.approx(sim, rel=0.03, abs=1e-5)


def test_expected_drops_limits():
    assert par.expected_dropped_fraction_uniform(n_tokens=100, n_experts=1) == 0.0
    assert par.expected_dropped_fraction_uniform(n_tokens=64, n_experts=8, capacity_factor=8) \
        == 0.0
    more = [par.expected_dropped_fraction_uniform(n_tokens=4096, n_experts=64, capacity_factor=c)
            for c in (1.0, 1.25, 1.5, 2.0)]
    assert all(a > b for a, b in zip(more, more[1:]))


def test_load_balance_loss_bounds():
    assert par.load_balance_loss([0.25] * 4, [0.25] * 4) == pytest.approx(1.0)
    assert par.load_balance_loss([1, 0, 0, 0], [1, 0, 0, 0]) == pytest.approx(4.0)


def test_expert_params_per_rank():
    assert par.expert_params_per_rank(dense_params=2, expert_params=8, ep=4) == 4


# --- mesh -------------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(dp=st.integers(1, 6), tp=st.integers(1, 8), pp=st.integers(1, 6))
def test_rank_coordinates_are_a_bijection(dp, tp, pp):
    world = dp * tp * pp
    coords = [par.rank_coordinates(r, dp=dp, tp=tp, pp=pp) for r in range(world)]
    assert len(set(coords)) == world
    for r, (d, p, t) in enumerate(coords):
        assert par.rank_of(i_d=d, i_p=p, i_t=t, dp=dp, tp=tp, pp=pp) == r
    # tensor-parallel groups are consecutive ranks (one node's NVLink domain)
    assert [par.rank_coordinates(r, dp=dp, tp=tp, pp=pp)[2] for r in range(tp)] == \
        list(range(tp))


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: par.zero_model_state_bytes_per_rank(-1, dp=2, zero_stage=1), "n_params"),
    (lambda: par.zero_model_state_bytes_per_rank(1e9, dp=0, zero_stage=1), "dp"),
    (lambda: par.zero_model_state_bytes_per_rank(1e9, dp=2, zero_stage=4), "zero_stage"),
    (lambda: par.zero_model_state_bytes_per_rank(1e9, dp=2, zero_stage=True), "zero_stage"),
    (lambda: par.model_state_bytes_per_rank(1e9, tp=0), "tp"),
    (lambda: par.activation_bytes_per_layer(seq_len=0, micro_batch=1, d_model=8, n_heads=1),
     "seq_len"),
    (lambda: par.activation_bytes_per_layer(seq_len=8, micro_batch=1, d_model=8, n_heads=1,
                                            sequence_parallel=1), "sequence_parallel"),
    (lambda: par.pipeline_in_flight_microbatches(pp=4, n_microbatches=8, stage=4), "stage"),
    (lambda: par.pipeline_in_flight_microbatches(pp=4, n_microbatches=8, schedule="x"),
     "schedule"),
    (lambda: par.pipeline_bubble_fraction(pp=4, n_microbatches=0), "n_microbatches"),
    (lambda: par.pipeline_bubble_ratio(pp=4, n_microbatches=4, chunks=0), "chunks"),
    (lambda: par.ring_allreduce_bytes_per_rank(math.nan, 4), "message_bytes"),
    (lambda: par.data_parallel_comm_bytes_per_rank(1e9, dp=4, bytes_per_element=0),
     "bytes_per_element"),
    (lambda: par.tensor_parallel_comm_bytes_per_layer(n_tokens=1, d_model=1, tp=0), "tp"),
    (lambda: par.pipeline_p2p_bytes_per_rank(n_tokens=1, d_model=1, n_microbatches=0),
     "n_microbatches"),
    (lambda: par.expert_alltoall_bytes_per_layer(n_tokens=1, d_model=1, ep=1, top_k=0), "top_k"),
    (lambda: par.expert_capacity_tokens(n_tokens=8, n_experts=2, capacity_factor=0),
     "capacity_factor"),
    (lambda: par.dropped_tokens([1.5, 2], 1), "expert_loads"),
    (lambda: par.dropped_tokens([1, -2], 1), "expert_loads"),
    (lambda: par.dropped_tokens([1, 2], -1), "capacity_tokens"),
    (lambda: par.load_balance_loss([0.5, 0.5], [1.0]), "same length"),
    (lambda: par.load_balance_loss([0.5, 0.6], [0.5, 0.5]), "token_fractions"),
    (lambda: par.expert_params_per_rank(dense_params=1, expert_params=1, ep=0), "ep"),
    (lambda: par.rank_coordinates(16, dp=2, tp=4, pp=2), "rank"),
    (lambda: par.rank_of(i_d=2, i_p=0, i_t=0, dp=2, tp=4, pp=2), "i_d"),
])
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()
