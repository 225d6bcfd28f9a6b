"""Tests of helpers.widgets.fault_tolerance: the explorer builds, redraws and states the model."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.models import checkpointing as ck  # noqa: E402
from helpers.widgets import fault_tolerance as fw  # noqa: E402


def test_explorer_builds_and_redraws():
    box = fw.checkpoint_explorer(n_nodes=16, node_mtbf_h=1e4, checkpoint_min=2.0, restart_min=5.0)
    assert isinstance(box, widgets.VBox)
    nodes, mtbf, delta, restart = list(box.children[1].children)
    assert nodes.value == 16 and delta.value == pytest.approx(2.0)
    nodes.value = 8000
    delta.value = 30.0


def test_title_reports_the_models_numbers():
    fig = fw.draw_checkpoint(1000, 10_000.0, 5.0, 10.0)
    title = fig.axes[0].get_title()
    mtbf = ck.cluster_mtbf_s(10_000 * 3600.0, 1000)
    assert f"{mtbf / 3600:.3g} h" in title
    assert f"Daly {ck.daly_interval_s(300.0, mtbf) / 60:.3g} min" in title
    plt.close(fig)


def test_bad_input_raises():
    with pytest.raises(ValueError):
        fw.draw_checkpoint(0, 1000.0, 1.0, 1.0)
