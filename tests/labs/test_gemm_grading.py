"""Grading the GEMM lab with nbval: a K-loop without its K mask fails, a right one passes."""

MARKER = "# Exercise: tiled gemm"
NOTEBOOK = "labs/gemm.ipynb"

HEADER = '''# Exercise: tiled gemm
import triton
import triton.language as tl


@triton.jit
def my_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
'''

FOOTER = '''
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
'''

NO_K_MASK = HEADER + '''
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)   # forgets the edge of K
        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
''' + FOOTER

RIGHT = HEADER + '''
    for k0 in range(0, K, BLOCK_K):
        k_left = K - k0
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
''' + FOOTER


def test_a_k_loop_without_its_k_mask_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: NO_K_MASK})
    assert not passed, output[-3000:]
    assert "FAIL gemm kernel (fp32, 50x70x30)" in output, output[-3000:]
    assert "wrong values" in output or "still NaN" in output, output[-3000:]


def test_a_right_k_loop_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
