"""Tests of helpers.widgets.ml_compilers: the explorer draws the break-even model."""

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers.models import compilation as cm  # noqa: E402
from helpers.widgets import ml_compilers as w  # noqa: E402


def test_title_states_the_models_break_even():
    fig = w.draw_break_even(10.0, 10.0, 2.0)
    n = cm.break_even_calls(10.0, 10e-3, 5e-3)
    assert fig.axes[0].get_title() == f"break-even after {n:.3g} calls"
    # the two lines cross at the break-even point
    eager, compiled = fig.axes[0].get_lines()[:2]
    x, ye = eager.get_data()
    _, yc = compiled.get_data()
    assert ye[0] < yc[0] and ye[-1] > yc[-1]
    assert x[-1] == pytest.approx(3 * n)
    plt.close(fig)


def test_no_speedup_never_pays_and_explorer_builds():
    fig = w.draw_break_even(10.0, 10.0, 0.8)
    assert "never pays" in fig.axes[0].get_title()
    plt.close(fig)
    box = w.break_even_explorer()
    sliders = list(box.children[1].children)
    assert len(sliders) == 3
    sliders[2].value = 3.0
