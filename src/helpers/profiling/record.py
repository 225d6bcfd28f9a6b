"""Record the PyTorch profiler traces that lesson 07 reads: one workload, flawed and fixed two ways.

The workload is a decode-like loop: each step pushes one token's activation vector through a
small stack of layers built from many small elementwise operations (a hand-written layer norm
and GELU, as a first draft of a model often has them), then picks the next token. The
variants do the same arithmetic and produce the same tokens:

* ``flawed``: after every step the host reads the chosen token back (``.item()``, to test for an
  end-of-sequence token), which makes the CPU wait for the GPU at every step;
* ``nosync``: the obvious fix: the end-of-sequence test stays on the device and the host reads
  the tokens back once, after the loop, so launches may run ahead of the GPU;
* ``graph`` (CUDA only): one decode step captured once as a CUDA graph and replayed, so each
  step costs one launch instead of dozens.

Whether ``nosync`` helps depends on which side is slower: if the GPU finishes each small kernel
before the host can launch the next, the GPU idles between kernels with or without the sync,
and only fewer launches (``graph``) remove the gaps. The traces hold the evidence either way.

Run as a script, it writes ``trace-<variant>.json.gz`` (Chrome trace format, as
``torch.profiler`` exports it) and ``manifest.json`` (environment, workload shape, wall time of
each variant measured outside the profiler) into ``--out``::

    python -m helpers.profiling.record --out DIR [--device cuda] [--steps 32]

The same code records a CPU-only trace on a machine without a GPU.

Used by: chapters/profiling.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from helpers.bench.timing import sync

__all__ = ["VARIANTS", "variants_for", "make_workload", "run_steps", "record", "main"]

VARIANTS = ("flawed", "nosync", "graph")


def variants_for(device: str) -> tuple[str, ...]:
    """The variants that run on ``device``: CUDA graphs need a CUDA device."""
    return VARIANTS if device.startswith("cuda") else VARIANTS[:2]


def make_workload(*, width: int = 1024, n_layers: int = 4, vocab: int = 4096,
                  device: str = "cpu", seed: int = 0):
    """Weights of the toy decode loop: ``n_layers`` square layers and an output projection."""
    import torch

    if width < 8 or n_layers < 1 or vocab < 2:
        raise ValueError(f"need width >= 8, n_layers >= 1, vocab >= 2; got {width}, {n_layers}, {vocab}")
    gen = torch.Generator().manual_seed(seed)
    scale = width ** -0.5
    layers = [(torch.randn(width, width, generator=gen) * scale).to(device) for _ in range(n_layers)]
    gains = [(1 + 0.1 * torch.randn(width, generator=gen)).to(device) for _ in range(n_layers)]
    embed = (torch.randn(vocab, width, generator=gen)).to(device)
    head = (torch.randn(width, vocab, generator=gen) * scale).to(device)
    return {"layers": layers, "gains": gains, "embed": embed, "head": head}


def _step(weights, token):
    """One decode step from a token id tensor (shape ``[1]``) to the next token id (shape ``[1]``)."""
    import torch

    x = weights["embed"][token]  # [1, width]
    for w, g in zip(weights["layers"], weights["gains"]):
        # Layer norm written out op by op: each line is one or two small kernels.
        mu = x.mean(dim=-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(dim=-1, keepdim=True)
        h = xc * torch.rsqrt(var + 1e-5) * g
        h = h @ w
        # GELU (tanh form) written out op by op.
        h = 0.5 * h * (1 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
        x = x + h
    logits = x @ weights["head"]
    return torch.argmax(logits, dim=-1)


def _graph(weights):
    """Capture one decode step as a CUDA graph (once per workload) reading and writing one buffer."""
    import torch

    if "_graph" not in weights:
        device = weights["embed"].device
        token = torch.zeros(1, dtype=torch.long, device=device)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up outside the capture, as PyTorch recommends
            for _ in range(3):
                _step(weights, token)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            token.copy_(_step(weights, token))
        weights["_graph"] = (graph, token)
    return weights["_graph"]


def run_steps(weights, n_steps: int, variant: str, eos_token: int = -1):
    """Run ``n_steps`` decode steps; return the generated token ids as a Python list."""
    import torch

    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    device = weights["embed"].device
    if variant == "graph" and device.type != "cuda":
        raise ValueError("variant 'graph' needs a CUDA device")
    token = torch.zeros(1, dtype=torch.long, device=device)
    if variant == "flawed":
        out = []
        for _ in range(n_steps):
            token = _step(weights, token)
            t = int(token.item())  # host waits for the GPU here, every step
            out.append(t)
            if t == eos_token:
                break
        return out
    tokens = []
    done = torch.zeros(1, dtype=torch.bool, device=device)
    if variant == "graph":
        graph, buffer = _graph(weights)
        buffer.zero_()
        for _ in range(n_steps):
            graph.replay()  # one launch for the whole step
            done |= buffer == eos_token
            tokens.append(buffer.clone())
    else:
        for _ in range(n_steps):
            token = _step(weights, token)
            done |= token == eos_token  # the test stays on the device
            tokens.append(token)
    return torch.cat(tokens).tolist()  # one read-back, after the loop


def record(out_dir: str | os.PathLike, *, device: str = "cpu", n_steps: int = 32,
           width: int = 1024, n_layers: int = 4, vocab: int = 4096, repeats: int = 11) -> dict:
    """Profile both variants on ``device`` and write traces and a manifest into ``out_dir``.

    Returns the manifest. Wall times are measured without the profiler (median of ``repeats``
    runs after a warm-up run, the variants interleaved), because the profiler itself adds time
    to every operation.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    from helpers.bench.env import environment

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    weights = make_workload(width=width, n_layers=n_layers, vocab=vocab, device=device)
    activities = [ProfilerActivity.CPU]
    if device.startswith("cuda"):
        activities.append(ProfilerActivity.CUDA)
    manifest = {"environment": environment(device), "device": device,
                "workload": {"n_steps": n_steps, "width": width, "n_layers": n_layers,
                             "vocab": vocab, "dtype": "float32"},
                "variants": {}}
    reference = None
    variants = variants_for(device)
    for variant in variants:
        run_steps(weights, n_steps, variant)  # warm-up (and, for graphs, the capture)
        tokens = run_steps(weights, n_steps, variant)
        if reference is None:
            reference = tokens
        elif tokens != reference:
            raise RuntimeError(f"variant {variant} produced different tokens from {variants[0]}")
    # Wall times without the profiler, the variants interleaved round-robin so that a drift of
    # the machine (clocks, temperature, other tenants) touches all of them alike.
    walls: dict = {v: [] for v in variants}
    for _ in range(repeats):
        for variant in variants:
            sync(device)
            t0 = time.perf_counter()
            run_steps(weights, n_steps, variant)
            sync(device)
            walls[variant].append(time.perf_counter() - t0)
    for variant in variants:
        with profile(activities=activities) as prof:
            run_steps(weights, n_steps, variant)
            sync(device)
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "trace.json"
            prof.export_chrome_trace(str(raw))
            target = out / f"trace-{variant}.json.gz"
            with raw.open("rb") as src, gzip.open(target, "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
        samples = sorted(walls[variant])
        manifest["variants"][variant] = {
            "trace": target.name,
            "wall_median_s": samples[len(samples) // 2],
            "wall_min_s": samples[0], "wall_max_s": samples[-1], "repeats": repeats,
            "wall_samples_s": walls[variant],
            "trace_bytes_gz": target.stat().st_size,
        }
    manifest["tokens_match"] = True
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for traces and manifest")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if usable)")
    parser.add_argument("--steps", type=int, default=32)
    args = parser.parse_args(argv)
    from helpers.bench import has_cuda

    device = args.device or ("cuda" if has_cuda() else "cpu")
    manifest = record(args.out, device=device, n_steps=args.steps)
    for name, v in manifest["variants"].items():
        print(f"{name:7s} wall {v['wall_median_s'] * 1e3:8.2f} ms  trace {v['trace_bytes_gz'] / 1e3:7.1f} kB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
