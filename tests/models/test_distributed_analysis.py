"""MFU/HFU, scaling efficiency, exposed communication and the bucketed data-parallel step."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import distributed_analysis as da
from helpers.models import transformer as tm

P = da.PALM_540B


def palm_flop_per_token():
    return da.model_flop_per_token(n_params=P["n_params"], n_layers=P["n_layers"],
                                   n_heads=P["n_heads"], head_dim=P["head_dim"],
                                   seq_len=P["seq_len"])


# --- published numbers ---------------------------------------------------------------------

def test_palm_540b_mfu_is_reproduced_from_its_throughput():
    # Chowdhery et al. (2022), section 4.1 / table 3: 238.3K tokens/s on 6144 TPU v4, 46.2 % MFU
    got = da.mfu(tokens_per_s=P["tokens_per_s"], flop_per_token=palm_flop_per_token(),
                 peak_flop_per_s=P["peak_flop_per_s"], n_devices=P["n_devices"])
    assert got == pytest.approx(P["published_mfu"], abs=0.0005)


def test_palm_hfu_lies_between_no_and_full_recomputation():
    # the paper's 57.8 % HFU needs partial rematerialization: r between 0 and 1
    m = P["published_mfu"]
    assert da.hfu(m, recomputed_forward_fraction=0.0) < P["published_hfu"] < \
        da.hfu(m, recomputed_forward_fraction=1.0)


# --- oracles -------------------------------------------------------------------------------

@pytest.mark.parametrize("cfg", [tm.GPT2_SMALL, tm.LLAMA3_8B])
@pytest.mark.parametrize("seq_len", [1, 1024, 8192])
def test_flop_per_token_is_three_forward_passes_of_the_transformer_module(cfg, seq_len):
    n_mm = tm.matmul_parameter_count(cfg)
    got = da.model_flop_per_token(n_params=n_mm, n_layers=cfg.n_layers, n_heads=cfg.n_heads,
                                  head_dim=cfg.head_dim, seq_len=seq_len)
    assert got == pytest.approx(3 * tm.forward_flop_per_token(cfg, seq_len), rel=1e-12)


def test_full_recomputation_hfu_matches_counting_the_extra_forward():
    f = palm_flop_per_token()
    fwd = f / 3  # one forward pass of the 6N + 12LHQT step
    m = 0.4
    assert da.hfu(m, recomputed_forward_fraction=1.0) == pytest.approx(m * (f + fwd) / f)


def grid_exposed(compute, comm, dt=1e-3):
    t = np.arange(0, 20, dt) + dt / 2
    inside = lambda ivs: np.any([(t >= a) & (t < b) for a, b in ivs] or [np.zeros_like(t, bool)], axis=0)
    return float(np.sum(inside(comm) & ~inside(compute)) * dt)


intervals = st.lists(st.tuples(st.floats(0, 15), st.floats(0, 4)).map(lambda p: (p[0], p[0] + p[1])),
                     max_size=6)


@settings(max_examples=60, deadline=None)
@given(compute=intervals, comm=intervals)
def test_exposed_comm_matches_a_sampled_timeline(compute, comm):
    got = da.exposed_comm_s(compute, comm)
    assert got == pytest.approx(grid_exposed(compute, comm), abs=0.02 * (len(comm) + len(compute)) + 1e-9)
    assert 0 <= got <= sum(b - a for a, b in da.union_intervals(comm)) + 1e-12


def simulate_dp(forward, backward, comm, fractions, dt=1e-4):
    """Step a clock: a bucket's all-reduce runs once its gradients exist and the link is free."""
    ready = forward + backward * np.cumsum(fractions)
    t, i, left = 0.0, 0, None
    while i < len(comm):
        if left is None and t >= ready[i] - 1e-12:
            left = comm[i]
        if left is not None:
            left -= dt
            if left <= 1e-12:
                left, i = None, i + 1
        t += dt
    return max(t, forward + backward)


@settings(max_examples=30, deadline=None)
@given(f=st.floats(0, 0.5), b=st.floats(0.1, 1.0),
       comm=st.lists(st.floats(0, 0.3), min_size=1, max_size=5))
def test_dp_step_matches_a_clocked_simulation(f, b, comm):
    frac = [1 / len(comm)] * len(comm)
    got = da.dp_step_time_s(forward_s=f, backward_s=b, bucket_comm_s=comm)
    assert got == pytest.approx(simulate_dp(f, b, comm, frac), abs=len(comm) * 2e-4 + 1e-9)


# --- limits and invariants -----------------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(f=st.floats(0, 2), b=st.floats(0.01, 2), comm=st.lists(st.floats(0, 1), min_size=1, max_size=8),
       opt=st.floats(0, 0.1))
def test_exposed_comm_is_at_least_the_last_bucket_and_at_most_all(f, b, comm, opt):
    step = da.dp_step_time_s(forward_s=f, backward_s=b, bucket_comm_s=comm, optimizer_s=opt)
    exp = da.dp_exposed_comm_s(forward_s=f, backward_s=b, bucket_comm_s=comm)
    assert step == pytest.approx(f + b + exp + opt)
    assert comm[-1] - 1e-9 <= exp <= sum(comm) + 1e-9


def test_small_buckets_hide_all_but_the_last():
    step = da.dp_step_time_s(forward_s=1.0, backward_s=4.0, bucket_comm_s=[0.5] * 8, optimizer_s=0.1)
    assert step == pytest.approx(1.0 + 4.0 + 0.5 + 0.1)


def test_one_bucket_exposes_everything_and_huge_buckets_serialize():
    assert da.dp_exposed_comm_s(forward_s=1, backward_s=2, bucket_comm_s=[0.7]) == pytest.approx(0.7)
    # comm far slower than compute: the link is busy from the first bucket on
    exp_step = 1 + 2 / 4 + 4 * 5.0
    assert da.dp_step_time_s(forward_s=1, backward_s=2, bucket_comm_s=[5.0] * 4) == pytest.approx(exp_step)


def test_uneven_buckets_follow_their_gradient_fractions():
    # the first bucket holds 90 % of the gradients: ready at F + 0.9 B
    step = da.dp_step_time_s(forward_s=0, backward_s=1, bucket_comm_s=[0.5, 0.01],
                             bucket_grad_fractions=[0.9, 0.1])
    assert step == pytest.approx(0.9 + 0.5 + 0.01)


def test_scaling_efficiencies_and_straggler():
    assert da.strong_scaling_efficiency(time_1_s=10, time_n_s=10 / 4, n_devices=4) == pytest.approx(1)
    assert da.weak_scaling_efficiency(time_1_s=1, time_n_s=1) == 1
    assert da.straggler_step_time_s([1.0, 3.0, 2.0]) == 3.0


def test_time_to_train_inverts_mfu():
    t = da.time_to_train_s(n_params=1e9, n_tokens=1e10, n_devices=8, peak_flop_per_s=1e15, mfu=0.5)
    tokens_per_s = 1e10 / t
    assert da.mfu(tokens_per_s=tokens_per_s, flop_per_token=6e9, peak_flop_per_s=1e15,
                  n_devices=8) == pytest.approx(0.5)


# --- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: da.model_flop_per_token(n_params=-1, n_layers=1, n_heads=1, head_dim=1, seq_len=1),
    lambda: da.model_flop_per_token(n_params=1, n_layers=0, n_heads=1, head_dim=1, seq_len=1),
    lambda: da.mfu(tokens_per_s=0, flop_per_token=1, peak_flop_per_s=1),
    lambda: da.hfu(1.5, recomputed_forward_fraction=0),
    lambda: da.hfu(0.5, recomputed_forward_fraction=1.2),
    lambda: da.strong_scaling_efficiency(time_1_s=1, time_n_s=0, n_devices=2),
    lambda: da.exposed_comm_s([(2, 1)], []),
    lambda: da.exposed_comm_s([(0, float("nan"))], []),
    lambda: da.dp_step_time_s(forward_s=1, backward_s=1, bucket_comm_s=[]),
    lambda: da.dp_step_time_s(forward_s=1, backward_s=1, bucket_comm_s=[-0.1]),
    lambda: da.dp_step_time_s(forward_s=1, backward_s=1, bucket_comm_s=[0.1, 0.1],
                              bucket_grad_fractions=[0.5, 0.6]),
    lambda: da.dp_step_time_s(forward_s=1, backward_s=1, bucket_comm_s=[0.1],
                              bucket_grad_fractions=[0.5, 0.5]),
    lambda: da.straggler_step_time_s([]),
    lambda: da.time_to_train_s(n_params=1, n_tokens=1, n_devices=1, peak_flop_per_s=1, mfu=0),
])
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()
