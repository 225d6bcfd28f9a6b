"""tokens_per_cycle_std and launch_bound_cost_ratio (the speculative lab's claims)."""

import math

import numpy as np
import pytest

from helpers.models import speculative as spec
from helpers.sim.speculative import simulate_cycles, tokens_per_cycle_pmf


def test_std_limits():
    assert spec.tokens_per_cycle_std(0.0, 5) == 0.0  # never accepts: always one token
    assert spec.tokens_per_cycle_std(1.0, 5) == 0.0  # always accepts: always g + 1
    assert spec.tokens_per_cycle_std(0.7, 0) == 0.0  # no drafts: one plain step
    # one draft: a Bernoulli(alpha) extra token
    assert spec.tokens_per_cycle_std(0.3, 1) == pytest.approx(math.sqrt(0.3 * 0.7))


@pytest.mark.parametrize("a, g", [(0.792, 8), (0.5, 3), (0.9, 12)])
def test_std_against_the_pmf_and_a_monte_carlo(a, g):
    """Oracles: the exact distribution of the cycle, and 200 000 simulated cycles."""
    pmf = np.asarray(tokens_per_cycle_pmf(a, g))
    n = np.arange(1, len(pmf) + 1)
    exact = math.sqrt(float((pmf * n ** 2).sum() - (pmf * n).sum() ** 2))
    assert spec.tokens_per_cycle_std(a, g) == pytest.approx(exact, rel=1e-9)
    sim = simulate_cycles(a, g, 200_000, seed=3)
    assert spec.tokens_per_cycle_std(a, g) == pytest.approx(float(np.std(sim)), rel=0.01)


def test_cost_ratio_of_the_launch_bound_pair():
    assert spec.launch_bound_cost_ratio(224, 434) == pytest.approx(0.5161, abs=1e-4)
    assert spec.launch_bound_cost_ratio(10, 10) == 1.0


@pytest.mark.parametrize("call, name", [
    (lambda: spec.tokens_per_cycle_std(1.5, 3), "acceptance"),
    (lambda: spec.tokens_per_cycle_std(0.5, -1), "draft_len"),
    (lambda: spec.tokens_per_cycle_std(0.5, 2.5), "draft_len"),
    (lambda: spec.launch_bound_cost_ratio(0, 10), "draft_ops"),
    (lambda: spec.launch_bound_cost_ratio(10, 1.5), "target_ops"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_std_closed_form_for_long_drafts_matches_the_sums():
    # past 4096 drafts the sums are taken in closed form; at 5000 both must agree with the
    # infinite-draft limit sqrt(a) / (1 - a) (a geometric count's spread)
    for a in (0.5, 0.9, 0.99):
        assert spec.tokens_per_cycle_std(a, 5000) == pytest.approx(math.sqrt(a) / (1 - a), rel=1e-6)
        assert spec.tokens_per_cycle_std(a, 4096) == pytest.approx(math.sqrt(a) / (1 - a), rel=1e-6)
    assert math.isfinite(spec.tokens_per_cycle_std(0.5, 10**30))
