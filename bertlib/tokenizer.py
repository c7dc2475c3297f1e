"""WordPiece tokenization through the ``tokenizers`` library, paired with a bertlib ``Vocab``.

BERT's normalizer lower-cases, strips accents and puts spaces around every CJK character, so
Chinese text is split one character per token, as Chinese BERT does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from bertlib.checks import checked_file
from bertlib.vocab import HF_SPECIAL_TOKENS, SpecialTokens, Vocab

TOKENIZER_MAX_BYTES = 64 << 20  # BERT's tokenizer.json is under 1 MB, multilingual ones ~10 MB


def _bert_backend(model: models.WordPiece, lowercase: bool = True) -> Tokenizer:
    """``model`` behind BERT's normalizer (lower-casing and accent stripping when
    ``lowercase``, spaces around CJK characters), pre-tokenizer and decoder."""
    backend = Tokenizer(model)
    backend.normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase,
                                                    handle_chinese_chars=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    return backend


class WordPieceTokenizer:
    """Text -> WordPiece tokens -> ids, with the vocabulary as a :class:`Vocab`."""

    def __init__(self, backend: Tokenizer, specials: SpecialTokens | None = None):
        # Checkpoints may switch on truncation/padding; bertlib handles both itself.
        backend.no_truncation()
        backend.no_padding()
        # A "<mask>" or "[CLS]" typed into a text is text, not the special token.
        backend.encode_special_tokens = True
        self.backend = backend
        size = backend.get_vocab_size(with_added_tokens=True)
        by_id = sorted(backend.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1])
        if [i for _, i in by_id] != list(range(size)):
            raise ValueError("tokenizer ids must run from 0 without gaps")
        tokens = [tok for tok, _ in by_id]
        if specials is None:
            specials = HF_SPECIAL_TOKENS if HF_SPECIAL_TOKENS.cls in tokens else SpecialTokens()
        self.vocab = Vocab.from_list(tokens, specials)

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, *, min_frequency: int = 2,
              specials: SpecialTokens | None = None) -> WordPieceTokenizer:
        """Learn a WordPiece vocabulary of at most ``vocab_size`` tokens from ``texts``.

        The same texts always give the same vocabulary, in the same order.
        """
        specials = specials or SpecialTokens()
        texts = list(texts)
        backend = _bert_backend(models.WordPiece(unk_token=specials.unk))
        # tokenizers numbers the "##x" pieces in hash-map order, and those numbers break ties
        # between equally frequent merges, so the vocabulary changes from run to run
        # (huggingface/tokenizers#1794). Reserving them up front, sorted, fixes their ids.
        continuing = sorted({"##" + ch for t in texts
                             for word, _ in backend.pre_tokenizer.pre_tokenize_str(
                                 backend.normalizer.normalize_str(t))
                             for ch in word[1:]})
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
        path = Path(path)
        checked_file(path.parent, path.name, TOKENIZER_MAX_BYTES)
        try:
            backend = Tokenizer.from_file(str(path))
        except Exception as err:  # tokenizers raises its own Exception for any bad file
            raise ValueError(f"{path} is not a tokenizer.json the tokenizers library can read: "
                             f"{err}") from None
        return cls(backend)

    @classmethod
    def from_vocab_txt(cls, path: str | Path, lowercase: bool = True) -> WordPieceTokenizer:
        """Build BERT's tokenizer from a checkpoint's ``vocab.txt`` (one token per line).

        The id of a token is its line number, as in Hugging Face; a token on two lines would
        shift every later id, so it is refused.
        """
        path = Path(path)
        checked_file(path.parent, path.name, TOKENIZER_MAX_BYTES)
        vocab: dict[str, int] = {}
        for number, token in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if token in vocab:
                raise ValueError(f"{path} lists {token!r} twice, on lines {vocab[token] + 1} and "
                                 f"{number + 1}; each token must have one line (its id)")
            vocab[token] = number
        specials = HF_SPECIAL_TOKENS if HF_SPECIAL_TOKENS.cls in vocab else SpecialTokens()
        return cls(_bert_backend(models.WordPiece(vocab, unk_token=specials.unk), lowercase),
                   specials)

    @classmethod
    def from_directory(cls, directory: str | Path) -> WordPieceTokenizer:
        """A checkpoint directory's ``tokenizer.json``, else its ``vocab.txt``."""
        directory = Path(directory)
        if not directory.is_dir():
            raise ValueError(f"directory must be an existing folder; got {str(directory)!r}")
        if (directory / "tokenizer.json").exists():
            return cls.from_file(directory / "tokenizer.json")
        if (directory / "vocab.txt").exists():
            return cls.from_vocab_txt(directory / "vocab.txt")
        raise ValueError(f"{directory} holds neither tokenizer.json nor vocab.txt")

    def save(self, path: str | Path) -> None:
        self.backend.save(str(path))

    def tokenize(self, text: str) -> list[str]:
        """WordPiece tokens of ``text``, without ``<cls>``/``<sep>``."""
        return self.backend.encode(text, add_special_tokens=False).tokens

    def __len__(self) -> int:
        return len(self.vocab)
