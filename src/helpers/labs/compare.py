"""Your GPU against the H200 reference, in one command: every lab's claims checked on your run.

::

    python -m helpers.labs.compare --out DIR [--labs gemm,attention] [--gpu h100] [--size full]

runs the labs (each writes ``DIR/<lab>.json``, as its own runner would), then prints, lab by
lab and quantity by quantity, your measurement, the H200's, the model's value for your run and
whether your GPU is within the claim the lab makes: a prediction within its tolerance, or a
bound not passed. The model is computed from your own run (its measured ceilings) and, where
the lab's rows take a GPU datasheet, from your GPU's (``--gpu``, or recognised from the device
name among :data:`helpers.specs.GPUS`); otherwise the line says the H200 datasheet was used.
A lab that fails is reported and the others go on; everything is also written to
``DIR/compare.json``.

Used by ``labs/index.md`` and the README (what a reader with a GPU runs first).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import traceback
from pathlib import Path

from helpers import specs
from helpers.bench.sizes import SIZE_ENV, has_cuda

from . import core, summary

__all__ = ["GPU_KEYS", "gpu_spec_for", "lab_lines", "compare_lab", "main"]

#: The short names of the GPUs whose datasheets the book has (``helpers.specs.gpu``).
GPU_KEYS = ("a100", "h100", "h200", "b200")


def gpu_spec_for(device_name: str, key: str | None = None) -> tuple[specs.GPUSpec, bool]:
    """The datasheet for a GPU: ``key`` if given, else the spec whose short name appears in
    ``device_name`` (``"NVIDIA H100 80GB HBM3"`` -> H100). Returns ``(spec, recognised)``; an
    unknown GPU gets the H200's datasheet and ``False``.

    >>> spec, known = gpu_spec_for("NVIDIA H100 80GB HBM3")
    >>> spec is specs.H100_SXM, known
    (True, True)
    >>> gpu_spec_for("Some Other GPU")[1]
    False
    """
    if key:
        return specs.gpu(key), True
    name = device_name.lower()
    for short in GPU_KEYS:
        if short in name:
            return specs.gpu(short), True
    return specs.H200_SXM, False


def _rows(name: str, result: dict, gpu: specs.GPUSpec) -> tuple[list, bool]:
    """The lab's rows with ``result`` in the reference's place (so the model is computed from
    it), and whether ``gpu``'s datasheet could be passed to them."""
    rows_fn = summary.analysis_module(name).comparison_rows
    if "gpu" in inspect.signature(rows_fn).parameters:
        return rows_fn(result, gpu=gpu), True
    return rows_fn(result), False


def lab_lines(name: str, mine: dict, reference: dict | None, gpu: specs.GPUSpec) -> dict:
    """Per quantity of one lab: your value, the H200's, the model's for your run, the claim and
    its verdict on your run. Rows match the H200's by quantity name."""
    yours, own_sheet = _rows(name, mine, gpu)
    h200 = {r.quantity: r for r in (summary.analysis_module(name).comparison_rows(reference)
                                    if reference is not None else [])}
    lines = []
    for r in yours:
        if r.h200 is None:  # the reader's value sits in the reference column of these rows
            continue
        ref_row = h200.get(r.quantity)
        line = {"quantity": r.quantity, "unit": r.unit, "yours": r.fmt(r.h200),
                "h200": ref_row.fmt(ref_row.h200) if ref_row else "-",
                "model": r.fmt(r.model), "kind": r.claim.kind if r.claim else "-",
                "verdict": "-", "holds": None}
        if r.claim is not None and r.model is not None:
            line["verdict"] = r.claim.verdict(r.model, r.h200)
            line["holds"] = bool(r.claim.holds(r.model, r.h200))
        lines.append(line)
    return {"lab": name, "datasheet": gpu.name if own_sheet else f"{specs.H200_SXM.name} "
            "(this lab's rows take no other)", "lines": lines}


def _table(block: dict) -> str:
    cols = ("quantity", "unit", "yours", "h200", "model", "kind", "verdict")
    head = ("quantity", "unit", "yours", "H200", "model (yours)", "kind", "your verdict")
    cells = [head] + [tuple(str(ln[c]) for c in cols) for ln in block["lines"]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    out = [f"== {block['lab']} (model with the {block['datasheet']} datasheet)"]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(out)


def compare_lab(name: str, device: str, out_dir: Path, gpu: specs.GPUSpec) -> dict:
    """Run one lab on ``device``, save its result, and compare it (:func:`lab_lines`)."""
    result = summary.lab_module(name).run(device)
    core.save_result(result, out_dir)
    return lab_lines(name, result, core.reference_or_none(name), gpu)


def main(argv: list[str] | None = None) -> int:
    names = [n for n, _ in summary.LABS]
    parser = argparse.ArgumentParser(prog="python -m helpers.labs.compare",
                                     description="Run the labs on your GPU and compare each "
                                     "quantity with the H200 reference and the lab's model.")
    parser.add_argument("--out", required=True, help="directory for the results")
    parser.add_argument("--labs", default=",".join(names),
                        help=f"comma-separated labs (default: all): {','.join(names)}")
    parser.add_argument("--gpu", choices=GPU_KEYS, default=None,
                        help="your GPU's datasheet: a100, h100, h200 or b200 (default: "
                        "recognised from the device name)")
    parser.add_argument("--size", choices=("small", "full"), default=None,
                        help="problem sizes (default: full on a GPU)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None,
                        help="cpu runs the CPU tier as a dry run; its numbers do not compare")
    args = parser.parse_args(argv)
    chosen = [n.strip() for n in args.labs.split(",") if n.strip()]
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error(f"--labs: unknown lab(s) {unknown}; the labs are {names}")
    device = args.device or ("cuda" if has_cuda() else None)
    if device is None:
        parser.error("no CUDA GPU is usable here: this command compares a GPU with the H200 "
                     "(--device cpu runs a dry run of the CPU tier)")
    if device == "cuda" and not has_cuda():
        parser.error("--device cuda, but no CUDA GPU is usable here")
    if args.size:
        import os

        os.environ[SIZE_ENV] = args.size
    if device == "cuda":
        import torch

        device_name = torch.cuda.get_device_name(0)
    else:
        device_name = "CPU (dry run)"
    gpu, known = gpu_spec_for(device_name, args.gpu)
    if not known:
        print(f"{device_name}: not among the book's datasheets; the models use the H200's "
              "(pass --gpu to choose one)", file=sys.stderr)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    blocks, failed = [], []
    for name in core.progress(chosen, desc="labs"):
        try:
            block = compare_lab(name, device, out_dir, gpu)
        except Exception as exc:  # one lab failing must not lose the others
            failed.append({"lab": name, "error": f"{type(exc).__name__}: {exc}",
                           "traceback": traceback.format_exc(limit=8)})
            print(f"== {name}: FAILED ({type(exc).__name__}: {exc}); the other labs go on",
                  file=sys.stderr)
            continue
        blocks.append(block)
        print(_table(block), flush=True)
    summary_path = out_dir / "compare.json"
    summary_path.write_text(json.dumps({"device": device_name, "datasheet": gpu.name,
                                        "labs": blocks, "failed": failed}, indent=2) + "\n")
    held = [ln["holds"] for b in blocks for ln in b["lines"] if ln["holds"] is not None]
    print(f"\n{sum(held)} of {len(held)} claims hold on {device_name}; "
          f"{len(failed)} lab(s) failed to run. Written: {summary_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
