"""The speculative-decoding lab notebook grades a reader's tokens-per-cycle formula: the
probability that all g drafts pass (a**g) instead of the geometric sum, or the closed form that
divides by zero at acceptance 1, fail nbval with a reason; the reference passes."""

import re
from pathlib import Path

NOTEBOOK = "labs/speculative.ipynb"
MARKER = "# Exercise: tokens per cycle"
from helpers.book import ROOT  # the repository root, computed once


def reference_source() -> str:
    text = (ROOT / "labs" / "speculative.md").read_text()
    cell = re.search(r"```\{code-cell\} ipython3\n(# Exercise: tokens per cycle\n.*?)```", text, re.S)
    return cell.group(1)


REFERENCE = reference_source()
ALL_PASS = REFERENCE.replace("return sum(acceptance ** i for i in range(draft_len + 1))",
                             "return acceptance ** draft_len")
CLOSED_FORM = REFERENCE.replace("return sum(acceptance ** i for i in range(draft_len + 1))",
                                "return (1 - acceptance ** (draft_len + 1)) / (1 - acceptance)")


def test_the_wrong_solutions_differ_from_the_reference():
    assert ALL_PASS != REFERENCE and CLOSED_FORM != REFERENCE


def test_grading(grade):
    passed, output = grade(NOTEBOOK, {MARKER: REFERENCE})
    assert passed, output[-3000:]
    passed, output = grade(NOTEBOOK, {MARKER: ALL_PASS})
    assert not passed
    assert "FAIL expected tokens per cycle" in output and "the cycle yields" in output, output[-3000:]
    passed, output = grade(NOTEBOOK, {MARKER: CLOSED_FORM})
    assert not passed and "ZeroDivisionError" in output, output[-3000:]
