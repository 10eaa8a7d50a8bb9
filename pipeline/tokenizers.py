"""Tokenisation in both directions, in pure Python and numpy (no TensorFlow): text <-> tokens <-> ids.

Two tokenizers share one interface (`tokenize`, `detokenize`, `encode`, `decode`, `vocabulary` and the
special ids):

* `WordTokenizer`: the tutorials' word level, made reversible. Case, accents and apostrophes are kept;
  each punctuation mark becomes its own token, with a joiner mark (U+FFED) on the side where it touched
  its neighbour, so `detokenize(tokenize(s)) == s` for any whitespace-normalised `s`:

      "L'ho visto a Milano."  ->  ["L", "￭'￭", "ho", "visto", "a", "Milano", "￭."]

* `SentencePieceTokenizer`: an open vocabulary of subwords (unigram or BPE) trained with the
  `sentencepiece` library, with byte fallback, so no input ever becomes `<unk>`, and an identity
  normaliser, so every cleaned sentence comes back exactly.

`WORD_PRETOKENIZE_RULES` are written once, in the regular-expression dialect that Python's `regex` module
and TensorFlow's RE2 read alike, so the exported SavedModel splits words exactly as this module does.
"""
from __future__ import annotations

import io
from collections import Counter
from typing import Iterable, Iterator, Sequence

import numpy as np
import regex

from pipeline.text import JOINER

PAD_ID = 0
WORD_SPECIALS = ("", "[UNK]")                      # ids 0 and 1; [start] and [end] are ordinary tokens
WORD_START, WORD_END, WORD_UNK = "[start]", "[end]", "[UNK]"
SP_PAD, SP_UNK, SP_START, SP_END = "<pad>", "<unk>", "<s>", "</s>"
SPACE = r"\t\n\f\r "                              # RE2's \s, spelled out so that both engines agree
_WORD = r"\p{L}\p{N}\p{M}_"
_PUNCT = rf"[^{_WORD}{SPACE}{JOINER}]"
_NOT_SPACE_OR_JOINER = rf"[^{SPACE}{JOINER}]"

# (pattern, replacement) in order; the two repeated rules need a second pass because a match consumes
# the character after it. The first rules drop stray joiners and normalise spaces.
WORD_PRETOKENIZE_RULES: tuple[tuple[str, str], ...] = (
    (JOINER, " "),
    (rf"[{SPACE}]+", " "),
    (r"^ | $", ""),
    (rf"({_NOT_SPACE_OR_JOINER})({_PUNCT})", rf"\1{JOINER}\2"),
    (rf"({_NOT_SPACE_OR_JOINER})({_PUNCT})", rf"\1{JOINER}\2"),
    (rf"({_PUNCT})({_NOT_SPACE_OR_JOINER})", rf"\1{JOINER}\2"),
    (rf"({_PUNCT})({_NOT_SPACE_OR_JOINER})", rf"\1{JOINER}\2"),
    (rf"{JOINER}({_PUNCT})", rf" {JOINER}\1"),
    (rf"({_PUNCT}){JOINER}", rf"\1{JOINER} "),
)
_COMPILED_RULES = tuple((regex.compile(pattern), replacement) for pattern, replacement in WORD_PRETOKENIZE_RULES)
_DETOKENIZE = regex.compile(rf" ?{JOINER} ?")


class TokenizerError(ValueError):
    """A tokenizer that cannot be trained or loaded; the message says why."""


def word_tokens(text: str) -> list[str]:
    """Split one sentence into word-level tokens (punctuation joiner-marked)."""
    for pattern, replacement in _COMPILED_RULES:
        text = pattern.sub(replacement, text)
    return text.split(" ") if text else []


def join_word_tokens(tokens: Iterable[str]) -> str:
    """Join word-level tokens back into normal text, re-attaching joiner-marked punctuation."""
    return _DETOKENIZE.sub("", " ".join(tokens))


def _pad_rows(rows: Sequence[Sequence[int]], length: int | None) -> np.ndarray:
    """Rows of ids -> (batch, length) int32, truncated or padded with PAD_ID."""
    length = max((len(r) for r in rows), default=0) if length is None else length
    out = np.zeros((len(rows), length), dtype=np.int32)
    for i, row in enumerate(rows):
        row = row[:length]
        out[i, :len(row)] = row
    return out


class _Tokenizer:
    """What both tokenizers share: ids <-> tokens through `vocabulary` and the special ids."""

    kind: str
    vocabulary: list[str]
    unk_id: int
    start_id: int | None
    end_id: int | None
    pad_id = PAD_ID

    def __len__(self) -> int:
        return len(self.vocabulary)

    @property
    def unk_token(self) -> str:
        return self.vocabulary[self.unk_id]

    def tokenize(self, text: str) -> list[str]:
        raise NotImplementedError

    def detokenize(self, tokens: Iterable[str]) -> str:
        raise NotImplementedError

    def token_ids(self, text: str) -> list[int]:
        raise NotImplementedError

    def encode(self, texts: Sequence[str], length: int | None = None, add_start_end: bool = False) -> np.ndarray:
        """Sentences -> (batch, length) int32 ids, truncated to `length` and padded with 0.

        With `add_start_end`, each row is [start] ids [end] (the target side's form).
        """
        rows = [self.token_ids(t) for t in texts]
        if add_start_end:
            if self.start_id is None or self.end_id is None:
                raise TokenizerError(f"this {self.kind} vocabulary has no start/end tokens")
            rows = [[self.start_id, *r, self.end_id] for r in rows]
        return _pad_rows(rows, length)

    def content_ids(self, ids: Iterable[int]) -> list[int]:
        """The ids of a decoder output that carry text: skip [start], stop at [end] or padding."""
        out = []
        for i in ids:
            i = int(i)
            if i == self.start_id:
                continue
            if i == self.end_id or i == PAD_ID:
                break
            out.append(i)
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """Target ids -> text (skips [start], stops at [end] or padding)."""
        return self.detokenize(self.vocabulary[i] for i in self.content_ids(ids))


class WordTokenizer(_Tokenizer):
    """Reversible word-level tokens and a frequency-ranked vocabulary ("" = pad, "[UNK]" = 1)."""

    kind = "word"

    def __init__(self, vocabulary: Sequence[str]):
        vocabulary = [str(t) for t in vocabulary]
        if tuple(vocabulary[:2]) != WORD_SPECIALS:
            raise TokenizerError(f"a word vocabulary starts with padding '' and '[UNK]', got {vocabulary[:2]!r}")
        self.vocabulary = vocabulary
        self.index = {token: i for i, token in enumerate(vocabulary)}
        self.unk_id = 1
        self.start_id = self.index.get(WORD_START)
        self.end_id = self.index.get(WORD_END)

    @classmethod
    def fit(cls, token_lists: Iterable[Sequence[str]], size: int, extra: Sequence[str] = ()) -> "WordTokenizer":
        """The `size - 2 - len(extra)` most frequent tokens (ties broken by the token), after `extra`."""
        counts = Counter(token for tokens in token_lists for token in tokens)
        for token in (*WORD_SPECIALS, *extra):
            counts.pop(token, None)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return cls([*WORD_SPECIALS, *extra, *(t for t, _ in ranked[:max(size - 2 - len(extra), 0)])])

    def tokenize(self, text: str) -> list[str]:
        return word_tokens(text)

    def detokenize(self, tokens: Iterable[str]) -> str:
        return join_word_tokens(tokens)

    def token_ids(self, text: str) -> list[int]:
        index, unk = self.index, self.unk_id
        return [index.get(token, unk) for token in word_tokens(text)]


class SentencePieceTokenizer(_Tokenizer):
    """A SentencePiece model (kept as its serialised proto bytes) behind the tokenizer interface."""

    kind = "sentencepiece"

    def __init__(self, model_proto: bytes):
        import sentencepiece

        self.model_proto = bytes(model_proto)
        self.processor = sentencepiece.SentencePieceProcessor()
        try:
            self.processor.LoadFromSerializedProto(self.model_proto)
        except (RuntimeError, OSError) as exc:
            raise TokenizerError(f"not a SentencePiece model ({exc})") from None
        self.vocabulary = [self.processor.id_to_piece(i) for i in range(self.processor.get_piece_size())]
        specials = (self.processor.pad_id(), self.processor.unk_id(), self.processor.bos_id(),
                    self.processor.eos_id())
        if specials != (0, 1, 2, 3):
            raise TokenizerError(f"a SentencePiece model for this pipeline has pad, unk, bos, eos = 0, 1, 2, 3; "
                                 f"got {specials}")
        self.unk_id, self.start_id, self.end_id = 1, 2, 3

    @classmethod
    def train(cls, sentences: Iterable[str], vocab_size: int, model_type: str = "unigram",
              max_sentences: int = 1_000_000, seed: int = 0, threads: int = 2,
              symbols: Sequence[str] = ()) -> "SentencePieceTokenizer":
        """Train on `sentences` (at most `max_sentences`, sampled with `seed`): same input, same bytes. `symbols`
        become pieces of their own (a bidirectional run's language tags)."""
        import sentencepiece

        model = io.BytesIO()
        sentencepiece.set_random_generator_seed(int(seed) & 0x7FFFFFFF)
        try:
            sentencepiece.SentencePieceTrainer.train(
                sentence_iterator=iter(sentences), model_writer=model, vocab_size=vocab_size,
                model_type=model_type, character_coverage=1.0, byte_fallback=True, split_digits=True,
                normalization_rule_name="identity", remove_extra_whitespaces=True,
                input_sentence_size=max_sentences, shuffle_input_sentence=True, num_threads=threads,
                hard_vocab_limit=False,
                pad_id=0, unk_id=1, bos_id=2, eos_id=3, pad_piece=SP_PAD, unk_piece=SP_UNK,
                bos_piece=SP_START, eos_piece=SP_END, unk_surface=WORD_UNK, minloglevel=2,
                **({"user_defined_symbols": list(symbols)} if symbols else {}))
        except RuntimeError as exc:
            message = str(exc).strip().splitlines()[-1]
            raise TokenizerError(f"SentencePiece training failed ({message})") from None
        return cls(model.getvalue())

    def tokenize(self, text: str) -> list[str]:
        return self.processor.encode(text, out_type=str)

    def detokenize(self, tokens: Iterable[str]) -> str:
        return self.processor.decode_pieces(list(tokens))

    def token_ids(self, text: str) -> list[int]:
        return self.processor.encode(text)

    def piece_id(self, piece: str) -> int | None:
        """The id of one whole piece (e.g. a language tag), None when the vocabulary lacks it."""
        index = self.processor.piece_to_id(piece)
        return index if index != self.unk_id or piece == self.processor.id_to_piece(self.unk_id) else None

    def encode(self, texts: Sequence[str], length: int | None = None, add_start_end: bool = False) -> np.ndarray:
        rows = self.processor.encode(list(texts), add_bos=add_start_end, add_eos=add_start_end)
        return _pad_rows(rows, length)

    def decode(self, ids: Iterable[int]) -> str:
        return self.processor.decode_ids(self.content_ids(ids))


def iter_token_lengths(tokenizer: _Tokenizer, texts: Sequence[str], batch: int = 8192) -> Iterator[int]:
    """Token counts of `texts`, batch by batch."""
    for start in range(0, len(texts), batch):
        ids = tokenizer.encode(texts[start:start + batch])
        yield from (ids != PAD_ID).sum(axis=1).tolist()


def tokenizer_to_state(tokenizer: _Tokenizer) -> dict:
    """Plain data for the vectorizer pickle: a vocabulary list or the SentencePiece proto bytes."""
    if isinstance(tokenizer, SentencePieceTokenizer):
        return {"kind": "sentencepiece", "model_proto": tokenizer.model_proto}
    return {"kind": "word", "vocabulary": list(tokenizer.vocabulary)}


def tokenizer_from_state(state: dict) -> _Tokenizer:
    """Inverse of `tokenizer_to_state`."""
    kind = state.get("kind")
    if kind == "word":
        return WordTokenizer(state["vocabulary"])
    if kind == "sentencepiece":
        if not isinstance(state.get("model_proto"), bytes):
            raise TokenizerError("a SentencePiece entry needs its model as bytes")
        return SentencePieceTokenizer(state["model_proto"])
    raise TokenizerError(f"unknown tokenizer kind {kind!r}; expected 'word' or 'sentencepiece'")


Tokenizer = _Tokenizer
