"""Tests of helpers.figures.ml_compilers (validity, determinism and theme colours of every SVG
figure: tests/figures/test_svg_common.py)."""

from helpers.figures import ml_compilers as fig


def test_animation_has_three_calls_and_diagram_names_the_stages():
    a = fig.opening_animation()
    assert a.animated and a.svg.count("animateMotion") == 3
    d = fig.structure_diagram()
    assert not d.animated
    for stage in ("TorchDynamo", "AOTAutograd", "TorchInductor", "guards", "graph break"):
        assert stage in d.svg
