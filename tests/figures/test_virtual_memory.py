"""Tests of helpers.figures.virtual_memory: valid, deterministic, theme-aware SVG whose field
widths come from the model."""

import xml.etree.ElementTree as ET

import pytest

from helpers.figures import virtual_memory as fig
from helpers.figures.svg import TEXT
from helpers.models import virtual_memory as vm


@pytest.mark.parametrize("make", [fig.opening_animation, fig.structure_diagram])
def test_svg_is_valid_deterministic_and_theme_aware(make):
    a, b = make(), make()
    assert a.svg == b.svg
    ET.fromstring(a.svg)
    assert TEXT in a.svg


def test_diagram_draws_the_model_levels_and_the_animation_moves():
    svg = fig.structure_diagram().svg
    assert svg.count(">table ") == vm.page_table_levels(48)
    assert "12 bits" in svg and "9 bits" in svg
    assert fig.opening_animation().animated and not fig.structure_diagram().animated
