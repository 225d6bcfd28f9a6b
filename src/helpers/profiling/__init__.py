"""Profiling: recording PyTorch profiler traces (:mod:`.record`) and reading them (:mod:`.trace`).

Used by: chapters/profiling.md.
"""

from .trace import (Event, Finding, Gap, Report, Trace, analyse, finding, idle_gaps,
                    launch_stats, load_trace, parse_trace, top_ops, utilization)

__all__ = ["Event", "Finding", "Gap", "Report", "Trace", "analyse", "finding", "idle_gaps",
           "launch_stats", "load_trace", "parse_trace", "top_ops", "utilization"]
