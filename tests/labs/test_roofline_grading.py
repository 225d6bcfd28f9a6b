"""Grading the roofline lab with nbval: a copy kernel without its tail fails, a right one passes."""

MARKER = "# Exercise: copy kernel"
NOTEBOOK = "labs/roofline.ipynb"

HEADER = '''# Exercise: copy kernel
import triton
import triton.language as tl


@triton.jit
def my_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)

'''

NO_TAIL = HEADER + '''
def my_copy(src, dst):
    n = src.numel()
    BLOCK = 1024
    my_copy_kernel[(n // BLOCK,)](src, dst, n, BLOCK=BLOCK)  # forgets the last partial block
    return dst
'''

RIGHT = HEADER + '''
def my_copy(src, dst):
    n = src.numel()
    BLOCK = 1024
    my_copy_kernel[(triton.cdiv(n, BLOCK),)](src, dst, n, BLOCK=BLOCK)
    return dst
'''


def test_a_kernel_without_its_tail_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: NO_TAIL})
    assert not passed, output[-3000:]
    assert "FAIL copy kernel" in output and "left unwritten (still NaN)" in output, output[-3000:]


def test_a_right_kernel_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
