"""A small real serving engine for Part V: a paged KV cache (:mod:`.paged`) and an engine with
static and continuous batching over the book's own model (:mod:`.engine`)."""
