"""Lesson 17's predictions (helpers.models.inference): the memory budget, prefill and decode bounds,
TTFT and the sustainable request rate. Limits and invariants, independent oracles, published
numbers, bad input."""

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from helpers import specs
from helpers.models import inference as inf
from helpers.models import transformer as tf
from helpers.nn.decoder import KVCache

H200 = specs.H200_SXM
P_BF16 = H200.peak_flop_per_s("bf16")
M = H200.hbm_bytes_per_s


# --- memory budget ----------------------------------------------------------------------------

@given(hbm=st.floats(1e9, 200e9), wfrac=st.floats(0.01, 0.9), q=st.floats(1e3, 1e7),
       n=st.integers(1, 100_000))
@settings(max_examples=80, deadline=None)
def test_budget_limits_and_monotonicity(hbm, wfrac, q, n):
    w = wfrac * hbm
    budget = inf.kv_budget_bytes(hbm, w)
    assert budget == pytest.approx(hbm - w)
    tokens = inf.max_cached_tokens(hbm, w, q)
    reqs = inf.max_concurrent_requests(hbm, w, q, n)
    assert tokens * q <= budget < (tokens + 1) * q  # the floor: one more token would not fit
    assert reqs * n * q <= budget < (reqs + 1) * n * q
    assert reqs == tokens // n  # whole requests out of whole tokens
    assert inf.max_concurrent_requests(hbm, w, q, 2 * n) <= reqs  # longer requests, fewer fit


def test_budget_against_allocating_caches_until_they_do_not_fit():
    """Oracle: count real KVCache tensors of book-lm's shape into a byte budget, one by one."""
    from helpers.nn.tinylm import BOOK_LM

    hbm, weights, reserve, length = 6_000_000, 2_000_000, 500_000, 40
    per_token = tf.kv_cache_bytes_per_token(BOOK_LM, 4)
    left, fitted = hbm - weights - reserve, 0
    while True:
        need = KVCache(BOOK_LM, batch=1, max_seq_len=length, dtype=torch.float32).nbytes
        if need > left:
            break
        left -= need
        fitted += 1
    assert inf.max_concurrent_requests(hbm, weights, per_token, length, reserve) == fitted


def test_published_vllm_memory_split():
    """Kwon et al. (2023) section 1, figure 1 (left): a 13B model on a 40 GB A100 gives about
    65 % of the memory to its weights and close to 30 % to the KV cache; section 3: 800 KB of KV
    cache per token (OPT-13B, fp16) and up to 1.6 GB per 2048-token request."""
    hbm, weights = 40e9, 0.65 * 40e9
    assert tf.weight_bytes(13e9, 2) == pytest.approx(weights)  # 13B in fp16 is the 65 %
    reserve = 0.05 * hbm  # the remaining "others" of the figure
    budget = inf.kv_budget_bytes(hbm, weights, reserve)
    assert budget / hbm == pytest.approx(0.30)
    per_token = 2 * 5120 * 40 * 2
    assert per_token == 800 * 1024
    # a few 2048-token requests: 7 at their full length
    assert inf.max_concurrent_requests(hbm, weights, per_token, 2048, reserve) == 7


@pytest.mark.parametrize("call", [
    lambda: inf.kv_budget_bytes(40e9, 39e9, 2e9),  # no room left
    lambda: inf.kv_budget_bytes(0, 1e9),
    lambda: inf.kv_budget_bytes(40e9, 1e9, -1),
    lambda: inf.max_cached_tokens(40e9, 1e9, 0),
    lambda: inf.max_concurrent_requests(40e9, 1e9, 1e5, 0),
    lambda: inf.ttft_lower_bound_s(-0.1),
    lambda: inf.sustainable_request_rate_per_s(0, 0.1, 0.01, 10),
    lambda: inf.prefill_time_lower_bound_s(tf.LLAMA3_8B, prompt_len=0, bytes_per_element=2,
                                           peak_flop_per_s=P_BF16, mem_bytes_per_s=M),
    lambda: inf.decode_step_time_bound_s(tf.LLAMA3_8B, context_len=-1, batch=1,
                                         bytes_per_element=2, peak_flop_per_s=P_BF16,
                                         mem_bytes_per_s=M),
])
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


# --- prefill and decode bounds ----------------------------------------------------------------

def _prefill(p, **kw):
    return inf.prefill_time_lower_bound_s(tf.LLAMA3_8B, prompt_len=p, bytes_per_element=2,
                                          peak_flop_per_s=P_BF16, mem_bytes_per_s=M, **kw)


def _decode(s, b):
    return inf.decode_step_time_bound_s(tf.LLAMA3_8B, context_len=s, batch=b,
                                        bytes_per_element=2, peak_flop_per_s=P_BF16,
                                        mem_bytes_per_s=M)


def test_prefill_is_weight_bound_for_short_prompts_and_compute_bound_for_long():
    w = tf.weight_bytes(tf.matmul_parameter_count(tf.LLAMA3_8B), 2) / M
    assert _prefill(1) == pytest.approx(w)  # one token: the weights' read dominates
    assert _prefill(8) == pytest.approx(w)  # still under the ridge
    long = _prefill(4096)
    assert long == pytest.approx(tf.prefill_flop(tf.LLAMA3_8B, seq_len=4096) / P_BF16)
    # oracle: the per-token cost falls until the ridge, then stays near 2N/P
    assert long / 4096 < _prefill(64) / 64 < _prefill(1)
    assert _prefill(512, batch=2) == pytest.approx(_prefill(1024), rel=0.02)  # same tokens


def test_decode_bound_matches_bytes_over_bandwidth_below_the_compute_batch():
    cfg = tf.LLAMA3_8B
    n = tf.matmul_parameter_count(cfg)
    for s, b in ((1, 1), (1000, 8), (8000, 32)):
        kv = tf.kv_cache_bytes(batch=b, seq_len=s, n_layers=cfg.n_layers,
                               n_kv_heads=cfg.n_kv_heads, head_dim=cfg.head_dim,
                               bytes_per_element=2)
        assert _decode(s, b) == pytest.approx((2 * n + kv) / M)  # memory-bound
    # past the compute-bound batch the arithmetic sets the weights' term
    b = 1024
    assert _decode(0, b) == pytest.approx(2 * b * n / P_BF16)
    # a decode step of one token costs far more per token than a long prefill
    assert _decode(0, 1) > 100 * _prefill(4096) / 4096


def test_published_decode_time_per_token_at_databricks_mbu():
    """Agarwal et al. (2023), Databricks, "Model Bandwidth Utilization": a 7B model in 16-bit
    (about 14 GB) at 14 ms per output token on a 2 TB/s part runs at 50 % MBU, i.e. the bound
    is 7 ms. Llama-2-7B's multiplied weights are 13.2 GB: a 6.6 ms bound."""
    t = inf.decode_step_time_bound_s(tf.LLAMA2_7B, context_len=0, batch=1, bytes_per_element=2,
                                     peak_flop_per_s=312e12, mem_bytes_per_s=2e12)
    assert t == pytest.approx(7e-3, rel=0.06)


# --- TTFT and capacity ------------------------------------------------------------------------

def test_ttft_adds_queue_and_prefill():
    assert inf.ttft_lower_bound_s(0.1) == 0.1
    assert inf.ttft_lower_bound_s(0.1, queue_s=0.25) == pytest.approx(0.35)


@given(b=st.integers(1, 512), ttft=st.floats(0.0, 2.0), tpot=st.floats(1e-4, 0.2),
       n=st.integers(1, 2000))
@settings(max_examples=80, deadline=None)
def test_capacity_is_littles_law(b, ttft, tpot, n):
    lam = inf.sustainable_request_rate_per_s(b, ttft + 1e-6, tpot, n)
    e2e = inf.e2e_latency_s(ttft + 1e-6, tpot, n)
    assert lam * e2e == pytest.approx(b)  # L = lambda W
    # twice the concurrency at the same latencies: twice the rate
    assert inf.sustainable_request_rate_per_s(2 * b, ttft + 1e-6, tpot, n) == pytest.approx(2 * lam)


def test_capacity_against_a_slot_simulation():
    """Oracle: B slots, each request holds one for TTFT + (n-1) TPOT; offered more than the
    capacity, the completions per second over a long run approach lambda_max."""
    b, ttft, tpot, n = 4, 0.3, 0.05, 11
    service = ttft + (n - 1) * tpot
    free = [0.0] * b
    t_arrive, done, horizon = 0.0, 0, 200.0
    while True:
        t_arrive += 0.01  # 100 requests per second, far above capacity
        i = min(range(b), key=free.__getitem__)
        start = max(t_arrive, free[i])
        if start + service > horizon:
            break
        free[i] = start + service
        done += 1
    assert done / horizon == pytest.approx(inf.sustainable_request_rate_per_s(b, ttft, tpot, n),
                                           rel=0.02)
    assert math.isclose(inf.sustainable_request_rate_per_s(b, ttft, tpot, n), b / service)


# NVIDIA NIM benchmarking guide 1.0.0, "Performance", Llama-3.3-70B-Instruct, 2 x H100 80 GB,
# fp8, TP2, 5000 input / 500 output tokens: (concurrency, TTFT s, ITL s, output tokens/s).
NIM_70B = ((1, 0.40677, 0.01858, 51.67), (5, 0.5467, 0.02183, 218.48),
           (25, 0.68869, 0.03875, 623.4), (50, 0.83451, 0.05973, 814.37))


@pytest.mark.parametrize("c, ttft, itl, tokens_per_s", NIM_70B)
def test_published_nim_throughput_is_littles_law(c, ttft, itl, tokens_per_s):
    """With every slot busy, output tokens/s = 500 x lambda_max from the measured TTFT and ITL."""
    lam = inf.sustainable_request_rate_per_s(c, ttft, itl, 500)
    assert 500 * lam == pytest.approx(tokens_per_s, rel=0.005)


def test_published_nim_latencies_sit_above_the_bounds():
    """The same run: its TTFT and ITL at concurrency 1 are above the prefill and decode bounds
    of Llama-3-70B's shape in fp8 on two H100s, at about half of the bandwidth bound."""
    h = specs.H100_SXM
    peak, bw = 2 * h.peak_flop_per_s("fp8"), 2 * h.hbm_bytes_per_s
    step = inf.decode_step_time_bound_s(tf.LLAMA3_70B, context_len=5250, batch=1,
                                        bytes_per_element=1, peak_flop_per_s=peak,
                                        mem_bytes_per_s=bw)
    prefill = inf.prefill_time_lower_bound_s(tf.LLAMA3_70B, prompt_len=5000, bytes_per_element=1,
                                             peak_flop_per_s=peak, mem_bytes_per_s=bw)
    assert step < 0.01858 < 2 * step  # between 50 % and 100 % of the bandwidth bound
    assert prefill < 0.40677 < 3 * prefill


# --- capacity with the prefill's GPU time (issue 17) -------------------------------------------

@given(b=st.integers(1, 512), pre=st.floats(0.0, 2.0), step=st.floats(1e-4, 0.2),
       n=st.integers(2, 2000))
@settings(max_examples=80, deadline=None)
def test_gpu_time_rate_limits_and_the_slot_bound(b, pre, step, n):
    lam = inf.gpu_time_request_rate_per_s(b, pre, step, n)
    slots = inf.sustainable_request_rate_per_s(b, pre, step, n)
    assert lam <= slots * (1 + 1e-12)                 # never above the slots' bound
    assert lam * (pre + (n - 1) * step / b) == pytest.approx(1.0)   # the GPU is busy all the time
    if b == 1:
        assert lam == pytest.approx(slots)            # one slot: the two bounds agree
    # more slots never lower it; with no prefill it scales with the batch
    assert inf.gpu_time_request_rate_per_s(2 * b, pre, step, n) >= lam * (1 - 1e-12)
    assert inf.gpu_time_request_rate_per_s(b, 0.0, step, n) == pytest.approx(b / ((n - 1) * step))


def test_gpu_time_rate_single_token_and_huge_batch():
    assert inf.gpu_time_request_rate_per_s(8, 0.05, 0.01, 1) == pytest.approx(1 / 0.05)
    # a huge batch amortises the decode: only the prefill is left
    assert inf.gpu_time_request_rate_per_s(10**7, 0.05, 0.01, 100) == pytest.approx(1 / 0.05, rel=1e-3)
    with pytest.raises(ValueError, match="prefill_s"):
        inf.gpu_time_request_rate_per_s(8, 0.0, 0.01, 1)


def _sim_ttft(rate, step_model, *, prompt, out, batch, n=400, seed=3):
    """Open-loop oracle: Poisson arrivals into the serving simulator; the median TTFT of the
    first and the last quarter of the requests, and the run's Little's-law quantities."""
    import numpy as np

    from helpers.sim import serving, workload

    trace = workload.poisson_trace(rate, n, prompt_len=workload.fixed(prompt),
                                   output_len=workload.fixed(out), seed=seed)
    res = serving.simulate(trace, "continuous", step_model, num_blocks=4096, block_size=16,
                           max_batch=batch, token_budget=prompt + batch)
    reqs = sorted(res["requests"], key=lambda r: r["arrival_s"])
    ttft = np.array([r["token_times_s"][0] - r["arrival_s"] for r in reqs])
    q = serving.as_queue_trace(res, warmup=n // 10)
    return float(np.median(ttft[: n // 4])), float(np.median(ttft[-n // 4:])), q


def test_gpu_time_rate_against_a_saturated_simulation():
    """Oracle: the serving simulator with a step-time model c0 + c_d n_decode + c_p n_prefill,
    every request waiting from the start (the server saturated). The completions per second in
    the middle half of the run are the capacity: the prefill-aware bound predicts them within
    3 %, while the slots' bound B/E overstates them by far (it counts each prefill once)."""
    import numpy as np

    from helpers.sim import serving, workload

    sm = serving.StepModel(1e-3, 2e-5, 2e-5)
    for prompt, out, batch in ((256, 64, 16), (1024, 256, 64)):
        trace = workload.batch_trace(600, prompt_len=workload.fixed(prompt),
                                     output_len=workload.fixed(out))
        res = serving.simulate(trace, "continuous", sm, num_blocks=8192, block_size=16,
                               max_batch=batch, token_budget=prompt + batch)
        done = np.sort([r["token_times_s"][-1] for r in res["requests"]])
        q1, q3 = len(done) // 4, 3 * len(done) // 4
        measured = (q3 - q1) / (done[q3] - done[q1])
        t_pre, t_step = prompt * sm.per_prefill_token_s, sm(batch, 0)
        lam = inf.gpu_time_request_rate_per_s(batch, t_pre, t_step, out)
        assert measured == pytest.approx(lam, rel=0.03)
        assert inf.sustainable_request_rate_per_s(batch, t_pre, t_step, out) > 1.5 * measured


def test_below_the_gpu_time_rate_the_open_loop_queue_stays_short():
    """Offered 85 % of the prefill-aware bound as Poisson arrivals, the last quarter's median
    TTFT stays within a few times the first quarter's: the queue does not grow."""
    from helpers.sim.serving import StepModel

    sm = StepModel(1e-3, 2e-5, 2e-5)
    lam = inf.gpu_time_request_rate_per_s(16, 256 * 2e-5, sm(16, 0), 64)
    first, last, _ = _sim_ttft(0.85 * lam, sm, prompt=256, out=64, batch=16)
    assert last < 3 * first + 0.02


def test_littles_law_holds_in_an_open_loop_simulation():
    """L (time-averaged requests present), lambda (arrivals counted) and W (mean end-to-end
    time) measured independently from one simulated open-loop run satisfy L = lambda W; a
    simulator that lost requests or stamped tokens out of order would break it."""
    from helpers.sim.serving import StepModel

    sm = StepModel(1e-3, 2e-5, 2e-5)
    lam = inf.gpu_time_request_rate_per_s(16, 256 * 2e-5, sm(16, 0), 64)
    _, _, q = _sim_ttft(0.7 * lam, sm, prompt=256, out=64, batch=16)
    L, rate, w = q.mean_number_in_system(), q.arrival_rate_per_s(), q.mean_time_in_system_s()
    assert L == pytest.approx(rate * w, rel=0.03)
    assert rate == pytest.approx(0.7 * lam, rel=0.15)
