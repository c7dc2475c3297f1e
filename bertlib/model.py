"""The BERT model of the d2l chapter, one class per concept.

Shapes are in the signatures and checked at run time (jaxtyping): B = batch, T = sequence
length, H = num_hiddens, P = prediction positions per sequence, V = vocab_size. Inside a
forward, nh = num_heads and hs = H // nh. Besides torch, this file needs only jaxtyping and
beartype (the shape checks); it can be read and copied on its own.

The defaults follow the chapter's PyTorch code (ReLU, no LayerNorm after the embedding sum, an
untied MLM decoder, PyTorch's LayerNorm epsilon). ``BERTConfig.original(...)`` switches on the
choices of the original BERT (GELU, embedding LayerNorm, tied MLM decoder, epsilon 1e-12) so that
real checkpoints load into the same classes.
"""

import dataclasses
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from beartype import beartype
from jaxtyping import Bool, Float, Int, jaxtyped
from torch import Tensor, nn

ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}
checked = jaxtyped(typechecker=beartype)  # a function's tensor shapes and dtypes, checked


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
        # The door: every model is built from a config, so a bad size is named here.
        for name in ("vocab_size", "num_hiddens", "ffn_num_hiddens", "num_heads", "num_blks",
                     "max_len"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**6:
                raise ValueError(f"{name} must be an integer in [1, 1000000]; got {value!r}")
        if self.num_hiddens % self.num_heads:
            raise ValueError(f"num_hiddens ({self.num_hiddens}) must be divisible by num_heads "
                             f"({self.num_heads})")
        if not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be a number in [0, 1); got {self.dropout!r}")
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(f"hidden_act must be one of {sorted(ACTIVATIONS)}; got "
                             f"{self.hidden_act!r}")

    @classmethod
    def original(cls, **sizes) -> "BERTConfig":
        """The original BERT's architecture with the given sizes."""
        return cls(**sizes, hidden_act="gelu", embedding_norm=True, tie_mlm_decoder=True,
                   layer_norm_eps=1e-12)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def key_padding_mask(valid_lens: Int[Tensor, " B"] | None,
                     seq_len: int) -> Bool[Tensor, "B T"] | None:
    """True where a key position holds a real token."""
    if valid_lens is None:
        return None
    return torch.arange(seq_len, device=valid_lens.device) < valid_lens[:, None]


class MultiHeadAttention(nn.Module):
    """Scaled dot-product self-attention with ``num_heads`` heads and key padding masking."""

    def __init__(self, num_hiddens: int, num_heads: int, dropout: float):
        super().__init__()
        self.num_heads = num_heads
        self.dropout = dropout
        self.W_q = nn.Linear(num_hiddens, num_hiddens)
        self.W_k = nn.Linear(num_hiddens, num_hiddens)
        self.W_v = nn.Linear(num_hiddens, num_hiddens)
        self.W_o = nn.Linear(num_hiddens, num_hiddens)

    def _split_heads(self, X: Tensor) -> Tensor:
        B, T, H = X.shape
        return X.view(B, T, self.num_heads, H // self.num_heads).transpose(1, 2)  # (B, nh, T, hs)

    @checked
    def forward(self, X: Float[Tensor, "B T H"], mask: Bool[Tensor, "B T"] | None,
                need_weights: bool = False,
                ) -> tuple[Float[Tensor, "B T H"], Float[Tensor, "B nh T T"] | None]:
        """mask: True for real keys. Returns the attended values, and the weights when asked."""
        B, T, H = X.shape
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
    """The same two-layer MLP applied at every position."""

    def __init__(self, num_hiddens: int, ffn_num_hiddens: int, hidden_act: str):
        super().__init__()
        self.dense1 = nn.Linear(num_hiddens, ffn_num_hiddens)
        self.act = ACTIVATIONS[hidden_act]()
        self.dense2 = nn.Linear(ffn_num_hiddens, num_hiddens)

    def forward(self, X: Float[Tensor, "B T H"]) -> Float[Tensor, "B T H"]:
        return self.dense2(self.act(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection followed by LayerNorm (the post-norm of the original Transformer)."""

    def __init__(self, num_hiddens: int, dropout: float, eps: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(num_hiddens, eps=eps)

    def forward(self, X: Float[Tensor, "B T H"],
                Y: Float[Tensor, "B T H"]) -> Float[Tensor, "B T H"]:
        return self.ln(self.dropout(Y) + X)


class TransformerEncoderBlock(nn.Module):
    """Self-attention and FFN, each wrapped in AddNorm."""

    def __init__(self, config: BERTConfig):
        super().__init__()
        H, eps = config.num_hiddens, config.layer_norm_eps
        self.attention = MultiHeadAttention(H, config.num_heads, config.dropout)
        self.addnorm1 = AddNorm(H, config.dropout, eps)
        self.ffn = PositionWiseFFN(H, config.ffn_num_hiddens, config.hidden_act)
        self.addnorm2 = AddNorm(H, config.dropout, eps)

    def forward(self, X: Float[Tensor, "B T H"], mask: Bool[Tensor, "B T"] | None,
                need_weights: bool = False,
                ) -> tuple[Float[Tensor, "B T H"], Float[Tensor, "B nh T T"] | None]:
        Y, weights = self.attention(X, mask, need_weights)
        Y = self.addnorm1(X, Y)
        return self.addnorm2(Y, self.ffn(Y)), weights


def check_token_inputs(tokens: Tensor, segments: Tensor, valid_lens: Tensor | None,
                       config: BERTConfig) -> None:
    """The values a learner can get wrong that no shape shows: each error names the argument,
    the value and what is allowed."""
    seq_len = tokens.shape[1]
    if seq_len > config.max_len:
        raise ValueError(f"sequence length {seq_len} exceeds max_len={config.max_len}, the "
                         f"number of learned position embeddings; truncate the input to at most "
                         f"{config.max_len} tokens")
    check_ids("tokens", tokens, 0, config.vocab_size - 1)
    check_ids("segments", segments, 0, 1)
    if valid_lens is not None:
        check_ids("valid_lens", valid_lens, 1, seq_len)


def check_ids(name: str, ids: Tensor, low: int, high: int) -> None:
    """Integer ids in [low, high], or a ValueError naming the first that is not."""
    outside = (ids < low) | (ids > high)
    if outside.any():
        raise ValueError(f"{name} must be in [{low}, {high}]; got {int(ids[outside][0])}")


class BERTEncoder(nn.Module):
    """Token + segment + learnable position embeddings, then ``num_blks`` encoder blocks."""

    def __init__(self, vocab_size: int, num_hiddens: int, ffn_num_hiddens: int, num_heads: int,
                 num_blks: int, dropout: float, max_len: int = 1000, **options):
        super().__init__()
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

    def embed(self, tokens: Int[Tensor, "B T"],
              segments: Int[Tensor, "B T"]) -> Float[Tensor, "B T H"]:
        """The input representation: token + segment + position embeddings."""
        X = self.token_embedding(tokens) + self.segment_embedding(segments)
        X = X + self.pos_embedding[:, : tokens.shape[1], :]
        if self.config.embedding_norm:
            X = self.embedding_dropout(self.embedding_ln(X))
        return X

    @checked
    def forward(self, tokens: Int[Tensor, "B T"], segments: Int[Tensor, "B T"],
                valid_lens: Int[Tensor, " B"] | None = None, *, return_attention: bool = False,
                ) -> Float[Tensor, "B T H"] | tuple[Float[Tensor, "B T H"], tuple]:
        """valid_lens: the real length of each sequence, the rest is padding. With
        ``return_attention``, also one (B, num_heads, T, T) weight tensor per block."""
        check_token_inputs(tokens, segments, valid_lens, self.config)
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
        self.mlp = nn.Sequential(
            nn.Linear(num_inputs, num_hiddens),
            ACTIVATIONS[hidden_act](),
            nn.LayerNorm(num_hiddens, eps=layer_norm_eps),
            nn.Linear(num_hiddens, vocab_size),
        )

    @checked
    def forward(self, X: Float[Tensor, "B T H"],
                pred_positions: Int[Tensor, "B P"]) -> Float[Tensor, "B P V"]:
        check_ids("pred_positions", pred_positions, 0, X.shape[1] - 1)
        return self.mlp(self.gather(X, pred_positions))

    @staticmethod
    def gather(X: Float[Tensor, "B T H"],
               pred_positions: Int[Tensor, "B P"]) -> Float[Tensor, "B P H"]:
        """Element [b, p] is X[b, pred_positions[b, p]]."""
        batch_idx = torch.arange(X.shape[0], device=X.device)[:, None]  # (B, 1), broadcasts
        return X[batch_idx, pred_positions]


class NextSentencePred(nn.Module):
    """Binary classifier IsNext / NotNext. Label convention: 1 = IsNext, 0 = NotNext."""

    def __init__(self, num_inputs: int):
        super().__init__()
        self.output = nn.Linear(num_inputs, 2)

    @checked
    def forward(self, X: Float[Tensor, "B num_inputs"]) -> Float[Tensor, "B 2"]:
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
    def from_config(cls, config: BERTConfig) -> "BERTModel":
        return cls(**config.to_dict())

    @checked
    def forward(self, tokens: Int[Tensor, "B T"], segments: Int[Tensor, "B T"],
                valid_lens: Int[Tensor, " B"] | None = None,
                pred_positions: Int[Tensor, "B P"] | None = None, *,
                return_attention: bool = False) -> tuple:
        """Returns ``(encoded_X, mlm_Y_hat, nsp_Y_hat)``, plus the attentions when asked:
        (B, T, H), (B, P, V) or None without ``pred_positions``, and (B, 2)."""
        out = self.encoder(tokens, segments, valid_lens, return_attention=return_attention)
        encoded_X, attentions = out if return_attention else (out, None)
        mlm_Y_hat = None if pred_positions is None else self.mlm(encoded_X, pred_positions)
        nsp_Y_hat = self.nsp(self.hidden(encoded_X[:, 0, :]))
        if return_attention:
            return encoded_X, mlm_Y_hat, nsp_Y_hat, attentions
        return encoded_X, mlm_Y_hat, nsp_Y_hat
