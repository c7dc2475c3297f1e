# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# # 09 · Fine-tuning
#
# *[中文版](../zh/09_fine_tuning.ipynb) · [日本語](../ja/09_fine_tuning.ipynb) ·
# [Index](00_index.ipynb)*
#
# The chapter ends where BERT's point begins. The original BERT is pretrained once, on unlabelled
# text, and then **fine-tuned** for each downstream task: the MLM and NSP heads are dropped, a
# small output layer is added on top of the encoder, and the model is trained a little further
# on the task's labelled examples. The paper's central claim is that this beats the same model
# trained on the labels alone. This notebook fine-tunes the small BERT and puts that claim to a
# test it can fail.
#
# You will:
# 1. meet three small labelled tasks (a sentence's topic, a tag for every token, questions
#    answered by a span) whose test sentences hold **words that no labelled example holds**:
#    words the small BERT met only in its unlabelled pretraining text;
# 2. read `BERTClassifier`, `BERTTagger` and `BERTQuestionAnswerer`: one new output layer each;
# 3. fine-tune the pretrained small BERT, the same model from random weights and a bag of words,
#    over five seeds, and compare them on held-out words and on seen words;
# 4. see where pretraining put the held-out words, and how the gap changes with the number of
#    labels (a learning curve);
# 5. set the result beside the BERT paper's own evidence and beside a real BERT, MiniLM;
# 6. type sentences into the fine-tuned models.

# %%
# %matplotlib inline
import warnings

import torch
from IPython.display import display

from bertlib import (
    BERTClassifier,
    BERTQuestionAnswerer,
    BERTTagger,
    evaluate_task,
    fine_tune,
    load_hf,
    load_small_bert,
)
from bertlib.assets import SMALL_CORPUS_DIR
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.finetuning.experiment import (
    CURVE,
    RECIPE,
    STARTS,
    compare,
    data_for,
    load_experiment,
    neighbours,
)
from bertlib.finetuning.finetune import freeze_layers, span_accuracy, task_loss
from bertlib.finetuning.tasks import (
    CLASSES,
    NUM_TOPICS,
    TAGS,
    class_names,
    load_task_sentences,
    split_tasks,
    token_tags,
)
from bertlib.support.i18n import corpus_language, table, tr
from bertlib.train import init_model
from bertlib.viz import FineTuneWidget, ScoredClassifier, new_figure
from bertlib.viz.listing import show_source
from bertlib.weights.hf import minilm_directory

# %%
# One thread: the printed numbers then come out the same on any number of cores (the order of
# floating-point sums depends on the thread count), and for models this small it is not slower.
torch.set_num_threads(1)

# %% [markdown] lang="en"
# ## A designed experiment: words no label shows
#
# If the test sentences of a task use the same words as its training sentences, a model needs
# nothing from pretraining: a bag of words remembers which word goes with which label, and wins.
# (An earlier version of this notebook did exactly that, and the pretrained model lost.) So the
# tasks here are built, by `scripts/make_tasks.py`, to need what only the unlabelled text holds:
#
# * six **word classes** per language: names, places, times, fruits, animals and sports, 12 words
#   each. The first 8 of each class are **seen**: they occur in labelled training sentences. The
#   last 4 are **held out**: no labelled training sentence holds them.
# * The labelled sentences are **neutral frames**, such as "The letter was about X." or "Have you
#   ever heard of X?": nothing in them tells X's class, so the word is the only evidence. Test
#   sentences use other frames than training sentences.
# * The pretraining corpus (`scripts/make_corpus.py`) holds, beside the stories of notebook 06,
#   short sentences about every one of the 72 words, held-out ones included: "Nobody forgot the
#   peel of mangoes.", "We talked about the streets of Lisbon for hours." A word's class shows in
#   the words around it, and masked-token prediction learns from exactly that.
#
# This is a designed experiment: the corpus is built so that the effect, if there is one, can be
# seen. Real text is messier, and we come back to what carries over at the end.

# %%
sentences = load_task_sentences()
split = split_tasks(sentences)
lang = corpus_language()  # this edition's corpus language (English where there is none)
topics, tag_names = class_names("topic"), class_names("tags")
print(tr("training sentences {train}; test sentences with seen words {seen}, with held-out words "
         "{held}", train=len(split.train), seen=len(split.seen), held=len(split.held_out)))
words = {(cls, held): [] for cls in CLASSES for held in (False, True)}
for s in sentences:
    for start, end, cls, held in s.words:
        if s.lang == lang and s.text[start:end] not in words[cls, held]:
            words[cls, held].append(s.text[start:end])
print(table([[tr("class"), tr("seen words"), tr("held-out words")]]
            + [[name, " ".join(words[cls, False]), " ".join(words[cls, True])]
               for cls, name in zip(CLASSES, topics, strict=True)]))
for part in ("train", "seen", "held_out"):
    s = next(s for s in getattr(split, part) if s.lang == lang)
    print(f"{part:9}", s.text)

# %% [markdown] lang="en"
# Two checks decide whether the design holds. No held-out word may occur in a training sentence
# (in Chinese, not even one of its characters: a character is a token), and every held-out word
# must occur in the pretraining corpus. `tests/finetuning/test_tasks.py` checks both from the data
# files for both languages; here is the count for this edition's language, and a few corpus
# sentences with a held-out fruit:

# %%
held_words = [w for cls in CLASSES for w in words[cls, True]]
training_text = "\n".join(s.text for s in split.train if s.lang == lang)
corpus = (SMALL_CORPUS_DIR / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
print(tr("held-out words found in training sentences: {n}",
         n=sum(w in training_text for w in held_words)))
print(tr("corpus sentences holding a held-out word: {n} of {total}",
         n=sum(any(w in line for w in held_words) for line in corpus),
         total=sum(1 for line in corpus if line)))
fruit = words["fruit", True][0]
for line in [line for line in corpus if fruit in line][:3]:
    print("  ", line)

# %% [markdown] lang="en"
# ## The classifier, the tagger and the question answerer
#
# The chapter's `BERTClassifier` keeps the pretrained encoder and the `hidden` layer (the
# Linear + Tanh on `<cls>` that fed the NSP head, the *pooler*), and adds a new output layer with
# one output per class. For a text pair nothing changes: `<cls>` A `<sep>` B `<sep>` and its
# segment ids go in, as for the chapter's natural language inference.

# %%
show_source(BERTClassifier)

# %% [markdown] lang="en"
# Two details differ from the chapter's code: the encoder and the hidden layer are *copies*, so
# fine-tuning leaves `small_bert` as it was (we fine-tune it many times below), and the new
# layer's initial weights depend on a `seed` only. For token-level tasks, `BERTTagger` applies
# its output layer to every token's representation instead of `<cls>`'s:

# %%
show_source(BERTTagger.forward)
small_bert, tokenizer = load_small_bert()
max_len = small_bert.config.max_len
classifier = BERTClassifier(small_bert, NUM_TOPICS, seed=0)
tagger = BERTTagger(small_bert, len(TAGS), seed=0)
batch = data_for("topic", split.train[:4], tokenizer, max_len)
inputs = batch.tokens, batch.segments, batch.valid_lens
with torch.no_grad():
    print("BERTClassifier:", tuple(classifier(*inputs).shape))  # (B, C)
    print("BERTTagger:    ", tuple(tagger(*inputs).shape))  # (B, T, C)

# %% [markdown] lang="en"
# The tags are *name*, *place*, *time* and *other*: a fruit, an animal or a sport is *other*, like
# the frame's words. A word cut into several WordPiece tokens gives its tag to each piece (the
# BERT paper scores the first piece of each word only: a simplification here). The loss is the
# cross-entropy of the labels, averaged over every labelled position of the batch; `<cls>`,
# `<sep>` and the padding are labelled `IGNORE` and count for nothing (you will write this loss
# yourself in the exercises):

# %%
two = next(s for s in split.train if s.lang == lang and len(s.words) == 2)
print(" ".join(f"{piece}/{tag_names[t]}" if t else piece
               for piece, t in zip(tokenizer.tokenize(two.text), token_tags(two, tokenizer),
                                   strict=True)))
tags = data_for("tags", [two], tokenizer, max_len)
print(tags.labels)
with torch.no_grad():
    print(tr("loss {loss:.3f}, ln 4 = {ln4:.3f}", ln4=torch.log(torch.tensor(4.0)),
             loss=task_loss(tagger(*tags.tensors()[:3]), tags.labels)))

# %% [markdown] lang="en"
# ## Fine-tuning the small BERT once
#
# `fine_tune` runs the same loop as `train_bert` (notebook 06): Adam, seeded batches and
# dropout, a progress bar; only the loss differs. We train the classifier on the topics of the
# training sentences of both languages.
#
# One change from the usual recipe: the **token embeddings stay frozen**. Fine-tuning would move
# the embeddings of the words it sees, the seen words, and never those of the held-out words,
# which occur in no training sentence. It would pull the seen words away from the place
# pretraining gave them, beside the held-out words of their class. Frozen, the table keeps that
# geometry; the 2 encoder blocks, the pooler and the new output layer learn. (Exercise 5 asks what
# happens without the freeze.)
#
# Accuracy is measured on the test sentences, separately for those with held-out words and those
# with seen words, per language, with a 95% confidence interval (the Wilson interval).

# %%
topic_train = data_for("topic", split.train, tokenizer, max_len)
LANGUAGES = {"en": tr("English"), "zh": tr("Chinese")}
PARTS = {"held_out": tr("held-out words"), "seen": tr("seen words")}
topic_tests = {(code, part): data_for("topic", getattr(split, part), tokenizer,
                                      max_len).select(code)
               for code in LANGUAGES for part in PARTS}
steps, lr = RECIPE["topic"]
classifier.encoder.token_embedding.weight.requires_grad_(False)  # the frozen token embeddings
history = fine_tune(classifier, topic_train, num_steps=steps, lr=lr, seed=0)
print(tr("loss over {steps} steps: first 10 {first:.2f}, last 10 {last:.2f}",
         steps=len(history.loss), first=sum(history.loss[:10]) / 10,
         last=sum(history.loss[-10:]) / 10))
accuracy = {key: evaluate_task(classifier, data, NUM_TOPICS).overall
            for key, data in topic_tests.items()}
print(table([[tr("test sentences"), *LANGUAGES.values()]]
            + [[name, *(accuracy[code, part] for code in LANGUAGES)]
               for part, name in PARTS.items()]))

# %% [markdown] lang="en"
# ## What pretraining buys, under control
#
# One run says little. To see what the pretrained weights are worth, we need the same run from
# other starting points, with the same recipe, the same labels and the same seed:
#
# * **random start**: the same architecture from random weights (`init_model`), fine-tuned the
#   same way, its token embeddings frozen too;
# * **bag of words**: a linear classifier on how often each vocabulary entry occurs in the
#   sentence, blind to word order and context, with nothing pretrained.
#
# `compare` fine-tunes each start once per seed and scores it on every test set:

# %%
show_source(compare)

# %% [markdown] lang="en"
# Here it is with one seed, the same seed 0 as above:

# %%
START_NAMES = {"pretrained": tr("small BERT, pretrained"), "random": tr("small BERT, random start"),
               "bag": tr("bag of words")}


def print_comparison(results: dict) -> None:
    """One row per language and kind of test word, one column per start."""
    rows = [[tr("test sentences"), *START_NAMES.values()]]
    rows += [[f"{LANGUAGES[code]}, {PARTS[part]}",
              *(f"{results[start, (code, part)].mean:.3f}" for start in STARTS)]
             for code in LANGUAGES for part in PARTS]
    print(table(rows))


one_seed = compare("topic", small_bert, topic_train, topic_tests, seeds=(0,), num_steps=steps,
                   lr=lr)
print_comparison(one_seed)

# %% [markdown] lang="en"
# A seed fixes the new layer's initial weights, the random start's weights and the order of the
# batches. Another seed gives other numbers, so `scripts/what_pretraining_buys.py` runs the same
# comparison with five seeds (0 to 4) and records the results in
# `bertlib/assets/small_bert/experiment.json`. That takes minutes; the notebook reads the record.
# Its first seed is the run above. Each cell gives the mean over the five seeds and a 95%
# t-interval for that mean:

# %%
recorded = load_experiment()
print(tr("seeds {seeds}; {minutes:.0f} minutes on {cores} cores", seeds=recorded["seeds"],
         minutes=recorded["wall_seconds"] / 60, cores=recorded["cores"]))


def print_recorded(results: dict) -> None:
    """The recorded means over seeds with their 95% t-intervals."""
    rows = [[tr("test sentences"), *START_NAMES.values()]]
    rows += [[f"{LANGUAGES[code]}, {PARTS[part]}",
              *(format(results[start, code, part]) for start in STARTS)]
             for code in LANGUAGES for part in PARTS]
    print(table(rows))


print_recorded(recorded["tasks"]["topic"])

# %% [markdown] lang="en"
# Read the table by its rows.
#
# * **Held-out words** (the claim). The pretrained small BERT names the class of a word it never
#   saw with a label far more often than chance (1/6 = 0.167). The random start and the bag of
#   words stay near chance: for them a held-out word is a token like any other unseen one. The
#   intervals do not overlap, in either language.
# * **Seen words** (the control). The bag of words is right on nearly every sentence: it has
#   learned one weight per word, and each test word was a training word. The BERTs do well too,
#   but not better. Where labels cover every word, pretraining buys little here.
#
# So what pretraining brought is not skill at the task. It is knowledge about words, taken from
# unlabelled text, that the labels alone cannot give.
#
# ## Where pretraining put the held-out words
#
# Take a held-out word, put it in the neutral test frames, and read the encoder's output vector
# at the word (the mean over its pieces and over the frames), before any fine-tuning. Which seen
# words have the most similar vectors? `neighbours` answers that by cosine similarity, for the
# pretrained small BERT and for the same model with random weights:

# %%
test_sentences = [s for s in split.seen + split.held_out if s.lang == lang]
near = {"pretrained": neighbours(small_bert, tokenizer, test_sentences),
        "random": neighbours(init_model(small_bert.config, seed=100), tokenizer, test_sentences)}
class_of = {s.text[a:b]: cls for s in test_sentences for a, b, cls, _ in s.words}
print(table([[tr("held-out word"), tr("class"), tr("nearest seen words: pretrained"),
              tr("random start")]]
             + [[word, topics[CLASSES.index(class_of[word])], " ".join(near["pretrained"][word]),
                 " ".join(near["random"][word])] for word in list(near["pretrained"])[::2]]))
for start in ("pretrained", "random"):
    same = sum(class_of[word] == class_of[found[0]] for word, found in near[start].items())
    print(tr("{start}: the nearest seen word is of the same class for {n} of {total} held-out "
             "words (chance: 1 in 6)", start=START_NAMES[start], n=same, total=len(near[start])))

# %% [markdown] lang="en"
# (The table shows every other held-out word; the count below it covers all of them.) Before a
# single label, pretraining has placed many held-out words beside seen words of their own class.
# Fine-tuning then only has to learn which region of this space is which class, from the seen
# words, and a held-out word in the right region is classified right. The random model's
# neighbours are those of a random map.
#
# ## How many labels is pretraining worth?
#
# The same comparison, with fewer labels: 1, 4, 16 or 64 training sentences per class and
# language, drawn at random (with the seed), against all 128. The figures are recorded over the
# same five seeds:

# %%
fig = new_figure(7.5, 3.4)
fig.set_layout_engine("constrained")
COLORS = {"pretrained": "#0072B2", "random": "#E69F00", "bag": "#777777"}
for j, code in enumerate(LANGUAGES):
    ax = fig.add_subplot(1, 2, j + 1)
    for start in STARTS:
        means = [recorded["curve"][n][start, code, "held_out"] for n in CURVE]
        ax.plot(CURVE, [m.mean for m in means], "o-", color=COLORS[start],
                label=START_NAMES[start])
        ax.fill_between(CURVE, [m.interval[0] for m in means], [m.interval[1] for m in means],
                        color=COLORS[start], alpha=0.15, linewidth=0)
    ax.axhline(1 / NUM_TOPICS, color="#444444", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xticks(CURVE, [str(n) for n in CURVE])
    ax.set(ylim=(0, 1), title=LANGUAGES[code], xlabel=tr("labelled sentences per class"))
    if j == 0:
        ax.set_ylabel(tr("accuracy on held-out words"))
        ax.legend(fontsize=8, loc="upper left")
display(fig)
print(table([[tr("per class"), *(f"{n:>5}" for n in CURVE)]]
            + [[f"{LANGUAGES[code]}, {START_NAMES[start]}",
                *(f"{recorded['curve'][n][start, code, 'held_out'].mean:.3f}" for n in CURVE)]
               for code in LANGUAGES for start in ("pretrained", "random")]))

# %% [markdown] lang="en"
# The dashed line is chance. CURVE_PROSE
#
# ## Token level: tagging names, places and times
#
# The tagger is fine-tuned the same way, on the training sentences of one and two words. Its
# accuracy is measured on the tokens of the test words only: the frame around them is *other*
# throughout, and would let a tagger that always answers *other* look good.

# %%
tag_train = data_for("tags", split.train, tokenizer, max_len)
tag_tests = {(code, part): data_for("tags", getattr(split, part), tokenizer, max_len,
                                    words_only=True).select(code)
             for code in LANGUAGES for part in PARTS}
steps, lr = RECIPE["tags"]
tagger.encoder.token_embedding.weight.requires_grad_(False)
fine_tune(tagger, tag_train, num_steps=steps, lr=lr, seed=0, progress=False)
scores = {key: evaluate_task(tagger, data, len(TAGS)) for key, data in tag_tests.items()}
print(table([[tr("tag"), *(f"{LANGUAGES[code]}, {PARTS['held_out']}" for code in LANGUAGES)]]
            + [[name, *(scores[code, "held_out"].per_class[t] for code in LANGUAGES)]
               for t, name in enumerate(tag_names)]))
print(tr("five seeds, accuracy on the tokens of the test words:"))
print_recorded(recorded["tasks"]["tags"])

# %% [markdown] lang="en"
# TAGS_PROSE
#
# ## Question answering: a span of the text
#
# The chapter's fourth group of downstream tasks is question answering, as in SQuAD: the input
# is a question and a passage, `<cls>` question `<sep>` passage `<sep>`, and the answer is a
# span of the passage's tokens. The BERT paper adds only two vectors of size H, a start vector
# S and an end vector E. Token i's score for starting the answer is S·h_i, for ending it E·h_i,
# where h_i is the token's encoding; a softmax over the positions turns each row of scores into
# probabilities. The loss is the mean of the cross-entropies of the right start and the right
# end. To answer, the model takes the span from i to j, i ≤ j, with the highest S·h_i + E·h_j.
#
# Our questions come from the sentences of two words: *who* for a name, *where* for a place,
# *when* for a time (哪个人, 哪儿, 哪天 for a Chinese sentence). In the test sentences with
# held-out words, every answer is a name, place or time the training questions never asked
# about.

# %%
qa_train = data_for("spans", split.train, tokenizer, max_len)
i = qa_train.langs.index(lang)  # the first question in this edition's language
tokens = tokenizer.vocab.to_tokens(qa_train.tokens[i, :qa_train.valid_lens[i]].tolist())
first, last = qa_train.labels[i].tolist()
print(" ".join(tokens))
print(tr("  answer: positions {first} to {last}, {answer}", first=first, last=last,
         answer=" ".join(tokens[first:last + 1])))
show_source(BERTQuestionAnswerer)

# %% [markdown] lang="en"
# `BERTQuestionAnswerer` puts a new `Linear(H, 2)` on the encoder: its two rows are S and E. It
# returns the scores as a tensor of shape (B, 2, T), with -inf on the padding. Read as logits of
# a T-way classification (which position?) for two rows, start and end, these scores make
# `task_loss` exactly the paper's loss, and `fine_tune` trains the model unchanged. Accuracy is
# the exact match: the first and the last token both right. The bag of words of question
# answering needs no training: for each question, it answers with the span most often the answer
# in training, counted from the sentence's first token.

# %%
qa_tests = {(code, part): data_for("spans", getattr(split, part), tokenizer,
                                   max_len).select(code)
            for code in LANGUAGES for part in PARTS}
steps, lr = RECIPE["spans"]
qa = BERTQuestionAnswerer(small_bert, seed=0)
qa.encoder.token_embedding.weight.requires_grad_(False)
fine_tune(qa, qa_train, num_steps=steps, lr=lr, seed=0, progress=False)
print(table([[tr("questions"), *LANGUAGES.values()]]
            + [[name, *(span_accuracy(qa, qa_tests[code, part]) for code in LANGUAGES)]
               for part, name in PARTS.items()]))
print(tr("five seeds, exact match:"))
print_recorded(recorded["tasks"]["spans"])

# %% [markdown] lang="en"
# QA_PROSE
#
# To answer, the model needs `best_span`: the best pair of a start and an end, not the best start
# and the best end on their own (exercise 4 asks you to write it).
#
# ## The same claim at full scale: the BERT paper
#
# Our experiment is small and built on purpose. The BERT paper (Devlin et al. 2018) makes the
# same claim with real text and real tasks. Its Table 1 gives the average test score on the GLUE
# benchmark's tasks:
#
# | model (2018) | GLUE average |
# | --- | --- |
# | best before OpenAI GPT | 74.0 |
# | BiLSTM + ELMo + attention | 71.0 |
# | OpenAI GPT (pretrained, left to right) | 75.1 |
# | BERT-Base | 79.6 |
# | BERT-Large | 82.1 |
#
# Its ablations (Table 5, development sets, BERT-Base's size) take the pretraining apart:
#
# | pretraining | MNLI | QNLI | MRPC | SST-2 | SQuAD F1 |
# | --- | --- | --- | --- | --- | --- |
# | MLM + NSP (BERT-Base) | 84.4 | 88.4 | 86.7 | 92.7 | 88.5 |
# | MLM, no NSP | 83.9 | 84.9 | 86.5 | 92.6 | 87.9 |
# | left to right, no NSP | 82.1 | 84.3 | 77.5 | 92.1 | 77.8 |
#
# Removing next sentence prediction costs most on the tasks about sentence pairs (QNLI); a
# left-to-right model instead of a masked one costs most on question answering (SQuAD) and on
# MRPC. The paper does not fine-tune a randomly initialised BERT on GLUE; its comparison is
# against models with less or other pretraining.
#
# ## A real BERT: MiniLM
#
# all-MiniLM-L6-v2 (notebook 08) was pretrained on real English, in which mangoes are eaten,
# wolves howl and Lisbon has a harbour. It knows only English, so we fine-tune it on the English
# topic task, with its own tokenizer. To stay within the time budget of this notebook, we train
# only its top two encoder blocks (and the layers above them), with batches of 16 for 20 steps.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # MiniLM ships no MLM or NSP head, as notebook 08 showed
    minilm, minilm_tokenizer = load_hf(minilm_directory())


def english(sentences):
    return [s for s in sentences if s.lang == "en"]


minilm_classifier = BERTClassifier(minilm, NUM_TOPICS, seed=0)
print(tr("trainable parameters: {n:,}", n=freeze_layers(minilm_classifier, trainable_blocks=2)))
fine_tune(minilm_classifier, data_for("topic", english(split.train), minilm_tokenizer, 64),
          num_steps=20, batch_size=16, lr=4e-4, seed=0, progress=False)
minilm_accuracy = {part: evaluate_task(minilm_classifier,
                                       data_for("topic", english(getattr(split, part)),
                                                minilm_tokenizer, 64), NUM_TOPICS).overall
                   for part in PARTS}
print(table([[tr("English test sentences"), tr("MiniLM, pretrained")]]
            + [[name, minilm_accuracy[part]] for part, name in PARTS.items()]))

# %% [markdown] lang="en"
# MINILM_PROSE
#
# ## Try it
#
# Type a sentence in English or Chinese: the widget shows a fine-tuned classifier's probability
# for each of the six classes, and the tagger's tag for every token. Under the classifier's
# buttons it says how often that classifier was right on test sentences with held-out words (the
# tables above) and what guessing gives (1/6). The default sentence holds a held-out word in a
# frame no training sentence used. The buttons switch between two classifiers; the tags come
# from the small BERT's tagger either way.
#
# Try a held-out word in a frame of your own, then a seen word, then a word that is in no class
# and in no corpus sentence, each with both classifiers. MiniLM was fine-tuned and measured on
# English only, and many Chinese characters are not in its vocabulary (the widget says how many
# pieces of a sentence it cannot read), so its answers to Chinese sentences mean little.

# %%
# Each classifier with the tokenizer it reads and its accuracy on held-out words (tables above).
classifiers = {
    tr("small BERT, pretrained"): ScoredClassifier(
        classifier, tokenizer, {code: accuracy[code, "held_out"] for code in LANGUAGES}),
    tr("MiniLM, pretrained"): ScoredClassifier(minilm_classifier, minilm_tokenizer,
                                               {"en": minilm_accuracy["held_out"]}),
}
FineTuneWidget(classifiers, tagger, tokenizer, topics)

# %% [markdown] lang="en"
# ## Summary
#
# * Fine-tuning = the pretrained encoder + a new output layer, trained on the task's labels: on
#   `<cls>` for a text or a text pair (`BERTClassifier`), on every token for tagging
#   (`BERTTagger`), two scores per token for a question's answer span
#   (`BERTQuestionAnswerer`). The loss averages the cross-entropy over the labelled positions.
# * To see what pretraining buys, hold out what only pretraining can know: here, words that no
#   labelled sentence holds and the unlabelled corpus does. Compare with the same model from
#   random weights and with a bag of words, over several seeds, with intervals, and keep a
#   control (the seen words) on which the claim is not expected to hold.
# * On held-out words the pretrained small BERT beat both baselines in the three tasks and both
#   languages; on seen words the bag of words was as good or better. The knowledge sat in where
#   pretraining placed the words, which is why fine-tuning here keeps the token embeddings
#   frozen.
# * At full scale the BERT paper shows the same claim on real tasks, and MiniLM, pretrained on
#   real English, classifies the held-out English words almost without error.
#
# ## Exercises
#
# 1. ★ **Count.** How many learnable numbers does the tagger (`BERTTagger(small_bert, 4)`) have
#    fewer than the topic classifier, and why? Check below.
# 2. ★ **Count.** With `trainable_blocks=1`, how many parameters of the topic classifier are
#    still trained? Work it out from `small_bert.config`, then check below.
# 3. ★★ **Implement it: the tagging loss.** Write `tagging_loss(Y_hat, labels)`: `Y_hat` holds
#    logits of shape `(B, T, C)`, `labels` tag ids of shape `(B, T)`, `IGNORE` where there is
#    nothing to predict. Return the mean cross-entropy over the labelled positions of the whole
#    batch. The check compares it with `bertlib`'s on several batches, padding and edge cases
#    included, and tells you which case fails.
# 4. ★★ **Implement it: the best answer span.** Write `best_span(scores, allowed,
#    max_answer_len)`: `scores` of shape `(B, 2, T)` as `BERTQuestionAnswerer` gives them,
#    `allowed` a `(B, T)` bool tensor of the positions an answer may use. Return a `(B, 2)` long
#    tensor: for each example the first token i and the last token j, i ≤ j, both allowed, at
#    most `max_answer_len` tokens long, with the highest `scores[b, 0, i] + scores[b, 1, j]`.
# 5. ★★ Fine-tune the topic classifier with the token embeddings *not* frozen (leave out the
#    `requires_grad_(False)` line) and measure it on held-out and seen words. What changes, and
#    why? (Hint: compare the nearest neighbours of a held-out word before and after.)
# 6. ★★ Which held-out words does the pretrained classifier get wrong most often? Compare with
#    the neighbours table: are they the words whose nearest seen words are of another class?
# 7. ★★ Run `compare` for the topic task with three new seeds (5, 6, 7). Do your means fall
#    inside the recorded intervals? How often should they?
# 8. ★★★ Pretrain a small BERT for 900 steps only (the in-class recipe of notebook 06,
#    `scripts/pretrain_small.py --in-class` shows its figures) and repeat the comparison with it.
#    What does that say about where in pretraining the knowledge about words appears?

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("09_tagger_fewer", answer)

# %%
answer = None  # your answer to exercise 2: an integer
check_exercise("09_frozen_trainable", answer)

# %%
def tagging_loss(Y_hat, labels):
    """Exercise 3. Y_hat: (B, T, C) logits; labels: (B, T) tag ids, IGNORE where nothing is
    predicted. Returns the mean cross-entropy over the labelled positions (a 0-dim tensor)."""
    raise NotImplementedError  # replace this line with your code


check_implementation("09_tagging_loss", tagging_loss)

# %%
def best_span(scores, allowed, max_answer_len):
    """Exercise 4. scores: (B, 2, T), row 0 for the start, row 1 for the end; allowed: (B, T)
    bool. Returns (B, 2) long: the first and last token of the best allowed span."""
    raise NotImplementedError  # replace this line with your code


check_implementation("09_best_span", best_span)
