"""Tests of helpers.figures.storage_and_model_loading."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers.figures import storage_and_model_loading as f  # noqa: E402


def test_svg_figures():
    anim, diag = f.opening_animation(), f.structure_diagram()
    assert anim.animated and "<animateMotion" in anim.svg and "<desc>" in anim.svg
    assert not diag.animated
    for word in ("page cache", "read()", "mmap", "drop_caches"):
        assert word in diag.svg
    assert anim.svg == f.opening_animation().svg


def test_load_times_figure_draws_bars_and_model():
    fig = f.load_times_figure({"a": 0.1, "b": 0.2, "c": 0.05}, predicted_s={"b": 0.15})
    ax = fig.axes[0]
    assert len(ax.patches) == 3
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert ax.get_legend() is not None
    plt.close(fig)
