"""Figures of {ref}`sec-production-inference` and of the lab {ref}`sec-lab-load`.

* :func:`opening_animation`: arrivals into a queue in front of ``c`` servers while the load
  rises past capacity; above, the queue is unbounded and grows; below, a cap turns the excess
  away and the queue stays short;
* :func:`structure_diagram`: gateway, admission, queue, servers, telemetry;
* :func:`goodput_figure`: goodput against offered load from the models (Erlang C for an
  unbounded queue, M/M/c/K with a cap), optionally with measured points (the lab's runs).

Used by: chapters/production-inference.md, labs/load.md.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from helpers.models import slo as slom

from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "goodput_curves", "goodput_figure",
           "attainment_gap_figure"]


def opening_animation(*, servers: int = 3, cap: int = 4, arrivals: int = 18) -> Figure:
    """Two lanes, same arrivals faster than ``servers`` can serve: the unbounded queue grows to
    the edge; the capped one holds ``cap`` and turns the rest away."""
    if not (1 <= servers <= 6 and 1 <= cap <= 8 and arrivals > servers + cap):
        raise ValueError(f"need 1 <= servers <= 6, 1 <= cap <= 8, arrivals > servers + cap; got "
                         f"{servers}, {cap}, {arrivals}")
    dur = 10.0
    c = Canvas(820, 330, "Past capacity, an unbounded queue grows; a bounded one turns the excess "
               "away", uid="pi-open", description=(
                   f"Animated. Two identical streams of requests arrive faster than {servers} "
                   "servers can serve them. Top: every request joins the queue, which grows "
                   "longer and longer, so every later request waits longer. Bottom: admission "
                   f"control holds at most {cap} requests in the queue and turns the others away "
                   "at once, so the admitted requests wait briefly."))
    c.mark_animated()
    q, comp, acc = PALETTE["queue"], PALETTE["compute"], PALETTE["accent"]
    slot, x_srv = 32.0, 640.0
    for lane, (y, label, bounded) in enumerate(((70, "no admission control", False),
                                                (230, f"admission control: at most {cap} waiting",
                                                 True))):
        c.text(20, y - 44, label, size=14, weight="700", anchor="start")
        c.line(20, y, 90, y, stroke=MUTED, arrow=True)
        c.text(55, y + 16, "arrivals", size=11, fill=MUTED)
        # the queue: a lane of slots from right (head) to left (tail)
        c.rect(100, y - 16, x_srv - 120, 32, fill="none", stroke=MUTED, stroke_width=1, rx=4,
               dash="4 4")
        if bounded:
            c.line(x_srv - 20 - cap * slot, y - 24, x_srv - 20 - cap * slot, y + 24, stroke=acc,
                   width=2.5)
            c.text(x_srv - 20 - cap * slot, y + 34, "cap", size=11, fill=acc)
        for s in range(servers):
            sy = y - (servers - 1) * 17 + s * 34
            c.box(x_srv, sy - 14, 120, 28, f"server {s + 1}", color=comp, size=11.5)
        # requests: the k-th waiting one appears at its arrival time and stays; in the bounded
        # lane, arrivals beyond the cap fly off to "turned away"
        n_wait = arrivals - servers
        for k in range(n_wait):
            t = 0.05 + 0.85 * k / n_wait
            x = x_srv - 20 - slot * (k + 0.5)
            if bounded and k >= cap:
                path = f"M100,{y} C200,{y + 40} 260,{y + 55} 330,{y + 58}"
                c.raw(f'<circle r="6" fill="{acc}" opacity="0">'
                      f'<animateMotion path="{path}" dur="{dur}s" keyPoints="0;0;1;1" '
                      f'keyTimes="0;{t:.3f};{min(t + 0.06, 0.99):.3f};1" calcMode="linear" '
                      f'repeatCount="indefinite"/>'
                      + Canvas.animate("opacity", [0, 0, 1, 0, 0],
                                       key_times=[0, t, t + 0.01, min(t + 0.07, 0.995), 1],
                                       dur_s=dur) + "</circle>")
                continue
            if x < 110:
                continue
            show = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, t, t + 0.01, 1],
                                  dur_s=dur)
            c.circle(x, y, 9, fill=q, opacity=0, children=show)
        if bounded:
            c.text(340, y + 58, "turned away at once (fast no)", size=11.5, fill=acc,
                   anchor="start")
        else:
            c.text(110, y + 30, "the wait of each new arrival keeps growing", size=11.5,
                   fill=q, anchor="start")
    c.text(410, 318, "Arrival rate above the servers' total rate; the figure pauses on click.",
           size=11, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """The path of a request through a production serving system, and where telemetry taps it."""
    c = Canvas(820, 250, "Gateway, admission, queue, servers, and the telemetry that closes the "
               "loop", uid="pi-struct", description=(
                   "Diagram. Requests enter a gateway (authentication, quotas, routing), pass "
                   "admission control (admit, or reject at once when the predicted wait would "
                   "break the objective), wait in a queue, and are served by c model servers. "
                   "Every stage emits telemetry (arrival, admit or reject, queue wait, time to "
                   "first token, completion) tagged with the request's id; the telemetry feeds "
                   "SLO attainment and goodput, which set capacity (servers with reserve) and "
                   "gate rollouts."))
    gw, adm, q, srv, tel = (PALETTE["network"], PALETTE["accent"], PALETTE["queue"],
                            PALETTE["compute"], PALETTE["host"])
    stages = [("gateway", "auth, quota, route", gw), ("admission", "admit or fast no", adm),
              ("queue", "FIFO, bounded", q), ("c servers", "prefill + decode", srv)]
    w, gap, x, y = 170, 30, 10, 40
    centers = []
    for i, (label, sub, color) in enumerate(stages):
        c.box(x, y, w, 62, label, sublabel=sub, color=color, size=14)
        centers.append(x + w / 2)
        if i < len(stages) - 1:
            c.line(x + w, y + 31, x + w + gap - 1, y + 31, stroke=MUTED, arrow=True)
        x += w + gap
    c.text(10 + w / 2 + w + gap, y + 80, "rejected: a quick error, not a slow timeout", size=11,
           fill=adm)
    c.box(10, 160, 800, 60, "telemetry", sublabel="per request id: arrival, admit/reject, wait, "
          "TTFT, TPOT, end; SLO attainment, goodput", color=tel, size=14)
    for cx in centers:
        c.line(cx, y + 62, cx, 158, stroke=tel, dash="3 3", arrow=True)
    c.text(410, 240, "goodput and attainment set the servers (with reserve) and gate rollouts",
           size=12, fill=MUTED)
    return c.figure()


def goodput_curves(loads, service_s: float, servers: int, slo_wait_s: float, capacity: int,
                   n_requests: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Model goodput (requests/s) at each offered load (requests/s): unbounded and capped."""
    mu = 1.0 / service_s
    free = np.array([slom.wait_slo_goodput_per_s(slo_wait_s, lam, mu, servers,
                                                 n_requests=n_requests) for lam in loads])
    capped = np.array([slom.wait_slo_goodput_per_s(slo_wait_s, lam, mu, servers,
                                                   capacity=capacity) for lam in loads])
    return free, capped


def goodput_figure(service_s: float, servers: int, slo_wait_s: float, capacity: int, *,
                   title: str, rows=None, n_requests: int | None = None, max_factor: float = 3.0):
    """Goodput as a share of capacity against offered load as a share of capacity.

    ``rows``, optional: the lab's :func:`helpers.labs.analysis.load.run_rows`, drawn as points
    (circles: unbounded queue; squares: admission control)."""
    cap_rate = servers / service_s
    x = np.linspace(0.02, max_factor, 240)
    free, capped = goodput_curves(x * cap_rate, service_s, servers, slo_wait_s, capacity)
    fig, ax = new_figure(width_in=6.8, height_in=3.7)
    ax.plot(x, x, color=PALETTE["neutral"], lw=1, ls=":", label="offered (every request met)")
    ax.axhline(1.0, color=PALETTE["neutral"], lw=1, ls="--", label="capacity c·μ")
    ax.plot(x, free / cap_rate, color=PALETTE["queue"], lw=2,
            label="model, unbounded queue (Erlang C; 0 past capacity)")
    if n_requests:
        over = x > 1.0
        fluid = [min(1.0, slom.wait_slo_goodput_per_s(slo_wait_s, f * cap_rate, 1 / service_s,
                                                      servers, n_requests=n_requests) / cap_rate)
                 for f in x[over]]
        ax.plot(x[over], fluid, color=PALETTE["queue"], lw=1.2, ls="--",
                label=f"model, unbounded, a run of {n_requests} requests (fluid)")
    ax.plot(x, capped / cap_rate, color=PALETTE["memory"], lw=2,
            label=f"model, admission control (M/M/c/K, K = {capacity})")
    if rows:
        for policy, marker, color in (("none", "o", PALETTE["queue"]),
                                      ("cap", "s", PALETTE["memory"])):
            pts = [r for r in rows if r["policy"] == policy]
            ax.plot([r["offered_rate_norm"] for r in pts], [r["goodput_norm"] for r in pts],
                    marker, color=color, mec="black", mew=0.6, ms=7,
                    label=f"measured, {'unbounded' if policy == 'none' else 'admission control'}")
    ax.set_xlim(0, max_factor)
    ax.set_ylim(0, 1.15)
    ax.set_xlabel("offered load λ / (c·μ)")
    ax.set_ylabel("goodput / (c·μ)")
    ax.set_title(title)
    ax.legend(fontsize=7.5, loc="upper right")
    plt.close(fig)
    return fig


def attainment_gap_figure(rows, *, title: str):
    """Admitted SLO attainment against offered load, one panel per policy: measured, the
    formulas (Erlang C / M/M/c/K), the simulator replaying the run's arrivals with the
    calibration's service times, and the same replay with the run's own service times.

    ``rows``: :func:`helpers.labs.analysis.load.gap_rows`. A replay that lands on the measurement while
    the calibrated one does not puts the gap in the service times, not in the queue."""
    from .style import finish_panels, panel_figure

    policies = {"none": "unbounded queue", "cap": "admission control"}
    fig, axes = panel_figure(policies, height_in=3.4, sharey=True)
    series = (("measured", "measured", "o", PALETTE["queue"], "-"),
              ("formula", "formula (calibrated μ)", "", PALETTE["neutral"], "--"),
              ("sim_calibrated", "replay, calibrated service", "^", PALETTE["memory"], ":"),
              ("sim_own_service", "replay, the run's own service", "x", PALETTE["accent"], "-"))
    for ax, (policy, label) in zip(axes, policies.items()):
        pts = sorted((r for r in rows if r["policy"] == policy), key=lambda r: r["factor"])
        x = [r["factor"] for r in pts]
        for key, name, marker, color, ls in series:
            ax.plot(x, [r[key] for r in pts], marker=marker or None, ls=ls, color=color,
                    lw=2 if key == "measured" else 1.3, ms=6, label=name)
        ax.set_xscale("log", base=2)
        ax.set_xticks(x, [f"{v:g}" for v in x], fontsize=7, rotation=60)
        ax.minorticks_off()
        ax.set_xlabel("offered load λ / (c·μ), calibrated")
        ax.set_ylim(-0.03, 1.05)
        ax.set_title(label, fontsize=10)
    fig = finish_panels(fig, axes, ylabel="admitted SLO attainment", title=title,
                        legend_fontsize=7.5)
    axes[0].legend(fontsize=7.5, loc="lower left")  # the empty corner: high attainment at low load
    return fig
