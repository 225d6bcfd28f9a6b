"""Request traces (helpers.sim.workload): statistics, determinism, prefixes, bad input."""

import numpy as np
import pytest

from helpers.sim import workload as wl


def test_poisson_arrivals_have_the_asked_rate_and_exponential_gaps():
    tr = wl.poisson_trace(50.0, 20_000, prompt_len=wl.fixed(8), output_len=wl.fixed(4), seed=1)
    gaps = np.diff([r.arrival_s for r in tr])
    assert tr[0].arrival_s == 0.0 and np.all(gaps >= 0)
    assert gaps.mean() == pytest.approx(1 / 50.0, rel=0.03)
    # an exponential's coefficient of variation is 1
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.05)


def test_geometric_lengths_have_the_asked_mean_and_cap():
    rng = np.random.default_rng(0)
    x = wl.geometric(20.0)(rng, 50_000)
    assert x.min() >= 1 and x.mean() == pytest.approx(20.0, rel=0.03)
    assert wl.geometric(20.0, cap=5)(rng, 1000).max() == 5
    u = wl.uniform(3, 7)(rng, 10_000)
    assert set(np.unique(u)) == {3, 4, 5, 6, 7}


def test_same_seed_same_trace_and_round_trip_through_dicts():
    kw = dict(prompt_len=wl.uniform(4, 9), output_len=wl.geometric(5.0), seed=7)
    a, b = wl.poisson_trace(3.0, 30, **kw), wl.poisson_trace(3.0, 30, **kw)
    assert a == b and wl.from_dicts(wl.to_dicts(a)) == a
    assert a != wl.poisson_trace(3.0, 30, **{**kw, "seed": 8})
    assert all(r.arrival_s == 0 for r in wl.batch_trace(5, prompt_len=wl.fixed(2),
                                                        output_len=wl.fixed(2)))


def test_prompts_share_their_prefix_and_have_their_lengths():
    tr = wl.batch_trace(40, prompt_len=wl.uniform(3, 6), output_len=wl.fixed(2), seed=2,
                        n_prefixes=3, prefix_len=10)
    stream = np.arange(1000) % 251
    prompts = wl.prompt_tokens(tr, stream, seed=2)
    by_prefix = {}
    for r, p in zip(tr, prompts):
        assert p.size == r.prompt_len and r.prefix_len == 10
        by_prefix.setdefault(r.prefix_id, []).append(p[:10])
    assert 1 < len(by_prefix) <= 3
    for heads in by_prefix.values():
        assert all(np.array_equal(h, heads[0]) for h in heads)
    heads = [v[0] for v in by_prefix.values()]
    assert not np.array_equal(heads[0], heads[1])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="rate_per_s"):
        wl.poisson_trace(0.0, 3, prompt_len=wl.fixed(1), output_len=wl.fixed(1))
    with pytest.raises(ValueError, match="lo <= hi"):
        wl.uniform(5, 2)
    with pytest.raises(ValueError, match="mean >= 1"):
        wl.geometric(0.5)
    with pytest.raises(ValueError, match="shorter than the longest prompt"):
        wl.prompt_tokens(wl.batch_trace(2, prompt_len=wl.fixed(50), output_len=wl.fixed(1)),
                         np.arange(10))
    with pytest.raises(ValueError, match="sampler must return"):
        wl.batch_trace(3, prompt_len=lambda rng, k: np.zeros(k), output_len=wl.fixed(1))
