"""Tests for helpers.widgets.explorer: controls redraw the figure from the model."""

import ipywidgets as widgets
import matplotlib
import pytest

from helpers.figures import new_figure
from helpers.widgets import explorer, float_slider, int_slider, log_slider

matplotlib.use("Agg")


def test_explorer_draws_initially_and_on_every_change():
    calls = []

    def draw(a, n):
        calls.append((a, n))
        fig, ax = new_figure()
        ax.plot([0, 1], [0, a * n])
        return fig

    a = float_slider("a", 1.0, 0.0, 2.0, 0.1)
    n = int_slider("n", 3, 1, 5)
    box = explorer(draw, {"a": a, "n": n}, title="Test")
    assert isinstance(box, widgets.VBox)
    assert calls == [(1.0, 3)]          # the initial state is drawn for the static page
    a.value = 1.5
    n.value = 4
    assert calls == [(1.0, 3), (1.5, 3), (1.5, 4)]
    assert isinstance(box.children[0], widgets.HTML) and "Test" in box.children[0].value
    # The figure is held in the Output widget's state (so the static page shows it), replaced,
    # not appended, on every redraw.
    out = box.children[-1]
    assert isinstance(out, widgets.Output) and len(out.outputs) == 1
    assert out.outputs[0]["output_type"] == "display_data"
    assert "text/plain" in out.outputs[0]["data"]


def test_log_slider_takes_values_not_exponents():
    s = log_slider("x", 100.0, 1.0, 1e4)
    assert s.min == pytest.approx(0.0) and s.max == pytest.approx(4.0) and s.value == 100.0


def test_explorer_needs_a_control():
    with pytest.raises(ValueError, match="at least one control"):
        explorer(lambda: None, {})
