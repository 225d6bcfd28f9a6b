"""Tests of helpers.figures.quantization_speculation (lesson 19 and the speculative lab)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import quantization_speculation as qf  # noqa: E402
from helpers.models import speculative as spec  # noqa: E402


def _rows(a=0.8, c=0.5, with_v=True):
    rows = []
    for g in (1, 2, 4):
        r = {"draft_len": g, "alpha": a, "c": c, "tokens_per_cycle":
             spec.expected_tokens_per_cycle(a, g), "speedup": spec.speedup(a, g, c) * 0.9}
        if with_v:
            r["speedup_model_v"] = spec.speedup(a, g, c, 1.2)
        rows.append(r)
    return rows


def test_lab_figure_draws_model_measurement_and_the_measured_v_model():
    fig = qf.lab_figure({"H200": _rows(), "this machine": _rows(0.7, 0.3, with_v=False)},
                        title="t")
    ax1, ax2 = fig.axes
    assert len(ax1.lines) == 4  # model and measured, per run
    labels = [ln.get_label() for ln in ax2.lines]
    assert "H200: model with measured v" in labels
    assert "this machine: model with measured v" not in labels
    v_line = ax2.lines[labels.index("H200: model with measured v")]
    assert np.allclose(v_line.get_ydata(), [r["speedup_model_v"] for r in _rows()])
    plt.close(fig)
    with pytest.raises(ValueError):
        qf.lab_figure({}, title="t")
