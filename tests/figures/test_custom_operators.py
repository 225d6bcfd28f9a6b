"""Tests of helpers.figures.custom_operators: valid, deterministic, theme-aware SVG."""

import xml.etree.ElementTree as ET

import pytest

from helpers.figures import custom_operators as fig
from helpers.figures.svg import TEXT


@pytest.mark.parametrize("make", [fig.opening_animation, fig.structure_diagram])
def test_svg_is_valid_deterministic_and_theme_aware(make):
    a, b = make(), make()
    assert a.svg == b.svg
    ET.fromstring(a.svg)
    assert TEXT in a.svg


def test_animation_shows_five_passes_against_three():
    svg = fig.opening_animation().svg
    assert fig.opening_animation().animated
    assert svg.count("animateMotion") == 5 + 3
    d = fig.structure_diagram()
    assert not d.animated and "register_fake" in d.svg and "Triton" in d.svg
