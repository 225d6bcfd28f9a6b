"""Shared by every widget test: a headless backend, and no figure left open by a widget
(a widget that leaks one figure per redraw grows the page's memory without bound)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _no_leaked_figures():
    yield
    assert plt.get_fignums() == []
