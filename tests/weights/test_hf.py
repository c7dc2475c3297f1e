"""Hugging Face checkpoints in bertlib: the numbers must be transformers' numbers."""

import json
import os
import time

os.environ["HF_HUB_OFFLINE"] = "1"  # everything here is local; never reach for the hub

import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file

from bertlib.weights.hf import (
    config_from_hf,
    load_hf,
    load_hf_model,
    minilm_directory,
    weights_file,
)

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
    ({"position_embedding_type": "relative_key"},
     "position_embedding_type in config.json must be 'absolute'"),
    ({"type_vocab_size": 3}, "type_vocab_size in config.json must be 2"),
    ({"hidden_act": "gelu_new"}, r"hidden_act in config.json must be one of \['gelu', 'relu'\]"),
    ({"hidden_act": ["gelu"]}, r"hidden_act in config.json must be one of .*got \['gelu'\]"),
    ({"hidden_act": {"a": 1}}, "hidden_act in config.json must be one of"),
    ({"model_type": "roberta"}, "model_type in config.json must be 'bert'; got 'roberta'"),
    ({"is_decoder": True}, "only encoder checkpoints"),
    ({"is_decoder": "false"}, "is_decoder in config.json must be True or False; got 'false'"),
    ({"tie_word_embeddings": 1}, "tie_word_embeddings in config.json must be True or False"),
    ({"num_hidden_layers": "2"}, "config.json describes a model that cannot be built .*"
                                 "num_hidden_layers=2.*: num_blks must be an integer in"),
    ({"vocab_size": 9.5}, r"\(vocab_size=9.5, .*vocab_size must be an integer in .*; got 9.5"),
    ({"hidden_size": 30}, "hidden_size=30, .*num_attention_heads=.*must be divisible by num_heads"),
    ({"hidden_dropout_prob": 1.5}, r"hidden_dropout_prob=1.5\): dropout must be a number in"),
    ({"layer_norm_eps": None}, "layer_norm_eps in config.json must be a positive finite number"),
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
    with pytest.raises(ValueError, match=r"config.json describes a model that cannot be built .*"
                                         r"vocab_size must be an integer in \[1, 1000000\]"):
        load_hf_model(saved_checkpoint)  # the config's sizes, before the file is opened
    (saved_checkpoint / "config.json").write_text(json.dumps(config | {"vocab_size": 10**6}))
    with pytest.raises(ValueError, match=r"embeddings.word_embeddings.weight: expected "
                                         r"\(1000000, 32\), found \(99, 32\)"):
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


def write_hf(directory, config: dict, weights=None) -> None:
    """A Hugging Face checkpoint folder: config.json and, when given, pytorch_model.bin."""
    (directory / "config.json").write_text(json.dumps(config))
    if weights is not None:
        torch.save(weights, directory / "pytorch_model.bin")


def test_a_huge_config_with_a_tiny_bin_is_refused_before_building(tmp_path):
    """900,000 x 32 embeddings take 115 MB: a 1 KB pytorch_model.bin must be refused from
    its shapes, before the model is built."""
    hf = random_hf(transformers.BertModel, **CONFIGS[0])
    write_hf(tmp_path, CONFIGS[0] | {"vocab_size": 900_000}, hf.state_dict())
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"pytorch_model.bin does not match its config.json.*"
                                         r"expected \(900000, 32\), found \(99, 32\)"):
        load_hf_model(tmp_path)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("weights_format", ["bin", "safetensors"])
def test_a_config_with_many_layers_is_refused_at_once(tmp_path, weights_format):
    state = {"encoder.layer.0.output.dense.bias": torch.zeros(32)}
    write_hf(tmp_path, CONFIGS[0] | {"num_hidden_layers": 900},
             state if weights_format == "bin" else None)
    if weights_format == "safetensors":
        save_file(state, tmp_path / "model.safetensors")
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"holds 1 encoder blocks .*"
                                         r"num_hidden_layers=900") as err:
        load_hf_model(tmp_path)
    assert len(str(err.value)) < 400
    write_hf(tmp_path, CONFIGS[0] | {"num_hidden_layers": 100_000}, None)
    with pytest.raises(ValueError, match=r"holds 1 encoder blocks .*num_hidden_layers=100,000"):
        load_hf_model(tmp_path)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool])
def test_non_float_weights_are_refused(saved_checkpoint, dtype):
    def cast(state):
        for name in state:
            state[name] = state[name].to(dtype)
    edit_weights(saved_checkpoint, cast)
    with pytest.raises(ValueError, match="not floating point"):
        load_hf_model(saved_checkpoint)


@pytest.mark.parametrize(("weights", "message"), [
    ([torch.zeros(1)], "must hold a dict of tensor names to tensors.*got list"),
    ({"embeddings.word_embeddings.weight": 3}, "must hold a dict of tensor names to tensors"),
    ({"encoder.layer.0.output.dense.bias": torch.zeros(16, dtype=torch.long)},
     "output.dense.bias: not floating point"),
    (bytes(range(256)) * 4, "never runs pickled code"),
    (b"PK\x03\x04" + bytes(100), "not a PyTorch checkpoint torch.load can read"),
])
def test_bad_bin_files_are_named(tmp_path, weights, message):
    write_hf(tmp_path, CONFIGS[2], None if isinstance(weights, bytes) else weights)
    if isinstance(weights, bytes):
        (tmp_path / "pytorch_model.bin").write_bytes(weights)
    with pytest.raises(ValueError, match=message):
        load_hf_model(tmp_path)


@pytest.mark.parametrize("content", ["[" * 500_000, "{", "\xff"])
def test_a_hostile_config_file_is_a_value_error(tmp_path, content):
    (tmp_path / "config.json").write_text(content, encoding="latin-1")
    with pytest.raises(ValueError, match="config.json must "):
        load_hf_model(tmp_path)


def test_a_symlink_loop_is_a_value_error(tmp_path):
    os.symlink(tmp_path / "config.json", tmp_path / "config.json")
    with pytest.raises(ValueError, match="config.json cannot be read"):
        load_hf_model(tmp_path)


def test_loading_leaves_the_global_rng_alone(saved_checkpoint):
    state = torch.get_rng_state()
    with pytest.warns(UserWarning, match="no weights for"):
        load_hf_model(minilm_directory())
    (saved_checkpoint / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                          "[MASK]", "a"]))
    load_hf(saved_checkpoint)

    def poison(state):
        state["bert.encoder.layer.0.output.dense.weight"][1, 2] = float("nan")
    edit_weights(saved_checkpoint, poison)
    with pytest.raises(ValueError, match="holds NaN"):
        load_hf(saved_checkpoint)
    assert torch.equal(state, torch.get_rng_state())


@pytest.mark.parametrize(("lines", "message"), [
    (["[PAD]", "[UNK]", "[SEP]", "[MASK]", "a"],
     r"vocab.txt: vocabulary lacks the reserved tokens \['\[CLS\]'\]"),
])
def test_a_bad_vocab_txt_is_named(saved_checkpoint, lines, message):
    (saved_checkpoint / "vocab.txt").write_text("\n".join(lines))
    with pytest.raises(ValueError, match=message):
        load_hf(saved_checkpoint)


def test_a_fifo_is_refused_where_weights_are_read(tmp_path):
    os.mkfifo(tmp_path / "model.safetensors")  # a read would block forever
    with pytest.raises(ValueError, match="model.safetensors must be a regular file"):
        weights_file(tmp_path)
