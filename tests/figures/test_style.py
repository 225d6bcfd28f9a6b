"""The shared matplotlib helpers: a row of panels, a base-2 sweep axis, the finishing touches."""

import matplotlib.pyplot as plt
import pytest
from matplotlib.ticker import ScalarFormatter

from helpers.figures import style


@pytest.mark.parametrize("n, width_in", [(1, 6.0), (2, 7.4), (4, 14.2)])
def test_panel_figure_has_one_panel_per_key(n, width_in):
    fig, axes = style.panel_figure({f"p{i}": [] for i in range(n)}, height_in=3.6)
    assert axes.shape == (n,) and list(axes) == fig.axes  # 1-D even for a single panel
    assert tuple(fig.get_size_inches()) == pytest.approx((width_in, 3.6))


def test_panel_figure_passes_options_and_refuses_no_panels():
    fig, axes = style.panel_figure({"a": [], "b": []}, height_in=3.0, sharey=True)
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    with pytest.raises(ValueError, match="at least one panel"):
        style.panel_figure({}, height_in=3.0)


def test_log2_panel_and_finish_panels():
    fig, axes = style.panel_figure({"a": [], "b": []}, height_in=3.0)
    for ax, name in zip(axes, ("a", "b")):
        ax.plot([1, 1024], [1, 2], label=f"line {name}")
        style.log2_panel(ax, name, xlabel="batch B")
    ax = axes[1]
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert isinstance(ax.xaxis.get_major_formatter(), ScalarFormatter)
    assert ax.get_xlabel() == "batch B" and ax.get_title() == "b"
    assert fig.number in plt.get_fignums()
    out = style.finish_panels(fig, axes, ylabel="tokens per second", title="T",
                              legend_fontsize=8)
    assert out is fig and fig.number not in plt.get_fignums()  # closed: the page shows it once
    assert axes[0].get_ylabel() == "tokens per second" and axes[1].get_ylabel() == ""
    legend = axes[0].get_legend()
    assert axes[1].get_legend() is None and legend.get_texts()[0].get_fontsize() == 8
    assert [t.get_text() for t in legend.get_texts()] == ["line a"]
    assert fig.get_suptitle() == "T"
