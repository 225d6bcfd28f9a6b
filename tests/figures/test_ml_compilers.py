"""Tests of helpers.figures.ml_compilers: valid, deterministic, theme-aware SVG."""

import xml.etree.ElementTree as ET

import pytest

from helpers.figures import ml_compilers as fig
from helpers.figures.svg import TEXT


@pytest.mark.parametrize("make", [fig.opening_animation, fig.structure_diagram])
def test_svg_is_valid_deterministic_and_theme_aware(make):
    a, b = make(), make()
    assert a.svg == b.svg
    ET.fromstring(a.svg)
    assert TEXT in a.svg


def test_animation_has_three_calls_and_diagram_names_the_stages():
    a = fig.opening_animation()
    assert a.animated and a.svg.count("animateMotion") == 3
    d = fig.structure_diagram()
    assert not d.animated
    for stage in ("TorchDynamo", "AOTAutograd", "TorchInductor", "guards", "graph break"):
        assert stage in d.svg
