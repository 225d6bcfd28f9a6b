"""Checkpoints that survive a kill at any instant.

A process can die between any two instructions (SIGKILL, a lost node, the out-of-memory
killer). A checkpoint written in place can then be left half written, and a job that restarts
from it either crashes or, worse, trains on garbage. The recipe here makes every step of a
save either complete or invisible:

1. write the new bytes to a temporary file in the *same directory* (so the rename below stays
   within one file system), flush Python's buffer and ``os.fsync`` the file (the bytes reach
   the disk, not only the page cache);
2. ``os.replace`` the temporary file onto the final name: on POSIX a rename is atomic, so a
   reader sees the old file or the new one, never a mixture;
3. ``fsync`` the directory, so the rename itself survives a power loss.

A :class:`CheckpointStore` writes each checkpoint that way, then a manifest (the same way)
listing every kept checkpoint with its step, size and SHA-256. Loading walks the manifest from
the newest entry back, verifies each file's checksum and returns the newest good one, so a
damaged file (a disk error, a bug, a writer that skipped the recipe) is detected and skipped,
never used. Temporary files left by a killed writer are ignored and swept away.

The state saved is the *whole* training state: model and optimizer state dicts, the step, the
data position and the random number generators of torch, numpy and Python
(:func:`capture_rng_state`), which a bit-identical resumption needs.

>>> import tempfile, torch
>>> d = tempfile.mkdtemp()
>>> store = CheckpointStore(d, keep=2)
>>> _ = store.save(5, {"w": torch.arange(3.0)})
>>> step, state = store.load_latest()
>>> step, state["w"].tolist()
(5, [0.0, 1.0, 2.0])
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
from pathlib import Path
from typing import Any

__all__ = ["CheckpointStore", "atomic_write_bytes", "fsync_dir", "sha256_bytes",
           "capture_rng_state", "restore_rng_state", "state_digest", "TEMP_MARK"]

#: Every temporary file's name contains this mark (and starts with a dot).
TEMP_MARK = ".tmp-"
MANIFEST = "MANIFEST.json"


def sha256_bytes(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def fsync_dir(directory: str | os.PathLike) -> None:
    """``fsync`` a directory, so that a rename inside it is durable (no-op where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def temp_path_for(path: str | os.PathLike) -> Path:
    """The temporary name a save of ``path`` writes first: same directory, hidden, per process."""
    path = Path(path)
    return path.with_name(f".{path.name}{TEMP_MARK}{os.getpid()}")


def write_temp(path: str | os.PathLike, data: bytes, *, chunk_bytes: int = 1 << 20,
               on_chunk=None) -> Path:
    """Write ``data`` to the temporary file of ``path``, flushed and fsynced; return its path.

    ``on_chunk(written_bytes, total_bytes)``, if given, is called after each chunk (the lab's
    worker uses it to announce that a write is in progress).
    """
    tmp = temp_path_for(path)
    with open(tmp, "wb") as f:
        for start in range(0, len(data), chunk_bytes):
            f.write(data[start:start + chunk_bytes])
            if on_chunk is not None:
                f.flush()
                on_chunk(min(start + chunk_bytes, len(data)), len(data))
        f.flush()
        os.fsync(f.fileno())
    return tmp


def commit(tmp: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Atomically move the finished temporary file onto ``path`` and fsync the directory."""
    path = Path(path)
    os.replace(tmp, path)
    fsync_dir(path.parent)
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes, **kwargs) -> Path:
    """Write ``data`` to ``path`` so that a kill at any instant leaves the old file or the new.

    Temporary file in the same directory, flush + fsync, ``os.replace``, fsync of the directory.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"data must be bytes, got {type(data).__name__}")
    return commit(write_temp(path, bytes(data), **kwargs), path)


def capture_rng_state() -> dict:
    """The states of every random number generator a training step may use."""
    import numpy as np
    import torch

    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
             "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict) -> None:
    """Restore what :func:`capture_rng_state` captured."""
    import numpy as np
    import torch

    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def state_digest(state_dict: dict) -> str:
    """SHA-256 over a state dict's tensors: names, dtypes, shapes and raw bytes, keys sorted.

    Two models have the same digest exactly when every parameter is bit-identical.
    """
    import torch

    h = hashlib.sha256()
    for name in sorted(state_dict):
        t = state_dict[name]
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"state_dict[{name!r}] is a {type(t).__name__}, not a tensor")
        t = t.detach().to("cpu").contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


class CheckpointStore:
    """A directory of checkpoints with a checksummed manifest, keeping the newest ``keep``.

    Files: ``ckpt-<step>.pt`` (``torch.save`` of the state) and ``MANIFEST.json`` listing the
    kept checkpoints, oldest first, each with ``step``, ``file``, ``bytes`` and ``sha256``.
    ``corrupt`` records every checkpoint that :meth:`load_latest` found damaged and skipped.
    """

    def __init__(self, directory: str | os.PathLike, keep: int = 2):
        if not (isinstance(keep, int) and keep >= 1):
            raise ValueError(f"keep must be an int >= 1, got {keep!r}")
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self.corrupt: list[str] = []

    # --- manifest ------------------------------------------------------------------------
    def entries(self) -> list[dict]:
        """The manifest's entries, oldest first ([] if there is none or it is unreadable)."""
        path = self.dir / MANIFEST
        try:
            data = json.loads(path.read_text())
            return list(data["checkpoints"])
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError):
            self.corrupt.append(MANIFEST)
            return []

    def _write_manifest(self, entries: list[dict]) -> None:
        body = json.dumps({"checkpoints": entries}, indent=1).encode()
        atomic_write_bytes(self.dir / MANIFEST, body)

    # --- save ----------------------------------------------------------------------------
    @staticmethod
    def serialize(state: dict) -> bytes:
        import torch

        buf = io.BytesIO()
        torch.save(state, buf)
        return buf.getvalue()

    def path_for(self, step: int) -> Path:
        return self.dir / f"ckpt-{int(step):09d}.pt"

    def save(self, step: int, state: dict, *, on_chunk=None, chunk_bytes: int = 1 << 20,
             data: bytes | None = None) -> Path:
        """Save ``state`` as the checkpoint of ``step`` atomically; update the manifest; prune.

        ``data`` may be given pre-serialized (``serialize(state)``) to time the parts apart.
        """
        if not (isinstance(step, int) and step >= 0):
            raise ValueError(f"step must be an int >= 0, got {step!r}")
        data = self.serialize(state) if data is None else data
        path = self.path_for(step)
        tmp = write_temp(path, data, chunk_bytes=chunk_bytes, on_chunk=on_chunk)
        commit(tmp, path)
        entries = [e for e in self.entries() if e["step"] != step]
        entries.append({"step": step, "file": path.name, "bytes": len(data),
                        "sha256": sha256_bytes(data)})
        entries.sort(key=lambda e: e["step"])
        kept, dropped = entries[-self.keep:], entries[:-self.keep]
        self._write_manifest(kept)
        for e in dropped:  # only after the manifest no longer names them
            (self.dir / e["file"]).unlink(missing_ok=True)
        return path

    # --- load ----------------------------------------------------------------------------
    def verify(self, entry: dict) -> bytes | None:
        """The bytes of ``entry``'s file if its size and SHA-256 match the manifest, else None."""
        try:
            data = (self.dir / entry["file"]).read_bytes()
        except FileNotFoundError:
            return None
        if len(data) != entry["bytes"] or sha256_bytes(data) != entry["sha256"]:
            return None
        return data

    def load_latest(self) -> tuple[int, Any] | None:
        """``(step, state)`` of the newest checkpoint whose checksum verifies, or None.

        A damaged entry is recorded in ``corrupt`` and skipped for the one before it.
        """
        import torch

        for entry in reversed(self.entries()):
            data = self.verify(entry)
            if data is None:
                self.corrupt.append(entry["file"])
                continue
            return entry["step"], torch.load(io.BytesIO(data), weights_only=False)
        return None

    # --- debris --------------------------------------------------------------------------
    def temp_files(self) -> list[Path]:
        """Temporary files left behind by a writer that was killed before its rename."""
        return sorted(p for p in self.dir.iterdir() if TEMP_MARK in p.name)

    def sweep(self) -> list[Path]:
        """Remove leftover temporary files and checkpoint files the manifest does not name."""
        named = {e["file"] for e in self.entries()} | {MANIFEST}
        removed = []
        for p in self.dir.iterdir():
            if p.is_file() and (TEMP_MARK in p.name or (p.name.startswith("ckpt-")
                                                        and p.name not in named)):
                p.unlink(missing_ok=True)
                removed.append(p)
        return sorted(removed)
