"""Tests of helpers.sim.speculative: speculative sampling keeps the target distribution."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.models import speculative as sp
from helpers.sim.speculative import simulate_cycles, speculative_sample, tokens_per_cycle_pmf


@pytest.mark.parametrize("seed", [0, 1])
def test_output_is_distributed_as_the_target_and_acceptance_is_sum_min(seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(6))
    q = rng.dirichlet(np.ones(6))
    n = 40_000
    draws = [speculative_sample(p, q, rng) for _ in range(n)]
    tokens = np.array([t for t, _ in draws])
    accepted = np.mean([a for _, a in draws])
    freq = np.bincount(tokens, minlength=6) / n
    # 5 standard errors of a multinomial frequency
    np.testing.assert_allclose(freq, p, atol=5 * np.sqrt(p * (1 - p) / n).max())
    assert accepted == pytest.approx(sp.acceptance_rate(p, q), abs=5 * np.sqrt(0.25 / n))
    # the draft alone would have been visibly wrong (the test can fail)
    assert np.abs(q - p).max() > 5 * np.sqrt(0.25 / n)


def test_identical_models_always_accept_and_disjoint_never():
    rng = np.random.default_rng(2)
    p = np.array([0.2, 0.8])
    assert all(speculative_sample(p, p, rng)[1] for _ in range(200))
    t, acc = speculative_sample([1.0, 0.0], [0.0, 1.0], rng)
    assert (t, acc) == (0, False)


def test_cycles_are_capped_and_deterministic_per_seed():
    n = simulate_cycles(0.9, 4, 1000, seed=3)
    assert n.min() >= 1 and n.max() <= 5
    np.testing.assert_array_equal(n, simulate_cycles(0.9, 4, 1000, seed=3))
    assert np.all(simulate_cycles(0.5, 0, 10) == 1)
    np.testing.assert_allclose(tokens_per_cycle_pmf(0.5, 2), [0.5, 0.25, 0.25])


def test_bad_input():
    with pytest.raises(ValueError, match="n_cycles"):
        simulate_cycles(0.5, 2, 0)
    with pytest.raises(ValueError, match="sum to 1"):
        speculative_sample([0.5, 0.4], [0.5, 0.5], np.random.default_rng(0))
