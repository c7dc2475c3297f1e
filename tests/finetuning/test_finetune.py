import math
from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from jaxtyping import TypeCheckError
from torch import nn

from bertlib import BERTClassifier, BERTTagger, evaluate_task, fine_tune, load_small_bert
from bertlib.finetuning.finetune import (
    Accuracy,
    BagOfWords,
    BERTQuestionAnswerer,
    best_span,
    freeze_layers,
    predict,
    predict_spans,
    span_accuracy,
    task_loss,
)
from bertlib.finetuning.tasks import (
    IGNORE,
    NUM_TOPICS,
    TaskData,
    load_task_sentences,
    span_data,
    split_tasks,
)
from bertlib.finetuning.tasks import topic_data as make_topic_data
from bertlib.train import DivergedError, init_model


def toy_task(vocab_size: int, n: int = 64, T: int = 8, seed: int = 0) -> TaskData:
    """Sequences of random words whose class is whether word 5 (the first non-special id) is
    in them; padded at random lengths."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(6, vocab_size, (n, T), generator=g)
    valid_lens = torch.randint(3, T + 1, (n,), generator=g)
    labels = torch.randint(2, (n,), generator=g)
    for i in range(n):
        if labels[i]:
            tokens[i, 1 + int(torch.randint(int(valid_lens[i]) - 1, (1,), generator=g))] = 5
        tokens[i, valid_lens[i]:] = 0
    tokens[:, 0] = 2  # <cls>
    return TaskData(tokens, torch.zeros_like(tokens), valid_lens, labels, ["en"] * n)


def test_classifier_reads_cls_through_the_pretrained_hidden_layer(toy_model):
    bert = toy_model().eval()
    clf = BERTClassifier(bert, 3, seed=0).eval()
    tokens = torch.randint(5, 20, (4, 7))
    segments = torch.tensor([[0, 0, 0, 1, 1, 1, 1]] * 4)
    valid_lens = torch.tensor([7, 5, 3, 6])
    with torch.no_grad():
        Y = clf(tokens, segments, valid_lens)
        encoded_X, _, _ = bert(tokens, segments, valid_lens)
        expected = encoded_X[:, 0] @ bert.hidden[0].weight.T + bert.hidden[0].bias
        expected = torch.tanh(expected) @ clf.output.weight.T + clf.output.bias
    assert Y.shape == (4, 3)
    torch.testing.assert_close(Y, expected)
    # Only <cls>'s row matters: changing a later (attended-to) token changes it, padding not.
    changed = tokens.clone()
    changed[2, 5] = 6  # beyond valid_lens[2] = 3: padding
    with torch.no_grad():
        torch.testing.assert_close(clf(changed, segments, valid_lens), Y)


def test_tagger_gives_one_row_per_token(toy_model):
    bert = toy_model().eval()
    tagger = BERTTagger(bert, 4).eval()
    tokens = torch.randint(5, 20, (2, 9))
    with torch.no_grad():
        Y = tagger(tokens, torch.zeros_like(tokens))
        expected = tagger.output(bert(tokens, torch.zeros_like(tokens))[0])
    assert Y.shape == (2, 9, 4)
    torch.testing.assert_close(Y, expected)


def test_heads_are_seeded_leave_the_global_rng_and_the_pretrained_model_alone(toy_model):
    bert = toy_model()
    before = {k: v.clone() for k, v in bert.state_dict().items()}
    state = torch.random.get_rng_state()
    a, b, c = (BERTClassifier(bert, 2, seed=s) for s in (0, 0, 1))
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.output.weight, b.output.weight)
    assert not torch.equal(a.output.weight, c.output.weight)
    fine_tune(a, toy_task(bert.config.vocab_size), num_steps=3, progress=False)
    assert all(torch.equal(v, bert.state_dict()[k]) for k, v in before.items())
    assert not torch.equal(a.encoder.token_embedding.weight, bert.encoder.token_embedding.weight)


@pytest.mark.parametrize(("cls", "name"), [(BERTClassifier, "num_classes"),
                                           (BERTTagger, "num_tags")])
def test_heads_check_their_input(cls, name, toy_model):
    bert = toy_model()
    with pytest.raises(ValueError, match=rf"{name} must be an integer >= 2 \(a choice "
                                         r"needs two classes\); got 1"):
        cls(bert, 1)
    with pytest.raises(ValueError, match=rf"{name} must be an integer >= 2 .*; got 2.0"):
        cls(bert, 2.0)
    head = cls(bert, 2)
    with pytest.raises(ValueError, match=r"tokens must be in \[0, 19\]; got 20"):
        head(torch.tensor([[2, 20]]), torch.zeros(1, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"segments must be in \[0, 1\]; got 2"):
        head(torch.tensor([[2, 7]]), torch.tensor([[0, 2]]))


def test_bag_of_words_is_the_mean_of_the_real_tokens_rows():
    bow = BagOfWords(10, 3, seed=0)
    tokens = torch.tensor([[2, 7, 7, 4, 0], [2, 5, 3, 3, 3]])
    valid_lens = torch.tensor([4, 5])
    Y = bow(tokens, torch.zeros_like(tokens), valid_lens)
    W = bow.weights.weight
    expected = torch.stack([W[[2, 7, 7, 4]].mean(0), W[[2, 5, 3, 3, 3]].mean(0)]) + bow.bias
    torch.testing.assert_close(Y, expected)
    # Word order plays no part.
    torch.testing.assert_close(bow(tokens[:, [0, 3, 2, 1, 4]], tokens, valid_lens), Y)


def test_task_loss_is_the_mean_over_labelled_positions():
    g = torch.Generator().manual_seed(0)
    Y_hat = torch.randn(2, 5, 3, generator=g)
    labels = torch.tensor([[IGNORE, 0, 2, IGNORE, IGNORE], [IGNORE, 1, 1, 2, IGNORE]])
    picked = [Y_hat[0, 1].log_softmax(-1)[0], Y_hat[0, 2].log_softmax(-1)[2],
              Y_hat[1, 1].log_softmax(-1)[1], Y_hat[1, 2].log_softmax(-1)[1],
              Y_hat[1, 3].log_softmax(-1)[2]]
    torch.testing.assert_close(task_loss(Y_hat, labels), -torch.stack(picked).mean())
    # Invariance: what the model says at IGNORE positions counts for nothing.
    noisy = Y_hat.clone()
    noisy[labels == IGNORE] = 100 * torch.randn(int((labels == IGNORE).sum()), 3, generator=g)
    torch.testing.assert_close(task_loss(noisy, labels), task_loss(Y_hat, labels))
    # Sequence level: plain cross-entropy.
    torch.testing.assert_close(task_loss(Y_hat[:, 0], torch.tensor([2, 0])),
                               F.cross_entropy(Y_hat[:, 0], torch.tensor([2, 0])))


@pytest.mark.parametrize("Y_hat, labels", [
    (torch.zeros(2, 3), torch.tensor([0.0, 1.0])),  # float labels
    (torch.zeros(2, 3), torch.tensor([0, 1, 1])),  # one label too many
    (torch.zeros(2, 4, 3), torch.zeros(2, 5, dtype=torch.long)),  # tags of other lengths
    (torch.zeros(2, 3, dtype=torch.long), torch.tensor([0, 1])),  # logits of integers
])
def test_task_loss_checks_shapes_and_dtypes(Y_hat, labels):
    with pytest.raises(TypeCheckError):
        task_loss(Y_hat, labels)


@pytest.fixture
def one_thread():
    """One torch thread for the duration of a test: on a busy 2-core machine, two threads
    fighting over tiny matrices make training several times slower. Restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_the_loop_learns_and_is_reproducible(toy_model, one_thread):
    bert = toy_model()
    train, held = toy_task(bert.config.vocab_size, 256, seed=0), toy_task(bert.config.vocab_size,
                                                                          128, seed=1)
    state = torch.random.get_rng_state()
    models = [BERTClassifier(bert, 2, seed=0) for _ in range(2)]
    before = evaluate_task(models[0], held, 2).overall.value
    histories = [fine_tune(m, train, num_steps=60, lr=1e-3, batch_size=32, progress=False)
                 for m in models]
    assert torch.equal(torch.random.get_rng_state(), state)
    assert histories[0].loss == histories[1].loss and len(histories[0].loss) == 60
    assert histories[0].examples == 60 * 32
    assert sum(histories[0].loss[-10:]) < 0.5 * sum(histories[0].loss[:10])
    after = evaluate_task(models[0], held, 2)
    assert after.overall.value > 0.9 > before + 0.2
    assert not models[0].training  # eval mode after the loop


def test_freezing_keeps_frozen_weights_and_trains_the_rest(toy_model):
    bert = toy_model()
    clf = BERTClassifier(bert, 2)
    total = sum(p.numel() for p in clf.parameters())
    top = sum(p.numel() for p in clf.encoder.blks[-1].parameters())
    above = sum(p.numel() for m in (clf.hidden, clf.output) for p in m.parameters())
    embeddings = sum(p.numel() for n, p in clf.encoder.named_parameters() if "blks" not in n)
    assert freeze_layers(clf, trainable_blocks=2) == total - embeddings
    assert freeze_layers(clf, trainable_blocks=1) == top + above
    frozen = {n: p.clone() for n, p in clf.named_parameters() if not p.requires_grad}
    trained = {n: p.clone() for n, p in clf.named_parameters() if p.requires_grad}
    fine_tune(clf, toy_task(bert.config.vocab_size), num_steps=5, lr=1e-2, progress=False)
    params = dict(clf.named_parameters())
    assert all(torch.equal(params[n], p) for n, p in frozen.items())
    assert all(not torch.equal(params[n], p) for n, p in trained.items())
    assert {n.split(".")[1] for n in frozen} == {"token_embedding", "segment_embedding",
                                                 "pos_embedding", "blks"}
    assert all(n.startswith("encoder.blks.0.") for n in frozen if "blks" in n)
    assert freeze_layers(clf, trainable_blocks=0) == above
    with pytest.raises(ValueError, match=r"trainable_blocks must be an integer in \[0, 2\]; "
                                         r"got 3"):
        freeze_layers(clf, trainable_blocks=3)


def test_fine_tune_checks_its_arguments(toy_model):
    clf = BERTClassifier(toy_model(), 2)
    data = toy_task(20)
    with pytest.raises(ValueError, match="num_steps must be a positive integer; got 0"):
        fine_tune(clf, data, num_steps=0)
    with pytest.raises(ValueError, match=r"lr must be a number in \(0, 10\] .*; got -1"):
        fine_tune(clf, data, num_steps=1, lr=-1)


class Fixed(nn.Module):
    """Predicts the class given in the first token, whatever else the input holds."""

    def __init__(self):
        super().__init__()
        self.anchor = nn.Parameter(torch.zeros(1))

    def forward(self, tokens, segments, valid_lens=None):
        return F.one_hot(tokens[:, 0], 3).float() + self.anchor


def test_evaluate_task_counts_per_class_and_ignores_ignored():
    tokens = torch.tensor([[0], [1], [2], [2], [1], [0]])
    labels = torch.tensor([0, 1, 1, 2, 0, IGNORE])
    data = TaskData(tokens, torch.zeros_like(tokens), torch.ones(6, dtype=torch.long), labels,
                    ["en"] * 6)
    assert predict(Fixed(), data).tolist() == [0, 1, 2, 2, 1, 0]
    score = evaluate_task(Fixed(), data, 3)
    assert (score.overall.hits, score.overall.n) == (3, 5)
    assert [(a.hits, a.n) for a in score.per_class] == [(1, 2), (1, 2), (1, 1)]


def test_wilson_interval_matches_the_textbook_values():
    low, high = Accuracy(8, 10).interval  # Wilson (1927); e.g. Agresti & Coull (1998)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    low, high = Accuracy(0, 20).interval
    assert low == 0.0 and round(high, 3) == 0.161
    assert Accuracy(20, 20).interval[1] == 1.0
    assert all(math.isnan(x) for x in Accuracy(0, 0).interval)
    assert str(Accuracy(8, 10)) == "0.800 [0.490, 0.943]"


def test_pretraining_is_clearly_ahead_of_random_initialisation_on_held_out_words(one_thread):
    """The point of pretraining: the same architecture and the same fine-tuning, from the
    shipped weights or from random ones, on test sentences whose word (a person, a place, a
    fruit...) no training sentence holds: only the pretraining corpus does. One run's intervals
    can touch, so the test repeats the recipe with three seeds for the head and the batch
    order: the pretrained start wins each time, and the pooled accuracies (3 x the 144
    held-out sentences of one word) are far apart."""
    bert, tokenizer = load_small_bert()
    split = split_tasks(load_task_sentences())
    one_word = [[s for s in part if s.topic is not None] for part in (split.train, split.held_out)]
    train = make_topic_data(one_word[0], tokenizer, bert.config.max_len)
    held = make_topic_data(one_word[1], tokenizer, bert.config.max_len)
    assert len(held) == 144  # 4 held-out words x 6 classes x 3 test frames x 2 languages
    hits = {"pretrained": [], "random": []}
    for seed in (0, 1, 2):
        for name, start in (("pretrained", bert), ("random", init_model(bert.config, seed=1))):
            clf = BERTClassifier(start, NUM_TOPICS, seed=seed)
            fine_tune(clf, train, num_steps=100, lr=7e-4, seed=seed,  # a short recipe
                      progress=False)
            hits[name].append(evaluate_task(clf, held, NUM_TOPICS).overall.hits)
    assert all(p > r for p, r in zip(hits["pretrained"], hits["random"], strict=True)), hits
    pretrained, random = (Accuracy(sum(hits[name]), 3 * len(held)) for name in hits)
    assert pretrained.interval[0] > random.interval[1], (str(pretrained), str(random))
    assert pretrained.value > random.value + 0.08


# ---------------------------------------------------------------- question answering
def test_the_span_head_scores_every_token_with_the_start_and_end_vectors(toy_model):
    """Scores (B, 2, T): the dot products of each token's encoding with the output layer's two
    rows (the paper's S and E) plus bias; padding gets -inf, never an answer."""
    bert = toy_model()
    qa = BERTQuestionAnswerer(bert, seed=0).eval()
    tokens = torch.tensor([[2, 7, 8, 3, 9, 10, 3], [2, 7, 3, 9, 3, 0, 0]])
    segments = torch.tensor([[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0]])
    valid_lens = torch.tensor([7, 5])
    scores = qa(tokens, segments, valid_lens)
    H = qa.encoder(tokens, segments, valid_lens)  # (B, T, num_hiddens)
    S, E = qa.output.weight  # the start and end vectors
    by_hand = torch.stack([H @ S, H @ E], 1) + qa.output.bias[None, :, None]
    assert scores.shape == (2, 2, 7)
    assert torch.allclose(scores[0], by_hand[0], atol=1e-6)
    assert torch.allclose(scores[1, :, :5], by_hand[1, :, :5], atol=1e-6)
    assert torch.isneginf(scores[1, :, 5:]).all()
    assert torch.equal(BERTQuestionAnswerer(bert, seed=0).output.weight, qa.output.weight)


def test_task_loss_on_span_scores_is_the_papers_mean_of_start_and_end_log_likelihoods():
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 2, 6, generator=g)
    scores[2, :, 4:] = float("-inf")  # padding
    spans = torch.tensor([[1, 2], [4, 4], [0, 3]])
    log_p = scores.log_softmax(-1)
    by_hand = -sum(log_p[b, 0, spans[b, 0]] + log_p[b, 1, spans[b, 1]] for b in range(3)) / 6
    assert torch.allclose(task_loss(scores, spans), by_hand)


def brute_force_span(scores, allowed, max_answer_len):
    """Every (i, j) tried in a loop: the independent reference for best_span."""
    out = []
    for b in range(scores.shape[0]):
        candidates = [(float(scores[b, 0, i] + scores[b, 1, j]), i, j)
                      for i in range(scores.shape[2]) for j in range(i, scores.shape[2])
                      if j - i < max_answer_len and allowed[b, i] and allowed[b, j]]
        out.append(list(max(candidates)[1:]))
    return out


def test_best_span_is_the_best_valid_pair_found_by_trying_all():
    g = torch.Generator().manual_seed(1)
    for T, L in [(5, 1), (9, 3), (12, 12)]:
        scores = torch.randn(4, 2, T, generator=g)
        allowed = torch.rand(4, T, generator=g) < 0.6
        allowed[:, 0] = True
        assert best_span(scores, allowed, L).tolist() == brute_force_span(scores, allowed, L)
    backwards = torch.zeros(1, 2, 4)
    backwards[0, 0, 3], backwards[0, 1, 0] = 9.0, 8.0  # each argmax alone: start 3, end 0
    assert best_span(backwards, torch.ones(1, 4, dtype=torch.bool), 4).tolist() == [[3, 3]]


@pytest.mark.parametrize("args, message", [
    ((torch.zeros(2, 3, 4), torch.ones(2, 4, dtype=torch.bool), 2), "parameter 'scores'"),
    ((torch.zeros(2, 2, 4), torch.ones(2, 5, dtype=torch.bool), 2), "parameter 'allowed'"),
    ((torch.zeros(1, 2, 4), torch.ones(1, 4), 2), "parameter 'allowed'"),
    ((torch.zeros(1, 2, 4), torch.ones(1, 4, dtype=torch.bool), 0), "max_answer_len must be"),
])
def test_best_span_refuses_bad_input(args, message):
    with pytest.raises((ValueError, TypeCheckError), match=message):
        best_span(*args)


def test_span_accuracy_is_the_exact_match_of_the_found_spans(one_thread):
    """Fine-tuned briefly on the shipped questions (sentences of two words), the head finds far
    more answers about held-out words than the most common answer position does, and
    span_accuracy counts exactly the found spans equal to the labels."""
    bert, tokenizer = load_small_bert()
    split = split_tasks(load_task_sentences())
    train = span_data([s for s in split.train if s.topic is None], tokenizer, 64)
    held = span_data([s for s in split.held_out if s.topic is None], tokenizer, 64)
    qa = BERTQuestionAnswerer(bert, seed=0)
    # 120 steps: after 60 the retrained small BERT finds 22-37% by seed, after 120 45-52%
    fine_tune(qa, train, num_steps=120, lr=7e-4, seed=0, progress=False)
    found = predict_spans(qa, held)
    accuracy = span_accuracy(qa, held)
    assert accuracy.hits == sum(f == y for f, y in zip(found.tolist(), held.labels.tolist(),
                                                       strict=True))
    assert (found[:, 0] <= found[:, 1]).all() and (found[:, 1] - found[:, 0] < 8).all()
    def relative(data):  # (first, last) of each answer, counted from the sentence's start
        return [tuple(span) for span in
                (data.labels - data.segments.argmax(1, keepdim=True)).tolist()]

    # The most common (first, last) pair in training: the first and last tokens' modes taken
    # apart make a pair no answer has (with these sentences, a baseline of 0).
    common = Counter(relative(train)).most_common(1)[0][0]
    baseline = sum(span == common for span in relative(held)) / len(held)
    assert baseline > 0.05
    assert accuracy.value > baseline + 0.3, (str(accuracy), baseline)


def test_labels_outside_the_models_classes_are_refused_before_training(toy_model):
    """12 topics on a 2-class head ran and learned nothing about 10 of them."""
    clf = BERTClassifier(toy_model().eval(), 2)  # an encoder in eval mode in a training head
    data = toy_task(20, n=24)
    twelve = TaskData(*data.tensors()[:3], torch.arange(24) % 12, data.langs)
    before = {k: v.clone() for k, v in clf.state_dict().items()}
    modes = {name: m.training for name, m in clf.named_modules()}
    assert set(modes.values()) == {True, False}
    with pytest.raises(ValueError, match=r"labels must be class ids in \[0, 1\] \(the model has "
                                         r"2 outputs\) or IGNORE; got 2 at index \(2,\)"):
        fine_tune(clf, twelve, num_steps=1, progress=False)
    assert all(torch.equal(v, before[k]) for k, v in clf.state_dict().items())
    assert {name: m.training for name, m in clf.named_modules()} == modes  # each its own mode
    with pytest.raises(ValueError, match=r"labels must be class ids in \[0, 1\]"):
        evaluate_task(clf, twelve, 2)  # reported two classes
    with pytest.raises(ValueError, match="num_classes must be the model's number of outputs, 2; "
                                         "got 12"):
        evaluate_task(clf, data, 12)
    tagger = BERTTagger(toy_model(), 3)
    tags = TaskData(*data.tensors()[:3], torch.full((24, 8), 3), data.langs)
    with pytest.raises(ValueError, match=r"labels must be class ids in \[0, 2\]"):
        fine_tune(tagger, tags, num_steps=1, progress=False)
    with pytest.raises(ValueError, match=r"labels must have shape \(24, 8\)"):
        fine_tune(tagger, data, num_steps=1, progress=False)  # one label per text, not token


def test_fine_tune_refuses_what_train_bert_refuses(toy_model):
    clf = BERTClassifier(toy_model(), 2)
    data = toy_task(20, n=8)
    for kwargs, message in [
        ({"lr": 1e6}, r"lr must be a number in \(0, 10\] \(Adam's usual range is 1e-5 to "
                      r"1e-2\); got 1000000.0"),
        ({"device": "banana"}, "device must be a device this machine has, one of .*got 'banana'"),
        ({"batch_size": 0}, "batch_size must be a positive integer; got 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            fine_tune(clf, data, num_steps=1, **kwargs)


def test_a_loss_that_turns_non_finite_stops_training_and_keeps_the_weights(toy_model):
    clf = BERTClassifier(toy_model(), 2)
    data = toy_task(20, n=32)
    fine_tune(clf, data, num_steps=2, batch_size=8, progress=False)
    with torch.no_grad():  # finite weights whose logits overflow: tanh(100) = 1, 32 x 1e38
        clf.hidden[0].bias.fill_(100.0)
        clf.output.weight.fill_(1e38)
    before = {k: v.clone() for k, v in clf.state_dict().items()}
    with pytest.raises(DivergedError, match=r"diverged at step 1 of 3: the loss must be "
                                            r"finite"):
        fine_tune(clf, data, num_steps=3, batch_size=8, progress=False)
    for name, value in clf.state_dict().items():
        assert torch.equal(value, before[name]), name
        assert bool(torch.isfinite(value).all()), name


def test_prediction_and_scores_check_their_input(toy_model):
    with pytest.raises(ValueError, match=r"hits must be an integer in \[0, 3\] .*; got 5"):
        Accuracy(5, 3)
    with pytest.raises(ValueError, match=r"hits must be an integer in \[0, 3\] .*; got 1.5"):
        Accuracy(1.5, 3)
    qa = BERTQuestionAnswerer(toy_model())
    with pytest.raises(ValueError, match=r"data.labels must be answer spans, shape \(64, 2\)"):
        span_accuracy(qa, toy_task(20))


@pytest.mark.parametrize("cls", [BERTClassifier, BERTTagger, BERTQuestionAnswerer])
def test_the_new_layer_follows_the_encoders_dtype(cls, toy_model):
    """A float64 encoder gave 'mat1 and mat2 must have the same dtype' from the new layer."""
    args = () if cls is BERTQuestionAnswerer else (3,)
    single, double = cls(toy_model(), *args, seed=0), cls(toy_model().double(), *args, seed=0)
    assert double.output.weight.dtype == torch.float64
    torch.testing.assert_close(double.output.weight, single.output.weight.double())
    tokens = torch.randint(5, 20, (2, 6))
    assert double.eval()(tokens, torch.zeros_like(tokens)).dtype == torch.float64


def test_a_device_this_machine_lacks_is_named(toy_model):
    """Passes after the merge with h-train, whose bertlib.train._device checks "mps" too."""
    clf = BERTClassifier(toy_model(), 2)
    missing = "cuda" if torch.backends.mps.is_available() else "mps"  # a Mac lacks CUDA
    with pytest.raises(ValueError, match=f"device .*{missing}"):
        fine_tune(clf, toy_task(20, n=8), num_steps=1, progress=False, device=missing)


def test_task_loss_names_a_label_past_the_classes():
    """Before: torch's IndexError "Target 3 is out of bounds"."""
    with pytest.raises(ValueError, match=r"labels must be in \[0, 2\] or IGNORE; got 3"):
        task_loss(torch.zeros(2, 3), torch.tensor([0, 3]))
