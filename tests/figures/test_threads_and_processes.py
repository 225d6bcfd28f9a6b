"""Tests of helpers.figures.threads_and_processes (validity, determinism and theme colours of
every SVG figure: tests/figures/test_svg_common.py)."""

from helpers.figures import threads_and_processes as fig


def test_animation_moves_and_diagram_names_the_gil():
    assert fig.opening_animation().animated and "animateMotion" in fig.opening_animation().svg
    d = fig.structure_diagram()
    assert not d.animated and "GIL" in d.svg and "affinity" in d.svg
