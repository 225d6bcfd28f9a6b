"""Figures of the lab "Checkpointing under injected failures" ({ref}`sec-lab-checkpointing`).

* :func:`kill_timeline`: every life of the killed training process, from the step it resumed
  at to the last step it reported, with its kill (during a step or during a write) and its
  checkpoints;
* :func:`interval_figure`: measured goodput at several checkpoint intervals beside Daly's
  curve and the spread of simulated runs (:func:`helpers.figures.fault_tolerance.goodput_figure`).

The lab's opening animation and structure diagram are those of {ref}`sec-fault-tolerance`.

Used by: labs/checkpointing.md.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from .fault_tolerance import goodput_figure
from .style import new_figure
from .svg import PALETTE

__all__ = ["kill_timeline", "interval_figure"]


def kill_timeline(result: dict, *, title: str):
    """One bar per process life: resumed step to last step; the kill marked at its end."""
    lives = result["measurements"]["kills"]["lives"]
    if not lives:
        raise ValueError("the result has no process lives")
    fig, ax = new_figure(width_in=7.0, height_in=0.35 * len(lives) + 1.4)
    for i, life in enumerate(lives):
        a, b = life["resumed_step"], life["last_step"] or life["resumed_step"]
        ax.barh(i, b - a, left=a, height=0.6, color=PALETTE["compute"], alpha=0.75)
        for s in life["saved"]:
            ax.plot([s, s], [i - 0.3, i + 0.3], color=PALETTE["host"], lw=2)
        if life["killed"]:
            write = life["kind"] == "write"
            ax.plot(b, i, marker="X", ms=10, color=PALETTE["accent"] if write else "#1f2328",
                    ls="none")
    ax.plot([], [], marker="X", ls="none", color="#1f2328", label="SIGKILL during a step")
    ax.plot([], [], marker="X", ls="none", color=PALETTE["accent"],
            label="SIGKILL during a checkpoint write")
    ax.plot([], [], color=PALETTE["host"], lw=2, label="checkpoint committed")
    ax.set_yticks(range(len(lives)), [f"start {i + 1}" for i in range(len(lives))])
    ax.invert_yaxis()
    ax.set_xlabel("training step")
    ax.set_title(title)
    ax.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=3)
    plt.close(fig)
    return fig


def interval_figure(result: dict, *, title: str):
    """Measured goodput per interval against Daly's curve for this run's costs and MTBF."""
    iv = result["measurements"]["interval"]
    return goodput_figure(iv["checkpoint_s"], iv["restart_s"], iv["mtbf_s"], title=title,
                          unit_s=1e-3, unit="ms", measured=iv["points"])
