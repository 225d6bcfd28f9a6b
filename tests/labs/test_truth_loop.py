"""The truth loop, enforced: every H200 value the book ships is held to the claim its lab makes.

A lab's record declares its claims (:class:`helpers.labs.report.Claim`): predictions, each with
a tolerance and the reason for it, and bounds. These tests read the shipped references and fail
when a prediction leaves its tolerance or a measurement passes a bound, so a model change that
breaks agreement with the hardware cannot land.
"""

from __future__ import annotations

import pytest

from helpers.labs import core, summary
from helpers.labs.report import Claim, Row


NAMES = [n for n, _ in summary.LABS]


def _rows(name):
    ref = core.reference_or_none(name)
    if ref is None:
        pytest.skip(f"no H200 reference shipped for {name}")
    return [summary.LabRow(name, "", r) for r in summary.analysis_module(name).comparison_rows(ref)
            if r.model is not None and r.h200 is not None]


@pytest.mark.parametrize("name", NAMES)
def test_every_h200_value_holds_its_claim(name):
    assert summary.violations(_rows(name)) == []


@pytest.mark.parametrize("name", NAMES)
def test_every_row_names_a_claim_its_lab_declares(name):
    record = summary.lab_record(name)
    rows = _rows(name)
    assert rows, f"{name}: the shipped reference gives no row with a model and an H200 value"
    undeclared = [r.row.quantity for r in rows if r.claim is None]
    assert not undeclared, f"{name}: rows name no claim: {undeclared}"
    assert {r.claim.key for r in rows} <= {c.key for c in record.claims}
    used = {r.claim.key for r in rows}
    assert used == {c.key for c in record.claims}, (
        f"{name}: declared claims with no row in the shipped reference: "
        f"{sorted({c.key for c in record.claims} - used)}")


@pytest.mark.parametrize("name", NAMES)
def test_every_lab_makes_a_prediction(name):
    kinds = {c.kind for c in summary.lab_record(name).claims}
    assert "prediction" in kinds, f"{name} declares only bounds; a lab's model must predict something"


def test_a_prediction_outside_its_tolerance_is_a_violation():
    claim = Claim("t", "time", "prediction", model="m", ceilings="c", why="w", tolerance=0.1)
    ok = summary.LabRow("timing", "", Row("t", "s", 1, model=1.05, h200=1.0, claim=claim))
    bad = summary.LabRow("timing", "", Row("t", "s", 1, model=1.2, h200=1.0, claim=claim))
    assert ok.holds and not bad.holds
    # a claim the lab does not declare is reported as such, whatever its values
    assert "does not declare" in summary.violations([ok])[0]


def test_a_miss_passes_only_with_an_explanation_and_only_while_it_misses(monkeypatch):
    missed = Claim("t", "time", "prediction", model="m", ceilings="c", why="w", tolerance=0.1,
                   miss="the reference predates the fix; evidence: ...")
    monkeypatch.setattr(summary, "lab_record", lambda name: core.Lab(
        "demo", pages=("labs/demo.md",), claims=(missed,)))
    far = summary.LabRow("demo", "", Row("t", "s", 1, model=1.5, h200=1.0, claim=missed))
    near = summary.LabRow("demo", "", Row("t", "s", 1, model=1.01, h200=1.0, claim=missed))
    assert summary.violations([far, near]) == [] and summary.explained_misses([far, near]) == [far]
    assert "drop its miss" in summary.violations([near])[0]
    assert "explained" in missed.verdict(1.5, 1.0)
    with pytest.raises(ValueError, match="miss is for predictions"):
        Claim("b", "q", "bound", model="m", ceilings="c", why="w", limit="lower", miss="x")


def test_a_passed_bound_is_a_violation():
    time_bound = Claim("b", "time", "bound", model="m", ceilings="c", why="w", limit="lower")
    rate_bound = Claim("r", "rate", "bound", model="m", ceilings="c", why="w", limit="upper",
                       tolerance=0.05)
    assert time_bound.fraction_of_bound(model=0.5, measured=1.0) == 0.5
    assert not time_bound.holds(model=1.2, measured=1.0)  # ran faster than its minimum time
    assert rate_bound.holds(model=1.0, measured=1.04) and not rate_bound.holds(model=1.0, measured=1.1)
    assert "PASSED" in time_bound.verdict(1.2, 1.0)


def test_median_abs_error_is_over_predictions_only():
    p = Claim("p", "q", "prediction", model="m", ceilings="c", why="w", tolerance=0.5)
    b = Claim("b", "q", "bound", model="m", ceilings="c", why="w", limit="upper")
    rows = [summary.LabRow("x", "", Row("a", "s", 1, model=m, h200=1.0, claim=c))
            for m, c in ((1.1, p), (0.7, p), (0.9, p), (3.0, b))]
    assert summary.median_abs_error(rows) == pytest.approx(0.1)
    assert len(summary.bounds(rows)) == 1 and len(summary.predictions(rows)) == 3
    with pytest.raises(ValueError, match="no prediction"):
        summary.median_abs_error(rows[3:])


@pytest.mark.parametrize("bad, match", [
    (dict(kind="guess"), "kind must be one of"),
    (dict(kind="prediction", tolerance=None), "needs a tolerance"),
    (dict(kind="prediction", tolerance=0.1, limit="lower"), "limit is for bounds"),
    (dict(kind="bound", limit=None), "limit must be"),
    (dict(kind="bound", limit="lower", tolerance=1.5), "overshoot"),
    (dict(kind="bound", limit="lower", why=" "), "why must be"),
    (dict(kind="bound", limit="lower", key="a b"), "key must be"),
])
def test_claim_refuses_bad_declarations(bad, match):
    args = dict(key="k", quantity="q", model="m", ceilings="c", why="w") | bad
    with pytest.raises(ValueError, match=match):
        Claim(**args)


def test_lab_refuses_duplicate_or_foreign_claims():
    c = Claim("k", "q", "bound", model="m", ceilings="c", why="w", limit="lower")
    with pytest.raises(ValueError, match="distinct keys"):
        core.Lab("demo", pages=("labs/demo.md",), claims=(c, c))
    with pytest.raises(ValueError, match="Claim records"):
        core.Lab("demo", pages=("labs/demo.md",), claims=("k",))
    lab = core.Lab("demo", pages=("labs/demo.md",), claims=(c,))
    assert lab.claim("k") is c
    with pytest.raises(ValueError, match="claim must be one of"):
        lab.claim("nope")


def test_a_table_row_with_a_measured_zero_shows_no_error_instead_of_raising():
    from helpers.labs.report import Table

    claim = Claim("g", "goodput", "prediction", model="m", ceilings="c", why="w", tolerance=0.1)
    rows = [Row("goodput", "%", 0.01, model=0.5, h200=0.0), Row("goodput", "%", 0.01, model=0.5,
                                                                h200=0.0, claim=claim)]
    assert rows[0].error() == "-" and rows[1].verdict() == "-"
    assert "goodput" in str(Table("t", rows))
