"""Inductor's compiled code for these tests goes to one cache under _build/ (git-ignored).

The first compilation on a machine builds Inductor's C++ prelude (tens of seconds on two
cores); the cache keeps that, and the compiled kernels, between test runs and page builds.
"""

import os

import pytest

from helpers.book import ROOT  # the repository root, computed once


@pytest.fixture(scope="session", autouse=True)
def inductor_cache():
    old = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if old is None:
        path = ROOT / "_build" / "inductor-cache"
        path.mkdir(parents=True, exist_ok=True)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(path)
    yield
    if old is None:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
