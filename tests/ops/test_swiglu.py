"""``book::swiglu``: PyTorch's operator checks, gradcheck in float64, torch.compile with no break."""

from __future__ import annotations

import pytest
import torch

from helpers.kernels import swiglu as k
from helpers.ops import SwiGLUMLP, swiglu, swiglu_backward


def _pair(shape, dtype=torch.float32, requires_grad=False, seed=0):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(shape, generator=gen, dtype=dtype).requires_grad_(requires_grad)
    b = torch.randn(shape, generator=gen, dtype=dtype).requires_grad_(requires_grad)
    return a, b


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 1030)])
def test_forward_matches_pytorch(shape):
    a, b = _pair(shape)
    torch.testing.assert_close(swiglu(a, b), torch.nn.functional.silu(a) * b)


def test_half_precision_rounds_once():
    a, b = _pair((2000,), dtype=torch.bfloat16)
    exact = torch.nn.functional.silu(a.double()) * b.double()
    # the kernel computes in fp32 and rounds once to bf16: within one bf16 ulp of the exact value
    torch.testing.assert_close(swiglu(a, b).double(), exact, rtol=2 ** -7, atol=1e-6)


def test_opcheck_passes_every_check():
    a, b = _pair((3, 5), requires_grad=True)
    result = torch.library.opcheck(swiglu, (a, b))
    assert result and all(v == "SUCCESS" for v in result.values()), result
    assert set(result) >= {"test_schema", "test_autograd_registration", "test_faketensor",
                           "test_aot_dispatch_dynamic"}


def test_opcheck_of_the_backward_operator():
    a, b = _pair((4, 3))
    g = torch.randn(4, 3)
    result = torch.library.opcheck(swiglu_backward, (a, b, g))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_gradcheck_float64():
    a, b = _pair((3, 4), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(swiglu, (a, b), eps=1e-6, atol=1e-8)


def test_gradcheck_catches_a_wrong_backward():
    # gradcheck is a real check: a backward with a dropped term fails it.
    def wrong(ctx, grad_out):
        a, b = ctx.saved_tensors
        s = torch.sigmoid(a)
        return grad_out * b * s, grad_out * a * s  # missing (1 + a (1 - s))

    lib = torch.library.Library("book_test", "FRAGMENT")  # noqa: F841 (keeps the namespace)

    @torch.library.custom_op("book_test::swiglu_wrong", mutates_args=())
    def op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(a) * b

    op.register_autograd(wrong, setup_context=lambda ctx, inputs, output:
                         ctx.save_for_backward(*inputs))
    a, b = _pair((3,), dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(op, (a, b), raise_exception=False)


def test_backward_kernel_matches_autograd():
    a, b = _pair((5, 7), requires_grad=True)
    g = torch.randn(5, 7)
    (torch.nn.functional.silu(a) * b).backward(g)
    da, db = k.swiglu_bwd(a.detach(), b.detach(), g)
    torch.testing.assert_close(da, a.grad)
    torch.testing.assert_close(db, b.grad)


def test_mismatched_inputs_raise():
    with pytest.raises(ValueError, match="share shape"):
        swiglu(torch.randn(3), torch.randn(4))
    with pytest.raises(ValueError, match="floating point"):
        swiglu(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64))


def test_compile_fullgraph_has_no_break_and_matches_eager():
    torch.manual_seed(0)
    m = SwiGLUMLP(16, 32)
    x = torch.randn(4, 16, requires_grad=True)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(m)(x)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    graph = explained.graphs[0].code
    assert "book.swiglu" in graph  # the operator is one call in the captured graph
    compiled = torch.compile(m, fullgraph=True)
    y = compiled(x)
    torch.testing.assert_close(y, m(x))
    y.sum().backward()
    grad = x.grad.clone()
    x.grad = None
    m(x).sum().backward()
    torch.testing.assert_close(grad, x.grad)


def test_fused_and_unfused_modules_agree():
    torch.manual_seed(1)
    m = SwiGLUMLP(8, 24, fused=True)
    x = torch.randn(3, 8)
    y_fused = m(x)
    m.fused = False
    torch.testing.assert_close(y_fused, m(x))
    with pytest.raises(ValueError):
        SwiGLUMLP(0, 4)


def test_forward_kernel_agrees_with_lesson_05s_kernel():
    from helpers.kernels import elementwise

    a, b = _pair((3000,))
    torch.testing.assert_close(k.swiglu_fwd(a, b), elementwise.swiglu(a, b))
