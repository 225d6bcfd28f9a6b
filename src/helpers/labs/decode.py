"""Lab runner: decode is memory-bound. Tokens per second against batch size and the bandwidth model.

One decode step of a transformer reads every weight it multiplies with once (shared by the
batch) and the KV cache of every sequence, and produces one token per sequence. The bandwidth
model (:mod:`helpers.models.decode_bandwidth`) says the step takes at least

.. math:: T_{\\text{step}} \\ge \\frac{Q_w + B\\,Q_{kv}}{M}

so tokens per second grow almost linearly with the batch :math:`B` while the weights dominate,
then flatten as the KV cache (which grows with :math:`B`) or the arithmetic takes over.

What it measures (timing only through :func:`helpers.bench.bench`; CUDA events on a GPU):

* **models**: on a GPU, a scaled-up Llama-style :class:`~helpers.models.transformer.TransformerConfig`
  with random weights (:data:`GPU_CONFIG`, about 4 GB in bf16: the book's 2.8M-parameter
  ``book-lm`` is 5.6 MB and would sit in the H200's 50 MB L2 cache) and ``book-lm`` itself;
  on a CPU, ``book-lm`` (its trained weights, fp32) and a small scaled configuration;
* **decode steps**, not prefill: for each batch size and context length the KV cache
  (:class:`helpers.nn.decoder.KVCache`) is allocated for exactly ``context`` positions and filled
  with random values, and the step decodes position ``context - 1``: it reads the whole cache,
  exactly the bytes allocated. The same step is timed eagerly and, on a GPU, replayed from a CUDA
  graph (which removes the per-kernel launch cost; :func:`kernels_per_step` counts the kernels);
* **a copy bandwidth** (``dst.copy_(src)`` of a large buffer), the achievable side of the model;
* **the book's own attention**, at the largest batch and longest context only: the same step
  with :class:`helpers.nn.decoder.Attention`, which copies the keys and values once per query
  head, to show what that copy costs.

Correctness before timing, for every model: the allocated parameters equal
:func:`~helpers.models.transformer.parameter_count`; every KV cache's ``nbytes`` equals
:func:`~helpers.models.transformer.kv_cache_bytes` exactly; a batched decode step gives the
same logits as each sequence decoded alone (after a real batched prefill); the timed attention
(:class:`ReadOnceAttention`) gives the same logits as the book's decoder; the graph replays the
eager step's logits.

The timed attention is the book's :class:`~helpers.nn.decoder.Attention` with one change: it
groups the query heads that share a key/value head instead of copying the keys and values once
per query head (``repeat_interleave``), so the cache is read once per step as the model
assumes (a serving kernel such as FlashAttention or vLLM's PagedAttention does the same).

Page: ``labs/decode.md``. Run as
``python -m helpers.labs.decode --out DIR [--size small|full] [--device cpu|cuda]``.

Additions to the lab framework, kept here: :func:`decode_bytes` (the model's bytes per step) and
:func:`grade_decode_bytes` (the page's grader). What the page computes from a result (rows,
tables, the kernel breakdown) is in :mod:`helpers.labs.analysis.decode`.
"""

from __future__ import annotations

import math
import secrets

import torch
import torch.nn.functional as F

from helpers import specs
from helpers.bench import pick, sync
from helpers.labs import core
from helpers.labs.core import finite, lab_device, new_result, progress, run_cli, summarize
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import decode_bandwidth as bw_model
from helpers.models import transformer as tf
from helpers.models.transformer import TransformerConfig
from helpers.nn.decoder import Attention, apply_rope

__all__ = ["LAB", "GPU", "GPU_CONFIG", "CPU_CONFIG", "decode_bytes", "kv_bytes",
           "ReadOnceAttention", "read_once", "build_model", "configs", "batches", "contexts",
           "check_batched_decode", "kernels_per_step", "kernel_profile", "measure_copy",
           "measure_model", "run", "reference_or_none", "grade_decode_bytes", "main"]

#: The lab's record: its page, size table and bench settings.
LAB = core.Lab(
    "decode", pages=("labs/decode.md",),
    sizes={"batches": ([1, 4, 16], [1, 2, 4, 8, 16, 32, 64, 128, 256]),
           "contexts": ([64, 512], [128, 4096]), "copy_mib": (16, 1024)},
    budget_s=(0.08, 0.25), warmup_s=(0.01, 0.05), min_reps=(3, 3),
    claims=(
        Claim("tokens_hbm_bound", "decode tokens per second (the faster of eager and CUDA "
              "graph)", "bound",
              model="helpers.models.decode_bandwidth.decode_tokens_per_s_upper_bound",
              ceilings="datasheet HBM bandwidth of the H200 SXM; the step's bytes from "
                       "decode_bytes (matmul weights once, every sequence's KV cache)",
              limit="upper",
              why="a step reads at least its weights and every sequence's cache, and no "
                  "memory delivers bytes faster than its datasheet bandwidth"),
        Claim("eager_step", "eager decode step time", "prediction",
              model="helpers.models.launch.eager_step_time_s",
              ceilings="measured in the same run: the host's time per launch (book-lm's eager "
                       "step at one sequence over its profiled kernel count), the step's "
                       "kernel count (profiler) and its CUDA-graph replay time",
              tolerance=0.10,
              why="the host's time per launch is not constant: the 2B model's eager medians "
                  "at 128 tokens span about 5 % across batches (7.9 to 8.3 ms, nearly the same "
                  "kernels), and its operators are book-lm's but not every launch costs the "
                  "same; where host and device take about as long (4096 tokens, 256 sequences) "
                  "their overlap is imperfect, a few % the model leaves out"),
    ))
#: The GPU whose datasheet the model uses (and on which the reference was measured).
GPU = specs.H200_SXM

#: The GPU tier's model: Llama-3-8B's layer shape (width 4096, 32 query heads sharing 8
#: key/value heads, SwiGLU width 14336) with 8 layers and a 32000-token vocabulary: about 2.0
#: billion parameters, 4.0 GB in bf16, far larger than any cache, so the weights stream from HBM.
GPU_CONFIG = TransformerConfig(
    name="decode-lab-2B", n_layers=8, d_model=4096, n_heads=32, n_kv_heads=8, d_ff=14336,
    vocab_size=32000, max_seq_len=4096,
    source="this book's decode lab: Llama-3-8B's layer shape, 8 layers, random weights")
#: The CPU tier's scaled model: the same shape family, small enough for a laptop.
CPU_CONFIG = TransformerConfig(
    name="decode-lab-small", n_layers=4, d_model=384, n_heads=6, n_kv_heads=2, d_ff=1024,
    vocab_size=2048, max_seq_len=1024,
    source="this book's decode lab: a small Llama-style shape, random weights")

#: Largest |difference| between logits of two ways of computing the same step, as a fraction of
#: the largest |logit|, per dtype.
REL_TOLERANCE = {"float32": 1e-4, "bfloat16": 5e-2}


# --- the model of the bytes -----------------------------------------------------------------

def kv_bytes(cfg: TransformerConfig, *, batch: int, context_len: int,
             bytes_per_element: float) -> float:
    """KV-cache bytes of ``batch`` sequences of ``context_len`` tokens:
    :func:`helpers.models.transformer.kv_cache_bytes` with ``cfg``'s shape."""
    return tf.kv_cache_bytes(batch=batch, seq_len=context_len, n_layers=cfg.n_layers,
                             n_kv_heads=cfg.n_kv_heads, head_dim=cfg.head_dim,
                             bytes_per_element=bytes_per_element)


def decode_bytes(cfg: TransformerConfig, batch: int, context_len: int,
                 bytes_per_element: float) -> float:
    """Bytes one decode step reads: the weights it multiplies with, once, plus every sequence's
    KV cache (:func:`helpers.models.decode_bandwidth.decode_step_bytes`).

    The weights are :func:`~helpers.models.transformer.matmul_parameter_count` (attention, MLP
    and output head): the embedding table is only gathered, ``batch`` rows of it, and the norms
    are negligible.

    >>> from helpers.models.transformer import LLAMA2_7B
    >>> round(decode_bytes(LLAMA2_7B, 1, 0, 2) / 1e9, 2)  # the weights of Llama-2-7B in bf16
    13.21
    """
    if not (isinstance(batch, int) and batch >= 1):
        raise ValueError(f"batch must be an integer >= 1, got {batch!r}")
    if not (isinstance(context_len, int) and context_len >= 0):
        raise ValueError(f"context_len must be an integer >= 0, got {context_len!r}")
    weights = tf.weight_bytes(tf.matmul_parameter_count(cfg), bytes_per_element)
    per_seq = kv_bytes(cfg, batch=1, context_len=context_len, bytes_per_element=bytes_per_element)
    return bw_model.decode_step_bytes(weights, per_seq, batch)


# --- the timed attention ---------------------------------------------------------------------

class ReadOnceAttention(Attention):
    """The book's attention, with the query heads of a group stacked so that each key/value head
    is multiplied in place, never copied once per query head (``repeat_interleave``)."""

    def forward(self, x, cos, sin, start_pos, cache, layer):
        B, T, _ = x.shape
        hkv, g, dh = self.n_kv_heads, self.n_heads // self.n_kv_heads, self.head_dim
        q = self.wq(x).view(B, T, self.n_heads, dh).transpose(1, 2)
        k = self.wk(x).view(B, T, hkv, dh).transpose(1, 2)
        v = self.wv(x).view(B, T, hkv, dh).transpose(1, 2)
        if self.rope:
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:
            k, v = cache.update(layer, start_pos, k, v)
        S = k.shape[2]
        # query head h = j * g + i uses key/value head j: its rows (i, t) are stacked in group j
        q = q.reshape(B, hkv, g * T, dh)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dh)  # (B, Hkv, g*T, S)
        query_pos = torch.arange(start_pos, start_pos + T, device=x.device).repeat(g)[:, None]
        key_pos = torch.arange(S, device=x.device)[None, :]
        scores = scores.masked_fill(key_pos > query_pos, float("-inf"))
        probs = F.softmax(scores.float(), dim=-1).type_as(q)
        out = (probs @ v).view(B, hkv, g, T, dh).permute(0, 3, 1, 2, 4)
        return self.wo(out.reshape(B, T, self.n_heads * dh))


def read_once(model):
    """Switch every attention module of ``model`` (a :class:`helpers.nn.decoder.Decoder`) to
    :class:`ReadOnceAttention` in place (same weights); return the model."""
    for block in model.blocks:
        block.attn.__class__ = ReadOnceAttention
    return model


def build_model(cfg: TransformerConfig, device: str, dtype):
    """A :class:`~helpers.nn.decoder.Decoder` of ``cfg`` in eval mode on ``device`` in ``dtype``:
    ``book-lm`` with its trained weights, any other shape with random ones (decode speed does not
    depend on the values). The rotary tables stay in float32."""

    from helpers.nn import tinylm
    from helpers.nn.decoder import Decoder, rope_tables

    if cfg.name in tinylm.MODELS:
        model = tinylm.load(cfg.name, device=device, dtype=dtype)
    else:
        torch.manual_seed(0)
        with torch.device(device):
            model = Decoder(cfg)
        model = model.to(dtype=dtype).eval()
    cos, sin = rope_tables(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta, device=device)
    model.rope_cos, model.rope_sin = cos, sin
    return model


# --- sizes ------------------------------------------------------------------------------------

def configs() -> list[TransformerConfig]:
    """The models decoded: the scaled one first, then ``book-lm``."""
    from helpers.nn.tinylm import BOOK_LM

    return pick(small=[CPU_CONFIG, BOOK_LM], full=[GPU_CONFIG, BOOK_LM])


def batches() -> list[int]:
    return LAB.size("batches")


def contexts(cfg: TransformerConfig) -> list[int]:
    """Context lengths (tokens in the cache at the timed step): a short one and a long one."""
    return [c for c in LAB.size("contexts") if c <= cfg.max_seq_len] or \
        [cfg.max_seq_len]


def _dtype(device: str):

    return torch.bfloat16 if device.startswith("cuda") else torch.float32


def _close(a, b, dtype_name: str, what: str) -> float:
    """Largest |a - b| relative to max |b|; raise if it exceeds :data:`REL_TOLERANCE`."""
    a64, b64 = a.double().cpu(), b.double().cpu()
    scale = float(b64.abs().max())
    err = float((a64 - b64).abs().max()) / scale if scale > 0 else float("nan")
    if not err <= REL_TOLERANCE[dtype_name]:  # catches NaN too
        raise AssertionError(f"{what}: logits differ by {err:.3g} of their largest value "
                             f"(tolerance {REL_TOLERANCE[dtype_name]:g})")
    return err


# --- correctness ------------------------------------------------------------------------------

def check_batched_decode(model, device: str, *, batch: int = 3, prompt_len: int = 12,
                         seed: int = 0) -> dict:
    """Prefill ``batch`` random prompts together, decode one step; compare the step's logits with
    each sequence prefilled and decoded alone, and with the book's stock attention.

    Returns the worst relative differences; raises ``AssertionError`` beyond tolerance.
    """

    from helpers.nn.decoder import Attention, KVCache

    cfg = model.cfg
    dtype = model.embed.weight.dtype
    name = str(dtype).removeprefix("torch.")
    gen = torch.Generator().manual_seed(seed)
    prompts = torch.randint(cfg.vocab_size, (batch, prompt_len + 1), generator=gen).to(device)

    def step(m, tokens):
        cache = KVCache(cfg, batch=tokens.shape[0], max_seq_len=prompt_len + 1, dtype=dtype,
                        device=device)
        m(tokens[:, :prompt_len], cache=cache, start_pos=0)
        return m(tokens[:, prompt_len:], cache=cache, start_pos=prompt_len)[:, -1]

    with torch.no_grad():
        together = step(model, prompts)
        alone = torch.cat([step(model, prompts[i:i + 1]) for i in range(batch)])
        classes = [b.attn.__class__ for b in model.blocks]
        for b in model.blocks:
            b.attn.__class__ = Attention
        try:
            stock = step(model, prompts)
        finally:
            for b, c in zip(model.blocks, classes):
                b.attn.__class__ = c
    return {"batch": batch, "prompt_len": prompt_len,
            "batched_vs_alone": _close(together, alone, name, "batched vs one-by-one decode"),
            "read_once_vs_stock": _close(together, stock, name,
                                         "read-once vs the book's attention")}


#: Substrings of a kernel's name that mark it as a matrix multiply (cuBLAS, cuBLASLt, CUTLASS).
MATMUL_KERNEL_MARKS = ("gemm", "gemv", "nvjet", "cutlass", "xmma", "splitk")


def kernel_profile(step, device: str) -> dict | None:
    """What one call of ``step`` runs on the device (CUDA profiler): the number of kernels, the
    sum of their durations, and both split into matrix multiplies (names with one of
    :data:`MATMUL_KERNEL_MARKS`) and everything else, plus the five costliest kernels. None on a
    CPU or if the profiler is unavailable; the profile is evidence, not a requirement."""
    if not device.startswith("cuda"):
        return None
    try:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        rows = []
        for e in prof.key_averages():
            if getattr(e, "device_type", None) != DeviceType.CUDA:
                continue
            us = getattr(e, "device_time_total", None)
            if us is None:
                us = getattr(e, "cuda_time_total", 0.0)
            rows.append((e.key, int(e.count), float(us) * 1e-6))
        out = {"kernels": sum(c for _, c, _ in rows), "kernel_time_s": sum(t for *_, t in rows)}
        for cls, keep in (("matmul", True), ("other", False)):
            sel = [r for r in rows
                   if any(m in r[0].lower() for m in MATMUL_KERNEL_MARKS) == keep]
            out[f"{cls}_kernels"] = sum(c for _, c, _ in sel)
            out[f"{cls}_time_s"] = sum(t for *_, t in sel)
        out["top"] = [{"name": k[:120], "count": c, "time_s": t}
                      for k, c, t in sorted(rows, key=lambda r: -r[2])[:5]]
        return out
    except Exception:  # the profile is evidence, not a requirement
        return None


def kernels_per_step(step, device: str) -> int | None:
    """Device kernels one call of ``step`` launches (:func:`kernel_profile`), None on a CPU or
    if the profiler is unavailable."""
    prof = kernel_profile(step, device)
    return None if prof is None else prof["kernels"]


def _graph(step, device: str):
    """``step`` captured in a CUDA graph (warmed up on a side stream first, as PyTorch
    documents); returns ``(graph, output tensor)``."""

    s = torch.cuda.Stream(device=device)
    s.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(s):
        for _ in range(2):
            step()
    torch.cuda.current_stream(device).wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step()
    return g, out


# --- measurements -----------------------------------------------------------------------------

def measure_copy(device: str) -> dict:
    """Bandwidth of ``dst.copy_(src)`` on a buffer far larger than the caches (bytes read plus
    written), checked for equality (destination poisoned with NaN) before timing."""

    n = LAB.size("copy_mib") * 2**20 // 4
    src = torch.rand(n, device=device) + 0.5
    dst = torch.full_like(src, float("nan"))
    dst.copy_(src)
    sync(device)
    if not torch.equal(dst, src):
        raise AssertionError("copy: the destination differs from the source")
    r = LAB.bench(lambda: dst.copy_(src), device, "copy")
    moved = 2.0 * src.nbytes
    return {"bytes_moved": moved, "bench": summarize(r),
            "bytes_per_s": finite(moved / r.median_s)}


def _time_stock(model, step, want, dtype_name: str, device: str, name: str) -> dict:
    """Time ``step`` with the book's own attention (which copies each key/value head once per
    query head) instead of :class:`ReadOnceAttention`, after checking it gives the same logits."""
    from helpers.nn.decoder import Attention

    classes = [blk.attn.__class__ for blk in model.blocks]
    for blk in model.blocks:
        blk.attn.__class__ = Attention
    try:
        got = step()
        sync(device)
        _close(got, want, dtype_name, "the book's attention in the timed step")
        del got
        return summarize(LAB.bench(step, device, name))
    finally:
        for blk, c in zip(model.blocks, classes):
            blk.attn.__class__ = c


def measure_model(cfg: TransformerConfig, device: str) -> dict:
    """Build the model, check it, and time decode steps per context length and batch size."""

    from helpers.nn.decoder import KVCache

    dtype = _dtype(device)
    name = str(dtype).removeprefix("torch.")
    esize = torch.finfo(dtype).bits // 8
    cuda = device.startswith("cuda")
    model = read_once(build_model(cfg, device, dtype))
    n_alloc = sum(p.numel() for p in model.parameters())
    if n_alloc != tf.parameter_count(cfg):
        raise AssertionError(f"{cfg.name}: {n_alloc} parameters allocated, the model counts "
                             f"{tf.parameter_count(cfg)}")
    out = {"name": cfg.name, "config": {k: getattr(cfg, k) for k in (
        "n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size",
        "tie_embeddings")}, "dtype": name, "bytes_per_element": esize,
        "parameters": n_alloc, "matmul_parameters": tf.matmul_parameter_count(cfg),
        "weight_bytes_allocated": int(sum(p.nbytes for p in model.parameters())),
        "check": check_batched_decode(model, device), "points": []}
    gen = torch.Generator(device=device).manual_seed(1)
    points = [(c, b) for c in contexts(cfg) for b in batches()]
    with torch.no_grad():
        for ctx, b in progress(points, desc=f"decode {cfg.name}"):
            cache = KVCache(cfg, batch=b, max_seq_len=ctx, dtype=dtype, device=device)
            want = kv_bytes(cfg, batch=b, context_len=ctx, bytes_per_element=esize)
            if cache.nbytes != want:
                raise AssertionError(f"{cfg.name} B={b} S={ctx}: KV cache holds {cache.nbytes} "
                                     f"bytes, the model says {want:.0f}")
            cache.k.normal_(generator=gen)
            cache.v.normal_(generator=gen)
            tokens = torch.randint(cfg.vocab_size, (b, 1), device=device, generator=gen)

            def step(cache=cache, tokens=tokens, ctx=ctx):
                return model(tokens, cache=cache, start_pos=ctx - 1)

            first = step()
            sync(device)
            if not bool(torch.isfinite(first).all()):
                raise AssertionError(f"{cfg.name} B={b} S={ctx}: non-finite logits")
            point = {"batch": b, "context": ctx, "kv_bytes": int(cache.nbytes),
                     "step_bytes": decode_bytes(cfg, b, ctx, esize),
                     "eager": summarize(LAB.bench(step, device, f"{cfg.name}_b{b}_s{ctx}"))}
            if b in (1, batches()[-1]):
                prof = kernel_profile(step, device)
                if prof is not None:
                    point["kernels_per_step"] = prof["kernels"]
                    point["kernel_profile"] = prof
                elif b == 1:
                    point["kernels_per_step"] = None
            if (ctx, b) == (contexts(cfg)[-1], batches()[-1]):
                point["stock_eager"] = _time_stock(model, step, first, name, device,
                                                   f"{cfg.name}_b{b}_s{ctx}_stock")
            if cuda:
                try:
                    g, graph_out = _graph(step, device)
                    g.replay()
                    sync(device)
                    point["graph_vs_eager"] = _close(graph_out, first, name, "graph replay")
                    point["graph"] = summarize(LAB.bench(g.replay, device,
                                                      f"{cfg.name}_b{b}_s{ctx}_graph"))
                    del g, graph_out
                except AssertionError:
                    raise
                except Exception as exc:  # record, do not fail the sweep
                    point["graph_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            out["points"].append(point)
            del cache, first, step
            if cuda:
                torch.cuda.empty_cache()
    del model
    if cuda:
        torch.cuda.empty_cache()
    return out


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    device = device or lab_device()
    result = new_result(LAB, device, configs=[c.name for c in configs()], batches=batches(),
                        contexts={c.name: contexts(c) for c in configs()}, budget_s=LAB.budget(),
                        rel_tolerance=REL_TOLERANCE,
                        bytes_model="matmul weights once + batch x KV cache (decode_bytes)")
    m = result["measurements"]
    m["copy"] = measure_copy(device)
    m["models"] = [measure_model(cfg, device) for cfg in configs()]
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading ----------------------------------------------------------------------------------

def _grading_cases(n: int) -> list[tuple[TransformerConfig, int, int, int]]:
    """``n`` fresh (config, batch, context, bytes per element) cases: every batch >= 2 and a
    KV cache of at least a tenth of the weights in one case, so both classic mistakes show."""
    from helpers.nn.tinylm import BOOK_LM

    shapes = [tf.LLAMA2_7B, tf.LLAMA3_8B, tf.LLAMA3_70B, GPU_CONFIG, CPU_CONFIG, BOOK_LM]
    rng = secrets.SystemRandom()
    cases = [(GPU_CONFIG, 64, 4096, 2)]  # KV 8.6 GB vs 3.75 GB of weights
    for _ in range(n - 1):
        cfg = rng.choice(shapes)
        cases.append((cfg, rng.randint(2, 256), rng.randint(1, cfg.max_seq_len),
                      rng.choice([1, 2, 4])))
    return cases


def grade_decode_bytes(fn, trials: int = 6) -> Verdict:
    """Grade the reader's ``fn(cfg, batch, context_len, bytes_per_element) -> bytes`` against
    :func:`decode_bytes` (within 1 %) on fresh cases; name the classic mistakes when seen."""
    name = "decode step bytes"
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    for cfg, b, ctx, e in _grading_cases(trials):
        want = decode_bytes(cfg, b, ctx, e)
        try:
            got = float(fn(cfg, b, ctx, e))
        except Exception as exc:
            return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
        if math.isfinite(got) and abs(got - want) <= 0.01 * want:
            continue
        w = tf.weight_bytes(tf.matmul_parameter_count(cfg), e)
        kv = kv_bytes(cfg, batch=b, context_len=ctx, bytes_per_element=e)
        hint = ""
        if math.isclose(got, w, rel_tol=0.01):
            hint = "; that is the weights alone: the step also reads every sequence's KV cache"
        elif math.isclose(got, b * w + kv, rel_tol=0.01) or math.isclose(got, b * w, rel_tol=0.01):
            hint = ("; that counts the weights once per sequence: the batch shares one read "
                    "of the weights")
        elif math.isclose(got, w + kv / b, rel_tol=0.01):
            hint = "; that is one sequence's KV cache: every sequence reads its own"
        return Verdict(name, "FAIL", [
            f"{cfg.name}, batch {b}, context {ctx}, {e} bytes per element: got {got:.4g} bytes, "
            f"expected {want:.4g} (weights {w:.4g} + KV {kv:.4g}){hint}"])
    return Verdict(name, "PASS", [f"matches the model within 1 % on {trials} fresh cases"])


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
