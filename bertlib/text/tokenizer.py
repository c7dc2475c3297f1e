"""WordPiece tokenization through the ``tokenizers`` library, paired with a bertlib ``Vocab``;
BERT's normalizer splits Chinese one character per token, as Chinese BERT does."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import (
    Encoding,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    trainers,
)

from bertlib.support.checks import (
    InputError,
    check_bool,
    check_int_in,
    check_path,
    check_positive_int,
    check_str,
)
from bertlib.support.files import atomic_write, checked_path, read_text
from bertlib.text.vocab import HF_SPECIAL_TOKENS, SpecialTokens, Vocab, check_specials

TOKENIZER_MAX_BYTES = 64 << 20  # BERT's tokenizer.json is under 1 MB, multilingual ones ~10 MB
# tokenizers reserves a hash map of vocab_size entries (~73 bytes each) before it trains:
# vocab_size=10**12 would abort the process asking for 73 TB. XLM-R has 250,002 pieces.
VOCAB_SIZE_MAX = 1_000_000
# What train reads from an iterator of texts, in characters (the corpus limit): an endless
# generator is refused there.
TRAIN_MAX_CHARS = 64 << 20
# What the tokenizers library strips from the end of a vocab.txt line (Rust's trim_end: Unicode
# White_Space, the "\r" of a Windows line end among it; Python's isspace adds U+001C-U+001F).
LINE_END_SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                  "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _bert_backend(model: models.WordPiece, lowercase: bool = True) -> Tokenizer:
    """``model`` behind BERT's normalizer, pre-tokenizer and decoder."""
    backend = Tokenizer(model)
    backend.normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase,
                                                    handle_chinese_chars=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    return backend


def _spelling(tokens) -> SpecialTokens:
    """The reserved tokens' spelling ``tokens`` use most: ``[CLS]`` (checkpoints') or ``<cls>``."""
    chapter = SpecialTokens()
    count = {s: sum(t in tokens for t in s.as_list()) for s in (HF_SPECIAL_TOKENS, chapter)}
    return chapter if count[chapter] > count[HF_SPECIAL_TOKENS] else HF_SPECIAL_TOKENS


def check_text(name: str, value: str) -> None:
    """A ``str`` that UTF-8 can encode: tokenizers refuses a lone surrogate (``"\\ud800"``, left
    by a broken copy and paste) with a TypeError that names nothing."""
    check_str(name, value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError("error_not_utf8", name=name, position=err.start,
                         char=ascii(value[err.start])) from None


def _vocab_lines(text: str) -> list[str]:
    """A ``vocab.txt``'s tokens as tokenizers reads them: lines end at "\\n" only (splitlines
    would end one at U+2028 too, shifting every later id), trailing white space stripped."""
    lines = text.split("\n")
    if lines[-1] == "":  # the last line's "\n" starts no line
        lines.pop()
    return [line.rstrip(LINE_END_SPACE) for line in lines]


def _read_texts(texts: Iterable[str]) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Iterable):
        raise ValueError(f"texts must be a list of texts (str), not one text: a text would "
                         f"be read one character per text; got {texts!r:.80}")
    kept, chars = [], 0
    for i, text in enumerate(texts):
        check_text(f"texts[{i}]", text)
        chars += len(text)
        if chars > TRAIN_MAX_CHARS:  # an endless generator ends here, not in a MemoryError
            raise ValueError(f"texts hold more than {TRAIN_MAX_CHARS:,} characters (the "
                             "corpus limit): learn the vocabulary from a sample of them")
        kept.append(text)
    if not kept:
        raise ValueError("texts must hold at least one text to learn a vocabulary from")
    return kept


class WordPieceTokenizer:
    """Text -> WordPiece tokens -> ids, with the vocabulary as a :class:`Vocab`."""

    def __init__(self, backend: Tokenizer, specials: SpecialTokens | None = None):
        """Wrap a copy of ``backend``: bertlib's settings (no truncation or padding, "[CLS]" in
        a text read as text) leave the caller's alone. Its model must be WordPiece, as BERT's."""
        if not isinstance(backend, Tokenizer):
            raise ValueError(f"backend must be a tokenizers.Tokenizer; got {backend!r:.80} (to "
                             "load a file use WordPieceTokenizer.from_file or from_directory)")
        backend = Tokenizer.from_str(backend.to_str())
        model = type(backend.model).__name__
        if model != "WordPiece":
            raise ValueError(f"the tokenizer's model must be WordPiece (BERT's); got {model}")
        backend.no_truncation()
        backend.no_padding()
        backend.encode_special_tokens = True
        self.backend = backend
        size = backend.get_vocab_size(with_added_tokens=True)
        by_id = sorted(backend.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1])
        if [i for _, i in by_id] != list(range(size)):
            raise ValueError("tokenizer ids must run from 0 without gaps")
        tokens = [tok for tok, _ in by_id]
        specials = _spelling(set(tokens)) if specials is None else specials
        check_specials(specials)
        # The backend's own pieces, by id: Vocab.from_list would refuse white space inside
        # one, which a checkpoint's vocab.txt may hold ("a\u2028b" is one line, one id).
        self.vocab = Vocab.__new__(Vocab)
        self.vocab._init(tokens, specials)

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, *, min_frequency: int = 2,
              specials: SpecialTokens | None = None) -> WordPieceTokenizer:
        """A WordPiece vocabulary of at most ``vocab_size`` tokens learnt from ``texts`` (a
        generator too, read up to ``TRAIN_MAX_CHARS``), the same for the same texts."""
        check_int_in("vocab_size", vocab_size, 1, VOCAB_SIZE_MAX,
                     " (the largest BERT vocabularies hold about 250,000 pieces)")
        check_positive_int("min_frequency", min_frequency)
        specials = SpecialTokens() if specials is None else specials
        check_specials(specials)
        texts = _read_texts(texts)
        backend = _bert_backend(models.WordPiece(unk_token=specials.unk))
        words = {word for t in texts for word, _ in backend.pre_tokenizer.pre_tokenize_str(
            backend.normalizer.normalize_str(t))}
        typed = [s for s in specials.as_list() if backend.normalizer.normalize_str(s) in words]
        if typed:
            raise ValueError(f"specials {typed} are words of the texts; a reserved token must "
                             "be a spelling no text uses (as <pad> or [PAD])")
        # tokenizers numbers the "##x" pieces in hash-map order, and those numbers break ties
        # between equally frequent merges, so the vocabulary changes from run to run
        # (huggingface/tokenizers#1794). Reserving them up front, sorted, fixes their ids.
        continuing = sorted({"##" + ch for word in words for ch in word[1:]})
        # tokenizers keeps every character and its "##" form whatever vocab_size says.
        least = len({*specials.as_list(), *continuing, *(ch for word in words for ch in word)})
        if vocab_size < least:
            raise ValueError(
                f"vocab_size must be at least {least} for these texts; got {vocab_size}: every "
                f"vocabulary holds the 5 special tokens, each character of the texts and the "
                f"'##' form of the {len(continuing)} characters that occur inside a word")
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                            special_tokens=specials.as_list() + continuing,
                                            show_progress=False)
        backend.train_from_iterator(texts, trainer)
        # Rebuilt from the learned vocabulary so that only the real specials stay special.
        trained = _bert_backend(models.WordPiece(backend.get_vocab(), unk_token=specials.unk))
        trained.add_special_tokens(specials.as_list())
        return cls(trained, specials)

    @classmethod
    def from_file(cls, path: str | Path) -> WordPieceTokenizer:
        """Load a ``tokenizer.json`` written by ``save`` or by Hugging Face."""
        path = checked_path("path", path, TOKENIZER_MAX_BYTES)
        try:
            backend = Tokenizer.from_file(str(path))
        except Exception as err:  # tokenizers raises its own Exception for any bad file
            raise ValueError(f"{path} is not a tokenizer.json the tokenizers library can read: "
                             f"{err}") from None
        try:
            return cls(backend)
        except ValueError as err:  # e.g. reserved tokens missing: say which file lacks them
            raise ValueError(f"{path}: {err}") from None

    @classmethod
    def from_tokens(cls, tokens: Sequence[str], lowercase: bool = True) -> WordPieceTokenizer:
        """BERT's tokenizer over ``tokens`` (a token's id is its index), with the reserved ones."""
        if isinstance(tokens, str) or not isinstance(tokens, Sequence):
            raise ValueError(f"tokens must be a list of token strings; got {tokens!r:.80}")
        check_bool("lowercase", lowercase)
        vocab: dict[str, int] = {}
        for i, token in enumerate(tokens):
            check_text(f"tokens[{i}]", token)
            if not token:
                raise ValueError(f"tokens[{i}] must be a non-empty str; got ''")
            if token in vocab:  # a second id would shift every later one
                raise ValueError(f"tokens holds {token!r} twice, at indices {vocab[token]} and "
                                 f"{i} (lines {vocab[token] + 1} and {i + 1} of a vocab.txt); "
                                 "each token must have one id")
            vocab[token] = i
        specials = _spelling(vocab)
        return cls(_bert_backend(models.WordPiece(vocab, unk_token=specials.unk), lowercase),
                   specials)

    @classmethod
    def from_vocab_txt(cls, path: str | Path, lowercase: bool = True) -> WordPieceTokenizer:
        """BERT's tokenizer over a ``vocab.txt`` (a token's id is its line number)."""
        path = checked_path("path", path, TOKENIZER_MAX_BYTES)
        try:
            return cls.from_tokens(_vocab_lines(read_text(path)), lowercase)
        except ValueError as err:  # duplicates, reserved tokens missing: say which file
            raise ValueError(f"{path}: {err}") from None

    @classmethod
    def from_directory(cls, directory: str | Path) -> WordPieceTokenizer:
        """A checkpoint directory's ``tokenizer.json``, else its ``vocab.txt``."""
        check_path("directory", directory)
        directory = Path(directory)
        if not directory.is_dir():
            raise ValueError(f"directory must be an existing folder; got {str(directory)!r}")
        if (directory / "tokenizer.json").exists():
            return cls.from_file(directory / "tokenizer.json")
        if (directory / "vocab.txt").exists():
            return cls.from_vocab_txt(directory / "vocab.txt")
        raise ValueError(f"{directory} holds neither tokenizer.json nor vocab.txt")

    def save(self, path: str | Path) -> None:
        """Write ``tokenizer.json`` to ``path`` (in an existing folder), crash-safe."""
        check_path("path", path)
        try:
            atomic_write(path, lambda tmp: self.backend.save(str(tmp)))
        except Exception as err:  # tokenizers raises a bare Exception for an OS error
            raise ValueError(f"cannot save the tokenizer to {str(path)!r}: {err}") from None

    def tokenize(self, text: str) -> list[str]:
        """WordPiece tokens of ``text``, without ``<cls>``/``<sep>``."""
        return self.encode(text).tokens

    def encode(self, text: str, name: str = "text") -> Encoding:
        """``text``'s tokens, ids, word ids and offsets, without ``<cls>``/``<sep>``."""
        check_text(name, text)
        return self.backend.encode(text, add_special_tokens=False)

    def __len__(self) -> int:
        return len(self.vocab)
