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
  graph (which removes the per-kernel launch cost; the profiler counts the kernels);
* **a copy bandwidth** (``dst.copy_(src)`` of a large buffer), the achievable side of the model;
* **the book's own attention**, at the largest batch and longest context only: the same step
  with :class:`helpers.nn.decoder.Attention`, which copies the keys and values once per query
  head, to show what that copy costs.

Correctness before timing, for every model: the allocated parameters equal
:func:`~helpers.models.transformer.parameter_count`; every KV cache's ``nbytes`` equals
:func:`~helpers.models.transformer.kv_cache_bytes` exactly; a batched decode step gives the
same logits as each sequence decoded alone (after a real batched prefill); the timed attention
(:class:`~helpers.nn.decode_models.ReadOnceAttention`) gives the same logits as the book's
decoder; the graph replays the eager step's logits.

The timed attention (:mod:`helpers.nn.decode_models`) is the book's attention with the query
heads of a group stacked, so the cache is read once per step as the model assumes; the bytes
per step are :func:`helpers.models.decode_bandwidth.config_decode_step_bytes`, and the kernels
per step come from :func:`helpers.profiling.dispatch.kernel_profile`.

Page: ``labs/decode.md``. Run as
``python -m helpers.labs.decode --out DIR [--size small|full] [--device cpu|cuda]``.
The page's grader is :func:`grade_decode_bytes`; what the page computes from a result (rows,
tables, the kernel breakdown) is in :mod:`helpers.labs.analysis.decode`.
"""

from __future__ import annotations

import math
import secrets

import torch

from helpers import specs
from helpers.bench import pick, sync
from helpers.bench.device import capture_graph, copy_rate
from helpers.labs import core
from helpers.labs.core import finite, lab_device, new_result, progress, run_cli, summarize
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import transformer as tf
from helpers.models.decode_bandwidth import config_decode_step_bytes, config_kv_cache_bytes
from helpers.models.transformer import TransformerConfig
from helpers.nn.decode_models import build_model, read_once, stock_attention
from helpers.profiling.dispatch import kernel_profile

__all__ = ["LAB", "GPU", "GPU_CONFIG", "CPU_CONFIG", "configs", "batches", "contexts",
           "check_batched_decode", "measure_copy", "measure_model", "run", "reference_or_none",
           "grade_decode_bytes", "main"]

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
    from helpers.nn.decoder import KVCache

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
        with stock_attention(model):
            stock = step(model, prompts)
    return {"batch": batch, "prompt_len": prompt_len,
            "batched_vs_alone": _close(together, alone, name, "batched vs one-by-one decode"),
            "read_once_vs_stock": _close(together, stock, name,
                                         "read-once vs the book's attention")}


# --- measurements -----------------------------------------------------------------------------

def measure_copy(device: str) -> dict:
    """Bandwidth of ``dst.copy_(src)`` on a buffer far larger than the caches (bytes read plus
    written), checked for equality before timing (:func:`helpers.bench.device.copy_rate`)."""
    c = copy_rate(LAB.size("copy_mib") * 2**20, device=device, bench_fn=LAB.bench)
    return {"bytes_moved": c.n_bytes, "bench": summarize(c.result),
            "bytes_per_s": finite(c.bytes_per_s)}


def _time_stock(model, step, want, dtype_name: str, device: str, name: str) -> dict:
    """Time ``step`` with the book's own attention (which copies each key/value head once per
    query head) instead of the read-once attention, after checking it gives the same logits."""
    with stock_attention(model):
        got = step()
        sync(device)
        _close(got, want, dtype_name, "the book's attention in the timed step")
        del got
        return summarize(LAB.bench(step, device, name))


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
            want = config_kv_cache_bytes(cfg, batch=b, context_len=ctx, bytes_per_element=esize)
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
                     "step_bytes": config_decode_step_bytes(cfg, b, ctx, esize),
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
                    g, graph_out = capture_graph(step, device=device, warmup_calls=2)
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
    :func:`~helpers.models.decode_bandwidth.config_decode_step_bytes` (within 1 %) on fresh cases; name the classic mistakes when seen."""
    name = "decode step bytes"
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    for cfg, b, ctx, e in _grading_cases(trials):
        want = config_decode_step_bytes(cfg, b, ctx, e)
        try:
            got = float(fn(cfg, b, ctx, e))
        except Exception as exc:
            return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
        if math.isfinite(got) and abs(got - want) <= 0.01 * want:
            continue
        w = tf.weight_bytes(tf.matmul_parameter_count(cfg), e)
        kv = config_kv_cache_bytes(cfg, batch=b, context_len=ctx, bytes_per_element=e)
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
