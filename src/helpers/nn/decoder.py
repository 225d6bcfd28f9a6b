"""A minimal decoder-only transformer in PyTorch, in the style of Llama (and of GPT-2).

One file, no dependencies beyond torch, written to be read. It is built from the same
:class:`~helpers.models.transformer.TransformerConfig` as the accounting model, so a test can
build a full-size Llama-3-8B on the ``meta`` device (shapes only, no memory) and compare its
parameter count with :func:`~helpers.models.transformer.parameter_count`, or allocate a small
:class:`KVCache` and compare its ``nbytes`` with :func:`~helpers.models.transformer.kv_cache_bytes`.

The parts, in the order a token meets them:

* token embedding (and, for GPT-2, a learned position embedding);
* ``n_layers`` pre-norm blocks: ``x = x + attention(norm(x))``, ``x = x + mlp(norm(x))``;

  - norm: RMSNorm (Llama) or LayerNorm (GPT-2);
  - attention: causal multi-head attention with rotary position embedding (RoPE) on queries
    and keys, and grouped-query attention (GQA): ``n_heads`` query heads share
    ``n_kv_heads`` key/value heads, so the KV cache is ``n_heads / n_kv_heads`` times smaller;
  - MLP: SwiGLU, ``down(silu(gate(x)) * up(x))`` (Llama), or ``proj(gelu(fc(x)))`` (GPT-2);

* a final norm and the output head (optionally tied to the embedding) giving logits.

Attention is written out as two matrix products and a softmax rather than calling a fused
kernel, so that every FLOP is visible (and countable by ``torch.utils.flop_counter``).
Introduced in {ref}`sec-numerics-and-transformers`; served in Part V.

Used by: chapters/numerics-and-transformers.md.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..models.transformer import TransformerConfig

__all__ = ["Decoder", "KVCache", "RMSNorm", "Attention", "MLP", "Block", "rope_tables",
           "apply_rope"]


class RMSNorm(nn.Module):
    """Root-mean-square norm: ``x / rms(x) * weight`` (Zhang and Sennrich, 2019)."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()  # the mean of squares is taken in fp32 even for bf16 activations
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return xf.type_as(x) * self.weight


def make_norm(cfg: TransformerConfig) -> nn.Module:
    if cfg.norm == "rmsnorm":
        return RMSNorm(cfg.d_model, cfg.norm_eps)
    return nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)


def rope_tables(head_dim: int, max_seq_len: int, theta: float = 10000.0,
                device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Cosines and sines of rotary position embedding, each ``(max_seq_len, head_dim)``.

    Pair ``i`` of a head's features (feature ``i`` and ``i + head_dim/2``) is rotated at
    position ``p`` by the angle ``p * theta**(-2i/head_dim)`` (Su et al., 2021).
    """
    inv_freq = theta ** (-torch.arange(0, head_dim, 2, device=device).float() / head_dim)
    angles = torch.outer(torch.arange(max_seq_len, device=device).float(), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` of shape ``(B, heads, T, head_dim)`` by the angles of its positions."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return (x.float() * cos + rotated.float() * sin).type_as(x)


class KVCache:
    """Keys and values of every layer for ``batch`` sequences of up to ``max_seq_len`` tokens.

    Two preallocated tensors of shape ``(n_layers, batch, n_kv_heads, max_seq_len,
    head_dim)``, so their size is exactly ``2 L H_kv d_h S B`` elements: the KV-cache model
    of :func:`helpers.models.transformer.kv_cache_bytes`.
    """

    def __init__(self, cfg: TransformerConfig, *, batch: int, max_seq_len: int,
                 dtype: torch.dtype = torch.float32, device=None):
        shape = (cfg.n_layers, batch, cfg.n_kv_heads, max_seq_len, cfg.head_dim)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)

    @property
    def nbytes(self) -> int:
        """Bytes held by the cache (both tensors)."""
        return self.k.nbytes + self.v.nbytes

    def update(self, layer: int, start_pos: int, k: torch.Tensor,
               v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store ``k, v`` (``(B, H_kv, T, d_h)``) at ``start_pos``; return all keys and values
        of positions ``0 .. start_pos + T - 1``."""
        end = start_pos + k.shape[2]
        if end > self.k.shape[3]:
            raise ValueError(f"the cache holds {self.k.shape[3]} positions; "
                             f"writing up to position {end} does not fit")
        batch = k.shape[0]
        self.k[layer, :batch, :, start_pos:end] = k
        self.v[layer, :batch, :, start_pos:end] = v
        return self.k[layer, :batch, :, :end], self.v[layer, :batch, :, :end]


class Attention(nn.Module):
    """Causal multi-head attention with grouped-query heads and rotary positions."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.rope = cfg.positions == "rope"
        d, q_width, kv_width = cfg.d_model, cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
        self.wq = nn.Linear(d, q_width, bias=cfg.bias)
        self.wk = nn.Linear(d, kv_width, bias=cfg.bias)
        self.wv = nn.Linear(d, kv_width, bias=cfg.bias)
        self.wo = nn.Linear(q_width, d, bias=cfg.bias)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, start_pos: int,
                cache: KVCache | None, layer: int) -> torch.Tensor:
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        if self.rope:
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:  # append this step's keys and values, attend to all so far
            k, v = cache.update(layer, start_pos, k, v)
        S = k.shape[2]
        group = self.n_heads // self.n_kv_heads  # query heads per key/value head
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # (B, H, T, S)
        query_pos = torch.arange(start_pos, start_pos + T, device=x.device)[:, None]
        key_pos = torch.arange(S, device=x.device)[None, :]
        scores = scores.masked_fill(key_pos > query_pos, float("-inf"))  # no peeking ahead
        probs = F.softmax(scores.float(), dim=-1).type_as(q)
        out = (probs @ v).transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim)
        return self.wo(out)


class MLP(nn.Module):
    """SwiGLU (Shazeer, 2020) or the plain two-layer GELU MLP of GPT-2."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.gated = cfg.mlp == "swiglu"
        if self.gated:
            self.gate = nn.Linear(cfg.d_model, cfg.d_ff, bias=cfg.bias)
        self.up = nn.Linear(cfg.d_model, cfg.d_ff, bias=cfg.bias)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model, bias=cfg.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gated:
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x), approximate="tanh"))


class Block(nn.Module):
    """One pre-norm decoder block."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.attn_norm = make_norm(cfg)
        self.attn = Attention(cfg)
        self.mlp_norm = make_norm(cfg)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, start_pos, cache, layer):
        x = x + self.attn(self.attn_norm(x), cos, sin, start_pos, cache, layer)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(nn.Module):
    """The whole model: tokens ``(B, T)`` in, next-token logits ``(B, T, vocab)`` out.

    >>> from helpers.models.transformer import LLAMA3_8B
    >>> with torch.device("meta"):
    ...     model = Decoder(LLAMA3_8B)
    >>> model.num_parameters()
    8030261248
    """

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_embed = (nn.Embedding(cfg.max_seq_len, cfg.d_model)
                          if cfg.positions == "learned" else None)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = make_norm(cfg)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.head.weight = self.embed.weight  # one matrix, used twice
        cos, sin = rope_tables(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_parameters(self) -> int:
        """Parameters, each shared tensor counted once."""
        return sum(p.numel() for p in self.parameters())

    def forward(self, tokens: torch.Tensor, *, cache: KVCache | None = None,
                start_pos: int = 0) -> torch.Tensor:
        """Logits for ``tokens`` at positions ``start_pos .. start_pos + T - 1``.

        Without a cache the tokens attend only to each other (a whole prompt). With a cache
        they also attend to the ``start_pos`` positions already stored in it (decoding).
        """
        B, T = tokens.shape
        if start_pos + T > self.cfg.max_seq_len:
            raise ValueError(f"positions up to {start_pos + T} exceed max_seq_len "
                             f"{self.cfg.max_seq_len}")
        x = self.embed(tokens)
        if self.pos_embed is not None:
            x = x + self.pos_embed(torch.arange(start_pos, start_pos + T, device=tokens.device))
        cos = self.rope_cos[start_pos:start_pos + T]
        sin = self.rope_sin[start_pos:start_pos + T]
        for layer, block in enumerate(self.blocks):
            x = block(x, cos, sin, start_pos, cache, layer)
        return self.head(self.norm(x))

    @torch.no_grad()
    def generate(self, prompt: torch.Tensor, max_new_tokens: int, *,
                 cache_dtype: torch.dtype | None = None) -> torch.Tensor:
        """Greedy decoding: one prefill of ``prompt`` (``(B, P)``), then one token per step.

        Returns ``(B, P + max_new_tokens)`` tokens.
        """
        B, P = prompt.shape
        dtype = cache_dtype or self.embed.weight.dtype
        cache = KVCache(self.cfg, batch=B, max_seq_len=P + max_new_tokens, dtype=dtype,
                        device=prompt.device)
        logits = self(prompt, cache=cache, start_pos=0)  # prefill: all prompt tokens at once
        out = [prompt]
        for step in range(max_new_tokens):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            out.append(nxt)
            if step + 1 < max_new_tokens:  # decode: one token per sequence per step
                logits = self(nxt, cache=cache, start_pos=P + step)
        return torch.cat(out, dim=1)
