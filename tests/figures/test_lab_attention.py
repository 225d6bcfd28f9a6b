import numpy as np
import pytest

from helpers.figures import lab_attention as fig
from helpers.models import attention as att


def test_opening_animation_shows_the_online_softmax_state_after_each_block():
    scores = (0.5, 2.0, 1.0)
    f = fig.opening_animation(scores)
    assert f.animated and f.svg == fig.opening_animation(scores).svg  # deterministic
    m, ell = -np.inf, 0.0
    for s in scores:
        m, ell = att.online_softmax_update(m, ell, np.array([s]))
        assert f"m = {float(m):.2f}, l = {float(ell):.2f}" in f.svg
    assert f.svg.count("max grew") == 1  # only block 2 raises the max after the first
    with pytest.raises(ValueError):
        fig.opening_animation((1.0,))


def test_structure_diagram_names_the_three_implementations():
    svg = fig.structure_diagram().svg
    for word in ("naive", "fused", "SDPA", "float64"):
        assert word in svg


def test_rate_figure_draws_one_line_per_measured_implementation():
    rows = [{"seq_len": n, "naive_flop_per_s": 1e12, "fused_flop_per_s": None,
             "sdpa_flop_per_s": 2e12} for n in (128, 256)]
    f = fig.rate_figure({"a": rows, "b": rows}, title="t")
    assert len(f.axes) == 2 and len(f.axes[0].lines) == 2
    assert f.axes[0].lines[1].get_ydata()[0] == pytest.approx(2.0)
    with pytest.raises(ValueError):
        fig.rate_figure({}, title="t")
