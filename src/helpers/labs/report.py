"""The side-by-side table every lab shows: the model, the H200 reference, the reader's machine.

Each row of a lab's table compares one quantity; the lab says what its model value *is* by
naming a :class:`Claim` it declares in its :class:`~helpers.labs.core.Lab` record:

* a **prediction** is a model meant to match the measurement: the table shows its error and
  the tolerance the lab states for it, and the book's test over the shipped references fails
  when an H200 value leaves that tolerance;
* a **bound** (a datasheet roofline, a minimum time) is a limit the measurement cannot pass:
  the table shows the fraction of the bound the measurement reached, never an "error".

>>> t = Table("copy", [Row("copy bandwidth", "TB/s", 1e12, model=4.8e12, h200=4.3e12)])
>>> print(t)
quantity        unit  model  H200  model error vs H200
copy bandwidth  TB/s    4.8   4.3                 +12%
>>> peak = Claim("copy_peak", "copy rate", "bound", model="helpers.specs.GPUSpec.hbm_bytes_per_s",
...              ceilings="datasheet HBM bandwidth", limit="upper", why="no copy beats its memory")
>>> fit = Claim("copy_time", "copy time", "prediction", model="helpers.models.roofline.memory_time_s",
...             ceilings="copy rate measured in the same run", tolerance=0.10,
...             why="the rate is the run's own")
>>> print(Table("copy", [Row("copy bandwidth", "TB/s", 1e12, model=4.8e12, h200=4.3e12, claim=peak),
...                      Row("copy of 1 GB", "ms", 1e-3, model=2.4e-4, h200=2.5e-4, claim=fit)]))
quantity        unit  model  H200  kind        vs H200
copy bandwidth  TB/s    4.8   4.3  bound       90% of bound
copy of 1 GB    ms     0.24  0.25  prediction  -4% (within ±10%)
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from helpers.units import fmt_pct, fmt_sig

__all__ = ["Claim", "Row", "Table", "relative_error", "KINDS", "misses_text"]

#: What a model value in a lab's table is: a prediction meant to match, or a limit.
KINDS = ("prediction", "bound")


def relative_error(model: float, measured: float) -> float:
    """``(model - measured) / measured``: positive when the model overestimates."""
    if not (measured and math.isfinite(measured) and math.isfinite(model)):
        raise ValueError(f"need finite values and measured != 0, got {model!r}, {measured!r}")
    return (model - measured) / measured


@dataclass(frozen=True)
class Claim:
    """What a lab's model says about one quantity, declared once in the lab's record.

    Parameters
    ----------
    key : str
        The claim's name within its lab (snake_case).
    quantity : str
        What is predicted or bounded, in words ("fused attention forward time").
    kind : {"prediction", "bound"}
        A prediction is meant to match the measurement; a bound is a limit it cannot pass.
    model : str
        The dotted name of the function (or spec field) that computes the model value.
    ceilings : str
        The rates the model uses and where they come from: the datasheet, or measured in the
        same run (the copy rate, the cuBLAS rate).
    why : str
        Why the tolerance is what it is (a prediction), or why the limit holds (a bound).
    tolerance : float, optional
        A prediction's largest allowed ``|relative error|``; for a bound, the overshoot allowed
        past it (clock boost, rounding in a datasheet), 0 by default.
    limit : {"lower", "upper"}, optional
        For a bound: whether the model is a lower limit of the measured value (a time) or an
        upper one (a rate).
    miss : str, optional
        For a prediction that leaves its tolerance on the shipped H200 reference: the
        evidence-based explanation its page gives (and what would close it). The tests accept
        a miss only with one, and fail when a claim carrying one no longer misses.
    """

    key: str
    quantity: str
    kind: str
    model: str
    ceilings: str
    why: str
    tolerance: float | None = None
    limit: str | None = None
    miss: str | None = None

    def __post_init__(self):
        if not (isinstance(self.key, str) and self.key and self.key.replace("_", "").isalnum()):
            raise ValueError(f"key must be a snake_case name, got {self.key!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        for name in ("quantity", "model", "ceilings", "why"):
            if not (isinstance(getattr(self, name), str) and getattr(self, name).strip()):
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        if self.kind == "prediction":
            if self.tolerance is None or not (0 < self.tolerance < 10):
                raise ValueError(f"a prediction needs a tolerance in (0, 10), got {self.tolerance!r}")
            if self.limit is not None:
                raise ValueError(f"limit is for bounds only, got {self.limit!r} on a prediction")
            if self.miss is not None and not (isinstance(self.miss, str) and self.miss.strip()):
                raise ValueError(f"miss must be a non-empty explanation or None, got {self.miss!r}")
        else:
            if self.miss is not None:
                raise ValueError("miss is for predictions only: a passed bound is a bad timing")
            if self.limit not in ("lower", "upper"):
                raise ValueError(f"a bound's limit must be 'lower' (a time) or 'upper' (a rate), "
                                 f"got {self.limit!r}")
            if self.tolerance is not None and not (0 <= self.tolerance < 1):
                raise ValueError(f"a bound's tolerance (allowed overshoot) must be in [0, 1), "
                                 f"got {self.tolerance!r}")

    @property
    def allowed(self) -> float:
        """The tolerance in force: a prediction's, or a bound's overshoot (0 unless stated)."""
        return self.tolerance or 0.0

    def fraction_of_bound(self, model: float, measured: float) -> float:
        """How much of a bound the measurement reached: ``model / measured`` for a lower limit
        (a time), ``measured / model`` for an upper one (a rate). Above 1 passes the bound."""
        if self.kind != "bound":
            raise ValueError(f"claim {self.key!r} is a prediction, not a bound")
        if not (model > 0 and measured > 0 and math.isfinite(model) and math.isfinite(measured)):
            raise ValueError(f"need positive finite values, got {model!r}, {measured!r}")
        return model / measured if self.limit == "lower" else measured / model

    def holds(self, model: float, measured: float) -> bool:
        """Whether a measurement agrees with the claim: a prediction within its tolerance, or
        a bound not passed by more than its allowed overshoot."""
        if self.kind == "prediction":
            return abs(relative_error(model, measured)) <= self.allowed
        return self.fraction_of_bound(model, measured) <= 1 + self.allowed

    def verdict(self, model: float, measured: float) -> str:
        """The table's cell: ``"-4% (within ±10%)"`` or ``"90% of bound"``."""
        if self.kind == "prediction":
            e = relative_error(model, measured)
            word = ("within" if self.holds(model, measured)
                    else "outside, explained:" if self.miss else "OUTSIDE")
            return f"{fmt_pct(e, signed=True)} ({word} ±{fmt_pct(self.allowed)})"
        f = self.fraction_of_bound(model, measured)
        return f"{fmt_pct(f)} of bound" + ("" if self.holds(model, measured) else " (PASSED: a bad timing?)")


@dataclass(frozen=True)
class Row:
    """One quantity: the model's value, the H200's and the reader's (base units; None if absent),
    and the lab's :class:`Claim` that says what the model value is."""

    quantity: str
    unit: str  # display unit
    scale: float  # base units per display unit (1e12 for TB/s given bytes/s)
    model: float | None = None
    h200: float | None = None
    yours: float | None = None
    digits: int = 3
    claim: Claim | None = None

    def fmt(self, value: float | None) -> str:
        if value is None:
            return "-"
        return fmt_sig(value / self.scale, self.digits)

    def error(self) -> str:
        """The model's relative error, or ``-`` where it is undefined (a value missing, or a
        measured zero: a short live run can measure no goodput at all)."""
        if self.model is None or self.h200 is None or self.h200 == 0:
            return "-"
        return fmt_pct(relative_error(self.model, self.h200), signed=True)

    def verdict(self) -> str:
        """The claim's verdict on the H200 value (``-`` without a claim or a value)."""
        if self.claim is None or self.model is None or self.h200 is None or self.h200 == 0:
            return "-"
        return self.claim.verdict(self.model, self.h200)


def misses_text(rows: list[Row]) -> str:
    """What a page says next to its table about the rows that break their claims: one sentence
    per such row (its quantity, its verdict and the claim's explained ``miss``), or ``""`` when
    every claimed row holds.

    >>> c = Claim("t", "a time", "prediction", model="m", ceilings="c", tolerance=0.1, why="w",
    ...           miss="the host drifted")
    >>> misses_text([Row("chain", "us", 1e-6, model=1.0, h200=1.2, claim=c)])
    'chain: -17% (outside, explained: ±10%), because the host drifted.'
    >>> misses_text([Row("chain", "us", 1e-6, model=1.0, h200=1.05, claim=c)])
    ''
    """
    out, told = [], set()
    for r in rows:
        if r.claim is None or r.model is None or r.h200 is None or r.h200 == 0:
            continue
        if not r.claim.holds(r.model, r.h200):
            why = ""
            if r.claim.miss and r.claim.miss in told:
                why = ", for the same reason"
            elif r.claim.miss:
                why = f", because {r.claim.miss}"
                told.add(r.claim.miss)
            out.append(f"{r.quantity}: {r.claim.verdict(r.model, r.h200)}{why}.")
    return " ".join(out)


class Table:
    """Rows with columns: quantity, unit, model, H200, then either "model error vs H200" (rows
    with no claim) or the claim's kind and verdict, and the reader's column if any.
    ``reference_label`` names the card of the reference column where it is not an H200."""

    def __init__(self, title: str, rows: list[Row], yours_label: str | None = None,
                 reference_label: str = "H200"):
        if not rows:
            raise ValueError("a table needs at least one row")
        self.title, self.rows, self.yours_label = title, list(rows), yours_label
        self.reference_label = reference_label

    def _cells(self) -> list[list[str]]:
        claimed = any(r.claim is not None for r in self.rows)
        ref = self.reference_label
        head = ["quantity", "unit", "model", ref]
        head += ["kind", f"vs {ref}"] if claimed else [f"model error vs {ref}"]
        if self.yours_label:
            head.append(self.yours_label)
        body = []
        for r in self.rows:
            line = [r.quantity, r.unit, r.fmt(r.model), r.fmt(r.h200)]
            if claimed:
                line += [r.claim.kind if r.claim else "-", r.verdict()]
            else:
                line.append(r.error())
            if self.yours_label:
                line.append(r.fmt(r.yours))
            body.append(line)
        return [head] + body

    def __str__(self) -> str:
        cells = self._cells()
        widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
        claimed = "kind" in cells[0]
        lines = []
        for row in cells:
            parts = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
            for i, (c, w) in enumerate(zip(row[2:], widths[2:]), start=2):
                text_col = claimed and cells[0][i] in ("kind", f"vs {self.reference_label}")
                parts.append(c.ljust(w) if text_col else c.rjust(w))
            lines.append("  ".join(parts).rstrip())
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        cells = self._cells()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cells[0])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in cells[1:])
        return (f'<table class="lab-table"><caption>{html.escape(self.title)}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
