"""Figures of the front matter: one prompt's path through the systems of a model service.

Used by: intro.md.
"""

from __future__ import annotations

from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["request_path_animation", "STAGES"]

#: The stages a chat request passes through, left to right, with the part of the book that
#: teaches each: (label, sublabel, colour key, part).
STAGES = (
    ("Client", "types a prompt", "host", "Part V"),
    ("API server", "tokenizes", "host", "Part V"),
    ("Scheduler", "queue, batch", "queue", "Parts I, V"),
    ("GPU", "prefill, decode", "compute", "Parts II-III"),
    ("Other GPUs", "collectives", "network", "Part IV"),
)


def request_path_animation() -> Figure:
    """A prompt travels to the GPU, waits in a queue, and tokens stream back one at a time."""
    c = Canvas(820, 250, "One prompt's path through a model service", uid="intro-path",
               description="Requests move from a client through an API server into a queue; "
                           "the GPU runs prefill once, then decode steps that each stream a "
                           "token back to the client; a second GPU exchanges data over a link.")
    xs = [20, 185, 350, 540, 700]
    w, h, y = 120, 64, 70
    for (label, sub, color, part), x in zip(STAGES, xs):
        bw = 140 if label == "GPU" else w
        c.box(x, y, bw, h, label, sublabel=sub, color=PALETTE[color])
        c.text(x + bw / 2, y + h + 22, part, size=11, fill=MUTED)
    mid = y + h / 2
    # Forward arrows (prompt path) and the GPU <-> GPU link.
    c.line(xs[0] + w, mid - 10, xs[1], mid - 10, arrow=True)
    c.line(xs[1] + w, mid - 10, xs[2], mid - 10, arrow=True)
    c.line(xs[2] + w, mid - 10, xs[3], mid - 10, arrow=True)
    c.line(xs[3] + 140, mid, xs[4], mid, both=True, stroke=PALETTE["network"])
    # Return path for streamed tokens, below the boxes.
    ret = y + h + 50
    c.path(f"M{xs[3] + 70},{y + h} L{xs[3] + 70},{ret} L{xs[0] + 60},{ret} L{xs[0] + 60},{y + h}",
           stroke=PALETTE["accent"], dash="5 4", arrow=True)
    c.text((xs[0] + xs[3]) / 2 + 60, ret + 16, "tokens stream back, one decode step each",
           size=12, fill=MUTED)
    # Prompts: dots leave the client and travel to the scheduler, then wait in the queue.
    prompt_path = f"M{xs[0] + w},{mid - 10} L{xs[2] + 20},{mid - 10}"
    for i in range(3):
        c.moving_dot(prompt_path, dur_s=3.0, begin_s=i * 1.0, r=6, color=PALETTE["host"])
    # The queue inside the scheduler: slots that fill and drain.
    for k in range(4):
        qx = xs[2] + 14 + k * 24
        c.rect(qx, y - 34, 18, 18, fill=PALETTE["queue"], stroke="none", rx=3,
               children=Canvas.animate("opacity", [0.15, 0.15, 0.9, 0.9, 0.15],
                                       key_times=[0, 0.15 + 0.15 * k, 0.3 + 0.15 * k, 0.85, 1],
                                       dur_s=6.0))
    c.text(xs[2] + w / 2, y - 46, "waiting requests", size=11, fill=MUTED)
    # Work moves on to the GPU, and data to the other GPU.
    c.moving_dot(f"M{xs[2] + w},{mid - 10} L{xs[3]},{mid - 10}", dur_s=1.2, begin_s=0.6, r=6,
                 color=PALETTE["queue"])
    c.moving_dot(f"M{xs[3] + 140},{mid} L{xs[4]},{mid}", dur_s=1.0, begin_s=0.3, r=4,
                 color=PALETTE["network"])
    # Tokens: small dots along the return path, one after another.
    token_path = (f"M{xs[3] + 70},{y + h} L{xs[3] + 70},{ret} L{xs[0] + 60},{ret} "
                  f"L{xs[0] + 60},{y + h}")
    for i in range(5):
        c.moving_dot(token_path, dur_s=2.5, begin_s=i * 0.5, r=4, color=PALETTE["accent"])
    return c.figure()
