"""The checkpoint store under faults: a kill at every line of a save, an error at every system
call of a save, a full disk (simulated and a real tmpfs), and every file corrupted in turn.

After each fault the same invariant is checked (:func:`check_nothing_lost`): a fresh store
loads the newest checkpoint that was durable, every good checkpoint that ``keep`` newer good
ones do not supersede is still there and intact, nothing is reported corrupt that was not
damaged on purpose, a sweep leaves no temporary file and deletes nothing good, and the next
save works.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest
import torch

from helpers.checkpoint import store as st
from helpers.checkpoint.store import CheckpointError, CheckpointStore

KEEP = 2
CHUNK = 512  # several chunks per checkpoint file: a kill between any two of them


def state_of(step: int, variant: int = 0) -> dict:
    """A small state that identifies its step (and variant)."""
    return {"w": torch.full((256,), float(step) + variant / 10), "step": step,
            "torch_rng": torch.get_rng_state()}


def value_of(state: dict) -> float:
    return float(state["w"][0])


def file_value(store: CheckpointStore, step: int) -> float | None:
    """The value held by the file of ``step`` if it verifies by its own header, else None."""
    p = store.path_for(step)
    if not p.exists():
        return None
    got = st.unpack_checkpoint(p.read_bytes())
    if got is None or got[0] != step:
        return None
    return value_of(CheckpointStore.deserialize(got[1]))


@pytest.fixture
def fast_dir(tmp_path):
    """A directory in memory where there is one (/dev/shm: fsync costs nothing there, and a
    SIGKILL, unlike a power loss, loses no written byte anyway), else ``tmp_path``."""
    if not os.path.isdir("/dev/shm"):
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="ckpt-faults-", dir="/dev/shm"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


# --- the cases: what is on disk before the save, and the save -------------------------------

_PREPARED: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _remove_prepared_cases():
    yield
    for src, *_ in _PREPARED.values():
        shutil.rmtree(src.parent, ignore_errors=True)
    _PREPARED.clear()


def _prepare(case: str, d) -> tuple[CheckpointStore, dict, int, dict]:
    """Build the directory of ``case``; return (store, good steps before -> value, the step the
    save writes, its state). Built once per case, then copied."""
    d = Path(d)
    if case in _PREPARED:
        src, good, step, state = _PREPARED[case]
        shutil.copytree(src, d)
        return CheckpointStore(d, keep=KEEP), dict(good), step, state
    src = Path(tempfile.mkdtemp(prefix=f"ckpt-case-{case}-"))
    s, good, step, state = _build(case, src / "d")
    _PREPARED[case] = (src / "d", dict(good), step, state)
    return _prepare(case, d)


def _build(case: str, d) -> tuple[CheckpointStore, dict, int, dict]:
    s = CheckpointStore(d, keep=KEEP)
    good = {}
    if case == "first":
        return s, good, 1, state_of(1)
    for step in (1, 2):
        s.save(step, state_of(step), chunk_bytes=CHUNK)
        good[step] = float(step)
    if case == "prune":
        return s, good, 3, state_of(3)
    if case == "resave":  # the same step again, other contents: replaces a committed file
        return s, good, 2, state_of(2, variant=5)
    if case == "no-manifest":
        (s.dir / st.MANIFEST).unlink()
        return s, good, 3, state_of(3)
    if case == "damaged-newest":  # the manifest names 2, whose file is damaged: 1 is the only
        p = s.path_for(2)         # good one, and a save of 3 must not prune it
        b = bytearray(p.read_bytes())
        b[len(b) // 2] ^= 0xFF
        p.write_bytes(bytes(b))
        del good[2]
        return s, good, 3, state_of(3)
    raise ValueError(case)


CASES = ["first", "prune", "resave", "no-manifest", "damaged-newest"]
DAMAGED = {"damaged-newest": {"ckpt-000000002.pt"}}


def check_nothing_lost(d, case: str, good_before: dict, new_step: int, new_value: float,
                       *, temps_allowed: bool) -> None:
    """The invariant after a fault in a save of ``new_step`` (see the module's docstring)."""
    fresh = CheckpointStore(d, keep=KEEP)
    if not temps_allowed:  # an error (not a kill) must clean up after itself at once
        assert fresh.temp_files() == [], f"{case}: temporary files left: {fresh.temp_files()}"
    committed = file_value(fresh, new_step) == new_value  # the rename happened
    good = dict(good_before)
    if committed:
        good[new_step] = new_value
    required = dict(sorted(good.items())[-KEEP:])  # what no fault may take away
    got = fresh.load_latest()
    if not good:
        assert got is None, f"{case}: loaded {got and got[0]} with nothing committed"
    else:
        assert got is not None, f"{case}: nothing loaded"
        newest = max(good)
        assert got[0] == newest and value_of(got[1]) == good[newest], \
            f"{case}: loaded step {got[0]} ({value_of(got[1])}), the newest durable is {newest}"
    assert set(fresh.corrupt) <= DAMAGED.get(case, set()), f"{case}: corrupt {fresh.corrupt}"
    for step, value in required.items():
        assert file_value(fresh, step) == value, f"{case}: checkpoint {step} lost or damaged"
    fresh.sweep()
    assert fresh.temp_files() == []
    for step, value in required.items():
        assert file_value(fresh, step) == value, f"{case}: sweep removed checkpoint {step}"
    nxt = max([new_step, *good]) + 1
    fresh.save(nxt, state_of(nxt), chunk_bytes=CHUNK)
    again = CheckpointStore(d, keep=KEEP).load_latest()
    assert again[0] == nxt and value_of(again[1]) == float(nxt)
    assert [e["step"] for e in fresh.entries()][-1] == nxt


# --- a kill at every line of a save ----------------------------------------------------------

def _run_killed_at(n: int, fn) -> tuple[bool, int | None]:
    """Run ``fn()`` in a forked child that SIGKILLs itself at the ``n``-th line executed in
    store.py (never if ``n`` is 0); return (killed, lines executed when it finished)."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
        pid = os.fork()
    if pid == 0:  # the child
        code = 3
        try:
            os.close(r)
            count = [0]

            def local(frame, event, arg):
                if event == "line":
                    count[0] += 1
                    if count[0] == n:
                        os.kill(os.getpid(), signal.SIGKILL)
                return local

            def trace(frame, event, arg):
                return local if frame.f_code.co_filename == st.__file__ else None

            sys.settrace(trace)
            fn()
            sys.settrace(None)
            os.write(w, str(count[0]).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    out = os.read(r, 64)
    os.close(r)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True, None
    assert os.WEXITSTATUS(status) == 0, "the save raised in the child"
    return False, int(out)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_a_kill_at_every_line_of_a_save_loses_nothing(case, fast_dir):
    def attempt(n):
        d = fast_dir / f"n{n}"
        s, good, step, state = _prepare(case, d)
        killed, lines = _run_killed_at(n, lambda: s.save(step, state, chunk_bytes=CHUNK))
        check_nothing_lost(d, case, good, step, value_of(state), temps_allowed=True)
        return killed, lines

    killed, total = attempt(0)  # how many lines a save executes, and the invariant without kill
    assert not killed and total > 50
    for n in range(1, total + 1):
        killed, _ = attempt(n)
        assert killed, f"{case}: line event {n} of {total} was never reached"
    # the figure for the report: kill points x cases
    print(f"\n{case}: killed at each of {total} lines")


# --- an error at every system call of a save ------------------------------------------------

class Injected(OSError):
    pass


def _calls_of(monkeypatch, target, name, case, tmp_path) -> int:
    """How many times a clean save of ``case`` calls ``target.name``."""
    n = [0]
    real = getattr(target, name)

    def counting(*a, **k):
        n[0] += 1
        return real(*a, **k)

    s, _, step, state = _prepare(case, tmp_path / f"count-{name}")
    with monkeypatch.context() as m:
        m.setattr(target, name, counting)
        s.save(step, state, chunk_bytes=CHUNK)
    return n[0]


POINTS = [(os, "fsync"), (os, "replace"), (st, "fsync_dir"), (st, "atomic_write_bytes"),
          (st.CheckpointStore, "_write_manifest")]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("point", POINTS, ids=lambda p: p[1])
def test_an_error_at_every_call_of_a_save_is_loud_and_loses_nothing(case, point, fast_dir,
                                                                     monkeypatch):
    tmp_path = fast_dir
    target, name = point
    total = _calls_of(monkeypatch, target, name, case, tmp_path)
    assert total >= 1
    for k in range(1, total + 1):
        d = tmp_path / f"k{k}"
        s, good, step, state = _prepare(case, d)
        real, n = getattr(target, name), [0]

        def failing(*a, **kw):
            n[0] += 1
            if n[0] == k:
                raise Injected(errno.EIO, f"injected at call {k} of {name}")
            return real(*a, **kw)

        with monkeypatch.context() as m:
            m.setattr(target, name, failing)
            with pytest.raises(Injected):
                s.save(step, state, chunk_bytes=CHUNK)
        check_nothing_lost(d, case, good, step, value_of(state), temps_allowed=False)


@pytest.mark.parametrize("case", ["prune"])
def test_a_failed_prune_warns_and_keeps_the_save(case, tmp_path, monkeypatch):
    tmp_path = tmp_path / "d"
    s, good, step, state = _prepare(case, tmp_path)
    real = st.Path.unlink

    def failing(self, *a, **k):
        if self.name.startswith("ckpt-"):
            raise Injected(errno.EIO, "injected unlink")
        return real(self, *a, **k)

    monkeypatch.setattr(st.Path, "unlink", failing)
    with pytest.warns(RuntimeWarning, match="could not delete the superseded checkpoint"):
        s.save(step, state, chunk_bytes=CHUNK)
    monkeypatch.undo()
    assert s.path_for(1).exists()  # left for a later sweep
    check_nothing_lost(tmp_path, case, good, step, value_of(state), temps_allowed=False)
    assert not s.path_for(1).exists()  # superseded by 2 and 3, both good: swept


# --- a full disk --------------------------------------------------------------------------------

class _FillsUp:
    """A binary file that raises ENOSPC once ``budget[0]`` bytes have been written in all."""

    def __init__(self, f, budget):
        self._f, self._budget = f, budget

    def write(self, b):
        b = bytes(b)
        if len(b) > self._budget[0]:
            self._f.write(b[:self._budget[0]])
            self._budget[0] = 0
            raise OSError(errno.ENOSPC, "No space left on device (simulated)")
        self._budget[0] -= len(b)
        return self._f.write(b)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False

    def __getattr__(self, name):
        return getattr(self._f, name)


@pytest.mark.parametrize("case", CASES)
def test_a_disk_that_fills_up_at_any_byte_of_a_save(case, fast_dir, monkeypatch):
    tmp_path = fast_dir
    s, _, step, state = _prepare(case, tmp_path / "size")
    s.save(step, state)  # a clean save: the bytes it writes, checkpoint then manifest
    blob = s.path_for(step).read_bytes()
    manifest_len = len((s.dir / st.MANIFEST).read_bytes())
    total = len(blob) + manifest_len
    budgets = sorted({0, 1, CHUNK - 1, CHUNK, len(blob) // 2, len(blob) - 1, len(blob),
                      len(blob) + 1, len(blob) + 100, total - 1, total,
                      *range(0, total, total // 24)})
    for budget in budgets:
        d = tmp_path / f"b{budget}"
        s, good, step, state = _prepare(case, d)
        left = [budget]
        real_open = open

        def open_(file, mode="r", *a, **k):
            f = real_open(file, mode, *a, **k)
            return _FillsUp(f, left) if "w" in mode and "b" in mode else f

        with monkeypatch.context() as m:
            m.setattr(st, "open", open_, raising=False)
            try:
                s.save(step, state, chunk_bytes=CHUNK)
                failed = False
            except OSError as exc:  # a clear error, whichever file filled the disk
                assert exc.errno == errno.ENOSPC and "intact" in str(exc), str(exc)
                failed = True
            assert failed == (budget < len(blob) + manifest_len), budget
            if budget < len(blob):
                assert failed and file_value(CheckpointStore(d), step) != value_of(state)
        check_nothing_lost(d, case, good, step, value_of(state), temps_allowed=False)


def test_too_little_free_space_is_refused_before_writing(tmp_path, monkeypatch):
    tmp_path = tmp_path / "d"
    s, good, step, state = _prepare("prune", tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(st.shutil, "disk_usage", lambda p: usage._replace(free=1000))
    with pytest.raises(OSError, match="not enough free space") as exc:
        s.save(step, state)
    assert exc.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written or pruned
    monkeypatch.undo()
    check_nothing_lost(tmp_path, "prune", good, step, value_of(state), temps_allowed=False)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 1 MiB tmpfs (needs root and mount; skipped with the reason where unavailable)."""
    d = tmp_path / "tmpfs"
    d.mkdir()
    if not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount")):
        pytest.skip("mounting a tmpfs needs root and the mount command")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(d)],
                         capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {got.stderr.strip()}")
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=True)


def test_a_real_full_disk_loses_nothing(small_tmpfs, monkeypatch):
    d = small_tmpfs
    s = CheckpointStore(d, keep=2)

    def big(step):  # about 400 KB: two fit in 1 MiB, three do not
        return {"w": torch.full((100_000,), float(step))}

    s.save(1, big(1))
    s.save(2, big(2))
    with pytest.raises(OSError, match="not enough free space") as exc:
        s.save(3, big(3))  # refused by the free-space check, before any byte is written
    assert exc.value.errno == errno.ENOSPC
    # a file system that promises room it does not have: the write itself fails
    usage = shutil.disk_usage(d)
    monkeypatch.setattr(st.shutil, "disk_usage", lambda p: usage._replace(free=1 << 40))
    with pytest.raises(OSError, match="disk full") as exc:
        s.save(3, big(3))
    assert exc.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert s.temp_files() == []
    assert sorted(p.name for p in d.iterdir()) == [st.MANIFEST, "ckpt-000000001.pt",
                                                   "ckpt-000000002.pt"]
    step, state = CheckpointStore(d).load_latest()
    assert step == 2 and float(state["w"][0]) == 2.0


# --- every file corrupted, alone and together ------------------------------------------------

def _ckpt_corruptions(blob: bytes, other: bytes) -> dict:
    head = blob.index(b"\n")
    return {
        "deleted": None,
        "empty": b"",
        "truncated to half": blob[:len(blob) // 2],
        "one byte short": blob[:-1],
        "header only": blob[:head + 1],
        "a byte of the header flipped": blob[:5] + bytes([blob[5] ^ 1]) + blob[6:],
        "a digit of the header's digest": blob.replace(b'"sha256": "', b'"sha256": "0', 1),
        "a byte of the payload flipped": blob[:head + 200] + bytes([blob[head + 200] ^ 0xFF])
        + blob[head + 201:],
        "the last byte flipped": blob[:-1] + bytes([blob[-1] ^ 0xFF]),
        "garbage appended": blob + b"garbage",
        "zeros": bytes(len(blob)),
        "another step's file": other,
        "the payload without its header": blob[head + 1:],
    }


def _manifest_corruptions(text: str) -> dict:
    m = json.loads(text)
    out = {"deleted": None, "empty": "", "truncated to half": text[:len(text) // 2],
           "not json": "{not json", "null": "null", "a list": "[]",
           "checkpoints not a list": '{"checkpoints": 5}', "no checkpoints key": "{}"}
    for key in ("sha256", "step", "bytes", "file"):
        e = json.loads(text)
        del e["checkpoints"][-1][key]
        out[f"newest entry without {key}"] = json.dumps(e)
    e = json.loads(text)
    e["checkpoints"][-1]["step"] = str(e["checkpoints"][-1]["step"])
    out["a step that is a string"] = json.dumps(e)
    e = json.loads(text)
    e["checkpoints"][-1]["file"] = "../elsewhere.pt"
    out["a file outside the store"] = json.dumps(e)
    e = json.loads(text)
    e["checkpoints"][-1]["sha256"] = "0" * 64
    out["a wrong digest"] = json.dumps(e)
    e = json.loads(text)
    e["checkpoints"] = e["checkpoints"][:1]
    out["the newest entry missing"] = json.dumps(e)
    out["a duplicated entry"] = json.dumps({"checkpoints": m["checkpoints"] * 2})
    return out


def _write(p, content) -> None:
    if content is None:
        p.unlink(missing_ok=True)
    else:
        p.write_bytes(content if isinstance(content, bytes) else content.encode())


def _two_checkpoints(d) -> CheckpointStore:
    s = CheckpointStore(d, keep=KEEP)
    s.save(1, state_of(1))
    s.save(2, state_of(2))
    return s


def _all_files(d) -> dict:
    return {p.name: p.read_bytes() for p in d.iterdir()}


def test_every_file_corrupted_in_turn(tmp_path):
    ref = _two_checkpoints(tmp_path / "ref")
    blobs = {s: ref.path_for(s).read_bytes() for s in (1, 2)}
    manifest = (ref.dir / st.MANIFEST).read_text()
    tried = 0
    for target in (1, 2):
        for kind, content in _ckpt_corruptions(blobs[target], blobs[3 - target]).items():
            d = tmp_path / f"c{target}-{tried}"
            s = _two_checkpoints(d)
            _write(s.path_for(target), content)
            damaged = _all_files(d).get(s.path_for(target).name)
            fresh = CheckpointStore(d, keep=KEEP)
            step, state = fresh.load_latest()
            want = 1 if target == 2 else 2
            assert step == want and value_of(state) == float(want), (target, kind)
            if target == 2 and content is not None:
                assert fresh.corrupt == [s.path_for(target).name], (target, kind)
            elif target == 1:
                assert fresh.corrupt == [], kind  # the newest verified: 1 is never read
            fresh.sweep()  # a damaged file is never deleted, a good one neither
            assert _all_files(d).get(s.path_for(target).name) == damaged, (target, kind)
            assert file_value(fresh, want) == float(want)
            fresh.save(3, state_of(3))  # the next save prunes only good superseded files
            assert _all_files(d).get(s.path_for(target).name) == damaged, (target, kind)
            assert file_value(fresh, want) == float(want) and file_value(fresh, 3) == 3.0
            tried += 1
    for kind, content in _manifest_corruptions(manifest).items():
        d = tmp_path / f"m{tried}"
        s = _two_checkpoints(d)
        _write(d / st.MANIFEST, content)
        files = {n: b for n, b in _all_files(d).items() if n != st.MANIFEST}
        fresh = CheckpointStore(d, keep=KEEP)
        assert fresh.sweep() == [], kind  # deletes nothing, manifest readable or not
        step, state = fresh.load_latest()
        assert step == 2 and value_of(state) == 2.0 and not (set(fresh.corrupt) - {st.MANIFEST}), \
            (kind, fresh.corrupt)
        assert {n: b for n, b in _all_files(d).items() if n != st.MANIFEST} == files, kind
        # the manifest is whole again: both checkpoints, verified, named
        assert [e["step"] for e in CheckpointStore(d).entries()] == [1, 2], kind
        assert CheckpointStore(d)._read_manifest()[0] == "ok", kind
        tried += 1
    # the manifest and the newest checkpoint damaged together
    for mkind, mcontent in _manifest_corruptions(manifest).items():
        for ckind, ccontent in _ckpt_corruptions(blobs[2], blobs[1]).items():
            d = tmp_path / f"x{tried}"
            s = _two_checkpoints(d)
            _write(d / st.MANIFEST, mcontent)
            _write(s.path_for(2), ccontent)
            step, state = CheckpointStore(d).load_latest()
            assert step == 1 and value_of(state) == 1.0, (mkind, ckind)
            tried += 1
    print(f"\n{tried} corruptions tried")
    assert tried == 2 * 13 + 17 + 17 * 13


def test_every_checkpoint_damaged_fails_loudly_and_deletes_nothing(tmp_path):
    for mkind, mcontent in {"intact": ..., "deleted": None, "not json": "{x"}.items():
        d = tmp_path / mkind
        s = _two_checkpoints(d)
        if mcontent is not ...:
            _write(d / st.MANIFEST, mcontent)
        for step in (1, 2):
            _write(s.path_for(step), s.path_for(step).read_bytes()[:300])
        before = _all_files(d)
        fresh = CheckpointStore(d)
        with pytest.raises(CheckpointError, match="refusing to start again from step 0"):
            fresh.load_latest()
        assert fresh.sweep() == [] and _all_files(d) == before, mkind
    d = tmp_path / "gone"  # the manifest names checkpoints whose files are all gone
    s = _two_checkpoints(d)
    for step in (1, 2):
        s.path_for(step).unlink()
    with pytest.raises(CheckpointError, match="missing"):
        CheckpointStore(d).load_latest()


def test_a_missing_manifest_is_rebuilt_and_says_so(tmp_path):
    s = _two_checkpoints(tmp_path)
    before = s.entries()
    (tmp_path / st.MANIFEST).unlink()
    fresh = CheckpointStore(tmp_path, keep=KEEP)
    step, _ = fresh.load_latest()
    assert step == 2 and fresh.recovered == f"{st.MANIFEST} missing"
    assert fresh.entries() == before  # the same entries, rebuilt from the files' headers
    again = CheckpointStore(tmp_path, keep=KEEP)
    assert again.load_latest()[0] == 2 and again.recovered is None


def test_a_checkpoint_committed_but_not_yet_in_the_manifest_is_used_not_swept(tmp_path):
    # a kill between the rename of checkpoint 3 and the manifest's update
    s = _two_checkpoints(tmp_path)
    old_manifest, old_first = (tmp_path / st.MANIFEST).read_bytes(), s.path_for(1).read_bytes()
    s.save(3, state_of(3))  # then put back what the save changed after its rename
    (tmp_path / st.MANIFEST).write_bytes(old_manifest)  # names 1 and 2 only
    s.path_for(1).write_bytes(old_first)  # not pruned yet
    fresh = CheckpointStore(tmp_path, keep=KEEP)
    fresh.sweep()  # before loading, as a careless caller might: 3 must survive
    assert s.path_for(3).exists()
    step, state = fresh.load_latest()
    assert step == 3 and value_of(state) == 3.0 and "not in" in fresh.recovered
    assert [e["step"] for e in fresh.entries()] == [2, 3]
    assert fresh.sweep() == [s.path_for(1)]  # now positively superseded by 2 and 3


def test_a_file_with_another_steps_header_is_not_trusted(tmp_path):
    s = _two_checkpoints(tmp_path)
    (tmp_path / st.MANIFEST).unlink()
    s.path_for(2).write_bytes(s.path_for(1).read_bytes())  # renamed by hand, say
    fresh = CheckpointStore(tmp_path)
    step, _ = fresh.load_latest()
    assert step == 1 and fresh.corrupt == [s.path_for(2).name]


def test_files_written_before_headers_still_load_through_the_manifest(tmp_path):
    # the format of the previous version: the file is the bare torch.save payload
    payload = CheckpointStore.serialize(state_of(4))
    (tmp_path / "ckpt-000000004.pt").write_bytes(payload)
    (tmp_path / st.MANIFEST).write_text(json.dumps({"checkpoints": [
        {"step": 4, "file": "ckpt-000000004.pt", "bytes": len(payload),
         "sha256": st.sha256_bytes(payload)}]}))
    step, state = CheckpointStore(tmp_path).load_latest()
    assert step == 4 and value_of(state) == 4.0


def test_fsync_dir_raises_real_errors_and_ignores_unsupported(tmp_path, monkeypatch):
    def fsync_failing(code):
        def f(fd):
            raise OSError(code, os.strerror(code))
        return f

    monkeypatch.setattr(st.os, "fsync", fsync_failing(errno.EINVAL))
    st.fsync_dir(tmp_path)  # a file system without directory fsync: not an error
    monkeypatch.setattr(st.os, "fsync", fsync_failing(errno.EIO))
    with pytest.raises(OSError):
        st.fsync_dir(tmp_path)
