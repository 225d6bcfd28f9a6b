"""Figures of the page "Storage and model loading" ({ref}`sec-storage-and-model-loading`).

* :func:`opening_animation`: the first load of a file crawls from the drive through the page
  cache; the second comes straight from the cache.
* :func:`structure_diagram`: drive, page cache, and the two ways into a process (``read``
  copies, ``mmap`` maps), with the calls that fill and empty the cache.
* :func:`load_times_figure` (matplotlib): measured times of each way of loading, with the
  model's prediction.

Every number drawn comes from the arguments.

Used by: foundations/storage-and-model-loading.md.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .. import units
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "load_times_figure"]


def opening_animation() -> Figure:
    """Cold load: drive -> page cache -> process, slowly. Warm load: cache -> process."""
    c = Canvas(760, 250, "A cold load crawls from the drive; a warm one comes from memory",
               uid="stor-open", description=(
                   "Animated diagram. Three boxes from left to right: the drive, the page "
                   "cache in the kernel's memory, and the inference server's memory. First a "
                   "stream of blocks travels slowly from the drive into the page cache and on "
                   "to the server: a cold start. The page cache keeps a copy. Then a second "
                   "load of the same weights takes the blocks from the page cache only, much "
                   "faster: a warm start."))
    host, mem, acc = PALETTE["host"], PALETTE["memory"], PALETTE["accent"]
    c.box(30, 80, 150, 90, "drive", sublabel="NVMe, network disk", color=PALETTE["neutral"])
    c.box(300, 80, 160, 90, "page cache", sublabel="kernel memory", color=mem)
    c.box(580, 80, 150, 90, "server", sublabel="weights in RAM", color=host)
    c.line(182, 125, 298, 125, stroke=MUTED, arrow=True)
    c.line(462, 125, 578, 125, stroke=MUTED, arrow=True)
    dur = 8.0
    # Cold: slow dots drive -> cache -> server, during the first half.
    for k in range(5):
        b = k * 0.5
        c.raw(f'<circle r="6" fill="{acc}" opacity="0"><animateMotion path="M105,125 L380,125 '
              f'L655,125" dur="{dur}s" begin="0s" keyPoints="0;0;1;1" keyTimes="0;{b / dur:.3f};'
              f'{(b + 2.4) / dur:.3f};1" calcMode="linear" repeatCount="indefinite"/>'
              f'<animate attributeName="opacity" values="0;0;1;1;0;0" keyTimes="0;'
              f'{b / dur:.3f};{(b + 0.01) / dur:.3f};{(b + 2.4) / dur:.3f};'
              f'{(b + 2.41) / dur:.3f};1" dur="{dur}s" repeatCount="indefinite"/></circle>')
    # Warm: fast dots cache -> server in the second half.
    for k in range(5):
        b = 4.6 + k * 0.15
        c.raw(f'<circle r="6" fill="{mem}" opacity="0"><animateMotion path="M380,125 L655,125" '
              f'dur="{dur}s" keyPoints="0;0;1;1" keyTimes="0;{b / dur:.3f};{(b + 0.5) / dur:.3f};1"'
              f' calcMode="linear" repeatCount="indefinite"/><animate attributeName="opacity" '
              f'values="0;0;1;1;0;0" keyTimes="0;{b / dur:.3f};{(b + 0.01) / dur:.3f};'
              f'{(b + 0.5) / dur:.3f};{(b + 0.51) / dur:.3f};1" dur="{dur}s" '
              f'repeatCount="indefinite"/></circle>')
    cold = Canvas.animate("opacity", [1, 1, 0, 0], dur_s=dur, key_times=[0, 0.5, 0.52, 1])
    warm = Canvas.animate("opacity", [0, 0, 1, 1], dur_s=dur, key_times=[0, 0.55, 0.57, 1])
    c.text(380, 36, "cold start: every byte comes from the drive", size=14, weight="600",
           children=cold)
    c.text(380, 36, "warm start: the page cache already holds the bytes", size=14,
           weight="600", children=warm)
    c.text(380, 215, "Click to pause. The cache keeps the pages until memory is needed.",
           size=11.5, fill=MUTED)
    c.mark_animated()
    return c.figure()


def structure_diagram() -> Figure:
    """Drive, page cache, and the two ways into a process."""
    c = Canvas(780, 330, "Two ways from a file into a process: read copies, mmap maps",
               uid="stor-struct", description=(
                   "Diagram. At the bottom, the drive. Above it, in the kernel, the page cache: "
                   "copies of file pages in memory, filled by reads and read-ahead and emptied "
                   "by memory pressure, by posix_fadvise for one file, or by drop_caches for "
                   "all (root only). At the top, the process. The read system call copies "
                   "bytes from the page cache into a buffer the process owns. mmap instead "
                   "maps the page-cache pages into the process's address space, so a page is "
                   "shared, not copied; its first touch is a page fault."))
    host, mem, q, acc = PALETTE["host"], PALETTE["memory"], PALETTE["queue"], PALETTE["accent"]
    c.rect(20, 20, 740, 90, fill="none", stroke=host, stroke_width=1.4, rx=10, dash="6 4")
    c.text(70, 36, "process", size=12, fill=MUTED)
    c.box(60, 46, 240, 52, "buffer (its own copy)", sublabel="pickle / torch.load", color=host,
          size=12)
    c.box(470, 46, 250, 52, "mapped pages (shared)", sublabel="np.load(mmap) / safetensors",
          color=host, size=12)
    c.rect(20, 130, 740, 100, fill="none", stroke=mem, stroke_width=1.4, rx=10, dash="6 4")
    c.text(70, 146, "kernel", size=12, fill=MUTED)
    c.box(230, 156, 320, 60, "page cache", sublabel="file pages kept in free memory",
          color=mem, size=13)
    c.line(300, 156, 200, 100, stroke=acc, arrow=True, width=2)
    c.text(236, 146, "read(): copy", size=11.5, fill=acc, anchor="end")
    c.line(480, 156, 580, 100, stroke=mem, arrow=True, width=2, dash="5 3")
    c.text(548, 146, "mmap: map, fault in", size=11.5, fill=mem, anchor="start")
    c.box(250, 262, 280, 50, "drive", sublabel="block device", color=PALETTE["neutral"],
          size=12)
    c.line(390, 262, 390, 218, stroke=MUTED, arrow=True, width=2)
    c.text(400, 244, "read-ahead fills", size=11, fill=MUTED, anchor="start")
    c.text(655, 176, "emptied by:", size=11, fill=q, anchor="middle")
    c.text(655, 192, "memory pressure", size=11, fill=q, anchor="middle")
    c.text(655, 208, "posix_fadvise (one file)", size=11, fill=q, anchor="middle")
    c.text(655, 224, "drop_caches (root)", size=11, fill=q, anchor="middle")
    return c.figure()


def load_times_figure(measured_s: Mapping[str, float], *, predicted_s: Mapping[str, float]
                      | None = None, ax=None):
    """Horizontal bars of measured load times (ms), with predicted times as markers."""
    names = list(measured_s)
    fig, ax = new_figure(height_in=0.45 * len(names) + 1.2) if ax is None else (ax.figure, ax)
    y = np.arange(len(names))
    vals = np.array([measured_s[k] for k in names]) / units.ms
    ax.barh(y, vals, color=COLORS["memory"], alpha=0.8, label="measured here (median)")
    if predicted_s:
        for i, k in enumerate(names):
            if k in predicted_s:
                ax.plot(predicted_s[k] / units.ms, i, "D", color=COLORS["accent"], ms=8,
                        label="model" if i == min(j for j, n in enumerate(names)
                                                  if n in predicted_s) else None)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right")
    return fig
