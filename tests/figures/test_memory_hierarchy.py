"""Tests of helpers.figures.memory_hierarchy."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import memory_hierarchy as mf  # noqa: E402
from helpers.models import memory_hierarchy as mh  # noqa: E402


def test_animation_moves_and_diagram_does_not():
    assert mf.opening_animation().animated and "<animateMotion" in mf.opening_animation().svg
    assert not mf.structure_diagram().animated


def test_working_set_figure_draws_measurement_and_model():
    ws = np.logspace(4, 7, 10)
    sizes = {"L1d": 48e3, "L2": 2e6}
    lat = np.array([mh.chase_latency_s(w, list(sizes.values()), [1e-9, 5e-9], 90e-9) for w in ws])
    fig = mf.working_set_figure(ws, lat, cache_bytes=sizes, model_latencies=([1e-9, 5e-9], 90e-9))
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), lat * 1e9)
    model = ax.lines[-1]
    np.testing.assert_allclose(model.get_ydata()[-1], lat[-1] * 1e9, rtol=1e-9)
    assert len([ln for ln in ax.lines if ln.get_linestyle() == ":"]) == 2


def test_line_probe_figure_marks_the_line():
    fig = mf.line_probe_figure([8, 64, 128], [50e-9, 80e-9, 80e-9], line_bytes=64)
    assert fig.axes[0].lines[-1].get_xdata()[0] == 64


def _key_times_are_valid(svg: str) -> None:
    """SMIL keyTimes must start at 0, end at 1 and never decrease (browsers reject others)."""
    for kt in re.findall(r'keyTimes="([^"]+)"', svg):
        vals = [float(v) for v in kt.split(";")]
        assert vals[0] == 0 and vals[-1] == 1, kt
        assert all(b >= a for a, b in zip(vals, vals[1:])), kt


@pytest.mark.parametrize("make", [mf.opening_animation, mf.structure_diagram])
def test_animation_key_times_are_valid(make):
    _key_times_are_valid(make().svg)
