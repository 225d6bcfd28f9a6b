"""Figures of {ref}`sec-fault-tolerance` (also the opening and structure of its lab).

* :func:`opening_animation`: a run that checkpoints, fails, rolls back, restarts and recomputes;
* :func:`structure_diagram`: from per-node failure rates to the job's MTBF, the optimal
  interval and the goodput, and the path of one checkpoint that survives a kill;
* :func:`goodput_figure`: goodput against the checkpoint interval, Daly's complete model beside
  the first-order one, with Young's and Daly's optima.

Used by: chapters/fault-tolerance.md, labs/checkpointing.md.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..models import checkpointing as ck
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "goodput_figure", "goodput_curve"]


def opening_animation(*, interval: float = 3.0, checkpoint: float = 0.6, restart: float = 1.2,
                      fail_at: float = 9.1) -> Figure:
    """A timeline (schematic units) of compute segments and checkpoints; a failure strikes at
    ``fail_at``, the work since the last checkpoint is lost, the job restarts and recomputes."""
    if not (interval > 0 and checkpoint > 0 and restart > 0 and fail_at > interval + checkpoint):
        raise ValueError("need interval, checkpoint, restart > 0 and fail_at after the first "
                         f"checkpoint, got {interval!r}, {checkpoint!r}, {restart!r}, {fail_at!r}")
    seg = interval + checkpoint
    n_done = int(fail_at // seg)  # complete segments before the failure
    last_ckpt_end = n_done * seg
    lost = fail_at - last_ckpt_end
    total = fail_at + restart + lost + 2 * seg
    x0, x1 = 40.0, 780.0
    comp, store, acc, q = PALETTE["compute"], PALETTE["host"], PALETTE["accent"], PALETTE["queue"]

    def X(t: float) -> float:
        return x0 + (x1 - x0) * t / total

    dur = 9.0

    def kt(t: float) -> float:
        return round(0.85 * t / total, 4)

    c = Canvas(820, 250, "A failure costs the work since the last checkpoint, plus a restart",
               uid="ft-open", description=(
                   "Animated timeline. A job alternates compute segments with short checkpoints. "
                   "A failure strikes partway through a segment; the work since the last "
                   "checkpoint is lost, the job restarts, loads that checkpoint and computes the "
                   "lost part again before making new progress."))
    y, h = 90, 46
    c.rect(x0, y, x1 - x0, h, fill="none", stroke=MUTED, stroke_width=1, rx=4, dash="4 4")

    def grow(a: float, b: float, color: str, label: str | None = None, opacity: float = 0.9):
        w = max(X(b) - X(a), 2.0)
        anim = Canvas.animate("width", [0, 0, w, w], key_times=[0, kt(a), kt(b), 1], dur_s=dur)
        c.rect(X(a), y + 4, 0, h - 8, fill=color, stroke="none", rx=2, opacity=opacity,
               children=anim)
        if label:
            show = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(b), kt(b) + 0.01, 1],
                                  dur_s=dur)
            c.text(X(a) + w / 2, y + h + 16, label, size=11.5, fill=MUTED, children=show)

    t = 0.0
    for i in range(n_done):
        grow(t, t + interval, comp, "compute" if i == 0 else None)
        grow(t + interval, t + seg, store, "checkpoint" if i == 0 else None)
        t += seg
    grow(t, fail_at, comp, None, opacity=0.45)  # the work that will be lost
    # the failure
    show = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(fail_at), kt(fail_at) + 0.01, 1],
                          dur_s=dur)
    c.text(X(fail_at) + 4, y - 12, "✕ failure", size=14, fill=acc, weight="700", anchor="start",
           children=show)
    c.raw(f'<g opacity="0">{Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(fail_at), kt(fail_at) + 0.01, 1], dur_s=dur)}')
    c.path(f"M{X(fail_at):.1f},{y - 4} C{X(fail_at):.1f},{y - 40} {X(last_ckpt_end):.1f},{y - 40} "
           f"{X(last_ckpt_end):.1f},{y - 4}", stroke=acc, width=2, arrow=True)
    c.text((X(fail_at) + X(last_ckpt_end)) / 2, y - 48, "roll back", size=11.5, fill=acc)
    c.raw("</g>")
    t = fail_at
    grow(t, t + restart, q, "restart R")
    t += restart
    grow(t, t + lost, comp, "recompute", opacity=0.45)
    t += lost
    grow(t, t + interval - lost, comp)
    grow(t + interval - lost, t + interval - lost + checkpoint, store)
    c.mark_animated()
    yb = 200
    c.rect(x0, yb, 14, 14, fill=comp, stroke="none", rx=2)
    c.text(x0 + 20, yb + 7, "useful compute", anchor="start", size=12)
    c.rect(x0 + 160, yb, 14, 14, fill=comp, stroke="none", rx=2, opacity=0.45)
    c.text(x0 + 180, yb + 7, "lost, then redone", anchor="start", size=12)
    c.rect(x0 + 330, yb, 14, 14, fill=store, stroke="none", rx=2)
    c.text(x0 + 350, yb + 7, "checkpoint δ", anchor="start", size=12)
    c.rect(x0 + 480, yb, 14, 14, fill=q, stroke="none", rx=2)
    c.text(x0 + 500, yb + 7, "restart R", anchor="start", size=12)
    c.text(410, 236, "click to pause", size=11, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """The chain of the models, and the path of a checkpoint that survives a kill."""
    c = Canvas(820, 300, "From failure rates to a checkpoint interval, and a checkpoint that "
               "survives a kill", uid="ft-struct", description=(
                   "Diagram. Top row, the models: N nodes each with a mean time between failures "
                   "give the job's MTBF M = M_node / N; with the checkpoint cost delta it gives "
                   "Young's and Daly's interval, and with the restart cost R the expected goodput. "
                   "Bottom row, the mechanism: the training state (model, optimizer, random "
                   "generators, data position) is serialized, written to a temporary file, "
                   "fsynced, renamed atomically and listed with its SHA-256 in a manifest; a "
                   "restart verifies the checksum and falls back to the previous checkpoint."))
    node, net, acc, st, q = (PALETTE["compute"], PALETTE["network"], PALETTE["accent"],
                             PALETTE["host"], PALETTE["queue"])
    c.text(410, 18, "The models", size=14, weight="700")
    top = [("N nodes", "each M_node", node), ("job MTBF", "M = M_node / N", net),
           ("interval", "τ = √(2δM) (Young)", acc), ("goodput", "T_s / T_w (Daly)", q)]
    w, gap, x, y = 180, 20, 10, 34
    for i, (label, sub, color) in enumerate(top):
        c.box(x, y, w, 60, label, sublabel=sub, color=color, size=13.5)
        if i < len(top) - 1:
            c.line(x + w, y + 30, x + w + gap - 1, y + 30, stroke=MUTED, arrow=True)
        x += w + gap
    c.text(10 + 2 * (w + gap) + w / 2, 110, "checkpoint cost δ", size=12, fill=st)
    c.text(10 + 3 * (w + gap) + w / 2, 110, "restart cost R", size=12, fill=q)
    c.text(410, 150, "One checkpoint that survives a kill", size=14, weight="700")
    bottom = [("state", "model, optim, RNG, data", st), ("temp file", "same directory", st),
              ("fsync", "bytes on disk", st), ("os.replace", "atomic rename", acc),
              ("manifest", "step, size, SHA-256", acc)]
    w, gap, x, y = 148, 18, 10, 166
    for i, (label, sub, color) in enumerate(bottom):
        c.box(x, y, w, 60, label, sublabel=sub, color=color, size=13)
        if i < len(bottom) - 1:
            c.line(x + w, y + 30, x + w + gap - 1, y + 30, stroke=MUTED, arrow=True)
        x += w + gap
    c.box(10, 244, 810 - 20, 44, "restart: newest entry whose checksum verifies; a damaged one "
          "is skipped, a temp file ignored", color=q, size=12.5, fill_opacity=0.08)
    return c.figure()


def goodput_curve(intervals_s: Sequence[float], checkpoint_s: float, restart_s: float,
                  mtbf_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Daly's and the first-order goodput at each interval."""
    taus = np.asarray(intervals_s, dtype=float)
    daly = np.array([ck.goodput(t, checkpoint_s, restart_s, mtbf_s) for t in taus])
    first = np.array([ck.first_order_goodput(t, checkpoint_s, restart_s, mtbf_s) for t in taus])
    return daly, first


def goodput_figure(checkpoint_s: float, restart_s: float, mtbf_s: float, *, title: str,
                   unit_s: float = 60.0, unit: str = "min", measured=None):
    """Goodput against the interval (in ``unit``), Daly beside first order, optima marked.

    ``measured``, optional: rows with ``interval_s``, ``goodput`` and the simulated band
    ``sim_goodput_p05``/``sim_goodput_p95`` (the lab's runs), drawn as points with bars.
    """
    young = ck.young_interval_s(checkpoint_s, mtbf_s)
    daly_t = ck.daly_interval_s(checkpoint_s, mtbf_s)
    taus = np.geomspace(young / 12, min(young * 12, 3 * mtbf_s), 300)
    daly, first = goodput_curve(taus, checkpoint_s, restart_s, mtbf_s)
    fig, ax = new_figure(width_in=6.8, height_in=3.6)
    ax.plot(taus / unit_s, daly, color=PALETTE["accent"], lw=2, label="Daly (complete model)")
    ax.plot(taus / unit_s, first, color=PALETTE["neutral"], lw=1.3, ls="--",
            label="first order (Young)")
    ax.axvline(young / unit_s, color=PALETTE["memory"], lw=1, ls=":", label="Young's τ")
    ax.axvline(daly_t / unit_s, color=PALETTE["accent"], lw=1, ls=":", label="Daly's τ")
    if measured:
        x = np.array([p.get("run_interval_s", p["interval_s"]) for p in measured]) / unit_s
        g = np.array([p["goodput"] for p in measured])
        lo = np.array([p["sim_goodput_p05"] for p in measured])
        hi = np.array([p["sim_goodput_p95"] for p in measured])
        ax.vlines(x, lo, hi, color=PALETTE["neutral"], lw=5, alpha=0.35,
                  label="model: 90 % of simulated runs")
        ax.plot(x, g, "o", color=PALETTE["compute"], ms=6, label="measured run")
    ax.set_xscale("log")
    low = float(np.nanmin(daly)) - 0.1
    if measured:
        low = min(low, float(min(min(lo), min(g))) - 0.05)
    ax.set_ylim(max(0.0, low), 1.0)
    ax.set_xlabel(f"compute between checkpoints τ ({unit})")
    ax.set_ylabel("goodput")
    ax.set_title(title)
    ax.legend(fontsize=8.5, loc="lower center")
    plt.close(fig)
    return fig
