"""CUDA C kernels of the memory-access lab: a 32 x 32 shared-memory transpose, padded or not.

The lab times :func:`build`'s ``transpose_smem(x, y, pad, stream)`` with ``pad = 0``
(``tile[32][32]``: every thread of a warp reading a column hits one bank) and ``pad = 1``
(``tile[32][33]``: no conflict). It is compiled at run time with
``torch.utils.cpp_extension.load_inline``, which needs ``nvcc`` and ``ninja``;
:func:`cuda_compiler` says whether they are there, and why not.

Reference: M. Harris, "An Efficient Matrix Transpose in CUDA C/C++" (NVIDIA Developer Blog,
2013), whose block shape (32 x 8 threads, four elements each) the kernel follows.

Library only: no page imports it.
"""

from __future__ import annotations

import os
import shutil
import time

__all__ = ["CUDA_SOURCE", "CPP_SOURCE", "cuda_compiler", "build"]

CUDA_SOURCE = r"""
#include <cuda_runtime.h>

// The 32 x 32 shared-memory transpose of NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++"
// (blocks of 32 x 8 threads, each thread moving four elements). PAD = 0: a warp reading a
// column of the tile hits one bank 32 times; PAD = 1: the row pitch is 33 words, no conflict.
template <int PAD>
__global__ void transpose_smem_kernel(const float* __restrict__ x, float* __restrict__ y,
                                      int M, int N) {
  __shared__ float tile[32][32 + PAD];
  const int col0 = blockIdx.x * 32, row0 = blockIdx.y * 32;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    const int r = row0 + ty + j, c = col0 + tx;
    if (r < M && c < N) tile[ty + j][tx] = x[(long long)r * N + c];
  }
  __syncthreads();
  for (int j = 0; j < 32; j += 8) {
    const int r = col0 + ty + j, c = row0 + tx;  // y is N x M
    if (r < N && c < M) y[(long long)r * M + c] = tile[tx][ty + j];
  }
}

// Launch on the given stream; returns the launch's cudaError_t (0: success).
int launch_transpose_smem(const float* x, float* y, int M, int N, int pad, void* stream) {
  dim3 block(32, 8), grid((N + 31) / 32, (M + 31) / 32);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (pad == 0)
    transpose_smem_kernel<0><<<grid, block, 0, s>>>(x, y, M, N);
  else
    transpose_smem_kernel<1><<<grid, block, 0, s>>>(x, y, M, N);
  return static_cast<int>(cudaGetLastError());
}
"""
# The torch side is plain C++ (no CUDA headers), so only the binding pays for torch's headers.
CPP_SOURCE = r"""
#include <torch/extension.h>

int launch_transpose_smem(const float* x, float* y, int M, int N, int pad, void* stream);

torch::Tensor transpose_smem(torch::Tensor x, torch::Tensor y, int64_t pad, int64_t stream) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32);
  TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat32);
  const int M = x.size(0), N = x.size(1);
  TORCH_CHECK(y.size(0) == N && y.size(1) == M, "y must be N x M");
  const int err = launch_transpose_smem(x.data_ptr<float>(), y.data_ptr<float>(), M, N,
                                        static_cast<int>(pad), reinterpret_cast<void*>(stream));
  TORCH_CHECK(err == 0, "kernel launch failed with cudaError ", err);
  return y;
}
"""


def cuda_compiler() -> tuple[str | None, str]:
    """The path of ``nvcc`` if one is usable, else None and the reason."""
    try:
        from torch.utils import cpp_extension
    except Exception as exc:  # pragma: no cover - torch is a dependency
        return None, f"torch.utils.cpp_extension unavailable ({exc})"
    home = cpp_extension.CUDA_HOME
    nvcc = os.path.join(home, "bin", "nvcc") if home else shutil.which("nvcc")
    if not nvcc or not os.path.exists(nvcc):
        return None, "no CUDA C compiler (nvcc) found: CUDA_HOME is unset and nvcc is not on PATH"
    if not cpp_extension.is_ninja_available():
        return None, "torch.utils.cpp_extension.load_inline needs ninja, which is not installed"
    return nvcc, ""


def build():
    """Compile the kernels; return ``(module, seconds the build took)``.

    Raises whatever ``load_inline`` raises when the compiler fails (the lab records it).
    """
    from torch.utils.cpp_extension import load_inline

    t0 = time.perf_counter()
    mod = load_inline(name="labmem_transpose_smem", cpp_sources=CPP_SOURCE,
                      cuda_sources=CUDA_SOURCE, functions=["transpose_smem"],
                      extra_cuda_cflags=["-O3"], verbose=False)
    return mod, time.perf_counter() - t0
