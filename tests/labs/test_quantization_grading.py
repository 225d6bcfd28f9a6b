"""The quantization lab notebook grades a reader's per-channel int8 quantizer: one scale per
tensor, or a division by 128 that clips each row's largest weight, fails nbval with a reason;
the reference passes."""

import re
from pathlib import Path

import pytest

NOTEBOOK = "labs/quantization.ipynb"
MARKER = "# Exercise: per-channel int8"
from helpers.book import ROOT  # the repository root, computed once


def reference_source() -> str:
    """The exercise cell of the page, as written there (the reference solution)."""
    text = (ROOT / "labs" / "quantization.md").read_text()
    cell = re.search(r"```\{code-cell\} ipython3\n(# Exercise: per-channel int8\n.*?)```", text, re.S)
    return cell.group(1)


REFERENCE = reference_source()
PER_TENSOR = REFERENCE.replace("w.abs().amax(dim=1, keepdim=True) / 127",
                               "w.abs().max().reshape(1, 1) / 127")
BY_128 = REFERENCE.replace("keepdim=True) / 127", "keepdim=True) / 128")


def test_the_wrong_solutions_differ_from_the_reference():
    assert PER_TENSOR != REFERENCE and BY_128 != REFERENCE


def test_reference_solution_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: REFERENCE})
    assert passed, output[-3000:]


@pytest.mark.parametrize("source, message", [
    (PER_TENSOR, "one scale for the whole tensor"),
    (BY_128, "dividing by 128"),
], ids=["per-tensor-scale", "divides-by-128"])
def test_wrong_quantizers_fail_with_a_reason(grade, source, message):
    passed, output = grade(NOTEBOOK, {MARKER: source})
    assert not passed
    assert "FAIL per-channel int8" in output and message in output, output[-3000:]
