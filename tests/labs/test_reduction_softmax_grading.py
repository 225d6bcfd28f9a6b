"""Grading the reduction and softmax lab with nbval: a softmax that does not subtract the row's
maximum overflows on large inputs and fails; the right kernel passes."""

MARKER = "# Exercise: fused softmax"
NOTEBOOK = "labs/reduction-softmax.ipynb"

HEADER = '''# Exercise: fused softmax
import triton
import triton.language as tl

'''

NO_MAX = HEADER + '''
@triton.jit
def my_softmax_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x)  # forgets to subtract the maximum: overflows beyond about 88.7
    tl.store(y_ptr + row * y_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def my_softmax(x, out):
    return kern.softmax_with(my_softmax_kernel, x, out)
'''

RIGHT = HEADER + '''
@triton.jit
def my_softmax_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def my_softmax(x, out):
    return kern.softmax_with(my_softmax_kernel, x, out)
'''


def test_a_softmax_without_the_max_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: NO_MAX})
    assert not passed, output[-3000:]
    assert "FAIL fused softmax" in output and "subtract each row's maximum" in output, output[-3000:]


def test_a_right_kernel_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
