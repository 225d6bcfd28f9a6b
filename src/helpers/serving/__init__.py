"""A small real serving engine for Part V: a paged KV cache (:mod:`.paged`), one scheduler for
static and continuous batching shared with the simulator (:mod:`.scheduler`), and an engine that
runs it over the book's own model (:mod:`.engine`).

Library only: no page imports it.
"""
