"""The collective cost explorer: its title states the model's numbers."""

from helpers import units
from helpers.models import collectives as coll
from helpers.widgets import collectives as wid


def test_title_reports_the_model_at_the_chosen_size():
    fig = wid.draw_collective(8, 2**20, 10.0, 450.0)
    title = fig._suptitle.get_text()
    t = coll.ring_allreduce_time_s(2**20, 8, 10e-6, 1 / 450e9)
    assert title.startswith("8 ranks") and f"ring {units.fmt_time(float(t))}" in title
    assert "busbw" in title and "tree" in title


def test_explorer_builds_with_its_controls():
    box = wid.collective_explorer()
    assert box.children  # title, controls, output
