"""Figures of lesson 17, inference execution and metrics ({ref}`sec-inference-metrics`).

* :func:`opening_animation`: one request from arrival to its last streamed token: queue,
  prefill, decode steps, tokens reaching the client, with TTFT and an ITL marked;
* :func:`structure_diagram`: the path of a request through a server, and what fills GPU memory;
* :func:`memory_budget_figure`: the GPU's memory as a stacked bar (weights, reserve, the KV cache
  of each request that fits, what is left);
* :func:`token_timeline_figure`: a measured stream: tokens against time, TTFT and the gaps.

Used by: chapters/inference-metrics.md.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..models import inference as inf
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "memory_budget_figure",
           "token_timeline_figure"]


def opening_animation(n_tokens: int = 6, dur_s: float = 8.0) -> Figure:
    """One request: waits in the queue, is prefilled, then decoded one token per step; each
    token reaches the client when its step ends. TTFT and one inter-token gap are marked."""
    if not (isinstance(n_tokens, int) and 2 <= n_tokens <= 10):
        raise ValueError(f"n_tokens must be an integer from 2 to 10, got {n_tokens!r}")
    if not dur_s > 0:
        raise ValueError(f"dur_s must be > 0, got {dur_s!r}")
    c = Canvas(840, 300, "One request from arrival to its last streamed token", uid="im-open",
               description=(
                   f"Animation on a time axis. A request arrives and waits in the queue, then "
                   f"its whole prompt is processed in one prefill pass, which yields the first "
                   f"token: the time from arrival to that token is the TTFT. Then {n_tokens - 1} "
                   f"decode steps follow, each producing one more token; each token appears at "
                   f"the client when its step ends, and the gap between two tokens is an "
                   f"inter-token latency (ITL). The last token ends the request's end-to-end "
                   f"latency. Click to pause."))
    q, pre, dec, acc = PALETTE["queue"], PALETTE["compute"], PALETTE["memory"], PALETTE["accent"]
    x0, queue_w, pre_w, step_w = 60, 120, 170, 70
    y_gpu, y_client = 90, 200
    c.text(20, y_gpu + 20, "GPU", anchor="start", size=13, weight="700")
    c.text(20, y_client + 5, "client", anchor="start", size=13, weight="700")
    c.line(x0, 262, 820, 262, stroke=MUTED, arrow=True)
    c.text(820, 280, "time", anchor="end", size=12, fill=MUTED)
    total = queue_w + pre_w + (n_tokens - 1) * step_w

    def t_at(x):  # the animation time at which the sweep reaches x
        return (x - x0) / total * dur_s * 0.8

    # the segments appear in turn
    segs = [(x0, queue_w, "queue", q)] + [(x0 + queue_w, pre_w, "prefill (whole prompt)", pre)]
    segs += [(x0 + queue_w + pre_w + k * step_w, step_w, f"step {k + 1}", dec)
             for k in range(n_tokens - 1)]
    for i, (x, w, label, col) in enumerate(segs):
        show = c.animate("opacity", [0, 0, 1, 1], key_times=[0, t_at(x) / dur_s,
                                                             min(1, t_at(x + 4) / dur_s), 1],
                         dur_s=dur_s)
        c.raw(f'<g opacity="0">{show}')
        c.box(x + 2, y_gpu, w - 4, 40, label, color=col, size=11 if i > 1 else 12)
        c.raw("</g>")
    # tokens reaching the client
    ends = [x0 + queue_w + pre_w + k * step_w for k in range(n_tokens)]
    for k, x in enumerate(ends):
        t = t_at(x) / dur_s
        show = c.animate("opacity", [0, 0, 1, 1], key_times=[0, t, min(1, t + 0.02), 1],
                         dur_s=dur_s)
        c.circle(x, y_client, 9, fill=acc, opacity=0, children=show)
        c.text(x, y_client + 24, f"t{k + 1}", size=11, fill=MUTED)
    c.mark_animated()
    # brackets: TTFT and one ITL
    c.line(x0, 160, ends[0], 160, stroke=acc, both=True)
    c.text((x0 + ends[0]) / 2, 150, "TTFT = t1 - arrival", size=12, fill=acc, weight="600")
    c.line(ends[1], 240, ends[2], 240, stroke=dec, both=True)
    c.text((ends[1] + ends[2]) / 2, 230, "ITL", size=12, fill=dec, weight="600")
    c.text(x0, 60, "arrival", size=12, fill=MUTED)
    c.line(x0, 68, x0, 255, stroke=MUTED, dash="3 3")
    c.text(ends[-1], 60, "last token: E2E", size=12, fill=MUTED)
    c.line(ends[-1], 68, ends[-1], 186, stroke=MUTED, dash="3 3")
    return c.figure()


def structure_diagram() -> Figure:
    """A request's path through a server, and the two things that fill a GPU's memory."""
    c = Canvas(840, 330, "The path of a request, and what fills GPU memory", uid="im-struct",
               description=(
                   "Diagram. Left to right: the client sends a prompt to the API server, which "
                   "puts it in a queue; the scheduler picks requests to run; prefill processes "
                   "the whole prompt at once (compute-bound) and writes its KV cache; decode "
                   "produces one token per step for every running sequence (memory-bound), and "
                   "the tokens stream back to the client. Below, the GPU's memory: the weights "
                   "(fixed), a reserve for activations and workspaces, and the KV cache, which "
                   "grows with every token of every running request and limits how many run."))
    steps = (("client", "prompt in, tokens out", PALETTE["neutral"]),
             ("API server", "tokenize, queue", PALETTE["host"]),
             ("scheduler", "pick the batch", PALETTE["queue"]),
             ("prefill", "whole prompt, compute", PALETTE["compute"]),
             ("decode", "1 token/step, memory", PALETTE["memory"]))
    for i, (head, sub, col) in enumerate(steps):
        x = 20 + i * 164
        c.box(x, 40, 140, 60, head, sublabel=sub, color=col, size=13)
        if i < len(steps) - 1:
            c.line(x + 142, 70, x + 162, 70, stroke=MUTED, arrow=True)
    c.path("M740,100 C740,150 90,150 90,102", stroke=PALETTE["accent"], arrow=True, dash="5 4")
    c.text(420, 160, "streamed tokens: TTFT, then one ITL per token", size=12,
           fill=PALETTE["accent"])
    c.text(20, 200, "GPU memory", anchor="start", size=13, weight="700")
    c.box(20, 215, 330, 50, "weights", sublabel="fixed: N x bytes per parameter",
          color=PALETTE["compute"], size=12)
    c.box(350, 215, 90, 50, "reserve", sublabel="activations", color=PALETTE["neutral"], size=11)
    c.box(440, 215, 380, 50, "KV cache", sublabel="per token of every running request",
          color=PALETTE["memory"], size=12)
    c.text(420, 290, "the KV cache left over sets how many requests run at once, and so the "
           "throughput", size=12, fill=MUTED)
    return c.figure()


def memory_budget_figure(hbm_bytes: float, weight_bytes: float, reserve_bytes: float,
                         kv_bytes_per_token: float, tokens_per_request: int, *,
                         batch: int | None = None, title: str = "", max_drawn: int = 48):
    """The GPU's memory as one stacked bar: weights, reserve, the KV cache of the requests
    (``batch`` of them, or as many as fit, :func:`helpers.models.inference.max_concurrent_requests`;
    one segment each when few), and what is left over."""
    n_max = inf.max_concurrent_requests(hbm_bytes, weight_bytes, kv_bytes_per_token,
                                        tokens_per_request, reserve_bytes)
    n = n_max if batch is None else min(int(batch), n_max)
    per_req = kv_bytes_per_token * tokens_per_request / 1e9
    fig, ax = new_figure(width_in=7.2, height_in=2.6)
    w, r, m = weight_bytes / 1e9, reserve_bytes / 1e9, hbm_bytes / 1e9
    ax.barh(0, w, color=PALETTE["compute"], label="weights")
    ax.barh(0, r, left=w, color=PALETTE["neutral"], label="reserve")
    left = w + r
    if 0 < n <= max_drawn:  # one segment per request, edges visible
        for i in range(n):
            ax.barh(0, per_req, left=left + i * per_req, color=PALETTE["memory"],
                    edgecolor="white", linewidth=0.6,
                    label=f"KV cache, {n} requests" if i == 0 else None)
    elif n:
        ax.barh(0, n * per_req, left=left, color=PALETTE["memory"],
                label=f"KV cache, {n} requests")
    used = left + n * per_req
    ax.barh(0, m - used, left=used, color="none", edgecolor=PALETTE["neutral"], hatch="//",
            label=f"free: room for {n_max - n} more" if batch is not None else "left over")
    ax.set_yticks([])
    ax.set_xlim(0, m)
    ax.set_xlabel("GPU memory (GB)")
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.32), frameon=False)
    ax.set_title(title or f"{n_max} requests of {tokens_per_request} tokens fit", fontsize=10.5)
    plt.close(fig)
    return fig


def token_timeline_figure(arrival_s: float, token_times_s: Sequence[float], *, title: str = ""):
    """Tokens delivered against time since arrival (a step plot), TTFT and the median ITL."""
    m = inf.request_latencies(arrival_s, token_times_s)
    t = (np.asarray(token_times_s, dtype=float) - arrival_s) * 1e3
    fig, ax = new_figure(width_in=7.0, height_in=3.0)
    ax.step(np.concatenate([[0.0], t]), np.arange(t.size + 1), where="post",
            color=PALETTE["memory"], lw=1.6, label="tokens delivered")
    ax.plot(t, np.arange(1, t.size + 1), "o", ms=3, color=PALETTE["memory"])
    ax.axvline(t[0], color=PALETTE["accent"], ls="--", lw=1.2,
               label=f"TTFT {m['ttft_s'] * 1e3:.3g} ms")
    if m["tpot_s"] is not None:
        ax.plot([t[0], t[-1]], [1, t.size], ":", color=PALETTE["compute"],
                label=f"TPOT {m['tpot_s'] * 1e3:.3g} ms (slope)")
    ax.set_xlabel("time since arrival (ms)")
    ax.set_ylabel("tokens")
    ax.legend(fontsize=8.5, loc="upper left")
    ax.set_title(title, fontsize=10.5)
    plt.close(fig)
    return fig
