"""Tests of helpers.figures.simd_vectorization: valid, deterministic, theme-aware SVG whose lane
counts come from the model."""

import xml.etree.ElementTree as ET

import pytest

from helpers.figures import simd_vectorization as fig
from helpers.figures.svg import TEXT
from helpers.models import simd


@pytest.mark.parametrize("make", [fig.opening_animation, fig.structure_diagram])
def test_svg_is_valid_deterministic_and_theme_aware(make):
    a, b = make(), make()
    assert a.svg == b.svg
    ET.fromstring(a.svg)
    assert TEXT in a.svg


def test_diagram_lane_labels_come_from_the_model():
    svg = fig.structure_diagram().svg
    for bits, name in ((64, "float64"), (8, "int8")):
        assert f"{name}: {simd.simd_lanes(512, bits)} lanes" in svg
    assert fig.opening_animation().animated and not fig.structure_diagram().animated
