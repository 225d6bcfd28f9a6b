"""torch.compile in these tests: Inductor imported the book's way, its cache under _build/.

helpers.compilers imports TorchInductor after helpers.kernels has chosen Triton's mode, with
torch's own DeprecationWarning (torch.jit.script_method, torch 2.13) silenced, once.
"""

import os

import pytest

import helpers.compilers  # noqa: F401

from helpers.book import ROOT  # the repository root, computed once


@pytest.fixture(scope="session", autouse=True)
def inductor_cache():
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR") is not None:
        yield
        return
    path = ROOT / "_build" / "inductor-cache"
    path.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(path)
    yield
    os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
