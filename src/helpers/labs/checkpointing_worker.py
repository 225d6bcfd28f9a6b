"""The training process of the checkpointing lab: a small deterministic model that checkpoints.

The lab's controller (:mod:`helpers.labs.checkpointing`) starts this module as a subprocess::

    python -m helpers.labs.checkpointing_worker --dir DIR --steps N --interval K [--write-pause-s S]

and kills it with SIGKILL at moments of its choosing. Each start resumes from the newest
checkpoint whose checksum verifies (:class:`helpers.checkpoint.CheckpointStore`; where there
are checkpoints but none verifies it stops with
:class:`~helpers.checkpoint.store.CheckpointError` rather than start again from step 0), so
the run finishes, after any number of kills, with the same weights as a run never
interrupted, bit for bit. The worker reports what it does on stdout, one line per event,
flushed at once:

``resumed <step> <corrupt> <debris>``
    started from ``step`` (0: from scratch); how many damaged checkpoints it skipped and how
    many temporary files of killed writers it swept away;
``step <s>``
    finished training step ``s``;
``writing <s> <written> <total>``
    is writing the checkpoint of step ``s``: the first chunk of its temporary file is on disk;
    with ``--write-pause-s`` it then pauses, a stand-in for a slow file system that gives the
    controller a window to kill it in the middle of the write;
``saved <s>``
    the checkpoint of step ``s`` is committed (renamed into place and in the manifest);
``warning <text>``
    the store had to rebuild its manifest from the checkpoints' own headers (the manifest was
    missing, unreadable or damaged, or a kill struck between a checkpoint's rename and the
    manifest's update); ``text`` says why and where the run resumes;
``done <digest>``
    finished; ``digest`` is :func:`helpers.checkpoint.state_digest` of the final weights.

Everything a training step consumes is in the checkpoint: the model and the optimizer (Adam,
whose moments and step counts matter), the data position (epoch, index in the epoch and the
shuffling generator's state) and the generators of torch (dropout), numpy (input noise) and
Python's ``random`` (which samples get noise). Training runs on the CPU with one thread and
``torch.use_deterministic_algorithms(True)``.

Also here, beside the process it kills: the grader's harness :func:`kill_during_write` (a
SIGKILL halfway through a write, in a forked child) and :func:`measure_kill_in_place`, which
kills an in-place writer and the atomic one halfway through overwriting a checkpoint.
"""

from __future__ import annotations

import argparse
import builtins
import io
import os
import random
import signal
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Callable

__all__ = ["Trainer", "train", "main", "N_IN", "N_HIDDEN", "N_OUT", "N_SAMPLES", "BATCH",
           "kill_during_write", "atomic_save_reference", "measure_kill_in_place"]

N_IN, N_HIDDEN, N_OUT = 32, 128, 8
N_SAMPLES, BATCH = 2048, 64
DATA_SEED, MODEL_SEED = 1234, 5678


def _setup_torch():
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    return torch


class Trainer:
    """The model, its optimizer, its data and every random generator, as one object.

    ``state()`` returns everything needed to continue exactly where it is; ``load(state)``
    puts it back.
    """

    def __init__(self, hidden: int = N_HIDDEN):
        import numpy as np

        torch = _setup_torch()
        self.torch, self.np = torch, np
        g = torch.Generator().manual_seed(DATA_SEED)
        self.x = torch.randn(N_SAMPLES, N_IN, generator=g)
        teacher = torch.randn(N_IN, N_OUT, generator=g)
        self.y = (self.x @ teacher).argmax(dim=1)
        torch.manual_seed(MODEL_SEED)
        np.random.seed(MODEL_SEED)
        random.seed(MODEL_SEED)
        self.model = torch.nn.Sequential(
            torch.nn.Linear(N_IN, hidden), torch.nn.GELU(), torch.nn.Dropout(0.1),
            torch.nn.Linear(hidden, hidden), torch.nn.GELU(), torch.nn.Dropout(0.1),
            torch.nn.Linear(hidden, N_OUT))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.shuffle = torch.Generator().manual_seed(DATA_SEED + 1)
        self.step_no, self.epoch, self.pos = 0, 0, 0
        self.perm = torch.randperm(N_SAMPLES, generator=self.shuffle)

    def _batch(self):
        torch, np = self.torch, self.np
        if self.pos + BATCH > N_SAMPLES:  # a new epoch: a new shuffle
            self.epoch, self.pos = self.epoch + 1, 0
            self.perm = torch.randperm(N_SAMPLES, generator=self.shuffle)
        idx = self.perm[self.pos:self.pos + BATCH]
        self.pos += BATCH
        x = self.x[idx].clone()
        noisy = [i for i in range(BATCH) if random.random() < 0.5]  # Python's generator
        noise = torch.from_numpy(np.random.normal(0.0, 0.05, (len(noisy), N_IN))).float()
        x[noisy] += noise  # numpy's generator
        return x, self.y[idx]

    def step(self) -> float:
        """One optimizer step on the next batch; returns the loss."""
        self.model.train()
        x, y = self._batch()
        loss = self.torch.nn.functional.cross_entropy(self.model(x), y)  # dropout: torch's
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.step_no += 1
        return float(loss.detach())

    def state(self) -> dict:
        from helpers.checkpoint import capture_rng_state

        return {"step": self.step_no, "model": self.model.state_dict(),
                "optimizer": self.opt.state_dict(), "rng": capture_rng_state(),
                "data": {"epoch": self.epoch, "pos": self.pos, "perm": self.perm.clone(),
                         "shuffle": self.shuffle.get_state()}}

    def load(self, state: dict) -> None:
        from helpers.checkpoint import restore_rng_state

        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        restore_rng_state(state["rng"])
        d = state["data"]
        self.epoch, self.pos, self.perm = d["epoch"], d["pos"], d["perm"]
        self.shuffle.set_state(d["shuffle"])
        self.step_no = state["step"]

    def digest(self) -> str:
        from helpers.checkpoint import state_digest

        return state_digest(self.model.state_dict())


def _emit(*words) -> None:
    print(*words, flush=True)


def train(directory: str | Path, steps: int, interval: int, *, keep: int = 2,
          write_pause_s: float = 0.0, chunk_bytes: int = 1 << 16, emit=_emit) -> str:
    """Resume from the newest good checkpoint in ``directory`` (or start), train to ``steps``
    checkpointing every ``interval`` steps and at the end; return the final digest."""
    from helpers.checkpoint import CheckpointStore

    if not (steps >= 1 and interval >= 1):
        raise ValueError(f"steps and interval must be >= 1, got {steps!r}, {interval!r}")
    store = CheckpointStore(directory, keep=keep)
    debris = len(store.temp_files())
    trainer = Trainer()
    latest = store.load_latest()
    if latest is not None:
        trainer.load(latest[1])
    if store.recovered is not None:
        emit("warning", f"recovered from the checkpoint files ({store.recovered}); "
                        f"resuming from step {trainer.step_no}")
    store.sweep()
    emit("resumed", trainer.step_no, len(store.corrupt), debris)

    def on_chunk(written: int, total: int, s: list) -> None:
        if written <= chunk_bytes:  # the first chunk is on disk
            emit("writing", s[0], written, total)
            if write_pause_s > 0:
                time.sleep(write_pause_s)

    while trainer.step_no < steps:
        trainer.step()
        emit("step", trainer.step_no)
        if trainer.step_no % interval == 0 or trainer.step_no == steps:
            s = [trainer.step_no]
            store.save(trainer.step_no, trainer.state(), chunk_bytes=chunk_bytes,
                       on_chunk=lambda w, t: on_chunk(w, t, s))
            emit("saved", trainer.step_no)
    digest = trainer.digest()
    emit("done", digest)
    return digest


# --- a kill in the middle of a write (the grader's harness) ---------------------------------

class _KillHalfway:
    """A writable binary file that delivers SIGKILL to its own process halfway through."""

    def __init__(self, f, limit: int):
        self._f, self._limit, self._written = f, limit, 0

    def write(self, b) -> int:
        b = bytes(b)
        room = self._limit - self._written
        if len(b) >= room:
            self._f.write(b[:room])
            self._f.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        self._written += len(b)
        return self._f.write(b)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False

    def __getattr__(self, name):
        return getattr(self._f, name)


def kill_during_write(save: Callable[[str, bytes], object], path: str | os.PathLike,
                      data: bytes) -> dict:
    """Run ``save(path, data)`` in a forked child that is SIGKILLed halfway through ``data``.

    In the child, ``open``/``io.open`` in a binary write mode and ``os.write`` are wrapped so
    that the write that reaches half of ``len(data)`` bytes writes up to that point, flushes and
    kills the process. Returns what the parent sees afterwards: whether the child was killed,
    and the bytes at ``path`` (None if it is absent). POSIX only.
    """
    if not hasattr(os, "fork"):
        raise RuntimeError("kill_during_write needs os.fork (Linux or macOS)")
    limit = max(1, len(data) // 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
        pid = os.fork()
    if pid == 0:  # the child: wrap the writers, save, and never return
        try:
            real_open, real_write = builtins.open, os.write
            counter = {"n": 0}

            def open_(file, mode="r", *a, **k):
                f = real_open(file, mode, *a, **k)
                return _KillHalfway(f, limit) if ("w" in mode or "a" in mode or "+" in mode) \
                    and "b" in mode else f

            def write_(fd, b):
                room = limit - counter["n"]
                if len(b) >= room:
                    real_write(fd, bytes(b)[:room])
                    os.kill(os.getpid(), signal.SIGKILL)
                counter["n"] += len(b)
                return real_write(fd, b)

            builtins.open = io.open = open_
            os.write = write_
            g = getattr(save, "__globals__", {})
            if "open" in g:  # IPython gives a notebook's namespace its own ``open``
                g["open"] = open_
            save(str(path), data)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    p = Path(path)
    return {"killed": killed, "bytes": p.read_bytes() if p.exists() else None}


def atomic_save_reference(path: str, data: bytes) -> None:
    """The book's atomic save (the page's reference solution uses the same steps)."""
    from helpers.checkpoint import atomic_write_bytes

    atomic_write_bytes(path, data)


def _in_place_save(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def measure_kill_in_place() -> dict:
    """Kill an in-place writer and the atomic writer halfway through overwriting a checkpoint
    that a :class:`~helpers.checkpoint.CheckpointStore` names; what does the store load then?"""
    from helpers.checkpoint import CheckpointStore

    out = {}
    for name, writer in (("in_place", _in_place_save), ("atomic", atomic_save_reference)):
        with tempfile.TemporaryDirectory(prefix="labckpt-") as tmp:
            store = CheckpointStore(tmp, keep=2)
            trainer = Trainer()
            for _ in range(2):  # two good checkpoints, steps 1 and 2
                trainer.step()
                store.save(trainer.step_no, trainer.state())
            newest = store.entries()[-1]
            trainer.step()
            newer = store.serialize(trainer.state())  # the bytes a re-save would write
            got = kill_during_write(writer, store.dir / newest["file"], newer)
            fresh = CheckpointStore(tmp, keep=2)
            loaded = fresh.load_latest()
            out[name] = {"killed": got["killed"],
                         "file_bytes_after": None if got["bytes"] is None else len(got["bytes"]),
                         "corrupt_detected": list(fresh.corrupt),
                         "loaded_step": None if loaded is None else loaded[0],
                         "newest_step": newest["step"]}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m helpers.labs.checkpointing_worker")
    p.add_argument("--dir", required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--interval", type=int, required=True)
    p.add_argument("--keep", type=int, default=2)
    p.add_argument("--write-pause-s", type=float, default=0.0)
    a = p.parse_args(argv)
    train(a.dir, a.steps, a.interval, keep=a.keep, write_pause_s=a.write_pause_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
