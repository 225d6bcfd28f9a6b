"""The decode lab notebook grades a reader's count of the bytes of a decode step: forgetting the
KV cache, or reading the weights once per sequence, fails nbval with a reason; the reference
passes."""

import re
from pathlib import Path

import pytest

NOTEBOOK = "labs/decode.ipynb"
MARKER = "# Exercise: decode bytes"
from helpers.book import ROOT  # the repository root, computed once


def reference_source() -> str:
    """The exercise cell of the page, as written there (the reference solution)."""
    text = (ROOT / "labs" / "decode.md").read_text()
    cell = re.search(r"```\{code-cell\} ipython3\n(# Exercise: decode bytes\n.*?)```", text, re.S)
    return cell.group(1)


REFERENCE = reference_source()
NO_KV = REFERENCE.replace("return weights + kv ", "return weights ")
PER_SEQUENCE = REFERENCE.replace("return weights + kv ", "return batch * weights + kv ")


def test_the_wrong_solutions_differ_from_the_reference():
    assert NO_KV != REFERENCE and PER_SEQUENCE != REFERENCE


def test_reference_solution_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: REFERENCE})
    assert passed, output[-3000:]


@pytest.mark.parametrize("source, message", [
    (NO_KV, "the weights alone: the step also reads every sequence's KV cache"),
    (PER_SEQUENCE, "counts the weights once per sequence"),
], ids=["forgets-the-kv-cache", "weights-per-sequence"])
def test_wrong_solutions_fail_with_a_reason(grade, source, message):
    passed, output = grade(NOTEBOOK, {MARKER: source})
    assert not passed
    assert "FAIL decode step bytes" in output and message in output, output[-3000:]
