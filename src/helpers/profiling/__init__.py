"""Profiling: recording PyTorch profiler traces (:mod:`.record`) and reading them."""
