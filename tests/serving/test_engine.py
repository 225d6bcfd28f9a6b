"""The serving engine: every request's greedy output equals Decoder.generate of its prompt alone,
under both schedulers, chunked prefill, prefix caching and preemption."""

import pytest
import torch

from helpers.nn import tinylm
from helpers.serving.engine import Engine
from helpers.sim import workload as W


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    model = tinylm.load("book-lm")
    _, val = tinylm.split(tinylm.corpus_bytes())
    tr = W.batch_trace(6, prompt_len=W.uniform(3, 30), output_len=W.uniform(1, 10), seed=3,
                       n_prefixes=2, prefix_len=10)
    prompts = W.prompt_tokens(tr, val, seed=3)
    ref = {r.id: model.generate(torch.tensor(p)[None], r.output_len)[0, len(p):].tolist()
           for r, p in zip(tr, prompts)}
    return model, tr, prompts, ref


@pytest.mark.parametrize("scheduler,kw", [
    ("static", {}),
    ("continuous", dict(token_budget=8)),                        # prefill in chunks of <= 8
    ("continuous", dict(token_budget=64, prefix_caching=True)),
    ("continuous", dict(num_blocks=6, token_budget=16)),         # too few blocks: preemption
])
def test_outputs_equal_generate(setup, scheduler, kw):
    model, tr, prompts, ref = setup
    args = dict(num_blocks=48, block_size=8, max_batch=4)
    args.update(kw)
    out = Engine(model, **args).serve(tr, prompts, scheduler)
    assert [q["id"] for q in out["requests"]] == [r.id for r in tr]
    for q in out["requests"]:
        assert q["output"] == ref[q["id"]], q["id"]
        assert len(q["token_times_s"]) == len(q["output"])
        assert all(b >= a for a, b in zip(q["token_times_s"], q["token_times_s"][1:]))
    if "num_blocks" in kw:
        assert sum(q["preemptions"] for q in out["requests"]) > 0
    if kw.get("prefix_caching"):
        assert sum(q["shared_tokens"] for q in out["requests"]) > 0
    assert out["peak_blocks"] <= args["num_blocks"]


def test_static_batching_waits_for_the_longest_request(setup):
    model, tr, prompts, _ = setup
    out = Engine(model, num_blocks=64, block_size=8, max_batch=6).serve(tr, prompts, "static")
    longest = max(r.output_len for r in tr)
    assert len(out["steps"]) == longest  # one prefill + longest - 1 decode steps, one batch
    assert out["steps"][0]["n_prefill_tokens"] == sum(r.prompt_len for r in tr)


def test_bad_inputs_raise(setup):
    model, tr, prompts, _ = setup
    e = Engine(model, num_blocks=2, block_size=4)
    with pytest.raises(ValueError, match="needs"):
        e.serve(tr, prompts)
    with pytest.raises(ValueError):
        Engine(model, num_blocks=8).serve(tr, prompts, "fifo")
    with pytest.raises(ValueError):
        Engine(model, num_blocks=8).serve(tr, prompts[:2])
    with pytest.raises(ValueError):
        Engine(model, num_blocks=0)
