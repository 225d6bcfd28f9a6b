r"""KV-cache memory under paging, contiguous preallocation and prefix sharing; KV transfer time.

A serving engine keeps the keys and values of every token of every running sequence. How it
*reserves* that memory decides how many sequences fit at once:

* **contiguous preallocation** (FasterTransformer, Orca): each sequence gets one region of
  :math:`S_{\max}` slots up front, so a sequence that ends at :math:`n` tokens wastes
  :math:`S_{\max} - n` of them for its whole lifetime;
* **paging** (PagedAttention, vLLM): slots come in blocks of :math:`b`, handed out as the
  sequence grows, so it holds :math:`\lceil n/b \rceil` blocks and wastes fewer than :math:`b`
  slots, all in its last block;
* **prefix sharing**: sequences whose prompts start with the same :math:`p` tokens can point
  at the same :math:`\lfloor p/b \rfloor` full blocks instead of storing them once each;
* **disaggregated prefill**: when prefill and decode run on different GPUs the prompt's KV
  cache (:math:`n \cdot q_{kv}` bytes) crosses a link before the first decode step.

Used by {ref}`sec-scheduling-and-kv-cache` and the lab {ref}`sec-lab-serving`.

References
----------
* Kwon, W. et al. (2023), "Efficient Memory Management for Large Language Model Serving with
  PagedAttention", SOSP: section 1 and Fig. 2 (only 20.4 % to 38.2 % of the KV-cache memory of
  existing systems holds token states), Fig. 3 (a 2048-slot reservation whose request uses 10
  slots leaves 2038 never used; a 512-slot one using 5 leaves 507), section 4 (blocks, block
  tables, waste confined to the last block).
* Zhong, Y. et al. (2024), "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized
  Large Language Model Serving", OSDI: the KV cache moves from the prefill to the decode
  instance, its cost set by the bandwidth between them.

Used by: chapters/scheduling-and-kv-cache.md, labs/serving.md.
"""

from __future__ import annotations

import math

from ._checks import positive, positive_int
from . import _checks

__all__ = ["blocks_needed", "paged_waste_tokens", "contiguous_waste_tokens",
           "kv_utilization", "prefix_sharing_saved_blocks", "kv_transfer_time_s",
           "RESERVATION_POLICIES", "reserved_kv_tokens"]

#: How a server reserves KV slots for a request (:func:`reserved_kv_tokens`): the three Orca
#: baselines of the vLLM paper and vLLM's own paging.
RESERVATION_POLICIES = ("max", "pow2", "oracle", "paged")


def _tokens(name: str, value) -> int:
    return positive_int(name, value, minimum=0)


def blocks_needed(n_tokens: int, block_tokens: int) -> int:
    r"""KV blocks a sequence of :math:`n` tokens occupies: :math:`\lceil n / b \rceil`.

    .. math:: N_{\text{blocks}} = \left\lceil \frac{n}{b} \right\rceil

    Parameters
    ----------
    n_tokens : int
        :math:`n`, tokens whose keys and values are stored (>= 0).
    block_tokens : int
        :math:`b`, token slots per block (>= 1).

    Returns
    -------
    int
        Blocks (0 for an empty sequence).

    References
    ----------
    Kwon, W. et al. (2023), PagedAttention, SOSP, section 4 (KV blocks of fixed size; a new
    block is allocated only when the last one is full).

    >>> blocks_needed(16, 16), blocks_needed(17, 16), blocks_needed(0, 16)
    (1, 2, 0)
    """
    n = _tokens("n_tokens", n_tokens)
    b = positive_int("block_tokens", block_tokens)
    return -(-n // b)


def paged_waste_tokens(n_tokens: int, block_tokens: int) -> int:
    r"""Unused slots of a paged sequence (internal fragmentation), all in its last block.

    .. math:: W_{\text{paged}} = b \left\lceil \frac{n}{b} \right\rceil - n \;\le\; b - 1

    Parameters
    ----------
    n_tokens : int
        :math:`n` (>= 0).
    block_tokens : int
        :math:`b` (>= 1).

    Returns
    -------
    int
        Slots reserved but unused, between 0 and :math:`b - 1`.

    References
    ----------
    Kwon, W. et al. (2023), PagedAttention, SOSP, section 4 (the waste of vLLM is confined to
    the last block of a sequence).

    >>> paged_waste_tokens(17, 16), paged_waste_tokens(32, 16)
    (15, 0)
    """
    return blocks_needed(n_tokens, block_tokens) * int(block_tokens) - int(n_tokens)


def contiguous_waste_tokens(n_tokens: int, max_seq_len: int) -> int:
    r"""Slots a max-length reservation leaves unused when the sequence ends at :math:`n` tokens.

    .. math:: W_{\text{contig}} = S_{\max} - n

    Parameters
    ----------
    n_tokens : int
        :math:`n`, the sequence's final length (prompt plus output, >= 0).
    max_seq_len : int
        :math:`S_{\max}`, slots reserved per sequence (>= ``n_tokens``).

    Returns
    -------
    int
        Slots reserved for the sequence's lifetime and never written.

    References
    ----------
    Kwon, W. et al. (2023), PagedAttention, SOSP, Fig. 3: a request of 7 prompt tokens that ends
    after 3 more in a 2048-slot chunk leaves 2038 slots never used.

    >>> contiguous_waste_tokens(10, 2048)
    2038
    """
    n = _tokens("n_tokens", n_tokens)
    s = positive_int("max_seq_len", max_seq_len)
    if n > s:
        raise ValueError(f"num_tokens ({n}) exceeds the reservation max_seq_len ({s})")
    return s - n


def kv_utilization(used_tokens, reserved_tokens) -> float:
    r"""Fraction of reserved KV slots that hold a token's keys and values.

    .. math:: U = \frac{\sum_i n_i}{\sum_i R_i}

    Parameters
    ----------
    used_tokens : float or sequence of float
        :math:`n_i`, tokens stored per sequence (>= 0), or their sum.
    reserved_tokens : float or sequence of float
        :math:`R_i`, slots reserved per sequence (>= :math:`n_i`), or their sum (> 0).

    Returns
    -------
    float
        Between 0 and 1.

    References
    ----------
    Kwon, W. et al. (2023), PagedAttention, SOSP, Fig. 2 (the share of KV-cache memory holding
    token states: 20.4 % to 38.2 % in existing systems, section 1).

    >>> kv_utilization([10, 5], [2048, 512])
    0.005859375
    """
    if hasattr(used_tokens, "__iter__") or hasattr(reserved_tokens, "__iter__"):
        _checks.positive_array("used_tokens", _checks.sequence("used_tokens", used_tokens),
                               allow_zero=True)
        _checks.positive_array("reserved_tokens",
                               _checks.sequence("reserved_tokens", reserved_tokens),
                               allow_zero=True)
        _checks.same_length("used_tokens", used_tokens, "reserved_tokens", reserved_tokens)
    used = sum(used_tokens) if hasattr(used_tokens, "__iter__") else used_tokens
    reserved = sum(reserved_tokens) if hasattr(reserved_tokens, "__iter__") else reserved_tokens
    used = positive("used_tokens", used, allow_zero=True)
    reserved = positive("reserved_tokens", reserved)
    if used > reserved:
        raise ValueError(f"used ({used}) exceeds reserved ({reserved}) slots")
    return used / reserved


def prefix_sharing_saved_blocks(n_sequences: int, prefix_len: int, block_tokens: int) -> int:
    r"""Blocks saved when :math:`m` sequences share a :math:`p`-token prompt prefix.

    Only full blocks are shared (a partial block would be written by each sequence):

    .. math:: \Delta N = (m - 1) \left\lfloor \frac{p}{b} \right\rfloor

    Parameters
    ----------
    n_sequences : int
        :math:`m`, sequences starting with the prefix (>= 1).
    prefix_len : int
        :math:`p`, tokens of the shared prefix (>= 0).
    block_tokens : int
        :math:`b` (>= 1).

    Returns
    -------
    int
        Blocks not allocated thanks to sharing.

    References
    ----------
    Kwon, W. et al. (2023), PagedAttention, SOSP, section 4 (shared prefix: the blocks of a
    common system prompt are mapped into every request's block table).

    >>> prefix_sharing_saved_blocks(8, 100, 16)
    42
    """
    m = positive_int("n_sequences", n_sequences)
    p = _tokens("prefix_len", prefix_len)
    b = positive_int("block_tokens", block_tokens)
    return (m - 1) * (p // b)


def kv_transfer_time_s(n_tokens: int, kv_bytes_per_token: float, link_bytes_per_s: float,
                       latency_s: float = 0.0) -> float:
    r"""Time to move a prompt's KV cache from a prefill GPU to a decode GPU.

    .. math:: T_{\text{xfer}} = \alpha + \frac{n \, q_{kv}}{B_{\text{link}}}

    Parameters
    ----------
    n_tokens : int
        :math:`n`, prompt tokens whose keys and values move (>= 0).
    kv_bytes_per_token : float
        :math:`q_{kv}`, bytes per token over all layers (> 0), e.g.
        :func:`helpers.models.transformer.kv_cache_bytes_per_token`.
    link_bytes_per_s : float
        :math:`B_{\text{link}}`, the link's bandwidth in one direction (> 0).
    latency_s : float
        :math:`\alpha`, a fixed start-up cost (>= 0).

    Returns
    -------
    float
        Seconds.

    References
    ----------
    Zhong, Y. et al. (2024), DistServe, OSDI, section 4 (the KV cache is transmitted from the
    prefill to the decoding instance; its cost depends on the bandwidth between them).

    >>> round(kv_transfer_time_s(1000, 131072, 450e9) * 1e6, 1)  # Llama-3-8B, bf16, NVLink: us
    291.3
    """
    n = _tokens("n_tokens", n_tokens)
    q = positive("kv_bytes_per_token", kv_bytes_per_token)
    bw = positive("link_bytes_per_s", link_bytes_per_s)
    a = positive("latency_s", latency_s, allow_zero=True)
    return a + n * q / bw


def reserved_kv_tokens(prompt_len: int, n_output_tokens: int, *, policy: str,
                       max_seq_len: int = 2048, block_tokens: int = 16) -> int:
    r"""KV slots (count) a request holds at its peak under a reservation policy.

    .. math::

        R_\text{max} = S_{\max}, \quad
        R_\text{pow2} = \min\bigl(S_{\max},\ p + 2^{\lceil \log_2 o \rceil}\bigr), \quad
        R_\text{oracle} = p + o, \quad
        R_\text{paged} = b \left\lceil \frac{p + o}{b} \right\rceil

    for a prompt of :math:`p` tokens that generates :math:`o`. Orca reserves at admission,
    before :math:`o` is known: the whole context (``"max"``), or the prompt plus the output
    rounded up to a power of two, at most twice what it needs (``"pow2"``); ``"oracle"`` is
    Orca told :math:`o` in advance, the bound no real reservation reaches. Paging (vLLM)
    reserves nothing ahead and holds whole blocks of :math:`b` slots.

    Parameters
    ----------
    prompt_len : int
        :math:`p` (>= 0).
    n_output_tokens : int
        :math:`o` (>= 1).
    policy : {"max", "pow2", "oracle", "paged"}
    max_seq_len : int
        :math:`S_{\max}`, the model's context (the vLLM paper's 2048); :math:`p + o` must fit.
    block_tokens : int
        :math:`b`, slots per block (``"paged"`` only; vLLM's default 16).

    Returns
    -------
    int
        Slots reserved; :func:`kv_utilization` of :math:`p + o` over it is the share used.

    Assumptions
    -----------
    The reservation of ``"pow2"`` is capped at the context (a buddy allocator cannot hand out
    more than the largest region); the source does not say what it does at the cap.

    References
    ----------
    Kwon et al. (2023), section 6.1, "Baseline 2: Orca": Orca (Oracle), Orca (Pow2) ("if the
    true output length is 25, it reserves 32 positions for outputs"), Orca (Max) ("up to the
    maximum sequence length of the model, i.e., 2048 tokens"); section 4 (blocks).

    Examples
    --------
    >>> [reserved_kv_tokens(100, 25, policy=p) for p in RESERVATION_POLICIES]
    [2048, 132, 125, 128]
    """
    p = _tokens("prompt_len", prompt_len)
    o = positive_int("n_output_tokens", n_output_tokens)
    _checks.one_of("policy", policy, RESERVATION_POLICIES)
    s_max = positive_int("max_seq_len", max_seq_len)
    b = positive_int("block_tokens", block_tokens)
    if p + o > s_max:
        raise ValueError(f"prompt_len + n_output_tokens must be at most max_seq_len={s_max}, got "
                         f"{p} + {o}")
    if policy == "max":
        return s_max
    if policy == "oracle":
        return p + o
    if policy == "pow2":
        return min(s_max, p + (1 << (o - 1).bit_length()))
    return b * math.ceil((p + o) / b)
