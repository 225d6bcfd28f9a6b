"""Checkpoints that survive a kill: atomic writes, checksums, fallback, full training state.

* :mod:`helpers.checkpoint.store`: :func:`~helpers.checkpoint.store.atomic_write_bytes`, the
  :class:`~helpers.checkpoint.store.CheckpointStore` (a directory of checkpoints with a
  checksummed manifest, keeping the last K) and the capture and restore of every random
  number generator a training step uses.

Library only: no page imports it.
"""

from .store import (CheckpointStore, atomic_write_bytes, capture_rng_state, fsync_dir,
                    restore_rng_state, sha256_bytes, state_digest)

__all__ = ["CheckpointStore", "atomic_write_bytes", "capture_rng_state", "fsync_dir",
           "restore_rng_state", "sha256_bytes", "state_digest"]
