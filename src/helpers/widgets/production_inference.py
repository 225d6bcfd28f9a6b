"""The explorer of {ref}`sec-production-inference`.

* :func:`slo_explorer`: move the arrival rate, the number of servers, the mean service time,
  the SLO on the wait and the queue cap; see the SLO attainment and goodput with and without
  the cap (Erlang C, M/M/c/K) and the servers needed with a reserve
  (:func:`helpers.models.queueing.mmc_servers_needed`).

Used by: chapters/production-inference.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..figures.production_inference import goodput_figure
from ..models import queueing as qm
from ..models import slo as slom
from . import explorer, int_slider, log_slider

__all__ = ["draw_slo", "slo_explorer", "TARGET", "RESERVE"]

#: The attainment target and the reserve the explorer provisions for.
TARGET, RESERVE = 0.99, 0.25


def draw_slo(arrival_rate_per_s: float, servers: int, service_ms: float, slo_ms: float,
             queue_cap: int):
    """Goodput against load for these servers, with this arrival rate marked; the title states
    the attainment and goodput without and with the cap, and the servers needed."""
    from ..models._checks import positive, positive_int

    servers, queue_cap = positive_int("servers", servers), positive_int("queue_cap", queue_cap)
    s, d = positive("service_ms", service_ms) / 1e3, positive("slo_ms", slo_ms) / 1e3
    mu = 1.0 / s
    cap = servers + queue_cap
    fig = goodput_figure(s, servers, d, cap, title="",
                         max_factor=max(3.0, 1.2 * arrival_rate_per_s * s / servers))
    ax = fig.axes[0]
    x = arrival_rate_per_s * s / servers
    ax.axvline(x, color="black", lw=1, ls="-.")
    b_free, a_free = slom.wait_slo_attainment(d, arrival_rate_per_s, mu, servers)
    b_cap, a_cap = slom.wait_slo_attainment(d, arrival_rate_per_s, mu, servers, capacity=cap)
    g_free = slom.goodput_per_s(arrival_rate_per_s, b_free, a_free)
    g_cap = slom.goodput_per_s(arrival_rate_per_s, b_cap, a_cap)
    need = qm.mmc_servers_needed(arrival_rate_per_s, mu, d, TARGET, reserve=RESERVE)
    ax.set_title(
        f"ρ = {x:.2f}: unbounded {a_free:.0%} meet SLO, goodput {g_free:.3g}/s; "
        f"cap {queue_cap}: {b_cap:.0%} rejected, {a_cap:.0%} meet, goodput {g_cap:.3g}/s\n"
        f"servers for {TARGET:.0%} within the SLO with {RESERVE:.0%} reserve: {need}",
        fontsize=9.5)
    return fig


def slo_explorer(arrival_rate_per_s: float = 60.0, servers: int = 8, service_ms: float = 100.0,
                 slo_ms: float = 50.0, queue_cap: int = 8) -> widgets.VBox:
    """Arrival rate, servers, service time, SLO on the wait, queue cap -> attainment, goodput,
    servers needed with reserve."""
    controls = {
        "arrival_rate_per_s": log_slider("arrivals λ (/s)", arrival_rate_per_s, 1.0, 1000.0),
        "servers": int_slider("servers c", servers, 1, 64),
        "service_ms": log_slider("service 1/μ (ms)", service_ms, 5.0, 2000.0),
        "slo_ms": log_slider("SLO on wait (ms)", slo_ms, 1.0, 5000.0),
        "queue_cap": int_slider("queue cap K − c", queue_cap, 1, 256),
    }
    return explorer(draw_slo, controls, title="Servers, load and admission explorer")
