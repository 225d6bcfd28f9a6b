r"""Transformer accounting: parameters, FLOP, memory and arithmetic intensity.

A decoder-only transformer is described by a :class:`TransformerConfig`. Symbols (the book's
notation page): :math:`L` layers (``n_layers``), :math:`d` model width (``d_model``),
:math:`H` query heads (``n_heads``), :math:`H_{kv}` key/value heads (``n_kv_heads``),
:math:`d_h` head width (``head_dim``), :math:`d_{ff}` MLP width (``d_ff``), :math:`V`
vocabulary (``vocab_size``), :math:`S` sequence length, :math:`B` batch, :math:`T` tokens in
flight, :math:`N` parameters.

Pure Python; :mod:`helpers.nn.decoder` builds the same model in PyTorch, and the tests check
these counts against it. Introduced in {ref}`sec-numerics-and-transformers`.

>>> parameter_count(LLAMA2_7B), parameter_count(LLAMA3_8B)
(6738415616, 8030261248)

Used by many pages, among them: chapters/cuda-execution.md, chapters/custom-operators.md,
chapters/gpu-architecture.md, chapters/inference-metrics.md, chapters/memory-optimization.md,
chapters/numerics-and-transformers.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from . import _checks

__all__ = [
    "TransformerConfig", "LLAMA2_7B", "LLAMA3_8B", "LLAMA3_70B", "GPT2_SMALL", "CONFIGS",
    "parameter_counts", "parameter_count", "matmul_parameter_count",
    "forward_flop_per_token", "forward_flop_per_token_from_params", "prefill_flop", "decode_step_flop", "training_flop",
    "kv_cache_bytes", "kv_cache_bytes_per_token", "weight_bytes", "training_state_bytes",
    "matmul_intensity_flop_per_byte", "forward_intensity_flop_per_byte",
    "decode_attention_intensity_flop_per_byte",
]




@dataclass(frozen=True)
class TransformerConfig:
    """Shape of a decoder-only transformer.

    ``mlp="swiglu"`` is the gated MLP of Llama (three d x d_ff matrices); ``"gelu"`` the
    two-matrix MLP of GPT-2. ``norm`` is ``"rmsnorm"`` (a scale vector) or ``"layernorm"``
    (scale and shift). ``bias`` adds bias vectors to every linear layer. ``positions`` is
    ``"rope"`` (rotary, no parameters) or ``"learned"`` (a ``max_seq_len`` x d table).
    """

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    vocab_size: int
    max_seq_len: int
    head_dim: int | None = None
    mlp: str = "swiglu"
    norm: str = "rmsnorm"
    bias: bool = False
    positions: str = "rope"
    tie_embeddings: bool = False
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    source: str = ""

    def __post_init__(self) -> None:
        for field in ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size",
                      "max_seq_len"):
            _positive_int(field, getattr(self, field))
        if self.head_dim is None:
            if self.d_model % self.n_heads:
                raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads "
                                 f"({self.n_heads}) unless head_dim is given")
            object.__setattr__(self, "head_dim", self.d_model // self.n_heads)
        _positive_int("head_dim", self.head_dim)
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads "
                             f"({self.n_kv_heads})")
        for field, allowed in (("mlp", ("swiglu", "gelu")), ("norm", ("rmsnorm", "layernorm")),
                               ("positions", ("rope", "learned"))):
            if getattr(self, field) not in allowed:
                raise ValueError(f"{field} must be one of {allowed}, got {getattr(self, field)!r}")

    def scaled(self, **changes) -> "TransformerConfig":
        """A copy with some fields changed (e.g. ``n_layers=2`` for a test)."""
        return replace(self, **changes)


# Configurations, each field checked against the model's paper and released config.json.
LLAMA2_7B = TransformerConfig(
    name="Llama-2-7B", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=32, d_ff=11008,
    vocab_size=32000, max_seq_len=4096,
    source="Touvron et al. (2023a) table 2 (d 4096, 32 heads, 32 layers); Touvron et al. "
           "(2023b) section 2.2 (context 4096); released config.json (d_ff 11008, vocab "
           "32000, untied head)",
)
LLAMA3_8B = TransformerConfig(
    name="Llama-3-8B", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_ff=14336,
    vocab_size=128256, max_seq_len=8192, rope_theta=500000.0,
    source="Dubey et al. (2024) table 3 (32 layers, d 4096, FFN 14336, 32 heads, 8 KV heads, "
           "vocabulary '128,000'); released config.json (vocab 128256, untied head)",
)
LLAMA3_70B = TransformerConfig(
    name="Llama-3-70B", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_ff=28672,
    vocab_size=128256, max_seq_len=8192, rope_theta=500000.0,
    source="Dubey et al. (2024) table 3 (80 layers, d 8192, FFN 28672, 64 heads, 8 KV heads)",
)
GPT2_SMALL = TransformerConfig(
    name="GPT-2 small", n_layers=12, d_model=768, n_heads=12, n_kv_heads=12, d_ff=3072,
    vocab_size=50257, max_seq_len=1024, mlp="gelu", norm="layernorm", bias=True,
    positions="learned", tie_embeddings=True,
    source="Radford et al. (2019) table 2 and section 2.3 (12 layers, d 768, context 1024, "
           "vocabulary 50257); released as the '124M' checkpoint",
)

#: The configurations of the book, by name.
CONFIGS = {c.name: c for c in (GPT2_SMALL, LLAMA2_7B, LLAMA3_8B, LLAMA3_70B)}


# --- parameters -------------------------------------------------------------------------

def parameter_counts(cfg: TransformerConfig) -> dict[str, int]:
    r"""Parameters by component (counts, dimensionless).

    Per layer, with :math:`b = 1` if linear layers carry biases:

    .. math::
       N_{\text{attn}} &= d\,H d_h + 2\,d\,H_{kv} d_h + H d_h\,d + b\,(H d_h + 2 H_{kv} d_h + d)\\
       N_{\text{mlp}} &= 3\,d\,d_{ff}\ \text{(SwiGLU)}\quad\text{or}\quad
                        2\,d\,d_{ff} + b\,(d_{ff} + d)\ \text{(plain)}

    plus the token embedding :math:`V d`, learned positions :math:`S_{\max} d` if any, one
    norm before attention, one before the MLP and one at the end (:math:`d` or :math:`2d`
    each), and an output head :math:`V d` unless it is tied to the embedding.
    (eq-num-params)

    Parameters
    ----------
    cfg : TransformerConfig
        The model's shape.

    Returns
    -------
    dict
        ``embedding``, ``positions``, ``attention``, ``mlp``, ``norms``, ``head`` (all
        layers together) and ``total``.

    Assumptions
    -----------
    Pre-norm decoder blocks (GPT-2 and Llama); no biases in norms of the RMSNorm kind;
    rotary embeddings have no parameters.

    References
    ----------
    Kaplan et al. (2020) table 1 (the plain model); Shazeer (2020) (SwiGLU: three
    matrices); Ainslie et al. (2023) (GQA: K and V projections of width :math:`H_{kv} d_h`).

    Examples
    --------
    >>> parameter_counts(GPT2_SMALL)["total"]
    124439808
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    d, L = cfg.d_model, cfg.n_layers
    q_width = cfg.n_heads * cfg.head_dim
    kv_width = cfg.n_kv_heads * cfg.head_dim
    b = 1 if cfg.bias else 0
    attn = d * q_width + 2 * d * kv_width + q_width * d + b * (q_width + 2 * kv_width + d)
    if cfg.mlp == "swiglu":
        mlp = 3 * d * cfg.d_ff + b * (2 * cfg.d_ff + d)
    else:
        mlp = 2 * d * cfg.d_ff + b * (cfg.d_ff + d)
    norm = d if cfg.norm == "rmsnorm" else 2 * d
    counts = {
        "embedding": cfg.vocab_size * d,
        "positions": cfg.max_seq_len * d if cfg.positions == "learned" else 0,
        "attention": L * attn,
        "mlp": L * mlp,
        "norms": (2 * L + 1) * norm,
        "head": 0 if cfg.tie_embeddings else cfg.vocab_size * d,
    }
    counts["total"] = sum(counts.values())
    return counts


def parameter_count(cfg: TransformerConfig) -> int:
    """Total parameters :math:`N` of ``cfg`` (count).

    >>> parameter_count(LLAMA3_70B)
    70553706496
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    return parameter_counts(cfg)["total"]


def matmul_parameter_count(cfg: TransformerConfig) -> int:
    r"""Weights that take part in a matrix multiply for every token (count).

    The attention and MLP matrices of every layer and the output head (the tied embedding
    matrix counts here when it serves as the head). The embedding lookup, positions, norms
    and biases do no multiply-accumulate, so they are left out: each weight in a matrix does
    one multiply and one add per token, which is where the :math:`2N` of
    :func:`forward_flop_per_token` comes from.

    >>> matmul_parameter_count(LLAMA3_8B)
    7504658432
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    c = parameter_counts(cfg)
    d, L, b = cfg.d_model, cfg.n_layers, (1 if cfg.bias else 0)
    q_width, kv_width = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    attn_bias = L * b * (q_width + 2 * kv_width + d)
    mlp_bias = L * b * ((2 * cfg.d_ff + d) if cfg.mlp == "swiglu" else (cfg.d_ff + d))
    head = cfg.vocab_size * d
    return c["attention"] - attn_bias + c["mlp"] - mlp_bias + head


# --- FLOP -------------------------------------------------------------------------------

def forward_flop_per_token(cfg: TransformerConfig, context_len: int) -> float:
    r"""FLOP of one token's forward pass when it attends to ``context_len`` positions.

    .. math:: C_{\text{fwd}} = 2 N_{\text{mm}} + 4\,L\,S_{\text{ctx}}\,H d_h
       \qquad\text{(eq-num-fwd-flop)}

    :math:`N_{\text{mm}}` is :func:`matmul_parameter_count`; the second term is the score
    product :math:`q K^\top` and the weighted sum :math:`A V`, each :math:`2 S_{\text{ctx}}
    d_h` FLOP per head and layer.

    Parameters
    ----------
    cfg : TransformerConfig
    context_len : int
        :math:`S_{\text{ctx}}`, the keys this token's query is scored against (>= 1).

    Returns
    -------
    float
        FLOP (a count of floating-point operations, a multiply-add being two).

    Assumptions
    -----------
    Only matrix products are counted (norms, softmax, activations and biases add a few
    FLOP per element, a fraction of a per cent here).

    References
    ----------
    Kaplan et al. (2020) table 1: :math:`C_{\text{forward}} \approx 2N + 2 n_{\text{layer}}
    n_{\text{ctx}} d_{\text{attn}}`, which is this equation averaged over a causal sequence
    of :math:`n_{\text{ctx}}` tokens (mean context :math:`n_{\text{ctx}}/2`) with the head
    counted apart.

    Examples
    --------
    >>> round(forward_flop_per_token(LLAMA3_8B, 1) / 1e9, 2)
    15.01
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    _positive_int("context_len", context_len)
    return 2.0 * matmul_parameter_count(cfg) + 4.0 * cfg.n_layers * context_len * \
        cfg.n_heads * cfg.head_dim


def forward_flop_per_token_from_params(n_params: float) -> float:
    r"""FLOP of one token's forward pass from the parameter count alone: :math:`2N`.

    .. math:: C_{\text{fwd}} \approx 2 N                                 

    Each parameter is one multiply-add (2 FLOP) per token. This is
    :func:`forward_flop_per_token` without its attention term and with :math:`N` for
    :math:`N_{\text{mm}}`: it overstates by the embedding table (a lookup, no FLOP) and
    understates by the :math:`4 L S_{\text{ctx}} H d_h` of attention, which stays small while
    :math:`d \gg S_{\text{ctx}} / 12` (Kaplan et al.).

    Parameters
    ----------
    n_params : float
        :math:`N`, parameters (> 0; Kaplan counts non-embedding ones).

    Returns
    -------
    float
        FLOP per token of the forward pass.

    Assumptions
    -----------
    Dense model (every parameter used by every token); short context.

    References
    ----------
    Kaplan et al. (2020), section 2.1 and table 1: :math:`C_{\text{forward}} \approx 2N +
    2 n_{\text{layer}} n_{\text{ctx}} d_{\text{attn}}`. Brown et al. (2020), table D.1: GPT-3
    175B (174,600M parameters) trained on 300B tokens for 3.14e23 FLOP, which is
    :math:`3 \times 2N` per token (forward, and backward at twice the forward).

    Examples
    --------
    >>> f"{3 * forward_flop_per_token_from_params(174.6e9) * 300e9:.3g}"
    '3.14e+23'
    """
    return 2.0 * _positive("n_params", n_params)


def prefill_flop(cfg: TransformerConfig, *, seq_len: int, batch: int = 1,
                 skip_masked: bool = True) -> float:
    r"""FLOP of the forward pass over a whole prompt (prefill).

    .. math:: C_{\text{prefill}} = B\bigl(2 N_{\text{mm}} S + 4 L H d_h \textstyle\sum_i
       S_{\text{ctx},i}\bigr),\quad \sum_i S_{\text{ctx},i} = \tfrac{S(S+1)}{2}\
       \text{or}\ S^2

    Token :math:`i` of a causal prompt sees :math:`i` positions; a kernel that skips the
    masked half does :math:`S(S+1)/2` score rows' worth of work, one that computes the full
    :math:`S \times S` score matrix and masks it does :math:`S^2` (``skip_masked=False``).

    >>> prefill_flop(GPT2_SMALL, seq_len=1024, skip_masked=False) / 1e9
    291.6483072
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    _checks.boolean("skip_masked", skip_masked)
    _positive_int("seq_len", seq_len)
    _checks.at_most("seq_len", seq_len, 2**53)
    _positive_int("seq_len", seq_len)
    _positive_int("batch", batch)
    contexts = seq_len * (seq_len + 1) / 2 if skip_masked else float(seq_len) ** 2
    return batch * (2.0 * matmul_parameter_count(cfg) * seq_len
                    + 4.0 * cfg.n_layers * cfg.n_heads * cfg.head_dim * contexts)


def decode_step_flop(cfg: TransformerConfig, *, context_len: int, batch: int = 1) -> float:
    r"""FLOP of one decode step: one new token for each of ``batch`` sequences.

    .. math:: F_{\text{step}} = B\, F_{\text{token}}(S)

    Each new token attends to ``context_len`` positions (the cached ones and itself):
    ``batch * forward_flop_per_token(cfg, context_len)``.

    >>> decode_step_flop(LLAMA3_8B, context_len=1024, batch=8) / 1e9
    124.369502208
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    _positive_int("batch", batch)
    return batch * forward_flop_per_token(cfg, context_len)


def training_flop(n_params: float, n_tokens: float) -> float:
    r"""FLOP to train a model of ``n_params`` parameters on ``n_tokens`` tokens.

    .. math:: C_{\text{train}} \approx 6 N D                              (eq-num-train-flop)

    The forward pass costs :math:`2N` per token; the backward pass twice that (a gradient
    for the activations and one for the weights).

    Assumptions
    -----------
    Context short enough that the attention term is small (:math:`d \gg n_{\text{ctx}}/12`
    in Kaplan's words); no activation recomputation.

    References
    ----------
    Kaplan et al. (2020) section 2.1; Hoffmann et al. (2022) section 3 (:math:`C \approx
    6ND`). Dubey et al. (2024) section 1: 405B parameters, 15.6T tokens, 3.8e25 FLOP.

    >>> f"{training_flop(405e9, 15.6e12):.3g}"
    '3.79e+25'
    """
    return 6.0 * _positive("n_params", n_params) * _positive("n_tokens", n_tokens)


# --- memory -----------------------------------------------------------------------------

def kv_cache_bytes(*, batch: int, seq_len: int, n_layers: int, n_kv_heads: int,
                   head_dim: int, bytes_per_element: float) -> float:
    r"""Bytes of KV cache: 2 (K and V) x L x H_kv x d_head x S x B x bytes per element.

    .. math:: M_{KV} = 2\,L\,H_{kv}\,d_h\,S\,B\,b_{\text{elem}}              (eq-num-kv)

    Parameters
    ----------
    batch : int
        :math:`B`, sequences held (>= 0).
    seq_len : int
        :math:`S`, tokens cached per sequence (>= 0).
    n_layers, n_kv_heads, head_dim : int
        :math:`L`, :math:`H_{kv}`, :math:`d_h` (>= 1).
    bytes_per_element : float
        :math:`b_{\text{elem}}` (bytes; 2.0 for bf16, 0.5 for int4).

    Returns
    -------
    float
        Bytes.

    Assumptions
    -----------
    Every layer caches one key and one value vector per KV head per token; no paging
    overhead or quantization scales.

    References
    ----------
    Kwon et al. (2023) section 3: OPT-13B (40 layers, hidden 5120, fp16) needs 800 KB per
    token (their KB is 1024 bytes); Ainslie et al. (2023) (GQA: :math:`H_{kv} < H`).

    Examples
    --------
    >>> kv_cache_bytes(batch=1, seq_len=1, n_layers=40, n_kv_heads=40, head_dim=128,
    ...                bytes_per_element=2.0) / 1024
    800.0
    """
    for name, value in (("batch", batch), ("seq_len", seq_len)):
        _positive_int(name, value, minimum=0)
    for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads),
                        ("head_dim", head_dim)):
        _positive_int(name, value)
    bpe = _positive("bytes_per_element", bytes_per_element)
    return 2.0 * n_layers * n_kv_heads * head_dim * seq_len * batch * bpe


def kv_cache_bytes_per_token(cfg: TransformerConfig, bytes_per_element: float) -> float:
    r"""KV-cache bytes one token of one sequence adds (bytes).

    .. math:: Q_{kv} = 2\, L\, H_{kv}\, d_h\, b

    with :math:`b` the bytes per element (:func:`kv_cache_bytes` with :math:`B = S = 1`).

    >>> kv_cache_bytes_per_token(LLAMA2_7B, 2.0) / 2**20
    0.5
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    return kv_cache_bytes(batch=1, seq_len=1, n_layers=cfg.n_layers, n_kv_heads=cfg.n_kv_heads,
                          head_dim=cfg.head_dim, bytes_per_element=bytes_per_element)


def weight_bytes(n_params: float, bytes_per_element: float) -> float:
    r"""Bytes of ``n_params`` weights stored at ``bytes_per_element`` each.

    .. math:: Q_w = N\, b

    >>> weight_bytes(8.03e9, 2.0) / 1e9
    16.06
    """
    return _positive("n_params", n_params, allow_zero=True) * \
        _positive("bytes_per_element", bytes_per_element)


def training_state_bytes(n_params: float, *, weight_bytes_per_param: float = 2.0,
                         grad_bytes_per_param: float = 2.0, master_bytes_per_param: float = 4.0,
                         moment_bytes_per_param: float = 8.0) -> float:
    r"""Bytes of model state during mixed-precision training with Adam.

    .. math:: M_{\text{state}} = (2 + 2 + K) N,\quad K = 4 + 4 + 4 = 12
       \;\Rightarrow\; 16 N\ \text{bytes}                                    (eq-num-state)

    Parameters
    ----------
    n_params : float
        :math:`N`.
    weight_bytes_per_param, grad_bytes_per_param : float
        The 16-bit working copy of the weights and the gradients (bytes each).
    master_bytes_per_param : float
        The fp32 master copy the optimizer updates (bytes).
    moment_bytes_per_param : float
        Adam's two fp32 moments, momentum and variance (bytes).

    Returns
    -------
    float
        Bytes.

    Assumptions
    -----------
    Activations, temporary buffers and fragmentation are not included (they depend on the
    batch and sequence length, not on :math:`N`).

    References
    ----------
    Rajbhandari et al. (2020) section 3.1: :math:`2\Psi + 2\Psi + K\Psi = 16\Psi` bytes with
    :math:`K = 12`; "at least 24 GB" for GPT-2's 1.5B parameters.

    Examples
    --------
    >>> training_state_bytes(1.5e9) / 1e9
    24.0
    """
    n = _positive("n_params", n_params, allow_zero=True)
    per = sum(_positive(name, v, allow_zero=True) for name, v in (
        ("weight_bytes_per_param", weight_bytes_per_param),
        ("grad_bytes_per_param", grad_bytes_per_param),
        ("master_bytes_per_param", master_bytes_per_param),
        ("moment_bytes_per_param", moment_bytes_per_param)))
    return n * per


# --- arithmetic intensity --------------------------------------------------------------

def matmul_intensity_flop_per_byte(*, n_tokens: int, d_in: int, d_out: int,
                                   bytes_per_element: float) -> float:
    r"""Arithmetic intensity of multiplying ``n_tokens`` activations by a d_in x d_out weight.

    .. math:: I = \frac{2 T d_{in} d_{out}}{b_{\text{elem}}\,(d_{in} d_{out} + T d_{in}
       + T d_{out})} \;\xrightarrow{T \ll d}\; \frac{2T}{b_{\text{elem}}}   (eq-num-intensity)

    Parameters
    ----------
    n_tokens : int
        :math:`T`, rows of the activation matrix (tokens in flight, >= 1).
    d_in, d_out : int
        Weight shape (>= 1).
    bytes_per_element : float
        Bytes per element of weights and activations.

    Returns
    -------
    float
        FLOP per byte moved between memory and the processor.

    Assumptions
    -----------
    Each of the three matrices crosses the memory bus exactly once (perfect on-chip reuse).

    References
    ----------
    Williams et al. (2009) (operational intensity); Austin et al. (2025), "How to Scale
    Your Model", part 1: a bf16 matmul is compute-bound on a TPU v5e (1.97e14 FLOP/s,
    8.2e11 bytes/s) once the batch exceeds about 240 tokens.

    Examples
    --------
    >>> round(matmul_intensity_flop_per_byte(n_tokens=1, d_in=4096, d_out=4096,
    ...                                      bytes_per_element=2.0), 3)
    1.0
    """
    t = _positive_int("n_tokens", n_tokens)
    di, do = _positive_int("d_in", d_in), _positive_int("d_out", d_out)
    bpe = _positive("bytes_per_element", bytes_per_element)
    return 2.0 * t * di * do / (bpe * (di * do + t * di + t * do))


def _matmul_shapes(cfg: TransformerConfig) -> list[tuple[int, int, int]]:
    """(d_in, d_out, count) of every weight matrix of one forward pass."""
    d, L = cfg.d_model, cfg.n_layers
    q, kv = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    shapes = [(d, q, L), (d, kv, 2 * L), (q, d, L)]
    if cfg.mlp == "swiglu":
        shapes += [(d, cfg.d_ff, 2 * L), (cfg.d_ff, d, L)]
    else:
        shapes += [(d, cfg.d_ff, L), (cfg.d_ff, d, L)]
    shapes.append((d, cfg.vocab_size, 1))
    return shapes


def forward_intensity_flop_per_byte(cfg: TransformerConfig, *, n_tokens: int,
                                    bytes_per_element: float) -> float:
    r"""Arithmetic intensity of all the weight matrices of a forward pass over ``n_tokens``.

    Sums :func:`matmul_intensity_flop_per_byte`'s FLOP and bytes over every weight matrix:
    each is read once and multiplies the ``n_tokens`` activations in flight, whether those are
    one prompt's tokens (prefill) or one new token of each of ``n_tokens`` sequences (decode).

    Assumptions
    -----------
    Attention-score work and KV-cache traffic are left out (see
    :func:`decode_attention_intensity_flop_per_byte`).

    >>> round(forward_intensity_flop_per_byte(LLAMA3_8B, n_tokens=1, bytes_per_element=2.0), 4)
    0.9996
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    t = _positive_int("n_tokens", n_tokens)
    bpe = _positive("bytes_per_element", bytes_per_element)
    flop = sum(2.0 * t * di * do * n for di, do, n in _matmul_shapes(cfg))
    moved = sum(bpe * (di * do + t * di + t * do) * n for di, do, n in _matmul_shapes(cfg))
    return flop / moved


def decode_attention_intensity_flop_per_byte(cfg: TransformerConfig, *,
                                             kv_bytes_per_element: float) -> float:
    r"""Arithmetic intensity of decode-time attention over the KV cache.

    .. math:: I_{\text{attn}} = \frac{4 H d_h S}{2 H_{kv} d_h S\, b_{\text{elem}}}
       = \frac{2\,(H / H_{kv})}{b_{\text{elem}}}                      (eq-num-attn-intensity)

    One new token's query heads score against and average :math:`S` cached keys and
    values (:math:`4 H d_h S` FLOP) that must be read from memory (:math:`2 H_{kv} d_h S`
    elements). Each sequence has its own cache, so batching does not raise this ratio.

    >>> decode_attention_intensity_flop_per_byte(LLAMA3_8B, kv_bytes_per_element=2.0)
    4.0
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    bpe = _positive("kv_bytes_per_element", kv_bytes_per_element)
    return 2.0 * (cfg.n_heads / cfg.n_kv_heads) / bpe
