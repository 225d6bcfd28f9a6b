"""Tests of helpers.models.speculative: invariants, a Monte Carlo oracle, the paper's table 1."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import speculative as sp
from helpers.sim.speculative import simulate_cycles, tokens_per_cycle_pmf

alphas = st.floats(0, 1, allow_nan=False)
lengths = st.integers(0, 20)


# --- limits and invariants --------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(a=alphas, g=lengths)
def test_tokens_per_cycle_is_the_geometric_sum_between_1_and_g_plus_1(a, g):
    n = sp.expected_tokens_per_cycle(a, g)
    assert n == pytest.approx(sum(a ** i for i in range(g + 1)), rel=1e-9)
    assert 1 - 1e-12 <= n <= g + 1 + 1e-12
    assert sp.expected_tokens_per_cycle(a, g + 1) >= n - 1e-12  # a longer draft never yields less


def test_limits():
    assert sp.expected_tokens_per_cycle(0.0, 7) == 1.0
    assert sp.expected_tokens_per_cycle(1.0, 7) == 8.0
    assert sp.expected_tokens_per_cycle(0.5, 0) == 1.0
    # continuous at a = 1
    assert sp.expected_tokens_per_cycle(1 - 1e-9, 7) == pytest.approx(8.0, rel=1e-6)
    # long drafts approach 1 / (1 - a) (section 3.6's bound)
    assert sp.expected_tokens_per_cycle(0.7, 200) == pytest.approx(1 / 0.3)
    # gamma = 1 gives corollary 3.9's (1 + a) / (1 + c)
    assert sp.speedup(0.6, 1, 0.1) == pytest.approx(1.6 / 1.1)
    # plain decoding is speedup 1; cost per token is its reciprocal
    assert sp.speedup(0.9, 0, 0.3) == 1.0
    assert sp.cost_per_token(0.7, 3, 0.1) * sp.speedup(0.7, 3, 0.1) == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(0.01, 0.99), c=st.floats(0.0, 1.0))
def test_speculation_pays_exactly_when_alpha_exceeds_c(a, c):
    g = sp.optimal_draft_length(a, c, max_len=40)
    if a > c * (1 + 1e-9):
        assert g >= 1 and sp.speedup(a, g, c) >= (1 + a) / (1 + c) - 1e-12
    elif a < c * (1 - 1e-9):
        assert g == 0
    if g:
        assert all(sp.speedup(a, g, c) >= sp.speedup(a, k, c) * (1 - 1e-9) for k in range(1, 41))


def test_optimal_draft_length_falls_as_the_draft_gets_dearer():
    gs = [sp.optimal_draft_length(0.8, c) for c in (0.01, 0.05, 0.1, 0.2, 0.5)]
    assert gs == sorted(gs, reverse=True) and gs[0] > gs[-1]
    assert sp.optimal_draft_length(1.0, 0.0, max_len=9) == 9


def test_acceptance_rate_and_residual():
    p = np.array([0.1, 0.6, 0.3])
    assert sp.acceptance_rate(p, p) == pytest.approx(1.0)
    assert sp.acceptance_rate([1, 0], [0, 1]) == 0.0
    assert sp.acceptance_rate(p, [0.3, 0.3, 0.4]) == pytest.approx(0.1 + 0.3 + 0.3)
    # symmetric, and greedy (one-hot) accepts iff the argmaxes agree
    q = np.array([0.5, 0.25, 0.25])
    assert sp.acceptance_rate(p, q) == sp.acceptance_rate(q, p)
    r = sp.residual_distribution(p, q)
    assert r.sum() == pytest.approx(1) and r[0] == 0
    np.testing.assert_array_equal(sp.residual_distribution(p, p), p)


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.0, 0.999), g=st.integers(1, 12))
def test_acceptance_from_tokens_inverts_the_model(a, g):
    n = sp.expected_tokens_per_cycle(a, g)
    assert sp.acceptance_from_tokens_per_cycle(n, g) == pytest.approx(a, abs=1e-6)


# --- oracle: the sampled cycle ------------------------------------------------------------

@pytest.mark.parametrize("a, g", [(0.6, 2), (0.8, 5), (0.95, 8), (0.0, 3), (1.0, 4)])
def test_monte_carlo_and_exact_enumeration_agree_with_equation_1(a, g):
    pmf = tokens_per_cycle_pmf(a, g)
    assert pmf.sum() == pytest.approx(1.0)
    assert float((np.arange(1, g + 2) * pmf).sum()) == pytest.approx(
        sp.expected_tokens_per_cycle(a, g), rel=1e-12)
    n = simulate_cycles(a, g, 100_000, seed=1)
    se = n.std() / np.sqrt(n.size) + 1e-12
    assert abs(n.mean() - sp.expected_tokens_per_cycle(a, g)) < 5 * se + 1e-12
    counts = np.bincount(n, minlength=g + 2)[1:] / n.size
    np.testing.assert_allclose(counts, pmf, atol=0.01)


# --- published numbers --------------------------------------------------------------------

@pytest.mark.parametrize("a, g, ops, speed", [
    (0.6, 2, 1.53, 1.96), (0.7, 3, 1.58, 2.53), (0.8, 2, 1.23, 2.44),
    (0.8, 5, 1.63, 3.69), (0.9, 2, 1.11, 2.71), (0.9, 10, 1.60, 6.86),
])
def test_leviathan_table_1(a, g, ops, speed):
    # Leviathan, Kalman & Matias (2023), table 1 (c = c-hat = 0)
    assert round(sp.speedup(a, g, 0.0), 2) == speed
    assert round(sp.operations_factor(a, g, 0.0), 2) == ops


def test_leviathan_bigram_draft():
    # section 3.6: a bigram draft for T5-XXL EnDe, alpha ~ 0.2, gamma = 3 -> 1.25X
    assert round(sp.speedup(0.2, 3, 0.0), 2) == 1.25


# --- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: sp.expected_tokens_per_cycle(1.2, 3), "acceptance"),
    (lambda: sp.expected_tokens_per_cycle(0.5, -1), "draft_len"),
    (lambda: sp.expected_tokens_per_cycle(0.5, 2.5), "draft_len"),
    (lambda: sp.speedup(0.5, 3, -0.1), "cost_ratio"),
    (lambda: sp.speedup(0.5, 3, 0.1, 0.0), "verify_cost_ratio"),
    (lambda: sp.optimal_draft_length(0.5, 0.1, max_len=0), "max_len"),
    (lambda: sp.acceptance_rate([0.5, 0.6], [0.5, 0.5]), "sum to 1"),
    (lambda: sp.acceptance_rate([1.0], [0.5, 0.5]), "same shape"),
    (lambda: sp.acceptance_from_tokens_per_cycle(7.0, 5), "tokens_per_cycle"),
])
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()
