"""The BERT model of the d2l chapter, one class per concept.

Shapes use B = batch, T = sequence length, H = num_hiddens, nh = num_heads, hs = H // nh.

The defaults follow the chapter's PyTorch code (ReLU, no LayerNorm after the embedding sum, an
untied MLM decoder, PyTorch's LayerNorm epsilon). ``BERTConfig.original(...)`` switches on the
choices of the original BERT (GELU, embedding LayerNorm, tied MLM decoder, epsilon 1e-12) so that
real checkpoints load into the same classes.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from bertlib.checks import (
    check_bool,
    check_choice,
    check_divisible,
    check_dropout,
    check_inputs_on_device,
    check_layer_input,
    check_positions_in_text,
    check_positive_float,
    check_positive_int,
    check_pred_positions,
    check_token_inputs,
)
from bertlib.sizes import check_num_parameters, check_sizes

ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}
# return_attention keeps num_blks x (B, nh, T, T) weights; past this it is refused, not tried.
ATTENTION_MAX_BYTES = 2**30


@dataclass(frozen=True)
class BERTConfig:
    """Every size and architectural choice of a :class:`BERTModel`."""

    vocab_size: int
    num_hiddens: int
    ffn_num_hiddens: int
    num_heads: int
    num_blks: int
    dropout: float
    max_len: int = 1000
    hidden_act: str = "relu"  # the chapter's FFN/MLM activation; original BERT uses "gelu"
    embedding_norm: bool = False  # original BERT: LayerNorm + dropout after the embedding sum
    tie_mlm_decoder: bool = False  # original BERT: MLM output weights = token embeddings
    layer_norm_eps: float = 1e-5  # PyTorch's default; original BERT uses 1e-12

    def __post_init__(self) -> None:
        sizes = {name: getattr(self, name) for name in ("vocab_size", "num_hiddens",
                 "ffn_num_hiddens", "num_heads", "num_blks", "max_len")}
        check_sizes(sizes)  # positive, and not more blocks than can be built in a lesson
        check_divisible(self.num_hiddens, self.num_heads)
        check_dropout("dropout", self.dropout)
        check_choice("hidden_act", self.hidden_act, ACTIVATIONS)
        check_bool("embedding_norm", self.embedding_norm)
        check_bool("tie_mlm_decoder", self.tie_mlm_decoder)
        check_positive_float("layer_norm_eps", self.layer_norm_eps)
        check_num_parameters("A BERTModel of " + ", ".join(f"{k}={v}" for k, v in sizes.items()),
                             self.num_parameters())

    def num_parameters(self) -> int:
        """How many numbers a :class:`BERTModel` of this configuration learns (arithmetic only,
        so that a size that cannot fit is refused before anything is allocated)."""
        H, F, V = self.num_hiddens, self.ffn_num_hiddens, self.vocab_size
        embeddings = (V + 2 + self.max_len) * H + (2 * H if self.embedding_norm else 0)
        block = 4 * (H * H + H) + (H * F + F) + (F * H + H) + 2 * 2 * H  # + 2 LayerNorms
        pooler_and_nsp = (H * H + H) + (2 * H + 2)
        mlm = (H * H + H) + 2 * H + (0 if self.tie_mlm_decoder else V * H) + V
        return embeddings + self.num_blks * block + pooler_and_nsp + mlm

    @classmethod
    def original(cls, **sizes) -> BERTConfig:
        """The original BERT's architecture with the given sizes."""
        fixed = {"hidden_act", "embedding_norm", "tie_mlm_decoder", "layer_norm_eps"} & set(sizes)
        if fixed:
            raise ValueError(f"BERTConfig.original takes sizes only; {sorted(fixed)} are set by "
                             "it (use dataclasses.replace on its result to change them)")
        return cls(hidden_act="gelu", embedding_norm=True, tie_mlm_decoder=True,
                   layer_norm_eps=1e-12, **sizes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def key_padding_mask(valid_lens: torch.Tensor | None, seq_len: int) -> torch.Tensor | None:
    """``(B, T)`` boolean mask, True where a key position holds a real token."""
    if valid_lens is None:
        return None
    return torch.arange(seq_len, device=valid_lens.device) < valid_lens[:, None]


def check_key_mask(mask: torch.Tensor, B: int, T: int) -> None:
    """A (B, T) boolean mask with at least one real key per sequence: a query with no key to
    attend to has no softmax (NaN, or garbage from the fused kernel)."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.shape != (B, T):
        raise ValueError(f"mask must be a (batch, seq_len) = {(B, T)} boolean tensor, True at "
                         f"real keys; got {getattr(mask, 'dtype', type(mask).__name__)} of "
                         f"shape {tuple(getattr(mask, 'shape', ()))}")
    empty = ~mask.any(dim=1)
    if bool(empty.any()):
        raise ValueError(f"mask must have at least one True (real key) per sequence; sequence "
                         f"{int(empty.nonzero()[0])} has none, so it has nothing to attend to")


class MultiHeadAttention(nn.Module):
    """Scaled dot-product self-attention with ``num_heads`` heads and key padding masking."""

    def __init__(self, num_hiddens: int, num_heads: int, dropout: float):
        super().__init__()
        check_positive_int("num_hiddens", num_hiddens)
        check_positive_int("num_heads", num_heads)
        check_divisible(num_hiddens, num_heads)
        check_dropout("dropout", dropout)
        check_num_parameters("MultiHeadAttention", 4 * (num_hiddens + 1) * num_hiddens)
        self.num_heads = num_heads
        self.dropout = dropout
        self.W_q = nn.Linear(num_hiddens, num_hiddens)
        self.W_k = nn.Linear(num_hiddens, num_hiddens)
        self.W_v = nn.Linear(num_hiddens, num_hiddens)
        self.W_o = nn.Linear(num_hiddens, num_hiddens)

    def _split_heads(self, X: torch.Tensor) -> torch.Tensor:
        B, T, H = X.shape
        return X.view(B, T, self.num_heads, H // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)

    def forward(
        self, X: torch.Tensor, mask: torch.Tensor | None, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """X: (B, T, H); mask: (B, T) True for real keys. Returns (B, T, H) and the weights
        (B, nh, T, T) when ``need_weights``."""
        check_layer_input("X", X, 3, "(batch, seq_len, num_hiddens)", self.W_q, "num_hiddens")
        check_bool("need_weights", need_weights)
        B, T, H = X.shape
        if mask is not None:
            check_key_mask(mask, B, T)
        q, k, v = (self._split_heads(W(X)) for W in (self.W_q, self.W_k, self.W_v))
        # <listing: masked-softmax>
        attn_mask = None if mask is None else mask[:, None, None, :]  # (B, 1, 1, T)
        p = self.dropout if self.training else 0.0
        if need_weights:
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, nh, T, T)
            if attn_mask is not None:
                # -inf, not a large negative number, so padded keys get exactly zero weight.
                scores = scores.masked_fill(~attn_mask, float("-inf"))
            weights = scores.softmax(dim=-1)
            # </listing>
            out = F.dropout(weights, p, self.training) @ v  # (B, nh, T, hs)
        else:
            # Fused kernel: same maths, no (T, T) weights kept for the backward pass.
            weights = None
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p)
        out = out.transpose(1, 2).reshape(B, T, H)
        return self.W_o(out), weights


class PositionWiseFFN(nn.Module):
    """The same two-layer MLP applied at every position: (B, T, H) -> (B, T, H)."""

    def __init__(self, num_hiddens: int, ffn_num_hiddens: int, hidden_act: str):
        super().__init__()
        # <checks>
        check_positive_int("num_hiddens", num_hiddens)
        check_positive_int("ffn_num_hiddens", ffn_num_hiddens)
        check_choice("hidden_act", hidden_act, ACTIVATIONS)
        check_num_parameters("PositionWiseFFN", 2 * num_hiddens * ffn_num_hiddens
                             + num_hiddens + ffn_num_hiddens)
        # </checks>
        self.dense1 = nn.Linear(num_hiddens, ffn_num_hiddens)
        self.act = ACTIVATIONS[hidden_act]()
        self.dense2 = nn.Linear(ffn_num_hiddens, num_hiddens)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.dense2(self.act(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection followed by LayerNorm (the post-norm of the original Transformer)."""

    def __init__(self, num_hiddens: int, dropout: float, eps: float):
        super().__init__()
        # <checks>
        check_positive_int("num_hiddens", num_hiddens)
        check_dropout("dropout", dropout)
        check_positive_float("eps", eps)
        check_num_parameters("AddNorm", 2 * num_hiddens)
        # </checks>
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(num_hiddens, eps=eps)

    def forward(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        return self.ln(self.dropout(Y) + X)


class TransformerEncoderBlock(nn.Module):
    """Self-attention and FFN, each wrapped in AddNorm: (B, T, H) -> (B, T, H)."""

    def __init__(self, config: BERTConfig):
        super().__init__()
        H, eps = config.num_hiddens, config.layer_norm_eps
        self.attention = MultiHeadAttention(H, config.num_heads, config.dropout)
        self.addnorm1 = AddNorm(H, config.dropout, eps)
        self.ffn = PositionWiseFFN(H, config.ffn_num_hiddens, config.hidden_act)
        self.addnorm2 = AddNorm(H, config.dropout, eps)

    def forward(
        self, X: torch.Tensor, mask: torch.Tensor | None, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        Y, weights = self.attention(X, mask, need_weights)
        Y = self.addnorm1(X, Y)
        return self.addnorm2(Y, self.ffn(Y)), weights


class BERTEncoder(nn.Module):
    """Token + segment + learnable position embeddings, then ``num_blks`` encoder blocks."""

    def __init__(self, vocab_size: int, num_hiddens: int, ffn_num_hiddens: int, num_heads: int,
                 num_blks: int, dropout: float, max_len: int = 1000, **options):
        super().__init__()
        # <checks>
        unknown = set(options) - {f.name for f in dataclasses.fields(BERTConfig)}
        if unknown:
            raise ValueError(f"unknown options {sorted(unknown)}; BERTConfig has "
                             f"{[f.name for f in dataclasses.fields(BERTConfig)]}")
        # </checks>
        self.config = BERTConfig(vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks,
                                 dropout, max_len, **options)
        self.token_embedding = nn.Embedding(vocab_size, num_hiddens)
        self.segment_embedding = nn.Embedding(2, num_hiddens)
        # Learnable, unlike the Transformer's fixed sinusoids: one vector per position.
        self.pos_embedding = nn.Parameter(torch.randn(1, max_len, num_hiddens))
        if self.config.embedding_norm:
            self.embedding_ln = nn.LayerNorm(num_hiddens, eps=self.config.layer_norm_eps)
            self.embedding_dropout = nn.Dropout(dropout)
        self.blks = nn.ModuleList(TransformerEncoderBlock(self.config) for _ in range(num_blks))

    def embed(self, tokens: torch.Tensor, segments: torch.Tensor) -> torch.Tensor:
        """The input representation: (B, T) ids -> (B, T, H)."""
        X = self.token_embedding(tokens) + self.segment_embedding(segments)
        X = X + self.pos_embedding[:, : tokens.shape[1], :]
        if self.config.embedding_norm:
            X = self.embedding_dropout(self.embedding_ln(X))
        return X

    def forward(
        self,
        tokens: torch.Tensor,
        segments: torch.Tensor,
        valid_lens: torch.Tensor | None = None,
        *,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        """tokens, segments: (B, T); valid_lens: (B,) real lengths, the rest is padding.

        Returns (B, T, H), or ``(X, attentions)`` with one (B, nh, T, T) tensor per block.
        """
        # <checks>
        cfg = self.config
        check_inputs_on_device(self.pos_embedding.device, tokens=tokens, segments=segments,
                               valid_lens=valid_lens)
        check_token_inputs(tokens, segments, valid_lens, cfg.vocab_size, cfg.max_len)
        check_bool("return_attention", return_attention)
        if return_attention:
            B, T = tokens.shape
            need = cfg.num_blks * B * cfg.num_heads * T * T * self.pos_embedding.element_size()
            if need > ATTENTION_MAX_BYTES:
                raise ValueError(
                    f"return_attention=True would keep {need / 2**30:.1f} GiB of attention "
                    f"weights for {B} sequences of {T} tokens (at most "
                    f"{ATTENTION_MAX_BYTES / 2**30:.0f} GiB): ask for fewer or shorter ones")
        # </checks>
        mask = key_padding_mask(valid_lens, tokens.shape[1])
        X = self.embed(tokens, segments)
        attentions = []
        for blk in self.blks:
            X, weights = blk(X, mask, need_weights=return_attention)
            attentions.append(weights)
        return (X, tuple(attentions)) if return_attention else X


class MaskLM(nn.Module):
    """Predicts the original tokens at the given positions (the MLM head)."""

    def __init__(self, vocab_size: int, num_hiddens: int, num_inputs: int | None = None,
                 hidden_act: str = "relu", layer_norm_eps: float = 1e-5):
        super().__init__()
        num_inputs = num_hiddens if num_inputs is None else num_inputs
        # <checks>
        for name, value in (("vocab_size", vocab_size), ("num_hiddens", num_hiddens),
                            ("num_inputs", num_inputs)):
            check_positive_int(name, value)
        check_choice("hidden_act", hidden_act, ACTIVATIONS)
        check_positive_float("layer_norm_eps", layer_norm_eps)
        check_num_parameters("MaskLM", (num_inputs + 3 + vocab_size) * num_hiddens + vocab_size)
        # </checks>
        self.mlp = nn.Sequential(
            nn.Linear(num_inputs, num_hiddens),
            ACTIVATIONS[hidden_act](),
            nn.LayerNorm(num_hiddens, eps=layer_norm_eps),
            nn.Linear(num_hiddens, vocab_size),
        )

    def forward(self, X: torch.Tensor, pred_positions: torch.Tensor) -> torch.Tensor:
        """X: (B, T, num_inputs); pred_positions: (B, P). Returns (B, P, vocab_size)."""
        # <checks>
        check_layer_input("X", X, 3, "(batch, seq_len, num_hiddens)", self.mlp[0],
                          "num_inputs")
        # </checks>
        return self.mlp(self.gather(X, pred_positions))

    @staticmethod
    def gather(X: torch.Tensor, pred_positions: torch.Tensor) -> torch.Tensor:
        """The vectors at the prediction positions: X (B, T, H), pred_positions (B, P) ->
        (B, P, H), element [b, p] being X[b, pred_positions[b, p]]."""
        B, T, _ = X.shape
        # <checks>
        check_pred_positions(pred_positions, B, T)
        # </checks>
        batch_idx = torch.arange(B, device=X.device)[:, None]  # (B, 1), broadcasts against (B, P)
        return X[batch_idx, pred_positions]  # (B, P, H)


class NextSentencePred(nn.Module):
    """Binary classifier IsNext / NotNext. Label convention: 1 = IsNext, 0 = NotNext."""

    def __init__(self, num_inputs: int):
        super().__init__()
        # <checks>
        check_positive_int("num_inputs", num_inputs)
        check_num_parameters("NextSentencePred", 2 * num_inputs + 2)
        # </checks>
        self.output = nn.Linear(num_inputs, 2)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """X: (B, num_inputs) -> logits (B, 2)."""
        # <checks>
        check_layer_input("X", X, 2, "(batch, num_inputs)", self.output, "num_inputs")
        # </checks>
        return self.output(X)


class BERTModel(nn.Module):
    """BERTEncoder with the MLM head and the NSP head (on the ``<cls>`` vector)."""

    def __init__(self, vocab_size: int, num_hiddens: int, ffn_num_hiddens: int, num_heads: int,
                 num_blks: int, dropout: float, max_len: int = 1000, **options):
        super().__init__()
        self.encoder = BERTEncoder(vocab_size, num_hiddens, ffn_num_hiddens, num_heads,
                                   num_blks, dropout, max_len, **options)
        cfg = self.config
        # The "pooler" of the original BERT: a Linear + Tanh on the <cls> vector.
        self.hidden = nn.Sequential(nn.Linear(num_hiddens, num_hiddens), nn.Tanh())
        self.mlm = MaskLM(vocab_size, num_hiddens, hidden_act=cfg.hidden_act,
                          layer_norm_eps=cfg.layer_norm_eps)
        self.nsp = NextSentencePred(num_hiddens)
        if cfg.tie_mlm_decoder:
            self.mlm.mlp[-1].weight = self.encoder.token_embedding.weight

    @property
    def config(self) -> BERTConfig:
        return self.encoder.config

    @classmethod
    def from_config(cls, config: BERTConfig) -> BERTModel:
        return cls(**config.to_dict())

    def forward(
        self,
        tokens: torch.Tensor,
        segments: torch.Tensor,
        valid_lens: torch.Tensor | None = None,
        pred_positions: torch.Tensor | None = None,
        *,
        return_attention: bool = False,
    ) -> tuple:
        """Returns ``(encoded_X, mlm_Y_hat, nsp_Y_hat)``, plus the attentions when asked.

        encoded_X: (B, T, H); mlm_Y_hat: (B, P, vocab_size) or None when ``pred_positions`` is
        None; nsp_Y_hat: (B, 2).
        """
        out = self.encoder(tokens, segments, valid_lens, return_attention=return_attention)
        # <checks>
        if pred_positions is not None and valid_lens is not None:
            check_positions_in_text(pred_positions, valid_lens)
        # </checks>
        encoded_X, attentions = out if return_attention else (out, None)
        mlm_Y_hat = None if pred_positions is None else self.mlm(encoded_X, pred_positions)
        nsp_Y_hat = self.nsp(self.hidden(encoded_X[:, 0, :]))
        if return_attention:
            return encoded_X, mlm_Y_hat, nsp_Y_hat, attentions
        return encoded_X, mlm_Y_hat, nsp_Y_hat
