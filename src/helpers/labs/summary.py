"""Every lab's model against its H200 measurement, in one place (the appendix's status page).

Each lab's analysis module has ``comparison_rows(ref, mine=None) -> list[Row]``: the rows its
own page shows, each naming the :class:`~.report.Claim` (a prediction or a bound) that its lab record
declares. This module lists the labs, reads each shipped H200 reference, and keeps the rows
that have both a model value and an H200 value, so the book can say in one place how well its
models predict real hardware, and its tests can hold every H200 value to its claim
(:func:`violations`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from . import core
from .report import Row, relative_error

__all__ = ["LABS", "RUNNERS", "LabRow", "lab_module", "analysis_module", "lab_record", "reference_rows", "predictions",
           "bounds", "unclaimed", "violations", "explained_misses", "median_abs_error", "provenance"]

#: Every lab, as ``(module name under helpers.labs, page label)``, in the order of the contents.
LABS = (
    ("timing", "sec-lab-timing"),
    ("roofline", "sec-lab-roofline"),
    ("memory_access", "sec-lab-memory-access"),
    ("launch_overhead", "sec-lab-launch-overhead"),
    ("reduction_softmax", "sec-lab-reduction-softmax"),
    ("gemm", "sec-lab-gemm"),
    ("attention", "sec-lab-attention"),
    ("attention_decode", "sec-lab-attention-decode"),
    ("collectives", "sec-lab-collectives"),
    ("data_parallel", "sec-lab-data-parallel"),
    ("checkpointing", "sec-lab-checkpointing"),
    ("decode", "sec-lab-decode"),
    ("serving", "sec-lab-serving"),
    ("quantization", "sec-lab-quantization"),
    ("speculative", "sec-lab-speculative"),
    ("load", "sec-lab-load"),
)

#: Labs whose runner is not ``helpers.labs.<name>`` but a module of a lab's package, as
#: ``{lab name: module under helpers.labs}`` (the decode section of the attention lab).
RUNNERS = {"attention_decode": "attention.decode"}


@dataclass(frozen=True)
class LabRow:
    """One model-vs-H200 comparison: the lab, its page, and the row of its table."""

    lab: str
    page: str
    row: Row

    @property
    def error(self) -> float:
        """``(model - H200) / H200``."""
        return relative_error(self.row.model, self.row.h200)

    @property
    def page_ref(self) -> str:
        """A MyST cross-reference to the lab's page, named by the lab."""
        return f"{{ref}}`{self.lab.replace('_', ' ')} <{self.page}>`"

    @property
    def claim(self):
        """The :class:`~.report.Claim` the row names, or None (an undeclared row)."""
        return self.row.claim

    @property
    def fraction_of_bound(self) -> float:
        """For a bound's row: how much of the bound the H200 reached (above 1 passes it)."""
        if self.claim is None:
            raise ValueError(f"{self.lab}: row {self.row.quantity!r} names no claim")
        return self.claim.fraction_of_bound(self.row.model, self.row.h200)

    @property
    def holds(self) -> bool:
        """Whether the H200 value agrees with the row's claim."""
        if self.claim is None:
            raise ValueError(f"{self.lab}: row {self.row.quantity!r} names no claim")
        return self.claim.holds(self.row.model, self.row.h200)


def lab_module(name: str):
    """The runner module ``helpers.labs.<name>`` of a listed lab."""
    if name not in dict(LABS):
        raise ValueError(f"unknown lab {name!r}; the labs are {[n for n, _ in LABS]}")
    return importlib.import_module(f"helpers.labs.{RUNNERS.get(name, name)}")


def analysis_module(name: str):
    """``helpers.labs.analysis.<name>``: a listed lab's page-side code, with its
    ``comparison_rows``."""
    lab_module(name)  # a listed lab
    return importlib.import_module(f"helpers.labs.analysis.{name}")


def lab_record(name: str) -> core.Lab:
    """The :class:`~.core.Lab` record a listed lab's runner declares."""
    record = getattr(lab_module(name), "LAB", None)
    if not isinstance(record, core.Lab):
        raise ValueError(f"helpers.labs.{name} declares no Lab record (LAB = core.Lab(...))")
    return record


def lab_rows(name: str, reference: dict) -> list[LabRow]:
    """The rows of a listed lab's table on ``reference`` that carry both a model and an H200
    value (its analysis module's ``comparison_rows``), as the status page reads them."""
    lab_module(name)  # a ValueError for a lab that is not listed
    page = dict(LABS)[name]
    return [LabRow(name, page, row) for row in analysis_module(name).comparison_rows(reference)
            if row.model is not None and row.h200 is not None]


def reference_rows() -> tuple[list[LabRow], list[str]]:
    """Rows with both a model and an H200 value from every lab with a shipped reference, and
    the names of the labs that have none yet."""
    rows, missing = [], []
    for name, _ in LABS:
        ref = core.reference_or_none(name)
        if ref is None:
            missing.append(name)
            continue
        rows += lab_rows(name, ref)
    return rows, missing


def predictions(rows: list[LabRow]) -> list[LabRow]:
    """The rows whose claim is a prediction."""
    return [r for r in rows if r.claim is not None and r.claim.kind == "prediction"]


def bounds(rows: list[LabRow]) -> list[LabRow]:
    """The rows whose claim is a bound."""
    return [r for r in rows if r.claim is not None and r.claim.kind == "bound"]


def unclaimed(rows: list[LabRow]) -> list[LabRow]:
    """The rows that name no claim (a lab not yet moved onto declared claims)."""
    return [r for r in rows if r.claim is None]


def median_abs_error(rows: list[LabRow]) -> float:
    """The median ``|model - H200| / H200`` over prediction rows (a ValueError if none)."""
    errors = sorted(abs(r.error) for r in predictions(rows))
    if not errors:
        raise ValueError("no prediction rows to summarize")
    mid = len(errors) // 2
    return errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2


def violations(rows: list[LabRow]) -> list[str]:
    """One line per row that breaks its claim without an explained ``miss``, names a claim its
    lab does not declare, or carries a ``miss`` although every row of that claim holds."""
    out, missed = [], {}
    for r in rows:
        if r.claim is None:
            continue
        declared = {c.key: c for c in lab_record(r.lab).claims}
        if declared.get(r.claim.key) != r.claim and repr(declared.get(r.claim.key)) != repr(r.claim):
            out.append(f"{r.lab}: row {r.row.quantity!r} names claim {r.claim.key!r}, which "
                       f"LAB.claims does not declare")
            continue
        if r.claim.miss is not None:
            missed.setdefault((r.lab, r.claim.key), []).append(r.holds)
        elif not r.holds:
            out.append(f"{r.lab}: {r.row.quantity!r}: {r.claim.verdict(r.row.model, r.row.h200)}"
                       f" ({r.claim.kind} {r.claim.key!r}, model {r.claim.model})")
    for (lab, key), held in missed.items():
        if all(held):
            out.append(f"{lab}: claim {key!r} explains a miss, but every row of it holds now: "
                       f"drop its miss")
    return out


def explained_misses(rows: list[LabRow]) -> list[LabRow]:
    """Prediction rows outside their tolerance whose claim explains the miss."""
    return [r for r in predictions(rows) if not r.holds and r.claim.miss]


def provenance() -> list[dict]:
    """Where and when each shipped reference was measured: one dict per lab with a reference."""
    out = []
    for name, page in LABS:
        ref = core.reference_or_none(name)
        if ref is None:
            continue
        p = ref["provenance"]
        out.append({"lab": name, "page": page, "device": p.get("device_name", p.get("device")),
                    "commit": p.get("commit"), "date": p.get("date_utc", "")[:10],
                    "driver": p.get("driver"), "cuda": p.get("cuda_runtime"),
                    "torch": p.get("torch"), "triton": p.get("triton")})
    return out
