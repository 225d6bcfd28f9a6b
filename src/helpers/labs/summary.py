"""Every lab's model against its H200 measurement, in one table (the appendix's status page).

Each lab runner has ``comparison_rows(ref, mine=None) -> list[Row]``: the rows its own page
shows. This module lists the labs, reads each shipped H200 reference, and keeps the rows that
have both a model value and an H200 value, so the book can say in one place how well its
models predict real hardware.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from . import core
from .report import Row, relative_error

__all__ = ["LABS", "LabRow", "lab_module", "reference_rows", "provenance"]

#: Every lab, as ``(module name under helpers.labs, page label)``, in the order of the contents.
LABS = (
    ("timing", "sec-lab-timing"),
    ("roofline", "sec-lab-roofline"),
    ("memory_access", "sec-lab-memory-access"),
    ("launch_overhead", "sec-lab-launch-overhead"),
    ("reduction_softmax", "sec-lab-reduction-softmax"),
    ("gemm", "sec-lab-gemm"),
    ("attention", "sec-lab-attention"),
    ("collectives", "sec-lab-collectives"),
    ("data_parallel", "sec-lab-data-parallel"),
    ("checkpointing", "sec-lab-checkpointing"),
    ("decode", "sec-lab-decode"),
    ("serving", "sec-lab-serving"),
    ("quantization", "sec-lab-quantization"),
    ("speculative", "sec-lab-speculative"),
    ("load", "sec-lab-load"),
)


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


def lab_module(name: str):
    """The runner module ``helpers.labs.<name>`` of a listed lab."""
    if name not in dict(LABS):
        raise ValueError(f"unknown lab {name!r}; the labs are {[n for n, _ in LABS]}")
    return importlib.import_module(f"helpers.labs.{name}")


def reference_rows() -> tuple[list[LabRow], list[str]]:
    """Rows with both a model and an H200 value from every lab with a shipped reference, and
    the names of the labs that have none yet."""
    rows, missing = [], []
    for name, page in LABS:
        ref = core.reference_or_none(name)
        if ref is None:
            missing.append(name)
            continue
        for row in lab_module(name).comparison_rows(ref):
            if row.model is not None and row.h200 is not None:
                rows.append(LabRow(name, page, row))
    return rows, missing


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
