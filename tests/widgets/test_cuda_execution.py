"""Tests of helpers.widgets.cuda_execution: the occupancy explorer."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest

from helpers import specs
from helpers.models import occupancy as occ
from helpers.widgets import cuda_execution as wc


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_draw_reports_the_model():
    fig = wc.draw_occupancy(256, 40, 48, specs.SM90)
    o = occ.occupancy(threads_per_block=256, registers_per_thread=40, smem_bytes=48 * 1024,
                      limits=specs.SM90)
    assert f"occupancy {o.fraction:.1%}" in fig.axes[0].get_title()


def test_draw_explains_a_launch_that_cannot_happen():
    fig = wc.draw_occupancy(1024, 255, 0, specs.SM90)
    text = fig.axes[0].texts[0].get_text()
    assert text.startswith("This block cannot launch") and "launch would fail" in text
    fig = wc.draw_occupancy(128, 32, 200, specs.SM70)  # more than Volta's 96 KiB per block
    assert "smem_bytes" in fig.axes[0].texts[0].get_text()


def test_explorer_builds_and_redraws():
    box = wc.occupancy_explorer()
    assert isinstance(box, widgets.VBox)
    controls = box.children[1].children
    assert [c.value for c in controls[:3]] == [256, 40, 48]
    assert controls[3].value is specs.SM90
    controls[1].value = 128
    controls[3].value = specs.SM80
    out = box.children[2]
    assert out.outputs  # a figure was drawn for the new values


def test_explorer_rejects_unknown_limits():
    import dataclasses
    with pytest.raises(ValueError):
        wc.occupancy_explorer(limits=dataclasses.replace(specs.SM90, name="custom"))
