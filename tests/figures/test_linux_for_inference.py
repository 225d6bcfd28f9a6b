"""Tests of helpers.figures.linux_for_inference."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import linux_for_inference as f  # noqa: E402


def test_opening_animation_is_animated_described_and_deterministic():
    fig = f.opening_animation()
    assert fig.animated and "<animate" in fig.svg and "<desc>" in fig.svg
    assert "SIGTERM" in fig.svg and "SIGKILL" in fig.svg
    assert fig.svg == f.opening_animation().svg
    with pytest.raises(ValueError):
        f.opening_animation(remaining=(0.1,), elapsed=(0.1, 0.2))


def test_structure_diagram_names_the_interfaces():
    fig = f.structure_diagram()
    assert not fig.animated
    for word in ("file descriptors", "resource limits", "/proc/&lt;pid&gt;/stat", "signals"):
        assert word in fig.svg


def test_utilization_figure():
    fig = f.utilization_figure([0.25, 0.5, 1.0], [0.2, 0.45, 0.9])
    ax = fig.axes[0]
    assert len(ax.lines) == 2 and ax.get_xlabel()
    plt.close(fig)
    with pytest.raises(ValueError):
        f.utilization_figure([], [])
