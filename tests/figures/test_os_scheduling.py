"""Tests of helpers.figures.os_scheduling."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers.figures import os_scheduling as f  # noqa: E402


def test_opening_animation_is_animated_and_uses_its_arguments():
    fig = f.opening_animation()
    assert fig.animated and "<animate" in fig.svg and "<desc>" in fig.svg
    assert "slice 1.4 ms" in fig.svg
    assert "slice 3 ms" in f.opening_animation(slice_ms=3).svg


def test_structure_diagram_names_the_parts():
    svg = f.structure_diagram().svg
    for word in ("run queue", "time slicing", "MPS", "MIG", "woken thread"):
        assert word in svg


def test_wakeup_figure_draws():
    fig = f.wakeup_figure([1, 3, 5], [1e-4, 1e-4, 1e-4], [2e-4, 5e-4, 5e-3], [0, 1.4e-3, 2.8e-3],
                          n_cores=2)
    assert len(fig.axes[0].lines) >= 3
    plt.close(fig)
