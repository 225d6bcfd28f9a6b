"""Tests of helpers.labs.summary: every lab is listed and every lab's table feeds the status page."""

from __future__ import annotations

import pkgutil

import pytest

import helpers.labs
from helpers.labs import core, summary
from helpers.labs.report import Row

FRAMEWORK = {"core", "grading", "report", "summary", "analysis", "compare"}


def test_every_runner_is_listed_once_and_has_comparison_rows():
    runners = {m.name for m in pkgutil.iter_modules(helpers.labs.__path__)} - FRAMEWORK
    runners = {m for m in runners if not m.endswith("_worker")}
    listed = [name for name, _ in summary.LABS]
    assert set(summary.RUNNERS) <= set(listed)  # runners inside a lab's package
    assert sorted(set(listed) - set(summary.RUNNERS)) == sorted(runners)
    assert len(set(listed)) == len(listed)
    for name in listed:
        module = summary.lab_module(name)
        assert str(module.LAB) == name and callable(summary.analysis_module(name).comparison_rows)


@pytest.mark.parametrize("name", [n for n, _ in summary.LABS])
def test_comparison_rows_of_the_shipped_reference(name):
    ref = core.reference_or_none(name)
    if ref is None:
        pytest.skip(f"no H200 reference shipped for {name} yet")
    rows = summary.analysis_module(name).comparison_rows(ref)
    assert rows and all(isinstance(r, Row) for r in rows)
    assert any(r.model is not None and r.h200 is not None for r in rows)
    assert all(r.yours is None for r in rows)  # no reader's run was given


def test_reference_rows_keep_only_complete_rows_and_compute_the_error():
    rows, missing = summary.reference_rows()
    assert {r.lab for r in rows} | set(missing) <= {n for n, _ in summary.LABS}
    for r in rows:
        assert r.row.model is not None and r.row.h200 is not None
        assert r.error == pytest.approx((r.row.model - r.row.h200) / r.row.h200)
        assert r.page.startswith("sec-lab-")


def test_provenance_names_the_device_and_commit():
    for p in summary.provenance():
        assert p["device"] and p["commit"] and p["date"]


def test_unknown_lab():
    with pytest.raises(ValueError, match="unknown lab"):
        summary.lab_module("nope")
