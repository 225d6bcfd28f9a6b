"""Figures: the SVG writer (animations, structure diagrams) and the matplotlib style."""

from .svg import Canvas, Figure, PALETTE
from .style import book_style, new_figure, COLORS

__all__ = ["Canvas", "Figure", "PALETTE", "book_style", "new_figure", "COLORS"]
