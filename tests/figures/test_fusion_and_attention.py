import pytest

from helpers.figures import fusion_and_attention as fig
from helpers.models import attention as att


def test_structure_diagram_has_the_four_steps():
    svg = fig.structure_diagram().svg
    for step in ("1. fuse a chain", "2. online softmax", "3. IO-aware attention",
                 "4. recompute or store"):
        assert step in svg


def test_traffic_figure_plots_the_models_and_marks_the_ratio():
    f = fig.traffic_figure(4096, 64, 100 * 1024)
    ax = f.axes[0]
    std, flash, marks = ax.lines
    n0 = int(std.get_xdata()[0])
    assert std.get_ydata()[0] == pytest.approx(att.standard_attention_hbm_bytes(n0, 64, 2.0) / 1e6)
    bc = att.flash_block_sizes(100 * 1024 // 2, 64)[1]
    assert f"B_c = {bc}" in flash.get_label()
    ratio = att.standard_attention_hbm_bytes(4096, 64, 2.0) / att.flash_attention_hbm_bytes(
        4096, 64, 2.0, block_cols=bc)
    assert f"{ratio:.3g}x" in ax.texts[0].get_text()


def test_fusion_figure_plots_the_measured_ratio_against_the_model():
    f = fig.fusion_figure([1 << 20, 1 << 22], [4e-3, 8e-3], [1e-3, 2e-3], 4.0, title="t")
    assert list(f.axes[0].lines[0].get_ydata()) == [4.0, 4.0]
    with pytest.raises(ValueError):
        fig.fusion_figure([1.0], [0.0], [1.0], 4.0, title="t")
