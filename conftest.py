"""Environment shared by the tests and the kernels that nbval starts (they inherit it).

tools/nb_refs.py sets the same variables when it makes the reference notebooks, so a page
runs in the same environment when its reference is made and when nbval compares against it.
"""

import contextlib
import os
import signal

import pytest

from helpers.bench.sizes import SIZE_ENV

os.environ["PYTHONHASHSEED"] = "0"  # stable ordering of sets and str-keyed dicts
os.environ["OMP_NUM_THREADS"] = "1"  # same reduction order as the reference run
os.environ.setdefault(SIZE_ENV, "small")  # the one size switch: small problems in tests
os.environ.pop("MPLBACKEND", None)  # Agg would drop inline figures from executed pages

try:  # hypothesis: fresh examples on every run, reproducible from the seed printed in the header
    from hypothesis import settings

    # No derandomize: each run draws new examples, so the property tests keep searching.
    # A failure prints the seed (--hypothesis-seed) and a blob to replay it (print_blob).
    # BOOK_HYPOTHESIS_SEED=<int> (or pytest --hypothesis-seed=<int>) replays one run exactly.
    # No per-example deadline on a busy CI machine.
    settings.register_profile("book", deadline=None, print_blob=True)
    settings.load_profile("book")
except ImportError:  # the GPU machine may lack hypothesis; its tests that need it skip there
    pass


def _hypothesis_seed(config):
    """The seed this run uses: --hypothesis-seed, else BOOK_HYPOTHESIS_SEED, else a fresh one."""
    seed = config.getoption("hypothesis_seed", default=None)
    if seed is None:
        seed = os.environ.get("BOOK_HYPOTHESIS_SEED")
    if seed is None:
        import random

        seed = random.SystemRandom().randrange(2**32)
    return int(seed)


@pytest.hookimpl(tryfirst=True)  # before the hypothesis plugin reads --hypothesis-seed
def pytest_configure(config):
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return
    seed = _hypothesis_seed(config)
    config._book_hypothesis_seed = seed
    if config.getoption("hypothesis_seed", default=None) is None:
        config.option.hypothesis_seed = seed  # the hypothesis plugin seeds every test from it


def pytest_report_header(config):
    seed = getattr(config, "_book_hypothesis_seed", None)
    if seed is None:
        return None
    return (f"hypothesis seed: {seed} (replay with --hypothesis-seed={seed} "
            f"or BOOK_HYPOTHESIS_SEED={seed})")


@contextlib.contextmanager
def _deadline(seconds: float):
    def expire(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def deadline():
    """``with deadline(seconds):`` raises TimeoutError in the block after ``seconds`` (SIGALRM),
    so a regression that hangs (a NaN arrival once made the engine spin) fails instead."""
    return _deadline
