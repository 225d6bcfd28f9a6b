"""Tests of helpers.widgets.parallelism: the mesh explorer."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest

from helpers import specs
from helpers.models import parallelism as par
from helpers.widgets import parallelism as wp


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_draw_reports_the_models():
    fig = wp.draw_mesh(70.0, 8, 8, 4, 1, 8, specs.H200_SXM)
    state = par.model_state_bytes_per_rank(70e9, dp=8, tp=8, pp=4, zero_stage=1) / 1e9
    left, right = fig.axes
    assert left.get_title(loc="left").startswith(f"{state:.3g} GB: fits")
    bubble = par.pipeline_bubble_fraction(pp=4, n_microbatches=8)
    assert f"bubble {bubble:.1%}" in right.get_title(loc="left")
    assert "world 256 GPUs" in right.get_title(loc="left")


def test_draw_says_when_it_does_not_fit():
    fig = wp.draw_mesh(1000.0, 1, 1, 1, 0, 1, specs.H200_SXM)
    assert "does NOT fit" in fig.axes[0].get_title(loc="left")


def test_explorer_builds_with_the_page_values():
    box = wp.mesh_explorer(params_b=71, dp=8, tp=8, pp=4, zero_stage=1, n_microbatches=8)
    assert isinstance(box, widgets.VBox)
    controls = box.children[1].children
    assert [c.value for c in controls] == [71, 8, 8, 4, 1, 8]
