"""Tests of helpers.figures.virtual_memory: SVG whose field
widths come from the model. (Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

from helpers.figures import virtual_memory as fig
from helpers.models import virtual_memory as vm


def test_diagram_draws_the_model_levels_and_the_animation_moves():
    svg = fig.structure_diagram().svg
    assert svg.count(">table ") == vm.page_table_levels(48)
    assert "12 bits" in svg and "9 bits" in svg
    assert fig.opening_animation().animated and not fig.structure_diagram().animated
