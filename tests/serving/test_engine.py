"""The serving engine: every request's greedy output equals Decoder.generate of its prompt alone,
under both schedulers, chunked prefill, prefix caching and preemption."""

import re
from dataclasses import replace

import numpy as np
import pytest
import torch

from helpers.nn import tinylm
from helpers.serving.engine import SCHEDULERS, Engine
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


# -- request validation (issue 15, item 6): a bad request is refused before anything runs --------

@pytest.fixture(scope="module")
def small(setup):
    """Three valid requests (ids 0, 1, 2) and their prompts as lists."""
    model, tr, prompts, _ = setup
    return model, list(tr[:3]), [list(p) for p in prompts[:3]]


def _bad(model, tr, prompts, case):
    """The trace with request 2 (the last to be served) made bad in one field."""
    tr, prompts = list(tr), [list(p) for p in prompts]
    V = model.cfg.vocab_size
    edit = {
        "empty prompt": lambda: prompts.__setitem__(2, []),
        "token = vocab_size": lambda: prompts[2].__setitem__(1, V),
        "token < 0": lambda: prompts[2].__setitem__(0, -1),
        "token not an integer": lambda: prompts[2].__setitem__(0, 3.5),
        "token a string": lambda: prompts[2].__setitem__(0, "a"),
        "prompt not a sequence": lambda: prompts.__setitem__(2, 7),
        "output_len 0": lambda: tr.__setitem__(2, replace(tr[2], output_len=0)),
        "output_len < 0": lambda: tr.__setitem__(2, replace(tr[2], output_len=-3)),
        "output_len not an integer": lambda: tr.__setitem__(2, replace(tr[2], output_len=2.5)),
        "arrival NaN": lambda: tr.__setitem__(2, replace(tr[2], arrival_s=float("nan"))),
        "arrival inf": lambda: tr.__setitem__(2, replace(tr[2], arrival_s=float("inf"))),
        "arrival < 0": lambda: tr.__setitem__(2, replace(tr[2], arrival_s=-1.0)),
        "duplicate id": lambda: tr.__setitem__(2, replace(tr[2], id=tr[0].id)),
    }
    edit[case]()
    return tr, prompts


BAD_REQUESTS = {  # case -> what the error must say (after "request <id>: ")
    "empty prompt": "prompt is empty",
    "token = vocab_size": r"prompt token 1 is 256, outside the vocabulary \[0, 256\)",
    "token < 0": r"prompt token 0 is -1, outside the vocabulary \[0, 256\)",
    "token not an integer": "prompt token 0 must be an integer token id, got 3.5",
    "token a string": "prompt token 0 must be an integer token id, got 'a'",
    "prompt not a sequence": "prompt must be a sequence of token ids, got 7",
    "output_len 0": r"output_len must be an integer >= 1, got 0",
    "output_len < 0": r"output_len must be an integer >= 1, got -3",
    "output_len not an integer": r"output_len must be an integer >= 1, got 2.5",
    "arrival NaN": r"arrival_s must be a finite number in \[0, inf\), got nan",
    "arrival inf": r"arrival_s must be a finite number in \[0, inf\), got inf",
    "arrival < 0": r"arrival_s must be a finite number in \[0, inf\), got -1.0",
    "duplicate id": "duplicate request id",
}


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_a_bad_request_is_refused_before_anything_runs(small, monkeypatch, case, scheduler,
                                                       deadline):
    model, tr, prompts = small
    tr, prompts = _bad(model, tr, prompts, case)
    rid = tr[0].id if case == "duplicate id" else tr[2].id
    e = Engine(model, num_blocks=48, block_size=8, max_batch=4)
    ran = []
    monkeypatch.setattr(e.model, "forward", lambda *a, **k: ran.append(a) or 1 / 0)
    want = rf"^request {rid!r}: {BAD_REQUESTS[case]}"
    with deadline(10.0), pytest.raises(ValueError, match=want):
        e.serve(tr, prompts, scheduler)
    assert not ran, "the model ran before the bad request was refused"


@pytest.mark.parametrize("time_scale", [float("nan"), float("inf"), -1.0])
def test_a_bad_time_scale_is_refused(small, time_scale, deadline):
    model, tr, prompts = small
    with deadline(10.0), pytest.raises(ValueError, match="time_scale must be a finite number"):
        Engine(model, num_blocks=48, block_size=8).serve(tr, prompts, time_scale=time_scale)


def test_a_time_scale_that_overflows_an_arrival_is_refused(small, deadline):
    model, tr, prompts = small
    tr = [replace(tr[0], arrival_s=1e300)] + tr[1:]
    with deadline(10.0), pytest.raises(ValueError, match=rf"^request {tr[0].id!r}: arrival_s "
                                                         r"\* time_scale must be a finite"):
        Engine(model, num_blocks=48, block_size=8).serve(tr, prompts, time_scale=1e10)


def test_request_ids_must_be_comparable(small):
    model, tr, prompts = small
    tr = [replace(tr[0], id="a")] + tr[1:]
    with pytest.raises(ValueError, match="request ids must be comparable"):
        Engine(model, num_blocks=48, block_size=8).serve(tr, prompts)


def test_string_ids_are_named_quoted(small):
    model, tr, prompts = small
    tr = [replace(r, id=f"r{r.id}") for r in tr]
    prompts = prompts[:2] + [[]]
    with pytest.raises(ValueError, match=r"^request 'r2': prompt is empty$"):
        Engine(model, num_blocks=48, block_size=8).serve(tr, prompts)


def test_prompts_as_lists_numpy_and_tensors_serve_alike(setup):
    """Valid input of every shape the pages pass keeps working (numpy ints, tensors, lists)."""
    model, tr, prompts, ref = setup
    for conv in (list, lambda p: np.asarray(p, dtype=np.int64), torch.tensor,
                 lambda p: [float(t) for t in p]):   # integral floats are token ids too
        out = Engine(model, num_blocks=48, block_size=8).serve(tr, [conv(p) for p in prompts])
        assert {q["id"]: q["output"] for q in out["requests"]} == ref


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int32, torch.bool,
                                   torch.float8_e4m3fn, torch.complex64, "float16"])
def test_a_kv_dtype_that_cannot_hold_the_cache_is_refused(setup, dtype):
    model = setup[0]
    with pytest.raises(ValueError, match=r"^kv_dtype must be a floating dtype, one of "
                                         r"torch.float32, .*got " + re.escape(repr(dtype))):
        Engine(model, num_blocks=8, kv_dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_floating_kv_dtypes_are_accepted(small, dtype):
    model, tr, prompts = small
    e = Engine(model, num_blocks=48, block_size=8, kv_dtype=dtype)
    assert e.pool.k[0].dtype == dtype
    out = e.serve(tr, prompts)
    assert [len(q["output"]) for q in out["requests"]] == [r.output_len for r in tr]
