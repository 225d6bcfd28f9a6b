"""The side-by-side table every lab shows: the model, the H200 reference, the reader's machine.

>>> t = Table("copy", [Row("copy bandwidth", "TB/s", 1e12, model=4.8e12, h200=4.3e12)])
>>> print(t)
quantity        unit  model  H200  model error vs H200
copy bandwidth  TB/s    4.8   4.3                 +12%
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

__all__ = ["Row", "Table", "relative_error"]


def relative_error(model: float, measured: float) -> float:
    """``(model - measured) / measured``: positive when the model overestimates."""
    if not (measured and math.isfinite(measured) and math.isfinite(model)):
        raise ValueError(f"need finite values and measured != 0, got {model!r}, {measured!r}")
    return (model - measured) / measured


@dataclass(frozen=True)
class Row:
    """One quantity: the model's value, the H200's and the reader's (base units; None if absent)."""

    quantity: str
    unit: str  # display unit
    scale: float  # base units per display unit (1e12 for TB/s given bytes/s)
    model: float | None = None
    h200: float | None = None
    yours: float | None = None
    digits: int = 3

    def fmt(self, value: float | None) -> str:
        if value is None:
            return "-"
        return f"{value / self.scale:.{self.digits}g}"

    def error(self) -> str:
        if self.model is None or self.h200 is None:
            return "-"
        return f"{relative_error(self.model, self.h200):+.0%}"


class Table:
    """Rows with columns: quantity, unit, model, H200, model error vs H200[, yours]."""

    def __init__(self, title: str, rows: list[Row], yours_label: str | None = None):
        if not rows:
            raise ValueError("a table needs at least one row")
        self.title, self.rows, self.yours_label = title, list(rows), yours_label

    def _cells(self) -> list[list[str]]:
        head = ["quantity", "unit", "model", "H200", "model error vs H200"]
        if self.yours_label:
            head.append(self.yours_label)
        body = []
        for r in self.rows:
            line = [r.quantity, r.unit, r.fmt(r.model), r.fmt(r.h200), r.error()]
            if self.yours_label:
                line.append(r.fmt(r.yours))
            body.append(line)
        return [head] + body

    def __str__(self) -> str:
        cells = self._cells()
        widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
        lines = []
        for row in cells:
            parts = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
            parts += [c.rjust(w) for c, w in zip(row[2:], widths[2:])]
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
