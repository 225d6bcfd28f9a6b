"""The attention lab notebook grades a reader's fused kernel: a kernel that forgets to rescale
its accumulator, or ignores the causal mask, fails nbval with a reason; the reference passes."""

import re
from pathlib import Path

import pytest

NOTEBOOK = "labs/attention.ipynb"
MARKER = "# Exercise: attention kernel"
from helpers.book import ROOT  # the repository root, computed once


def reference_source() -> str:
    """The exercise cell of the page, as written there (the reference solution)."""
    text = (ROOT / "labs" / "attention.md").read_text()
    cell = re.search(r"```\{code-cell\} ipython3\n(# Exercise: attention kernel\n.*?)```", text, re.S)
    return cell.group(1)


REFERENCE = reference_source()
NO_RESCALE = REFERENCE.replace("acc = acc * alpha[:, None] + tl.dot(", "acc = acc + tl.dot(")
NO_MASK = REFERENCE.replace("keep = keep & (cols[None, :] <= rows[:, None])", "keep = keep")


def test_the_wrong_solutions_differ_from_the_reference():
    assert NO_RESCALE != REFERENCE and NO_MASK != REFERENCE


def test_reference_solution_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: REFERENCE})
    assert passed, output[-3000:]


@pytest.mark.parametrize("source, message", [
    (NO_RESCALE, "no mask; wrong values"),
    (NO_MASK, "causal; wrong values"),
], ids=["forgets-the-rescale", "ignores-the-causal-mask"])
def test_wrong_kernels_fail_with_a_reason(grade, source, message):
    passed, output = grade(NOTEBOOK, {MARKER: source})
    assert not passed
    assert "FAIL fused attention kernel" in output and message in output, output[-3000:]
