"""Checkpoints that survive a kill at any instant, and a store that never destroys good data.

A process can die between any two instructions (SIGKILL, a lost node, the out-of-memory
killer). A checkpoint written in place can then be left half written, and a job that restarts
from it either crashes or, worse, trains on garbage. The recipe here makes every step of a
save either complete or invisible:

1. write the new bytes to a temporary file in the *same directory* (so the rename below stays
   within one file system), flush Python's buffer and ``os.fsync`` the file (the bytes reach
   the disk, not only the page cache); if the write fails (a full disk), remove the temporary
   file and raise;
2. ``os.replace`` the temporary file onto the final name: on POSIX a rename is atomic, so a
   reader sees the old file or the new one, never a mixture;
3. ``fsync`` the directory, so the rename itself survives a power loss.

A :class:`CheckpointStore` writes each checkpoint that way, then a manifest (the same way)
listing every kept checkpoint with its step, size and SHA-256. Each checkpoint file is also
*self-describing*: it starts with a one-line header carrying its step and the size and SHA-256
of the payload after it (:func:`pack_checkpoint`). So the manifest is an index, not the only
record: when it is missing, unreadable, truncated or has entries without their keys,
:meth:`CheckpointStore.load_latest` rebuilds it from the files that verify by their own
header, and says so in :attr:`CheckpointStore.recovered`.

Loading walks the checkpoints from the newest step back, verifies each file (against the
manifest's checksum, or else its own header) and returns the newest good one, so a damaged
file is detected, recorded in :attr:`CheckpointStore.corrupt` and skipped, never used. If
files that look like checkpoints exist (or a manifest names some) but none verifies, loading
raises :class:`CheckpointError` instead of starting again from step 0 in silence.

Nothing is deleted that the store has not positively identified: :meth:`CheckpointStore.sweep`
removes the store's own temporary files and checkpoint files that verify and are superseded by
``keep`` newer good ones, and deletes no checkpoint at all when the manifest is unreadable; a
damaged file is left where it is. A save checks the free space first
(:func:`shutil.disk_usage`), prunes only after the new checkpoint and the manifest are durable,
and prunes only checkpoints superseded by ``keep`` newer ones that verify.

The state saved is the *whole* training state: model and optimizer state dicts, the step, the
data position and the random number generators of torch, numpy and Python
(:func:`capture_rng_state`), which a bit-identical resumption needs. It is read back with
``torch.load(weights_only=True)`` (the file is data, not code), allowing only the numpy types
of numpy's generator state besides torch's own list (:data:`SAFE_NUMPY_GLOBALS`).

>>> import tempfile, torch
>>> d = tempfile.mkdtemp()
>>> store = CheckpointStore(d, keep=2)
>>> _ = store.save(5, {"w": torch.arange(3.0)})
>>> step, state = store.load_latest()
>>> step, state["w"].tolist()
(5, [0.0, 1.0, 2.0])

Library only: no page imports it.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import random
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

__all__ = ["CheckpointStore", "CheckpointError", "atomic_write_bytes", "fsync_dir",
           "sha256_bytes", "capture_rng_state", "restore_rng_state", "state_digest",
           "pack_checkpoint", "unpack_checkpoint", "TEMP_MARK", "MAGIC"]

#: Every temporary file's name contains this mark (and starts with a dot).
TEMP_MARK = ".tmp-"
MANIFEST = "MANIFEST.json"
#: The first bytes of every checkpoint file; a JSON header and a newline follow, then the payload.
MAGIC = b"helpers-checkpoint/1 "
_MAX_HEADER = 4096
_CKPT_NAME = re.compile(r"^ckpt-(\d{9,})\.pt$")
_TEMP_NAME = re.compile(r"^\.(ckpt-\d{9,}\.pt|" + re.escape(MANIFEST) + r")"
                        + re.escape(TEMP_MARK) + r"\d+$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# fsync of a directory is unsupported on some file systems: those errors are not failures
_FSYNC_UNSUPPORTED = {errno.EINVAL, errno.EBADF, getattr(errno, "ENOTSUP", errno.EINVAL),
                      getattr(errno, "EOPNOTSUPP", errno.EINVAL)}


class CheckpointError(RuntimeError):
    """Checkpoints exist but none can be used: the store refuses to start again from scratch."""


def sha256_bytes(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def fsync_dir(directory: str | os.PathLike) -> None:
    """``fsync`` a directory, so that a rename inside it is durable.

    A no-op where a directory cannot be opened or its file system does not support the call
    (``EINVAL``, ``ENOTSUP``, ...); any other error (``EIO``, ``ENOSPC``) is raised, because the
    rename may then not survive a power loss.
    """
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _FSYNC_UNSUPPORTED:
            raise
    finally:
        os.close(fd)


def temp_path_for(path: str | os.PathLike) -> Path:
    """The temporary name a save of ``path`` writes first: same directory, hidden, per process."""
    path = Path(path)
    return path.with_name(f".{path.name}{TEMP_MARK}{os.getpid()}")


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def write_temp(path: str | os.PathLike, data: bytes, *, chunk_bytes: int = 1 << 20,
               on_chunk=None) -> Path:
    """Write ``data`` to the temporary file of ``path``, flushed and fsynced; return its path.

    ``on_chunk(written_bytes, total_bytes)``, if given, is called after each chunk (the lab's
    worker uses it to announce that a write is in progress). If anything fails (a full disk:
    ``OSError(ENOSPC)``), the temporary file is removed before the error propagates.
    """
    if not (isinstance(chunk_bytes, int) and chunk_bytes >= 1):
        raise ValueError(f"chunk_bytes must be an int >= 1, got {chunk_bytes!r}")
    tmp = temp_path_for(path)
    try:
        with open(tmp, "wb") as f:
            for start in range(0, len(data), chunk_bytes):
                f.write(data[start:start + chunk_bytes])
                if on_chunk is not None:
                    f.flush()
                    on_chunk(min(start + chunk_bytes, len(data)), len(data))
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _remove_quietly(tmp)
        raise
    return tmp


def commit(tmp: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Atomically move the finished temporary file onto ``path`` and fsync the directory.

    If the rename fails the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    try:
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(Path(tmp))
        raise
    fsync_dir(path.parent)
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes, **kwargs) -> Path:
    """Write ``data`` to ``path`` so that a kill at any instant leaves the old file or the new.

    Temporary file in the same directory, flush + fsync, ``os.replace``, fsync of the directory.
    A failure leaves no temporary file behind (a kill does: :meth:`CheckpointStore.sweep`).
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


# --- the self-describing file -------------------------------------------------------------------

def pack_checkpoint(step: int, payload: bytes) -> bytes:
    """The bytes of a checkpoint file: :data:`MAGIC`, a JSON header, a newline, ``payload``.

    The header carries the step and the payload's size and SHA-256, so the file can be verified
    and identified without the manifest.

    >>> blob = pack_checkpoint(3, b"abc")
    >>> blob[:blob.index(b"{")].decode(), json.loads(blob[len(MAGIC):blob.index(b"}") + 1])["step"]
    ('helpers-checkpoint/1 ', 3)
    >>> unpack_checkpoint(blob)
    (3, b'abc')
    >>> unpack_checkpoint(blob[:-1]) is None  # truncated: the header's size and SHA-256 disagree
    True
    """
    if not (isinstance(step, int) and step >= 0):
        raise ValueError(f"step must be an int >= 0, got {step!r}")
    header = json.dumps({"step": step, "bytes": len(payload), "sha256": sha256_bytes(payload)},
                        sort_keys=True).encode()
    return MAGIC + header + b"\n" + bytes(payload)


def unpack_checkpoint(data: bytes) -> tuple[int, bytes] | None:
    """``(step, payload)`` if ``data`` is a complete checkpoint file whose header verifies, else
    None (no header, a damaged header, a truncated or altered payload)."""
    if not data.startswith(MAGIC):
        return None
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + _MAX_HEADER)
    if end < 0:
        return None
    try:
        header = json.loads(data[len(MAGIC):end])
        step, size, digest = header["step"], header["bytes"], header["sha256"]
    except (ValueError, KeyError, TypeError):
        return None
    payload = data[end + 1:]
    if not (type(step) is int and step >= 0 and type(size) is int and isinstance(digest, str)):
        return None
    if len(payload) != size or sha256_bytes(payload) != digest:
        return None
    return step, payload


def _payload_of(data: bytes) -> bytes:
    """The payload of a file already verified as a whole (by the manifest's checksum)."""
    got = unpack_checkpoint(data)
    return data if got is None else got[1]  # a file written before headers: all payload


def _safe_globals() -> list:
    """The numpy types in numpy's generator state (``np.random.get_state()``)."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    return [core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]


def _valid_entry(e: Any) -> bool:
    return (isinstance(e, dict) and type(e.get("step")) is int and e["step"] >= 0
            and e.get("file") == f"ckpt-{e['step']:09d}.pt" and type(e.get("bytes")) is int
            and e["bytes"] >= 0 and isinstance(e.get("sha256"), str)
            and _HEX64.match(e["sha256"]) is not None)


class CheckpointStore:
    """A directory of checkpoints with a checksummed manifest, keeping the newest ``keep``.

    Files: ``ckpt-<step>.pt`` (a header with the step and checksum, then ``torch.save`` of the
    state: :func:`pack_checkpoint`) and ``MANIFEST.json`` listing the kept checkpoints, oldest
    first, each with ``step``, ``file``, ``bytes`` and ``sha256`` (of the whole file).
    ``corrupt`` records every file that :meth:`load_latest` found damaged and skipped (and the
    manifest, if it was unreadable); ``recovered`` says, after :meth:`load_latest`, why the
    manifest had to be rebuilt from the files (None when it did not).

    One writer per directory: the temporary files of another live process would be swept.
    """

    def __init__(self, directory: str | os.PathLike, keep: int = 2):
        if not (isinstance(keep, int) and not isinstance(keep, bool) and keep >= 1):
            raise ValueError(f"keep must be an int >= 1, got {keep!r}")
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self.corrupt: list[str] = []
        self.recovered: str | None = None

    def _mark_corrupt(self, name: str) -> None:
        if name not in self.corrupt:
            self.corrupt.append(name)

    # --- manifest ------------------------------------------------------------------------
    def _read_manifest(self) -> tuple[str, list[dict]]:
        """``(status, entries)``: status "ok", "missing", "unreadable" (not JSON of the right
        shape) or "damaged" (some entries lack keys or have wrong types; only the valid ones
        are returned)."""
        path = self.dir / MANIFEST
        try:
            data = json.loads(path.read_bytes())
            raw = data["checkpoints"]
            if not isinstance(raw, list):
                raise TypeError("checkpoints is not a list")
        except FileNotFoundError:
            return "missing", []
        except (ValueError, KeyError, TypeError, IndexError):
            return "unreadable", []
        entries = [dict(e) for e in raw if _valid_entry(e)]
        steps = [e["step"] for e in entries]
        ok = len(entries) == len(raw) and len(set(steps)) == len(steps)
        return ("ok" if ok else "damaged"), sorted({e["step"]: e for e in entries}.values(),
                                                    key=lambda e: e["step"])

    def entries(self) -> list[dict]:
        """The manifest's well-formed entries, oldest first ([] if there is none or it is
        unreadable; an unreadable or damaged manifest is recorded in ``corrupt``)."""
        status, entries = self._read_manifest()
        if status in ("unreadable", "damaged"):
            self._mark_corrupt(MANIFEST)
        return entries

    def _write_manifest(self, entries: list[dict]) -> None:
        body = json.dumps({"checkpoints": entries}, indent=1).encode()
        atomic_write_bytes(self.dir / MANIFEST, body)

    # --- files ---------------------------------------------------------------------------
    def checkpoint_files(self) -> dict[int, Path]:
        """Every file named like a checkpoint (``ckpt-<step>.pt``), by step; verified or not."""
        out = {}
        for p in self.dir.iterdir():
            m = _CKPT_NAME.match(p.name)
            if m and p.is_file():
                out[int(m.group(1))] = p
        return out

    def _verify_file(self, step: int, entry: dict | None) -> tuple[dict, bytes] | None:
        """``(entry, payload)`` if the file of ``step`` verifies, by the manifest's entry or by
        its own header (whose step must be the one in its name), else None."""
        name = self.path_for(step).name
        try:
            data = (self.dir / name).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        sha = sha256_bytes(data)
        if entry is not None and len(data) == entry["bytes"] and sha == entry["sha256"]:
            return entry, _payload_of(data)
        got = unpack_checkpoint(data)
        if got is None or got[0] != step:
            return None
        return {"step": step, "file": name, "bytes": len(data), "sha256": sha}, got[1]

    def _good_entries(self, entries: list[dict], scan: bool, below: int | None = None,
                      limit: int | None = None, skip: int | None = None) -> list[dict]:
        """The entries (and, with ``scan``, the other checkpoint files) that verify, oldest
        first: only steps below ``below`` if given, never ``skip``, the newest ``limit`` at
        most."""
        by_step = {e["step"]: e for e in entries}
        steps = set(by_step) | (set(self.checkpoint_files()) if scan else set())
        steps.discard(skip)
        if below is not None:
            steps = {s for s in steps if s < below}
        good = []
        for step in sorted(steps, reverse=True):
            if limit is not None and len(good) >= limit:
                break
            got = self._verify_file(step, by_step.get(step))
            if got is None:
                self._mark_corrupt(self.path_for(step).name)
            else:
                good.append(got[0])
        return good[::-1]

    # --- save ----------------------------------------------------------------------------
    @staticmethod
    def serialize(state: dict) -> bytes:
        """``torch.save`` of ``state`` (the payload of a checkpoint file)."""
        import torch

        buf = io.BytesIO()
        torch.save(state, buf)
        return buf.getvalue()

    @staticmethod
    def deserialize(payload: bytes) -> Any:
        """``torch.load(weights_only=True)`` of a payload, numpy's generator state allowed."""
        import torch

        with torch.serialization.safe_globals(_safe_globals()):
            return torch.load(io.BytesIO(payload), weights_only=True)

    @staticmethod
    def _check_loadable(payload: bytes) -> None:
        """Raise ``ValueError`` now if :meth:`deserialize` would refuse ``payload`` at restart."""
        import torch

        try:
            with torch.serialization.safe_globals(_safe_globals()):
                unsafe = torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(payload))
        except Exception as exc:
            raise ValueError(f"data is not a torch.save payload: {exc}") from exc
        if unsafe:
            raise ValueError(f"state holds objects torch.load(weights_only=True) refuses: "
                             f"{unsafe}; save tensors, containers, numbers and strings (or "
                             f"convert them) so that the checkpoint can be loaded back")

    def path_for(self, step: int) -> Path:
        return self.dir / f"ckpt-{int(step):09d}.pt"

    def _reserve(self, n_bytes: int, step: int) -> None:
        """Raise ``OSError(ENOSPC)`` unless ``n_bytes`` (the file and its manifest) fit."""
        free = shutil.disk_usage(self.dir).free
        if free < n_bytes:
            raise OSError(errno.ENOSPC,
                          f"not enough free space in {self.dir} for the checkpoint of step "
                          f"{step}: it needs {n_bytes} bytes, {free} are free; nothing was "
                          f"written and every committed checkpoint is intact")

    def save(self, step: int, state: dict, *, on_chunk=None, chunk_bytes: int = 1 << 20,
             data: bytes | None = None) -> Path:
        """Save ``state`` as the checkpoint of ``step`` atomically; update the manifest; prune.

        ``data`` may be given pre-serialized (``serialize(state)``) to time the parts apart.
        Order: check the free space, write the file (temporary, fsync, rename, fsync of the
        directory), write the manifest the same way, and only then delete the checkpoints that
        ``keep`` newer good ones supersede. A failure at any point raises and leaves every
        committed checkpoint intact and no temporary file; a failure to delete a superseded
        file only warns (the save itself is complete; :meth:`sweep` retries).
        """
        if not (isinstance(step, int) and not isinstance(step, bool) and step >= 0):
            raise ValueError(f"step must be an int >= 0, got {step!r}")
        payload = self.serialize(state) if data is None else data
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise ValueError(f"data must be bytes, got {type(payload).__name__}")
        self._check_loadable(bytes(payload))
        blob = pack_checkpoint(step, bytes(payload))
        path = self.path_for(step)
        status, entries = self._read_manifest()
        self._reserve(len(blob) + 256 * (len(entries) + 2) + 4096, step)
        try:
            atomic_write_bytes(path, blob, chunk_bytes=chunk_bytes, on_chunk=on_chunk)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise OSError(errno.ENOSPC, f"disk full while writing the checkpoint of step "
                                            f"{step} to {path}; no temporary file is left and "
                                            f"every checkpoint committed before is intact"
                                  ) from exc
            raise
        new = {"step": step, "file": path.name, "bytes": len(blob), "sha256": sha256_bytes(blob)}
        # every other checkpoint is read and verified again: a file is pruned only if keep
        # newer ones are good *now*, and only if the manifest (read whole) named it
        good = sorted(self._good_entries(entries, scan=(status != "ok"), skip=step,
                                         limit=None if status == "ok" else self.keep) + [new],
                      key=lambda e: e["step"])
        kept = good[-self.keep:]
        try:
            self._write_manifest(kept)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise OSError(errno.ENOSPC, f"disk full while writing {MANIFEST} after the "
                                            f"checkpoint of step {step}: that checkpoint is "
                                            f"committed (a restart finds it by its header), "
                                            f"nothing was pruned and everything is intact"
                              ) from exc
            raise
        if status == "ok":  # superseded by keep newer good ones, identified by the manifest
            for e in good[:-self.keep]:
                try:
                    (self.dir / e["file"]).unlink(missing_ok=True)
                except OSError as exc:
                    warnings.warn(f"could not delete the superseded checkpoint {e['file']}: "
                                  f"{exc}; a later sweep() retries", RuntimeWarning,
                                  stacklevel=2)
        return path

    # --- load ----------------------------------------------------------------------------
    def verify(self, entry: dict) -> bytes | None:
        """The bytes of ``entry``'s file if its size and SHA-256 match the entry, else None
        (also for a malformed entry)."""
        if not _valid_entry(entry):
            return None
        try:
            data = (self.dir / entry["file"]).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        if len(data) != entry["bytes"] or sha256_bytes(data) != entry["sha256"]:
            return None
        return data

    def load_latest(self) -> tuple[int, Any] | None:
        """``(step, state)`` of the newest checkpoint that verifies, or None if there is none.

        Candidates are the manifest's entries and every file named like a checkpoint; each is
        verified by the manifest's checksum or, failing that, by its own header. A damaged file
        is recorded in ``corrupt`` and skipped for the one before it. If the manifest is
        missing, unreadable, damaged or does not name the checkpoint loaded, it is rebuilt from
        the files that verify and ``recovered`` says why.

        Returns None only when there is no trace of a checkpoint (no manifest naming one, no
        checkpoint file; temporary files of a killed first write do not count). Raises
        :class:`CheckpointError` when there are checkpoints but none verifies.
        """
        self.recovered = None
        status, entries = self._read_manifest()
        if status in ("unreadable", "damaged"):
            self._mark_corrupt(MANIFEST)
        files = self.checkpoint_files()
        by_step = {e["step"]: e for e in entries}
        steps = sorted(set(by_step) | set(files), reverse=True)
        for step in steps:
            got = self._verify_file(step, by_step.get(step))
            if got is None:
                self._mark_corrupt(self.path_for(step).name)
                continue
            entry, payload = got
            try:
                state = self.deserialize(payload)
            except Exception as exc:
                raise CheckpointError(f"{entry['file']} verifies but torch.load(weights_only="
                                      f"True) refuses it: {exc}") from exc
            named = by_step.get(step) == entry
            if status != "ok" or not named:
                self.recovered = (f"{MANIFEST} {status}" if status != "ok" else
                                  f"{entry['file']} verified by its own header but not in "
                                  f"{MANIFEST}")
                rest = self._good_entries(entries, scan=(status != "ok"), below=step,
                                          limit=self.keep - 1)
                self._write_manifest((rest + [entry])[-self.keep:])
            return step, state
        if steps or status not in ("ok", "missing"):
            raise CheckpointError(
                f"no checkpoint in {self.dir} can be used: {MANIFEST} is {status}, "
                f"{len(files)} checkpoint files, damaged: {self.corrupt or 'none'}, missing: "
                f"{sorted(e['file'] for e in entries if e['step'] not in files) or 'none'}; "
                f"refusing to start again from step 0 (move the directory aside to do that)")
        return None

    # --- debris --------------------------------------------------------------------------
    def temp_files(self) -> list[Path]:
        """Temporary files left behind by a writer that was killed before its rename."""
        return sorted(p for p in self.dir.iterdir() if _TEMP_NAME.match(p.name))

    def sweep(self) -> list[Path]:
        """Remove this store's leftover temporary files, and checkpoint files that verify, are
        not in the manifest and are superseded by ``keep`` newer checkpoints that verify.

        Deletes no checkpoint when the manifest is missing, unreadable or damaged, and never a
        file it cannot verify (a damaged checkpoint stays for inspection).
        """
        removed = [p for p in self.temp_files()]
        for p in removed:
            p.unlink(missing_ok=True)
        status, entries = self._read_manifest()
        if status == "ok" and entries:
            named = {e["step"] for e in entries}
            good = self._good_entries(entries, scan=False)
            for step, p in sorted(self.checkpoint_files().items()):
                if step in named or sum(e["step"] > step for e in good) < self.keep:
                    continue
                if self._verify_file(step, None) is not None:
                    p.unlink(missing_ok=True)
                    removed.append(p)
        return sorted(removed)
