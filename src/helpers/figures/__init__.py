"""Figures: the SVG writer (animations, structure diagrams) and the matplotlib style.

Used by many pages, among them: appendix/control-ownership.md, chapters/collectives.md,
chapters/cuda-execution.md, chapters/custom-operators.md, chapters/distributed-analysis.md,
chapters/fault-tolerance.md.
"""

from .svg import Canvas, Figure, PALETTE
from .style import book_style, new_figure, COLORS

__all__ = ["Canvas", "Figure", "PALETTE", "book_style", "new_figure", "COLORS"]
