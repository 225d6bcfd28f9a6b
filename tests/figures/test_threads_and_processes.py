"""Tests of helpers.figures.threads_and_processes: valid, deterministic, theme-aware SVG."""

import xml.etree.ElementTree as ET

import pytest

from helpers.figures import threads_and_processes as fig
from helpers.figures.svg import TEXT


@pytest.mark.parametrize("make", [fig.opening_animation, fig.structure_diagram])
def test_svg_is_valid_deterministic_and_theme_aware(make):
    a, b = make(), make()
    assert a.svg == b.svg
    ET.fromstring(a.svg)
    assert TEXT in a.svg


def test_animation_moves_and_diagram_names_the_gil():
    assert fig.opening_animation().animated and "animateMotion" in fig.opening_animation().svg
    d = fig.structure_diagram()
    assert not d.animated and "GIL" in d.svg and "affinity" in d.svg
