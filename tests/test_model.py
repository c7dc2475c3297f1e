import math

import pytest
import torch
from torch import nn

from bertlib import (
    BERTConfig,
    BERTEncoder,
    BERTModel,
    MaskLM,
    MultiHeadAttention,
    NextSentencePred,
    bert_loss,
    sizes,
)
from bertlib.fast import unpadded_encode
from bertlib.model import AddNorm, PositionWiseFFN, TransformerEncoderBlock, key_padding_mask


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


# --- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_hiddens": 30, "num_heads": 4}, "num_hiddens must be divisible by num_heads"),
        ({"dropout": 1.0}, r"dropout must be a number in \[0, 1\)"),
        ({"dropout": -0.1}, r"dropout must be a number in \[0, 1\)"),
        ({"num_blks": 0}, "num_blks must be a positive integer"),
        ({"hidden_act": "tanh"}, "hidden_act must be one of"),
    ],
)
def test_bad_sizes_are_rejected(kwargs, message):
    args = {"vocab_size": 50, "num_hiddens": 32, "ffn_num_hiddens": 64, "num_heads": 4,
            "num_blks": 2, "dropout": 0.1} | kwargs
    with pytest.raises(ValueError, match=message):
        BERTModel(**args)


def test_bad_forward_inputs_are_rejected(small_model):
    tokens, segments, valid_lens = _batch()
    cases = [
        ((tokens, segments[:, :5]), "tokens and segments must have the same shape"),
        ((tokens[0], segments[0]), r"tokens must have shape \(batch, seq_len\)"),
        ((tokens, segments * 2), r"segments must be 0 \(sentence A\) or 1 .*got 2"),
        ((tokens, segments - 1), r"segments must be 0 .*got -1"),
        ((tokens.clone().fill_(50), segments), r"token ids in \[0, 49\]; got 50"),
        ((torch.zeros(1, 30, dtype=torch.long),) * 2, "sequence length 30 exceeds max_len=24"),
        ((tokens, segments, torch.tensor([3, 3])), "valid_lens must have one entry per sequence"),
        ((tokens, segments, torch.tensor([3, 0, 3])), r"valid_lens must be in \[1, seq_len=10\]"),
        ((tokens, segments, torch.tensor([3, 11, 3])), r"valid_lens .*got 11"),
        ((tokens, segments, valid_lens[:, None]), r"valid_lens must have shape \(batch,\)"),
        # int16/uint8 ids: nn.Embedding refuses them; uint8 would index as a mask.
        ((tokens.to(torch.uint8), segments), r"tokens must hold integers of dtype torch.int64 "
                                             r"or torch.int32; got dtype torch.uint8"),
        ((tokens.to(torch.int16), segments), "tokens must hold integers .*torch.int16"),
        ((tokens, segments.to(torch.uint8)), "segments must hold integers .*torch.uint8"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            small_model(*args)


def test_bad_prediction_positions_are_rejected(small_model):
    tokens, segments, valid_lens = _batch()
    for positions, message in [
        (torch.tensor([[1], [2], [10]]), r"pred_positions must be in \[0, 9\]; got 10"),
        (torch.tensor([[1], [-1], [2]]), r"pred_positions must be in \[0, 9\]; got -1"),
        (torch.tensor([[1], [2]]), "pred_positions must have one row per sequence"),
        (torch.tensor([1, 2, 3]), r"pred_positions must have shape \(batch, num_preds\)"),
        (torch.tensor([[1], [2], [3]], dtype=torch.uint8), "pred_positions must hold integers"),
    ]:
        with pytest.raises(ValueError, match=message):
            small_model(tokens, segments, valid_lens, positions)


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


def test_a_string_is_not_a_bool(small_model):
    tokens, segments, _ = _batch()
    with pytest.raises(ValueError, match="return_attention must be True or False; got 'no'"):
        small_model(tokens, segments, return_attention="no")
    with pytest.raises(ValueError, match="need_weights must be True or False; got 'no'"):
        MultiHeadAttention(8, 2, 0.0)(torch.randn(2, 5, 8), None, "no")


@pytest.mark.parametrize("need_weights", [False, True])
def test_a_sequence_with_no_key_to_attend_to_is_refused(need_weights):
    """Before: the fused path returned garbage and the explicit path NaN."""
    mask = torch.tensor([[True] * 5, [False] * 5])
    with pytest.raises(ValueError, match="sequence 1 has none, so it has nothing to attend to"):
        MultiHeadAttention(8, 2, 0.0)(torch.randn(2, 5, 8), mask, need_weights)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_hidden_states_are_refused(bad):
    X = torch.randn(2, 5, 8)
    X[1, 0, 3] = bad
    for module, args in [(MultiHeadAttention(8, 2, 0.0), (X, None)),
                         (MaskLM(11, 8), (X, torch.tensor([[0], [1]]))),
                         (NextSentencePred(8), (X[:, 0],))]:
        with pytest.raises(ValueError, match="^X must be finite; it holds NaN or infinite"):
            module(*args)


@pytest.mark.parametrize(("X", "message"), [
    (torch.randn(5, 8), r"^X must have shape \(batch, seq_len, num_hiddens\); got shape \(5, 8\)"),
    (torch.randn(2, 5, 6), r"^X must have num_inputs = 8 features in its last dimension; got "
                           r"shape \(2, 5, 6\)"),
])
def test_mask_lm_names_a_bad_input_exactly(X, message):
    with pytest.raises(ValueError, match=message):
        MaskLM(11, 8)(X, torch.tensor([[0], [1]]))


def test_unknown_or_fixed_options_are_named():
    sizes = {"vocab_size": 50, "num_hiddens": 8, "ffn_num_hiddens": 16, "num_heads": 2,
             "num_blks": 1, "dropout": 0.0}
    with pytest.raises(ValueError, match=r"unknown options \['typo_option'\]; BERTConfig has"):
        BERTModel(**sizes, typo_option=1)
    with pytest.raises(ValueError, match=r"takes sizes only; \['hidden_act'\] are set by it"):
        BERTConfig.original(**sizes, hidden_act="relu")
    for fixed, value in (("embedding_norm", False), ("tie_mlm_decoder", False),
                         ("layer_norm_eps", 1e-5)):
        with pytest.raises(ValueError, match=rf"takes sizes only; \['{fixed}'\] are set by it"):
            BERTConfig.original(**sizes, **{fixed: value})


def test_a_batch_of_no_sequence_is_refused(small_model):
    """Before: empty outputs returned silently."""
    empty = torch.zeros(0, 6, dtype=torch.long)
    with pytest.raises(ValueError, match=r"tokens holds no sequence \(shape \(0, 6\)\)"):
        small_model(empty, empty)


def test_attention_weights_only_when_asked_for():
    """The default is the fused path, which keeps no (T, T) weights."""
    X = torch.randn(2, 5, 8)
    assert MultiHeadAttention(8, 2, 0.0).eval()(X, None)[1] is None
    block = TransformerEncoderBlock(BERTConfig(30, 8, 16, 2, 1, 0.0))
    assert block.eval()(X, None)[1] is None


def test_mask_lm_options_are_used_and_checked_by_name():
    mlm = MaskLM(11, 8)
    assert mlm.mlp[0].in_features == 8 and mlm.mlp[2].eps == 1e-5  # nn.LayerNorm's default
    assert MaskLM(11, 8, num_inputs=6).mlp[0].in_features == 6
    for kwargs, name in (({"num_hiddens": 0}, "num_hiddens"), ({"num_inputs": 0}, "num_inputs")):
        with pytest.raises(ValueError, match=f"^{name} must be a positive integer"):
            MaskLM(**({"vocab_size": 11, "num_hiddens": 8} | kwargs))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_hidden_states_of_another_dtype_than_the_models_are_named(dtype):
    """Before: "mat1 and mat2 must have the same dtype" from inside torch."""
    X = torch.randn(2, 5, 8, dtype=dtype)
    message = (rf"^X must have the model's dtype torch.float32; got dtype {dtype} \(convert it "
               r"with .to\(torch.float32\)\)$")
    for module, args in [(MultiHeadAttention(8, 2, 0.0), (X, None)),
                         (MaskLM(11, 8), (X, torch.tensor([[0], [1]]))),
                         (NextSentencePred(8), (X[:, 0],))]:
        with pytest.raises(ValueError, match=message):
            module(*args)
    # a model of that dtype takes them
    assert NextSentencePred(8).to(dtype)(X[:, 0]).dtype == dtype


def test_inputs_on_another_device_than_the_models_are_named(small_model):
    """Before: torch's own message, from deep inside (meta tensors stand in for a GPU's)."""
    X = torch.randn(2, 5, 8, device="meta")
    for module, args in [(MultiHeadAttention(8, 2, 0.0), (X, None)),
                         (MaskLM(11, 8), (X, torch.tensor([[0], [1]]))),
                         (NextSentencePred(8), (X[:, 0],))]:
        with pytest.raises(ValueError, match="^X must be on the model's device cpu; got a "
                                             r"tensor on meta \(move it with .to\('cpu'\)\)$"):
            module(*args)


@pytest.mark.parametrize("options", [{}, {"embedding_norm": True}, {"tie_mlm_decoder": True},
                                     {"hidden_act": "gelu", "num_blks": 3, "max_len": 1}])
def test_the_parameter_count_is_known_before_the_model_is_built(options):
    config = BERTConfig(**({"vocab_size": 37, "num_hiddens": 12, "ffn_num_hiddens": 20,
                            "num_heads": 3, "num_blks": 2, "dropout": 0.1, "max_len": 9}
                           | options))
    counted = sum(p.numel() for p in BERTModel.from_config(config).parameters())
    assert config.num_parameters() == counted


@pytest.mark.parametrize(("build", "size"), [
    (lambda: BERTConfig(20, 32, 64, 2, 2, 0.1, max_len=10**12), "32,000,000,020,694 parameters"),
    (lambda: BERTModel(20, 32, 64, 2, 2, 0.1, max_len=10**12), "32,000,000,020,694 parameters"),
    (lambda: BERTEncoder(20, 32, 64, 2, 2, 0.1, max_len=10**12), "32,000,000,020,694"),
    # the issue's 51-512 GB: a vocabulary (two V x H matrices), a width (six H x H ones)
    (lambda: BERTModel(2 * 10**8, 128, 64, 2, 2, 0.1), r"vocab_size=200000000, num_hiddens=128, "
                                                       r"ffn_num_hiddens=64, num_heads=2, "
                                                       r"num_blks=2, max_len=1000 would hold 51,"),
    (lambda: BERTModel(30, 2**16, 64, 2, 1, 0.1), r"num_hiddens=65536, ffn_num_hiddens=64, "
                                                  r"num_heads=2, num_blks=1, max_len=1000 would "
                                                  r"hold 25,\d{3},\d{3},\d{3} parameters, 9\d\.\d"),
    # before: named vocab_size, num_hiddens and max_len only, not the size that was too large
    (lambda: BERTModel(100, 16, 10**11, 2, 2, 0.1), r"^A BERTModel of vocab_size=100, "
                                                    r"num_hiddens=16, ffn_num_hiddens=100000000000,"
                                                    r" num_heads=2, num_blks=2, max_len=1000 "),
    (lambda: MaskLM(10**10, 64), "MaskLM would hold"),
    (lambda: NextSentencePred(10**11), "NextSentencePred would hold 200,000,000,002 parameters"),
    (lambda: MultiHeadAttention(2**17, 2, 0.1), "MultiHeadAttention would hold 68,720,001,024"),
    (lambda: PositionWiseFFN(10**6, 10**6, "relu"), "PositionWiseFFN would hold"),
    (lambda: AddNorm(10**11, 0.1, 1e-5), "AddNorm would hold 200,000,000,000 parameters"),
])
def test_sizes_that_cannot_fit_are_refused_from_arithmetic(build, size):
    """Before: they reached the allocator ("can't allocate memory"), or filled the memory."""
    with pytest.raises(ValueError, match=rf"{size}.* GiB as torch.float32; at most "
                                         r"\d+\.\d GiB fits here"):
        build()


@pytest.mark.parametrize("build", [lambda: BERTConfig(20, 16, 32, 2, 10**6, 0.1),
                                   lambda: BERTModel(20, 16, 32, 2, 10**6, 0.1),
                                   lambda: BERTEncoder(20, 16, 32, 2, 1001, 0.1)])
def test_more_blocks_than_can_be_built_are_refused_before_building(build):
    """Before: a million small blocks fit the parameter limit and were built one by one (the
    probe gave up after a minute)."""
    with pytest.raises(ValueError, match=r"^num_blks must be at most 1000; got 10"):
        build()
    assert BERTConfig(20, 16, 32, 2, 1000, 0.1).num_blks == 1000


def test_token_inputs_on_another_device_are_named_before_their_values_are_read(small_model):
    """Before: "Tensor.item() cannot be called on meta tensors", from the range checks."""
    tokens = torch.zeros(2, 6, dtype=torch.long, device="meta")
    ok = torch.zeros(2, 6, dtype=torch.long)
    for call in (lambda: small_model(tokens, ok), lambda: small_model(ok, tokens),
                 lambda: unpadded_encode(small_model.encoder, tokens, ok, None)):
        with pytest.raises(ValueError, match=r"^(tokens|segments) must be on the model's device "
                                             r"cpu; got a tensor on meta"):
            call()


def test_the_size_limit_is_the_smaller_of_16_gib_and_the_machines_memory(monkeypatch):
    config = {"vocab_size": 2**20, "num_hiddens": 2**10, "ffn_num_hiddens": 8, "num_heads": 1,
              "num_blks": 1, "dropout": 0.0, "max_len": 8}  # ~2**31 parameters: 8 GiB
    monkeypatch.setattr(sizes, "PARAMS_MAX_BYTES", 4 * 2**30)
    with pytest.raises(ValueError, match=r"8\.0 GiB .*; at most 4\.0 GiB fits here"):
        BERTConfig(**config)
    monkeypatch.setattr(sizes, "PARAMS_MAX_BYTES", 16 * 2**30)
    monkeypatch.setattr(sizes.os, "sysconf", lambda name: {"SC_PAGE_SIZE": 4096,
                                                            "SC_PHYS_PAGES": 2**20}[name])
    with pytest.raises(ValueError, match=r"at most 4\.0 GiB fits here"):  # a 4 GiB machine
        BERTConfig(**config)
    monkeypatch.setattr(sizes.os, "sysconf", lambda name: 2**30)
    assert BERTConfig(**config).num_parameters() > 2**31  # 16 GiB: the arithmetic only


@pytest.mark.parametrize(("build", "message"), [
    (lambda: PositionWiseFFN(0, 4, "relu"), "num_hiddens must be a positive integer; got 0"),
    (lambda: PositionWiseFFN(4, 2.5, "relu"), "ffn_num_hiddens must be a positive integer"),
    (lambda: PositionWiseFFN(4, 4, "tanh"), "hidden_act must be one of"),
    (lambda: AddNorm(-1, 0.1, 1e-5), "num_hiddens must be a positive integer; got -1"),
    (lambda: AddNorm(4, 1.0, 1e-5), r"dropout must be a number in \[0, 1\)"),
    (lambda: AddNorm(4, 0.1, 0), "eps must be a positive finite number; got 0"),
])
def test_the_building_blocks_check_their_sizes(build, message):
    """Before: raw torch errors, or a LayerNorm with eps 0 (NaN on a constant row)."""
    with pytest.raises(ValueError, match=message):
        build()
