"""Hugging Face checkpoints in bertlib: the numbers must be transformers' numbers."""

import json
import os
import time

os.environ["HF_HUB_OFFLINE"] = "1"  # everything here is local; never reach for the hub

import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file

from bertlib.hf import config_from_hf, load_hf_model, minilm_directory

TOL = 1e-5

CONFIGS = [
    dict(vocab_size=99, hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
         intermediate_size=37, max_position_embeddings=40, layer_norm_eps=1e-12),
    dict(vocab_size=150, hidden_size=48, num_attention_heads=3, num_hidden_layers=3,
         intermediate_size=64, max_position_embeddings=24, layer_norm_eps=1e-5,
         hidden_act="relu"),
    dict(vocab_size=64, hidden_size=16, num_attention_heads=1, num_hidden_layers=1,
         intermediate_size=16, max_position_embeddings=16, layer_norm_eps=1e-7,
         tie_word_embeddings=False),
]


def random_hf(model_class, seed: int = 0, **config):
    """A transformers model whose every parameter is random, so a mix-up of two LayerNorms or
    biases (all 1 or 0 at transformers' initialisation) cannot go unnoticed."""
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(attn_implementation="eager", **config)
    model = model_class(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model


def padded_batch(vocab_size: int, seq_len: int, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab_size, (3, seq_len), generator=g)
    segments = torch.randint(0, 2, (3, seq_len), generator=g)
    valid_lens = torch.tensor([seq_len, seq_len // 2, 2])
    attention_mask = (torch.arange(seq_len) < valid_lens[:, None]).long()
    return tokens, segments, valid_lens, attention_mask


@pytest.mark.parametrize("config", CONFIGS)
def test_pretraining_checkpoint_matches_transformers(tmp_path, config):
    hf = random_hf(transformers.BertForPreTraining, **config)
    hf.save_pretrained(tmp_path, safe_serialization=True)
    ours = load_hf_model(tmp_path)
    assert not ours.training and ours.untrained_heads == ()

    T = min(12, config["max_position_embeddings"])
    tokens, segments, valid_lens, attention_mask = padded_batch(config["vocab_size"], T)
    pred_positions = torch.stack([torch.tensor([0, 1, 1]), torch.tensor([2, 0, 5]),
                                  torch.tensor([1, 0, 1])])  # all at valid positions
    with torch.no_grad():
        out = hf(input_ids=tokens, token_type_ids=segments, attention_mask=attention_mask,
                 output_hidden_states=True, output_attentions=True)
        X, mlm, nsp, attentions = ours(tokens, segments, valid_lens, pred_positions,
                                       return_attention=True)

    valid = attention_mask.bool()
    assert (X[valid] - out.hidden_states[-1][valid]).abs().max() < TOL
    assert len(attentions) == len(out.attentions) == config["num_hidden_layers"]
    for a, h in zip(attentions, out.attentions, strict=True):
        assert (a - h).abs().max() < TOL
        padded_keys = ~valid[:, None, None, :].expand_as(a)
        assert torch.all(a[padded_keys] == 0) and torch.all(h[padded_keys] == 0)
    rows = torch.arange(3)[:, None]
    assert (mlm - out.prediction_logits[rows, pred_positions]).abs().max() < TOL
    # bertlib: column 1 = IsNext; transformers: column 0 = IsNext.
    assert (nsp - out.seq_relationship_logits.flip(-1)).abs().max() < TOL


def test_bert_model_checkpoint_reports_untrained_heads(tmp_path):
    config = CONFIGS[0]
    hf = random_hf(transformers.BertModel, **config)
    hf.save_pretrained(tmp_path, safe_serialization=True)
    with pytest.warns(UserWarning, match="no weights for mlm, nsp"):
        ours = load_hf_model(tmp_path)
    assert ours.untrained_heads == ("mlm", "nsp")

    tokens, segments, valid_lens, attention_mask = padded_batch(config["vocab_size"], 10)
    with torch.no_grad():
        out = hf(input_ids=tokens, token_type_ids=segments, attention_mask=attention_mask)
        X, _, _ = ours(tokens, segments, valid_lens)
        pooled = ours.hidden(X[:, 0])
    valid = attention_mask.bool()
    assert (X[valid] - out.last_hidden_state[valid]).abs().max() < TOL
    assert (pooled - out.pooler_output).abs().max() < TOL


def test_bert_model_without_pooler(tmp_path):
    torch.manual_seed(0)
    hf = transformers.BertModel(transformers.BertConfig(**CONFIGS[0]), add_pooling_layer=False)
    hf.save_pretrained(tmp_path, safe_serialization=True)
    with pytest.warns(UserWarning, match="pooler, mlm, nsp"):
        assert load_hf_model(tmp_path).untrained_heads == ("pooler", "mlm", "nsp")


def test_pytorch_bin_with_tensorflow_layer_norm_names(tmp_path):
    """An old-style checkpoint: pytorch_model.bin, LayerNorm.gamma/beta, tied decoder stored."""
    hf = random_hf(transformers.BertForPreTraining, **CONFIGS[0])
    hf.config.save_pretrained(tmp_path)
    state = {k.replace("LayerNorm.weight", "LayerNorm.gamma")
              .replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in hf.state_dict().items()}
    assert "cls.predictions.decoder.weight" in state
    torch.save(state, tmp_path / "pytorch_model.bin")
    ours = load_hf_model(tmp_path)
    tokens, segments, valid_lens, attention_mask = padded_batch(CONFIGS[0]["vocab_size"], 8)
    with torch.no_grad():
        out = hf(input_ids=tokens, token_type_ids=segments, attention_mask=attention_mask)
        _, _, nsp = ours(tokens, segments, valid_lens)
    assert (nsp - out.seq_relationship_logits.flip(-1)).abs().max() < TOL


@pytest.fixture
def saved_checkpoint(tmp_path):
    random_hf(transformers.BertForPreTraining, **CONFIGS[0]).save_pretrained(tmp_path)
    return tmp_path


def edit_weights(directory, edit) -> None:
    state = load_file(directory / "model.safetensors")
    edit(state)
    save_file(state, directory / "model.safetensors")


def test_wrong_shape_is_named_with_both_shapes(saved_checkpoint):
    def shrink(state):
        state["bert.encoder.layer.1.output.LayerNorm.bias"] = torch.zeros(31)
        state["bert.embeddings.position_embeddings.weight"] = torch.zeros(41, 32)
    edit_weights(saved_checkpoint, shrink)
    with pytest.raises(ValueError) as err:
        load_hf_model(saved_checkpoint)
    assert "encoder.layer.1.output.LayerNorm.bias: expected (32,), found (31,)" in str(err.value)
    assert ("embeddings.position_embeddings.weight: expected (40, 32), found (41, 32)"
            in str(err.value))


def test_missing_and_unexpected_tensors_are_named(saved_checkpoint):
    def damage(state):
        del state["bert.encoder.layer.0.attention.self.key.weight"]
        del state["cls.predictions.transform.dense.bias"]  # half an MLM head is an error
        state["classifier.weight"] = torch.zeros(2, 32)
    edit_weights(saved_checkpoint, damage)
    with pytest.raises(ValueError) as err:
        load_hf_model(saved_checkpoint)
    message = str(err.value)
    assert "missing tensors ['encoder.layer.0.attention.self.key.weight', " \
           "'cls.predictions.transform.dense.bias']" in message
    assert "unexpected tensors ['classifier.weight']" in message


def test_directory_without_weights_or_config(tmp_path):
    with pytest.raises(ValueError, match="no config.json"):
        load_hf_model(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(CONFIGS[0]))
    with pytest.raises(ValueError, match="neither model.safetensors nor pytorch_model.bin"):
        load_hf_model(tmp_path)


@pytest.mark.parametrize(("change", "message"), [
    ({"position_embedding_type": "relative_key"}, "position_embedding_type must be 'absolute'"),
    ({"type_vocab_size": 3}, "type_vocab_size must be 2"),
    ({"hidden_act": "gelu_new"}, r"hidden_act must be one of \['gelu', 'relu'\]"),
    ({"model_type": "roberta"}, "model_type must be 'bert'"),
    ({"is_decoder": True}, "only encoder checkpoints"),
])
def test_unsupported_configs(change, message):
    with pytest.raises(ValueError, match=message):
        config_from_hf(CONFIGS[0] | change)


def test_config_translation():
    config = config_from_hf(CONFIGS[2])
    assert (config.vocab_size, config.num_hiddens, config.ffn_num_hiddens, config.num_heads,
            config.num_blks, config.max_len) == (64, 16, 16, 1, 1, 16)
    assert config.layer_norm_eps == 1e-7 and config.hidden_act == "gelu"
    assert config.embedding_norm and not config.tie_mlm_decoder


SENTENCES = ["The crane lifted the steel beam.", "Hello world!",
             "Unbelievably, tokenization splits rare words.", "i went to the bank"]


def test_minilm_tokenizer_matches_transformers(minilm):
    _, tokenizer = minilm
    # The pure-Python BERT tokenizer of transformers, independent of the tokenizers library.
    reference = transformers.BertTokenizerLegacy(str(minilm_directory() / "vocab.txt"))
    vocab = tokenizer.vocab
    for sentence in [*SENTENCES, "Héllo—naïve café 我去银行"]:
        ours = [vocab.cls_id, *vocab[tokenizer.tokenize(sentence)], vocab.sep_id]
        assert ours == reference(sentence)["input_ids"]


def test_minilm_matches_transformers(minilm):
    model, tokenizer = minilm
    assert model.untrained_heads == ("mlm", "nsp")
    reference = transformers.BertModel.from_pretrained(str(minilm_directory())).eval()
    vocab = tokenizer.vocab
    rows = [[vocab.cls_id, *vocab[tokenizer.tokenize(s)], vocab.sep_id] for s in SENTENCES]
    valid_lens = torch.tensor([len(row) for row in rows])
    assert len(set(valid_lens.tolist())) > 1  # really padded
    tokens = torch.full((len(rows), int(valid_lens.max())), vocab.pad_id)
    for i, row in enumerate(rows):
        tokens[i, :len(row)] = torch.tensor(row)
    segments = torch.zeros_like(tokens)
    attention_mask = (torch.arange(tokens.shape[1]) < valid_lens[:, None]).long()
    with torch.no_grad():
        expected = reference(input_ids=tokens, token_type_ids=segments,
                             attention_mask=attention_mask).last_hidden_state
        X, _, _ = model(tokens, segments, valid_lens)
    valid = attention_mask.bool()
    assert (X[valid] - expected[valid]).abs().max() < 1e-4


def test_a_hostile_config_is_refused_before_anything_is_allocated(saved_checkpoint):
    """10^10 x 32 float32 embeddings would take 1.3 TB: the header check comes first."""
    config = json.loads((saved_checkpoint / "config.json").read_text())
    (saved_checkpoint / "config.json").write_text(json.dumps(config | {"vocab_size": 10**10}))
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"embeddings.word_embeddings.weight: expected "
                                         r"\(10000000000, 32\), found \(99, 32\)"):
        load_hf_model(saved_checkpoint)
    assert time.perf_counter() - start < 2.0


def test_config_must_be_a_small_regular_file(saved_checkpoint):
    (saved_checkpoint / "config.json").unlink()
    (saved_checkpoint / "config.json").symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="must be a regular file"):
        load_hf_model(saved_checkpoint)


def test_nan_weights_are_refused(saved_checkpoint):
    def poison(state):
        state["bert.encoder.layer.0.output.dense.weight"][1, 2] = float("inf")
    edit_weights(saved_checkpoint, poison)
    with pytest.raises(ValueError, match="encoder.blks.0.ffn.dense2.weight holds NaN or inf"):
        load_hf_model(saved_checkpoint)


def test_a_pickle_with_code_is_refused_without_torch_advice(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIGS[0]))
    torch.save({"weights": Exception("not a tensor")}, tmp_path / "pytorch_model.bin")
    with pytest.raises(ValueError, match="never runs pickled code") as err:
        load_hf_model(tmp_path)
    assert "weights_only=False" not in str(err.value)
