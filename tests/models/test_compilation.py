"""The break-even model of compilation against a simulated sequence of calls."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import compilation as cm


@settings(max_examples=100, deadline=None)
@given(tc=st.floats(0.01, 100), te=st.floats(1e-6, 1.0), frac=st.floats(0.05, 0.95))
def test_break_even_is_where_the_totals_cross(tc, te, frac):
    tk = te * frac
    n = cm.break_even_calls(tc, te, tk)
    # oracle: the first call count at which compiled total <= eager total, found by counting
    k = math.ceil(n)
    assert cm.amortized_time_s(k, tc, tk) <= k * te * (1 + 1e-9)
    if k >= 2:
        assert cm.amortized_time_s(k - 1, tc, tk) > (k - 1) * te * (1 - 1e-9)


def test_limits():
    assert cm.break_even_calls(0.0, 2.0, 1.0) == 0.0
    assert cm.break_even_calls(5.0, 1.0, 1.0) == math.inf
    assert cm.break_even_calls(5.0, 1.0, 2.0) == math.inf
    assert cm.amortized_time_s(0, 3.0, 1.0) == 3.0


def test_published_speedup_sets_the_break_even():
    # Ansel et al. 2024 (abstract): 2.27x geometric-mean inference speedup on an A100. A model
    # whose eager call takes 10 ms then saves 10 ms (1 - 1/2.27) per call: 10 s of compilation
    # is repaid after 10 / 0.00559... = 1787 calls.
    te = 0.010
    assert cm.break_even_calls(10.0, te, te / 2.27) == pytest.approx(1787.4, rel=1e-3)


@pytest.mark.parametrize("args", [(-1.0, 1.0, 0.5), (1.0, 0.0, 0.5), (1.0, 1.0, float("nan"))])
def test_bad_input_raises(args):
    with pytest.raises(ValueError):
        cm.break_even_calls(*args)


def test_bad_call_count_raises():
    with pytest.raises(ValueError, match="n_calls"):
        cm.amortized_time_s(-1, 1.0, 1.0)
    with pytest.raises(ValueError, match="n_calls"):
        cm.amortized_time_s(2.5, 1.0, 1.0)
