"""helpers.nn.stream: the streamed generation equals the model's own greedy generation, and its
timestamps are consistent with the metrics computed from them."""

import itertools

import pytest
import torch

from helpers.models import inference as inf
from helpers.nn import tinylm
from helpers.nn.stream import stream_generate


@pytest.fixture(scope="module")
def model():
    return tinylm.load("book-lm")


def test_same_tokens_as_generate(model):
    prompt = tinylm.encode("The roofline model says")
    got = stream_generate(model, prompt, 12)
    want = model.generate(prompt[None], 12)[0, prompt.numel():].tolist()
    assert got["tokens"] == want


def test_times_on_a_fake_clock_give_exact_metrics(model):
    ticks = itertools.count()  # each reading of the clock advances it by one second
    r = stream_generate(model, tinylm.encode("abc"), 5, clock=lambda: float(next(ticks)))
    assert r["arrival_s"] == 0.0 and r["token_times_s"] == [1.0, 2.0, 3.0, 4.0, 5.0]
    m = inf.request_latencies(r["arrival_s"], r["token_times_s"])
    assert m["ttft_s"] == r["prefill_s"] == 1.0
    assert m["tpot_s"] == 1.0 and r["decode_step_s"] == [1.0] * 4


def test_arrival_before_the_call_counts_as_queueing(model):
    ticks = itertools.count(10)
    r = stream_generate(model, tinylm.encode("abc"), 2, clock=lambda: float(next(ticks)),
                        arrival_s=7.0)
    assert inf.request_latencies(r["arrival_s"], r["token_times_s"])["ttft_s"] == 4.0


@pytest.mark.parametrize("kw", [dict(max_new_tokens=0), dict(max_new_tokens=600)])
def test_bad_input_raises(model, kw):
    with pytest.raises(ValueError):
        stream_generate(model, tinylm.encode("abc"), **kw)
    with pytest.raises(ValueError):
        stream_generate(model, torch.zeros(0, dtype=torch.long), 3)
