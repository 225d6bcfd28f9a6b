"""The memory-access lab notebook grades a reader's tiled transpose: wrong kernels fail nbval
with a message that says what is wrong; the reference solution passes."""

import pytest

NOTEBOOK = "labs/memory-access.ipynb"
MARKER = "# Exercise: tiled transpose"

HEADER = """# Exercise: tiled transpose
import triton
import triton.language as tl


@triton.jit
def transpose_tile_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
"""

REFERENCE = HEADER + """    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside)
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(tile), mask=tl.trans(inside))
"""

# masks only on rows: the edge tiles' extra columns are read and stored past the end
ROWS_ONLY = HEADER + """    inside = (rows[:, None] < M) & (cols[None, :] >= 0)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside)
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(tile), mask=tl.trans(inside))
"""

# the output's bounds swapped (M for N): right on a square matrix, wrong on this one
SWAPPED = HEADER + """    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside)
    out_mask = (cols[:, None] < M) & (rows[None, :] < N)
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(tile), mask=out_mask)
"""


def test_reference_solution_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: REFERENCE})
    assert passed, output[-3000:]


@pytest.mark.parametrize("source, message", [
    (ROWS_ONLY, "past the end of the output"),
    (SWAPPED, "still NaN"),
], ids=["mask-rows-only", "swapped-bounds"])
def test_wrong_kernels_fail_with_a_reason(grade, source, message):
    passed, output = grade(NOTEBOOK, {MARKER: source})
    assert not passed
    assert "FAIL tiled transpose" in output and message in output, output[-3000:]
