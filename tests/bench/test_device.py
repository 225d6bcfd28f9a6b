"""Tests of helpers.bench.device: seeded inputs, the copy rate, CUDA-graph timing.

The CPU parts (inputs, the copy rate on the host, the per-call scaling, the batch size) run
everywhere; capture and replay need a CUDA GPU (``gpu`` marker, skipped with a reason).
"""

from __future__ import annotations

import math

import pytest
import torch

from helpers.bench import device as dev
from helpers.bench.timing import bench

HAS_GPU = torch.cuda.is_available()
gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU; torch.cuda.is_available() "
                                                   "is False on this machine")
QUICK = dict(warmup_s=0.0, budget_s=0.005, min_reps=5, env=False)


# --- uniform --------------------------------------------------------------------------------

def test_uniform_is_the_formula_the_runners_used():
    # the oracle: the expression gemm.py, roofline.py and probes.py each carried
    want = torch.rand((3, 5), generator=torch.Generator().manual_seed(11),
                      dtype=torch.float32) + 0.5
    assert torch.equal(dev.uniform((3, 5), 11), want)
    gen = torch.Generator().manual_seed(11)
    assert torch.equal(dev.uniform((3, 5), gen), want)


def test_uniform_range_dtype_and_a_generator_advances():
    gen = torch.Generator().manual_seed(3)
    a, b = dev.uniform(4096, gen), dev.uniform(4096, gen)
    assert not torch.equal(a, b)  # the generator's state moved on
    assert float(a.min()) >= 0.5 and float(a.max()) < 1.5 and float(a.min()) < 0.51
    assert dev.uniform(8, 0, dtype=torch.float16).dtype == torch.float16
    assert dev.uniform(8, 0).device.type == "cpu"


@pytest.mark.parametrize("gen", [-1, 1.5, True, "0", None])
def test_uniform_rejects_a_bad_generator(gen):
    with pytest.raises(ValueError, match="gen"):
        dev.uniform(4, gen)


# --- copy rate ------------------------------------------------------------------------------

def test_copy_rate_counts_read_plus_written_bytes():
    r = dev.copy_rate(1 << 16, **QUICK)
    assert (r.buffer_bytes, r.n_bytes) == (65536.0, 131072.0)
    assert r.bytes_per_s == pytest.approx(r.n_bytes / r.result.median_s)
    assert r.result.n_reps >= 5 and r.result.name == "copy"


def test_copy_rate_rounds_to_whole_elements_and_uses_the_given_bench():
    seen = {}

    def my_bench(fn, device, name, **kw):
        seen.update(device=device, name=name, **kw)
        return bench(fn, device=device, name=name, **QUICK)

    r = dev.copy_rate(4099, name="mine", bench_fn=my_bench, budget_s=0.25)
    assert r.buffer_bytes == 4096.0
    assert seen == {"device": "cpu", "name": "mine", "budget_s": 0.25}


@pytest.mark.parametrize("n", [0, 3, -8, math.nan, math.inf, "1"])
def test_copy_rate_rejects_a_bad_buffer(n):
    with pytest.raises(ValueError, match="buffer_bytes"):
        dev.copy_rate(n, **QUICK)


# --- graph batch size and per-call scaling ---------------------------------------------------

def test_graph_calls_limits():
    assert dev.graph_calls(dev.GRAPH_TARGET_S) == 1
    assert dev.graph_calls(dev.GRAPH_TARGET_S / 10) == 10
    assert dev.graph_calls(1e-12) == dev.GRAPH_MOST_CALLS
    assert dev.graph_calls(10.0) == 1
    assert dev.graph_calls(1e-3, target_s=1.0, most=5) == 5


@pytest.mark.parametrize("kw, word", [
    (dict(per_call_s=0.0), "per_call_s"), (dict(per_call_s=math.nan), "per_call_s"),
    (dict(per_call_s=1e-3, target_s=-1.0), "target_s"), (dict(per_call_s=1e-3, most=0), "most"),
    (dict(per_call_s=1e-3, most=2.0), "most"),
])
def test_graph_calls_rejects_bad_input(kw, word):
    with pytest.raises(ValueError, match=word):
        dev.graph_calls(**kw)


def test_per_call_divides_every_time_and_keeps_the_ratios():
    r = bench(lambda: sum(range(200)), **QUICK)
    s = dev.per_call(r, 4)
    for k in ("median_s", "mean_s", "min_s", "max_s", "p20_s", "p80_s"):
        assert getattr(s, k) == pytest.approx(getattr(r, k) / 4)
    assert s.samples_s == pytest.approx(tuple(v / 4 for v in r.samples_s))
    assert s.number == 4 * r.number and s.n_reps == r.n_reps
    assert s.first_call_s == r.first_call_s
    assert s.spread == pytest.approx(r.spread)
    assert dev.per_call(r, 1) == r


@pytest.mark.parametrize("calls", [0, -1, 2.0, True])
def test_per_call_rejects_bad_calls(calls):
    r = bench(lambda: None, **QUICK)
    with pytest.raises(ValueError, match="calls"):
        dev.per_call(r, calls)


def test_capture_needs_a_cuda_device():
    with pytest.raises(ValueError, match="device"):
        dev.capture_graph(lambda: None, device="cpu")


# --- capture and replay (GPU) ---------------------------------------------------------------

@gpu
@needs_gpu
def test_a_captured_graph_replays_the_calls():
    x = torch.zeros(1024, device="cuda")
    graph, out = dev.capture_graph(lambda: x.add_(1.0), device="cuda", calls=3, warmup_calls=2)
    assert float(x[0]) == 2.0  # the warm-up ran; the capture did not
    assert out.data_ptr() == x.data_ptr()
    graph.replay()
    torch.cuda.synchronize()
    assert float(x[0]) == 5.0


@gpu
@needs_gpu
def test_graph_bench_is_per_call():
    a = dev.uniform((512, 512), 0, device="cuda")
    plain = bench(lambda: a @ a, device="cuda", **QUICK)
    calls = dev.graph_calls(plain.median_s)
    r = dev.graph_bench(lambda: a @ a, device="cuda", calls=calls, name="mm", **QUICK)
    assert r.number == calls and r.name == "mm" and r.timer == "cuda-event"
    # no host launch time between the replayed calls: never much slower than the plain time
    assert r.median_s < 2 * plain.median_s


@gpu
@needs_gpu
def test_copy_rate_on_the_gpu_is_checked_and_positive():
    r = dev.copy_rate(64 * 2**20, device="cuda", **QUICK)
    assert r.result.timer == "cuda-event" and r.bytes_per_s > 1e9
