"""Tests of helpers.figures.custom_operators (validity, determinism and theme colours of every
SVG figure: tests/figures/test_svg_common.py)."""

from helpers.figures import custom_operators as fig


def test_animation_shows_five_passes_against_three():
    svg = fig.opening_animation().svg
    assert fig.opening_animation().animated
    assert svg.count("animateMotion") == 5 + 3
    d = fig.structure_diagram()
    assert not d.animated and "register_fake" in d.svg and "Triton" in d.svg
