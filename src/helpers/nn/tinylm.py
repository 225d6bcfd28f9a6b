"""The book's own small language models: a byte-level decoder and its draft, trained here.

Part V serves, batches, quantizes and speculatively decodes a real model. Downloading one at run
time is not allowed (CI has no network but the package registries) and a real checkpoint would
not run on a 2-core CPU, so the book trains its own:

* the **data** is the book's own prose: every page's markdown with the code cells, front matter
  and directives removed (:func:`build_corpus`), frozen as ``data/corpus.txt.gz`` beside this
  file so that a rerun of the training sees the same bytes (:func:`corpus_bytes`);
* the **tokenizer** is the identity on bytes: 256 tokens, nothing to train, every string
  round-trips (:func:`encode`, :func:`decode`);
* the **models** are :class:`helpers.nn.decoder.Decoder` instances (Llama-style: RMSNorm, RoPE,
  grouped-query attention, SwiGLU) of two sizes, :data:`BOOK_LM` and the smaller
  :data:`BOOK_DRAFT` for speculative decoding, trained by the same :func:`train`;
* the **weights** ship as ``weights/<name>.pt`` (bf16, a few MB) with ``weights/<name>.json``:
  the configuration, the corpus digest, the training settings, the loss curve, the validation
  loss of the shipped (bf16-rounded) weights, the device, versions and time it took.

Run ``python -m helpers.nn.tinylm train --out DIR`` to train both models (seconds on a GPU,
minutes on a CPU); ``python -m helpers.nn.tinylm corpus`` rebuilds the corpus snapshot from the
pages. :func:`load` returns a shipped model ready for inference.

Used by: chapters/inference-metrics.md, chapters/quantization-and-speculation.md,
labs/decode.md, labs/quantization.md.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch
import torch.nn.functional as F

from ..book import ROOT
from ..models.transformer import TransformerConfig
from .decoder import Decoder

__all__ = ["BOOK_LM", "BOOK_DRAFT", "MODELS", "DATA_DIR", "WEIGHTS_DIR", "encode", "decode",
           "build_corpus", "corpus_bytes", "corpus_sha256", "split", "batches", "train",
           "evaluate_loss", "bits_per_byte", "save", "load", "metadata", "main"]

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / "data"
WEIGHTS_DIR = HERE / "weights"
CORPUS = DATA_DIR / "corpus.txt.gz"

#: The served model: 4 layers, width 256, 4 query heads sharing 2 key/value heads.
BOOK_LM = TransformerConfig(
    name="book-lm", n_layers=4, d_model=256, n_heads=4, n_kv_heads=2, d_ff=640,
    vocab_size=256, max_seq_len=512, tie_embeddings=True,
    source="this book: helpers.nn.tinylm, trained on the book's own pages (bytes)",
)
#: The draft model for speculative decoding: same tokenizer and data, about a tenth the size.
BOOK_DRAFT = TransformerConfig(
    name="book-draft", n_layers=2, d_model=128, n_heads=2, n_kv_heads=1, d_ff=320,
    vocab_size=256, max_seq_len=512, tie_embeddings=True,
    source="this book: helpers.nn.tinylm, trained on the book's own pages (bytes)",
)
MODELS = {cfg.name: cfg for cfg in (BOOK_LM, BOOK_DRAFT)}

#: Training settings shared by both models (the draft simply has fewer parameters).
DEFAULTS = dict(steps=3000, batch=32, seq_len=256, lr=3e-3, min_lr=3e-4, warmup=100,
                weight_decay=0.1, seed=0, val_fraction=0.05, eval_every=250)


# --- tokens ------------------------------------------------------------------------------------

def encode(text: str) -> torch.Tensor:
    """Token ids of ``text``: its UTF-8 bytes, as a 1-D ``torch.long`` tensor."""
    if not isinstance(text, str):
        raise ValueError(f"encode takes a str, got {type(text).__name__}")
    return torch.tensor(list(text.encode("utf-8")), dtype=torch.long)


def decode(tokens) -> str:
    """Text of token ids (bytes); invalid UTF-8 (a sequence cut mid-character) is replaced."""
    ids = [int(t) for t in (tokens.tolist() if hasattr(tokens, "tolist") else tokens)]
    if any(not 0 <= t < 256 for t in ids):
        raise ValueError("token ids must lie in 0..255 (bytes)")
    return bytes(ids).decode("utf-8", errors="replace")


# --- data --------------------------------------------------------------------------------------

_FENCE = re.compile(r"^(```|~~~|:::)")


def _prose(markdown: str) -> str:
    """A page's prose: no front matter, no code cells or fenced blocks, no directive lines."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    out, depth = [], 0
    for line in text.splitlines():
        stripped = line.strip()
        if _FENCE.match(stripped):
            opens = bool(re.match(r"^(```|~~~|:::)\{?[\w-]", stripped))
            if opens and not stripped.startswith(("```{admonition", ":::{admonition",
                                                  "```{note", ":::{note", "```{tip", ":::{tip",
                                                  "```{important", ":::{important")):
                depth += 1
            elif opens:
                continue  # keep the prose inside admonitions, drop their fence line
            elif depth:
                depth -= 1
            continue
        if depth or stripped.startswith((":tags:", ":label:", ":class:", "(sec-", "+++")):
            continue
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", _plain("\n".join(out))).strip() + "\n"


_ROLES = [  # MyST roles as a reader sees them rendered, roughly
    (re.compile(r"\{(?:term|ref|doc)\}`([^`<]+?)\s*<[^`]*>`"), r"\1"),
    (re.compile(r"\{(?:term|math|abbr)\}`([^`]*)`"), r"\1"),
    (re.compile(r"\{ref\}`sec-([^`]*)`"), lambda m: "the page on " + m.group(1).replace("-", " ")),
    (re.compile(r"\{numref\}`[^`]*`"), "the figure"),
    (re.compile(r"\{eq\}`[^`]*`"), "the equation"),
    (re.compile(r"\s?\{cite:p\}`[^`]*`"), ""),
    (re.compile(r"\{cite:t\}`[^`]*`"), "the authors"),
    (re.compile(r"\{glue:text\}`[^`]*`"), "N"),
    (re.compile(r"\{[\w:-]+\}`([^`]*)`"), r"\1"),
]


def _plain(text: str) -> str:
    for pattern, repl in _ROLES:
        text = pattern.sub(repl, text)
    return text


def build_corpus(root: str | Path | None = None) -> bytes:
    """The training text: the prose of every page under ``chapters/``, ``foundations/``,
    ``labs/`` and ``appendix/`` plus ``intro.md``, in sorted path order, as UTF-8 bytes."""
    root = Path(root) if root is not None else ROOT
    pages = [root / "intro.md"] + sorted(
        p for folder in ("chapters", "foundations", "labs", "appendix")
        for p in (root / folder).glob("*.md"))
    parts = [_prose(p.read_text(encoding="utf-8")) for p in pages if p.exists()]
    if not parts:
        raise ValueError(f"no pages found under {root}")
    return "\n".join(parts).encode("utf-8")


def corpus_bytes() -> bytes:
    """The frozen training text shipped in ``data/corpus.txt.gz``."""
    if not CORPUS.exists():
        raise FileNotFoundError(f"{CORPUS} is missing: run `python -m helpers.nn.tinylm corpus`")
    return gzip.decompress(CORPUS.read_bytes())


def corpus_sha256() -> str:
    """SHA-256 of the (uncompressed) shipped corpus: the training data's identity."""
    return hashlib.sha256(corpus_bytes()).hexdigest()


def split(data: bytes, val_fraction: float = DEFAULTS["val_fraction"]) -> tuple[torch.Tensor, torch.Tensor]:
    """Training and validation tokens: the last ``val_fraction`` of the text is held out."""
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction must lie in (0, 1), got {val_fraction}")
    tokens = torch.frombuffer(bytearray(data), dtype=torch.uint8).long()
    cut = int(len(tokens) * (1 - val_fraction))
    return tokens[:cut], tokens[cut:]


def batches(tokens: torch.Tensor, *, batch: int, seq_len: int, generator: torch.Generator):
    """Endless random windows: inputs ``(batch, seq_len)`` and the next-byte targets."""
    if len(tokens) <= seq_len + 1:
        raise ValueError(f"{len(tokens)} tokens are too few for windows of {seq_len}")
    while True:
        starts = torch.randint(0, len(tokens) - seq_len - 1, (batch,), generator=generator)
        idx = starts[:, None] + torch.arange(seq_len + 1)
        window = tokens[idx]
        yield window[:, :-1], window[:, 1:]


# --- training ----------------------------------------------------------------------------------

@torch.no_grad()
def evaluate_loss(model: Decoder, tokens: torch.Tensor, *, seq_len: int = 256,
                  max_windows: int | None = None) -> float:
    """Mean next-byte cross-entropy (nats per byte) over consecutive windows of ``tokens``."""
    model.eval()
    device = next(model.parameters()).device
    n = (len(tokens) - 1) // seq_len
    if n < 1:
        raise ValueError("too few tokens to evaluate")
    if max_windows is not None:
        n = min(n, max_windows)
    x = tokens[: n * seq_len].view(n, seq_len).to(device)
    y = tokens[1: n * seq_len + 1].view(n, seq_len).to(device)
    total = 0.0
    for i in range(0, n, 64):
        logits = model(x[i:i + 64])
        total += F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                 y[i:i + 64].reshape(-1), reduction="sum").item()
    return total / (n * seq_len)


def bits_per_byte(model: Decoder, tokens: torch.Tensor, *, seq_len: int = 256,
                  max_windows: int | None = None) -> float:
    """:func:`evaluate_loss` in bits per byte (nats / ln 2): the quality measure the book
    reports for its models and for their quantized copies."""
    return evaluate_loss(model, tokens, seq_len=seq_len, max_windows=max_windows) / math.log(2)


def _lr(step: int, *, steps: int, lr: float, min_lr: float, warmup: int) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return min_lr + 0.5 * (lr - min_lr) * (1 + math.cos(math.pi * progress))


def train(cfg: TransformerConfig, data: bytes, *, device: str = "cpu", progress=None,
          **settings) -> tuple[Decoder, dict]:
    """Train ``cfg`` on ``data`` (bytes) with AdamW and a cosine schedule; return the model
    (weights rounded to bf16, as shipped) and a record of the run."""
    s = {**DEFAULTS, **settings}
    unknown = set(settings) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown training settings: {sorted(unknown)}")
    if cfg.vocab_size != 256:
        raise ValueError("the book's models read bytes: vocab_size must be 256")
    torch.manual_seed(s["seed"])
    model = Decoder(cfg).to(device)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": s["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=s["lr"], betas=(0.9, 0.95))
    train_tokens, val_tokens = split(data, s["val_fraction"])
    gen = torch.Generator().manual_seed(s["seed"])
    stream = batches(train_tokens, batch=s["batch"], seq_len=s["seq_len"], generator=gen)
    curve, val_curve, best = [], [], (math.inf, -1, None)
    start = time.perf_counter()
    steps = range(s["steps"]) if progress is None else progress(range(s["steps"]))
    model.train()
    for step in steps:
        for group in opt.param_groups:
            group["lr"] = _lr(step, steps=s["steps"], lr=s["lr"], min_lr=s["min_lr"],
                              warmup=s["warmup"])
        x, y = next(stream)
        logits = model(x.to(device))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.to(device).reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == s["steps"] - 1:
            curve.append([step, round(loss.item(), 4)])
        if (step + 1) % s["eval_every"] == 0 or step == s["steps"] - 1:
            # Early stopping on held-out text: a small model on a small corpus overfits, so the
            # weights shipped are those of the step with the lowest validation loss.
            v = evaluate_loss(model, val_tokens, seq_len=s["seq_len"])
            val_curve.append([step + 1, round(v, 4)])
            if v < best[0]:
                best = (v, step + 1, {k: t.detach().clone() for k, t in model.state_dict().items()})
            model.train()
    seconds = time.perf_counter() - start
    model.load_state_dict(best[2])
    with torch.no_grad():  # ship what we measure: round the weights to bf16 before evaluating
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).float())
    val = evaluate_loss(model, val_tokens, seq_len=s["seq_len"])
    record = {
        "name": cfg.name, "config": asdict(cfg), "parameters": model.num_parameters(),
        "corpus_sha256": hashlib.sha256(data).hexdigest(), "corpus_bytes": len(data),
        "train_bytes": len(train_tokens), "val_bytes": len(val_tokens),
        "settings": s, "tokens_seen": s["steps"] * s["batch"] * s["seq_len"],
        "loss_curve": curve, "final_train_loss": curve[-1][1],
        "val_curve": val_curve, "best_step": best[1],
        "val_loss_nats_per_byte": val, "val_bits_per_byte": val / math.log(2),
        "train_seconds": seconds, "device": _device_name(device),
        "torch": torch.__version__,
    }
    return model.eval(), record


def _device_name(device: str) -> str:
    if str(device).startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    return "cpu"


# --- shipping ----------------------------------------------------------------------------------

def save(model: Decoder, record: dict, out: str | Path) -> Path:
    """Write ``<name>.pt`` (bf16 state dict) and ``<name>.json`` (the record) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    name = model.cfg.name
    state = {k: v.detach().to("cpu", torch.bfloat16) for k, v in model.state_dict().items()}
    torch.save(state, out / f"{name}.pt")
    (out / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    return out / f"{name}.pt"


def metadata(name: str, weights_dir: str | Path | None = None) -> dict:
    """The training record shipped with model ``name``."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; the book has {sorted(MODELS)}")
    path = Path(weights_dir or WEIGHTS_DIR) / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: train with `python -m helpers.nn.tinylm train`")
    return json.loads(path.read_text())


def load(name: str = BOOK_LM.name, *, device: str = "cpu", dtype: torch.dtype = torch.float32,
         weights_dir: str | Path | None = None) -> Decoder:
    """A shipped model, in eval mode, on ``device`` in ``dtype``."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; the book has {sorted(MODELS)}")
    path = Path(weights_dir or WEIGHTS_DIR) / f"{name}.pt"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: train with `python -m helpers.nn.tinylm train`")
    model = Decoder(MODELS[name])
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.to(device=device, dtype=dtype).eval()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.nn.tinylm", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("corpus", help="rebuild data/corpus.txt.gz from the pages")
    tr = sub.add_parser("train", help="train the book's models on the shipped corpus")
    tr.add_argument("--out", default=str(WEIGHTS_DIR))
    tr.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    tr.add_argument("--steps", type=int, default=DEFAULTS["steps"])
    tr.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args(argv)
    if args.cmd == "corpus":
        data = build_corpus()
        DATA_DIR.mkdir(exist_ok=True)
        CORPUS.write_bytes(gzip.compress(data, mtime=0))
        print(f"{CORPUS}: {len(data)} bytes of prose, sha256 {hashlib.sha256(data).hexdigest()[:12]}")
        return 0
    if args.device == "cuda":  # exact fp32 products, so a CPU rerun trains the same model
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    data = corpus_bytes()
    for name in args.models:
        model, record = train(MODELS[name], data, device=args.device, steps=args.steps)
        path = save(model, record, args.out)
        print(f"{name}: {record['parameters']} parameters, {record['train_seconds']:.1f} s on "
              f"{record['device']}, val {record['val_bits_per_byte']:.3f} bits/byte -> {path}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
