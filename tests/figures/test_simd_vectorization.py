"""Tests of helpers.figures.simd_vectorization: SVG whose lane
counts come from the model. (Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

from helpers.figures import simd_vectorization as fig
from helpers.models import simd


def test_diagram_lane_labels_come_from_the_model():
    svg = fig.structure_diagram().svg
    for bits, name in ((64, "float64"), (8, "int8")):
        assert f"{name}: {simd.simd_lanes(512, bits)} lanes" in svg
    assert fig.opening_animation().animated and not fig.structure_diagram().animated
