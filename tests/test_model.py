import math

import pytest
import torch
from jaxtyping import TypeCheckError
from torch import nn

from bertlib import (
    BERTConfig,
    BERTEncoder,
    BERTModel,
    MaskLM,
    MultiHeadAttention,
    NextSentencePred,
    bert_loss,
)
from bertlib.model import AddNorm, TransformerEncoderBlock, key_padding_mask
from bertlib.support.checks import error_message


def test_chapter_demo_shapes():
    """The shapes printed in the chapter: encoder (2, 8, 768), MaskLM (2, 3, 10000), NSP (2, 2)."""
    torch.manual_seed(0)
    vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks = 10000, 768, 1024, 4, 2
    encoder = BERTEncoder(vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, 0.2)
    tokens = torch.randint(0, vocab_size, (2, 8))
    segments = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1, 1]])
    encoded_X = encoder(tokens, segments, None)
    assert encoded_X.shape == (2, 8, 768)
    mlm = MaskLM(vocab_size, num_hiddens)
    mlm_Y_hat = mlm(encoded_X, torch.tensor([[1, 5, 2], [6, 1, 5]]))
    assert mlm_Y_hat.shape == (2, 3, 10000)
    nsp = NextSentencePred(num_hiddens)
    assert nsp(encoded_X[:, 0, :]).shape == (2, 2)


def test_mask_lm_gathers_the_given_positions():
    torch.manual_seed(0)
    mlm = MaskLM(11, 6)
    X = torch.randn(2, 5, 6)
    positions = torch.tensor([[4, 0], [2, 2]])
    expected = torch.stack([mlm.mlp(X[0, [4, 0]]), mlm.mlp(X[1, [2, 2]])])
    torch.testing.assert_close(mlm(X, positions), expected)


def _copy_attention_into(ref: nn.MultiheadAttention, ours: MultiHeadAttention) -> None:
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        ref.out_proj.weight.copy_(ours.W_o.weight)
        ref.out_proj.bias.copy_(ours.W_o.bias)


def test_attention_matches_torch_multihead_attention():
    """Independent reference: torch.nn.MultiheadAttention with the same weights."""
    torch.manual_seed(0)
    ours = MultiHeadAttention(16, 4, dropout=0.0).eval()
    ref = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    _copy_attention_into(ref, ours)
    X = torch.randn(3, 7, 16)
    valid_lens = torch.tensor([7, 3, 1])
    mask = key_padding_mask(valid_lens, 7)
    out, weights = ours(X, mask, need_weights=True)
    ref_out, ref_weights = ref(X, X, X, key_padding_mask=~mask, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, ref_weights, atol=1e-6, rtol=0)


def test_encoder_block_matches_torch_transformer_encoder_layer():
    """Independent reference: a post-norm ReLU nn.TransformerEncoderLayer, same weights."""
    torch.manual_seed(0)
    cfg = BERTConfig(vocab_size=10, num_hiddens=16, ffn_num_hiddens=40, num_heads=2,
                     num_blks=1, dropout=0.0)
    ours = TransformerEncoderBlock(cfg).eval()
    ref = nn.TransformerEncoderLayer(16, 2, 40, dropout=0.0, batch_first=True).eval()
    _copy_attention_into(ref.self_attn, ours.attention)
    with torch.no_grad():
        for a, b in [(ref.linear1, ours.ffn.dense1), (ref.linear2, ours.ffn.dense2),
                     (ref.norm1, ours.addnorm1.ln), (ref.norm2, ours.addnorm2.ln)]:
            a.weight.copy_(b.weight)
            a.bias.copy_(b.bias)
    X = torch.randn(2, 6, 16)
    valid_lens = torch.tensor([6, 4])
    mask = key_padding_mask(valid_lens, 6)
    out, _ = ours(X, mask)
    ref_out = ref(X, src_key_padding_mask=~mask)
    for b, n in enumerate(valid_lens.tolist()):  # torch may zero padded rows on its fast path
        torch.testing.assert_close(out[b, :n], ref_out[b, :n], atol=1e-5, rtol=0)


def test_embedding_is_sum_of_token_segment_and_position(small_model):
    enc = small_model.encoder
    tokens = torch.tensor([[2, 7, 9, 3]])
    segments = torch.tensor([[0, 0, 1, 1]])
    expected = (enc.token_embedding.weight[tokens[0]] + enc.segment_embedding.weight[segments[0]]
                + enc.pos_embedding[0, :4])
    torch.testing.assert_close(enc.embed(tokens, segments)[0], expected)


def _batch(seed=1, batch=3, seq_len=10, vocab_size=50):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab_size, (batch, seq_len), generator=g)
    segments = (torch.arange(seq_len) >= seq_len // 2).long().expand(batch, -1).clone()
    valid_lens = torch.tensor([seq_len, 6, 2])[:batch]
    return tokens, segments, valid_lens


def test_attention_rows_sum_to_one_and_padded_keys_get_zero(small_model):
    tokens, segments, valid_lens = _batch()
    _, attentions = small_model.encoder(tokens, segments, valid_lens, return_attention=True)
    assert len(attentions) == 2
    for weights in attentions:
        assert weights.shape == (3, 4, 10, 10)
        torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 10))
        for b, n in enumerate(valid_lens.tolist()):
            assert torch.all(weights[b, :, :, n:] == 0)
            assert torch.all(weights[b, :, :, :n] > 0)


def test_fast_path_equals_explicit_path(small_model):
    tokens, segments, valid_lens = _batch()
    positions = torch.tensor([[1, 2], [3, 4], [1, 1]])
    with torch.no_grad():
        fast = small_model(tokens, segments, valid_lens, positions)
        explicit = small_model(tokens, segments, valid_lens, positions, return_attention=True)
    for a, b in zip(fast, explicit[:3], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


@pytest.mark.parametrize("return_attention", [False, True])
def test_padding_does_not_change_outputs_at_valid_positions(small_model, return_attention):
    tokens, segments, valid_lens = _batch(seq_len=10)
    positions = torch.tensor([[1, 9], [0, 5], [1, 1]])
    extra = 6  # append pad tokens (id 0) beyond every sequence
    tokens_long = torch.cat([tokens, torch.zeros(3, extra, dtype=torch.long)], dim=1)
    segments_long = torch.cat([segments, torch.ones(3, extra, dtype=torch.long)], dim=1)
    # Inside the original length, positions past valid_len are already padding: scramble them
    # too, since the model must ignore whatever sits there.
    for b, n in enumerate(valid_lens.tolist()):
        tokens_long[b, n:10] = (tokens_long[b, n:10] + 17) % 50
    with torch.no_grad():
        short = small_model(tokens, segments, valid_lens, positions,
                            return_attention=return_attention)
        long = small_model(tokens_long, segments_long, valid_lens, positions,
                           return_attention=return_attention)
    for b, n in enumerate(valid_lens.tolist()):
        torch.testing.assert_close(short[0][b, :n], long[0][b, :n], atol=1e-5, rtol=0)
    torch.testing.assert_close(short[1][0], long[1][0], atol=1e-5, rtol=0)  # valid positions
    torch.testing.assert_close(short[2], long[2], atol=1e-5, rtol=0)


def test_every_parameter_gets_a_gradient_from_the_combined_loss():
    for options in ({}, {"hidden_act": "gelu", "embedding_norm": True, "tie_mlm_decoder": True}):
        torch.manual_seed(0)
        model = BERTModel(50, 32, 64, 4, 2, 0.1, max_len=24, **options).train()
        tokens, segments, valid_lens = _batch()
        positions = torch.tensor([[1, 2], [3, 4], [1, 1]])
        _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, positions)
        loss = bert_loss(mlm_Y_hat, torch.tensor([[4, 5], [6, 7], [8, 0]]),
                         torch.tensor([[1.0, 1.0], [1.0, 1.0], [1.0, 0.0]]),
                         nsp_Y_hat, torch.tensor([1, 0, 1]))
        loss.total.backward()
        for name, p in model.named_parameters():
            assert p.grad is not None, name
            assert p.grad.abs().sum() > 0, name


def test_original_config_ties_decoder_and_uses_gelu():
    torch.manual_seed(0)
    cfg = BERTConfig.original(vocab_size=30, num_hiddens=8, ffn_num_hiddens=16, num_heads=2,
                              num_blks=1, dropout=0.1, max_len=16)
    model = BERTModel.from_config(cfg)
    assert model.mlm.mlp[-1].weight is model.encoder.token_embedding.weight
    assert isinstance(model.encoder.blks[0].ffn.act, nn.GELU)
    assert model.encoder.blks[0].addnorm1.ln.eps == 1e-12
    assert model.config == cfg
    default = BERTModel(30, 8, 16, 2, 1, 0.1, max_len=16)
    assert not hasattr(default.encoder, "embedding_ln")
    assert isinstance(default.encoder.blks[0].ffn.act, nn.ReLU)


def test_attention_scale_is_one_over_sqrt_head_size():
    """Hand-computed: one head, identity projections, two keys."""
    att = MultiHeadAttention(4, 1, dropout=0.0).eval()
    with torch.no_grad():
        for lin in (att.W_q, att.W_k, att.W_v, att.W_o):
            lin.weight.copy_(torch.eye(4))
            lin.bias.zero_()
    X = torch.tensor([[[1.0, 0, 0, 0], [0, 2.0, 0, 0]]])
    _, w = att(X, None, need_weights=True)
    # query 0 scores: [1, 0] / sqrt(4) -> softmax([0.5, 0])
    p = math.exp(0.5) / (math.exp(0.5) + 1)
    torch.testing.assert_close(w[0, 0, 0], torch.tensor([p, 1 - p]))


# --- bad input: shapes and dtypes in the signatures, values at the encoder's door ------------

@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_hiddens": 30, "num_heads": 4}, r"num_hiddens \(30\) must be divisible by num_heads"),
        ({"dropout": 1.0}, r"dropout must be a number in \[0, 1\); got 1.0"),
        ({"dropout": -0.1}, r"dropout must be a number in \[0, 1\)"),
        ({"num_blks": 0}, r"num_blks must be an integer in \[1, 1000000\]; got 0"),
        ({"vocab_size": 50.0}, r"vocab_size must be an integer in \[1, 1000000\]; got 50.0"),
        ({"hidden_act": "tanh"}, "hidden_act must be one of"),
    ],
)
def test_bad_sizes_are_rejected(kwargs, message):
    args = {"vocab_size": 50, "num_hiddens": 32, "ffn_num_hiddens": 64, "num_heads": 4,
            "num_blks": 2, "dropout": 0.1} | kwargs
    with pytest.raises(ValueError, match=message):
        BERTModel(**args)


def test_shapes_and_dtypes_are_named_with_the_sizes_bound_so_far(small_model):
    """jaxtyping's error names the parameter, its actual shape and dtype, and the dimensions
    the earlier arguments bound."""
    tokens, segments, valid_lens = _batch()
    cases = [
        ((tokens, segments[:, :5]), "segments", "i64[3,5]"),
        ((tokens[0], segments[0]), "tokens", "i64[10]"),
        ((tokens, segments, torch.tensor([3, 3])), "valid_lens", "i64[2]"),
        ((tokens, segments, valid_lens.float()), "valid_lens", "f32[3]"),
        ((tokens.float(), segments), "tokens", "f32[3,10]"),
        ((tokens, segments, valid_lens, torch.tensor([1, 2, 3])), "pred_positions", "i64[3]"),
    ]
    for args, name, actual in cases:
        with pytest.raises(TypeCheckError) as err:
            small_model(*args)
        assert f"parameter '{name}'" in str(err.value) and actual in str(err.value)
    with pytest.raises(TypeCheckError, match="parameter 'X'"):
        MaskLM(11, 8)(torch.randn(5, 8), torch.tensor([[0], [1]]))


def test_values_no_shape_shows_are_named_at_the_encoders_door(small_model):
    tokens, segments, _ = _batch()
    cases = [
        ((tokens, segments * 2), r"^segments must be in \[0, 1\]; got 2$"),
        ((tokens, segments - 1), r"^segments must be in \[0, 1\]; got -1$"),
        ((tokens.clone().fill_(50), segments), r"^tokens must be in \[0, 49\]; got 50$"),
        ((torch.zeros(1, 30, dtype=torch.long),) * 2, "^sequence length 30 exceeds max_len=24"),
        ((tokens, segments, torch.tensor([3, 0, 3])), r"^valid_lens must be in \[1, 10\]; got 0$"),
        ((tokens, segments, torch.tensor([3, 11, 3])), r"^valid_lens must be in \[1, 10\]; got 11"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            small_model(*args)


def test_the_too_long_error_reads_in_every_edition():
    """model.py imports no bertlib module; its message is still the translated one."""
    encoder = BERTEncoder(20, 8, 16, 2, 1, 0.0, max_len=4)
    with pytest.raises(ValueError) as err:
        encoder(torch.zeros(1, 5, dtype=torch.long), torch.zeros(1, 5, dtype=torch.long))
    assert error_message(err.value, "zh").startswith("ValueError: 序列长度 5 超过了 max_len=4")
    assert error_message(err.value, "ja").startswith("ValueError: シーケンス長 5 が max_len=4")


def test_model_py_imports_only_torch_and_the_shape_checks():
    import ast
    from pathlib import Path

    import bertlib.model

    tree = ast.parse(Path(bertlib.model.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported == {"dataclasses", "math", "torch", "jaxtyping", "beartype"}


def test_attention_dropout_drops_attention_weights_in_training_only():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2, dropout=0.5).train()
    X = torch.randn(2, 5, 8)
    torch.manual_seed(1)
    out, weights = mha(X, None, need_weights=True)
    q, k, v = (W(X).view(2, 5, 2, 4).transpose(1, 2) for W in (mha.W_q, mha.W_k, mha.W_v))
    torch.manual_seed(1)
    dropped = torch.nn.functional.dropout((q @ k.transpose(-2, -1) / 2).softmax(-1), 0.5)
    reference = mha.W_o((dropped @ v).transpose(1, 2).reshape(2, 5, 8))
    torch.testing.assert_close(out, reference)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 5))  # returned before dropout
    fused_train, _ = mha(X, None)
    eval_out, _ = mha.eval()(X, None)
    assert not torch.allclose(fused_train, eval_out)  # the fused path drops too


def test_residual_and_embedding_dropout_apply_in_training_only():
    torch.manual_seed(0)
    addnorm = AddNorm(8, 0.5, 1e-5).train()
    X, Y = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    torch.manual_seed(3)
    out = addnorm(X, Y)
    torch.manual_seed(3)
    torch.testing.assert_close(out, addnorm.ln(torch.nn.functional.dropout(Y, 0.5) + X))
    torch.testing.assert_close(addnorm.eval()(X, Y), addnorm.ln(Y + X))
    encoder = BERTEncoder(20, 8, 16, 2, 1, 0.5, max_len=6, embedding_norm=True).train()
    tokens, segments = torch.randint(0, 20, (2, 6)), torch.zeros(2, 6, dtype=torch.long)
    summed = (encoder.token_embedding(tokens) + encoder.segment_embedding(segments)
              + encoder.pos_embedding[:, :6])
    torch.manual_seed(4)
    embedded = encoder.embed(tokens, segments)
    torch.manual_seed(4)
    torch.testing.assert_close(embedded, torch.nn.functional.dropout(encoder.embedding_ln(summed),
                                                                     0.5))
    torch.testing.assert_close(encoder.eval().embed(tokens, segments),
                               encoder.embedding_ln(summed))


def test_int32_ids_are_read_like_int64(small_model):
    tokens, segments, valid_lens = _batch()
    small_model.eval()
    expected = small_model(tokens, segments, valid_lens)[0]
    got = small_model(tokens.int(), segments.int(), valid_lens.int())[0]
    assert torch.equal(got, expected)


def test_attention_weights_only_when_asked_for():
    """The default is the fused path, which keeps no (T, T) weights."""
    X = torch.randn(2, 5, 8)
    assert MultiHeadAttention(8, 2, 0.0).eval()(X, None)[1] is None
    block = TransformerEncoderBlock(BERTConfig(30, 8, 16, 2, 1, 0.0))
    assert block.eval()(X, None)[1] is None



def test_prediction_positions_past_the_sequence_are_named():
    """Before: torch's IndexError from the gather ("index 9 is out of bounds for dimension 1")."""
    model = BERTModel(vocab_size=20, num_hiddens=8, ffn_num_hiddens=16, num_heads=2, num_blks=1,
                      dropout=0.0, max_len=16)
    tokens = torch.zeros(1, 6, dtype=torch.long)
    with pytest.raises(ValueError, match=r"pred_positions must be in \[0, 5\]; got 9"):
        model(tokens, tokens, pred_positions=torch.tensor([[1, 9]]))


def test_a_position_table_no_machine_holds_is_refused_before_allocating():
    with pytest.raises(ValueError, match=r"max_len must be an integer in \[1, 1000000\]"):
        BERTModel(vocab_size=20, num_hiddens=8, ffn_num_hiddens=16, num_heads=2, num_blks=1,
                  dropout=0.0, max_len=10**12)
