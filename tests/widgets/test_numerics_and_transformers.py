"""Tests of the memory explorer: it builds, redraws on every control, rejects bad input."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from helpers.widgets.numerics_and_transformers import memory_explorer


def _controls(box):
    return box.children[1].children


def test_explorer_builds_and_redraws_for_every_control():
    box = memory_explorer()
    controls = _controls(box)
    assert [c.description for c in controls] == ["model", "weights", "KV cache",
                                                 "batch (sequences)", "context (tokens)", "GPU"]
    controls[0].value = "Llama-2-7B"
    controls[1].value = "int4"
    controls[2].value = "fp8_e4m3"
    controls[3].value = 64
    controls[4].value = 32768
    controls[5].value = "h200"
    plt.close("all")


def test_explorer_starts_at_the_page_values():
    controls = _controls(memory_explorer(batch=16, context=8192))
    assert (controls[0].value, controls[3].value, controls[4].value) == ("Llama-3-8B", 16, 8192)


def test_unknown_model_is_rejected():
    with pytest.raises(ValueError, match="model must be one of"):
        memory_explorer(model="GPT-5")
