"""The English and Italian vectorizers of a run: two tokenizers (or one joint one), their data-only pickle,
and the tutorials' `TextVectorization` face.

Tokenisation itself lives in `pipeline.tokenizers` (pure Python, no TensorFlow). The pickle holds only
plain data: vocabularies as lists of strings, SentencePiece models as their serialised bytes, and
metadata; it is loaded with an unpickler that refuses every class and callable.
"""
from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from pipeline.tokenizers import (WORD_END, WORD_START, WORD_UNK, SentencePieceTokenizer, Tokenizer, TokenizerError,
                                 WordTokenizer, join_word_tokens, tokenizer_from_state, tokenizer_to_state,
                                 word_tokens)

PAD, UNK, START, END = "", WORD_UNK, WORD_START, WORD_END
PICKLE_FORMAT = 2          # 1: two TextVectorization configs + vocabularies (still read)


class VectorizerFileError(ValueError):
    """A vectorizer pickle that is missing, corrupt or carries more than plain data."""


@dataclass
class Vectorizers:
    """The English and Italian tokenizers (the same object when the vocabulary is joint) and metadata."""
    english: Tokenizer
    italian: Tokenizer
    metadata: dict[str, Any]

    @property
    def max_length(self) -> int:
        return int(self.metadata["max_length"])

    @property
    def joint(self) -> bool:
        return self.english is self.italian

    @property
    def english_vocabulary(self) -> list[str]:
        return self.english.vocabulary

    @property
    def italian_vocabulary(self) -> list[str]:
        return self.italian.vocabulary

    def encode_english(self, texts: Sequence[str]) -> np.ndarray:
        """English sentences -> (batch, max_length) int32 ids."""
        return self.english.encode(list(texts), self.max_length)

    def encode_italian(self, texts: Sequence[str]) -> np.ndarray:
        """Italian sentences -> (batch, max_length + 2) int32 ids: [start] ... [end]."""
        return self.italian.encode(list(texts), self.max_length + 2, add_start_end=True)

    def decode_italian(self, ids: Iterable[int]) -> str:
        return self.italian.decode(ids)

    def text_vectorization(self, side: str):
        """A working `keras.layers.TextVectorization` for a word-level side ("english" or "italian"),
        for the tutorials' API: it expects text already split by `pretokenize` (TensorFlow needed)."""
        tokenizer = getattr(self, side)
        if tokenizer.kind != "word":
            raise ValueError(f"the {side} vectorizer is {tokenizer.kind}: TextVectorization exists only for "
                             "word-level vocabularies; use encode_english/encode_italian instead")
        length = self.max_length if side == "english" else self.max_length + 2
        return make_text_vectorization(tokenizer.vocabulary[2:], length, f"{side}_vectorizer")


def make_text_vectorization(vocabulary: Sequence[str], sequence_length: int, name: str):
    """A `TextVectorization` that splits on whitespace only (standardisation is ours)."""
    import keras

    layer = keras.layers.TextVectorization(
        max_tokens=len(vocabulary) + 2, standardize=None, split="whitespace",
        output_sequence_length=sequence_length, name=name)
    layer.set_vocabulary(list(vocabulary))
    return layer


def pretokenize(texts: Any) -> Any:
    """`tokenizers.word_tokens` as TensorFlow string ops (any shape): space-separated tokens, for
    TextVectorization and the exported graph. Same rules, same results."""
    import tensorflow as tf

    from pipeline.tokenizers import WORD_PRETOKENIZE_RULES

    for pattern, replacement in WORD_PRETOKENIZE_RULES:
        texts = tf.strings.regex_replace(texts, pattern, replacement)
    return texts


# -- the tutorials' helpers, now thin wrappers over the pure-Python text path -----------------------------------
def pretokenize_texts(texts: Sequence[str]) -> list[str]:
    """Word-level tokens of each text, space-separated (pure Python)."""
    return [" ".join(word_tokens(t)) for t in texts]


def detokenize(tokens: Iterable[str]) -> str:
    return join_word_tokens(tokens)


# -- the data-only pickle ---------------------------------------------------------------------------------------
def vectorizers_to_bytes(vectorizers: Vectorizers) -> bytes:
    """Pickle tokenizer states and metadata: plain containers, strings, bytes and scalars only."""
    payload = {"format": PICKLE_FORMAT, "english": tokenizer_to_state(vectorizers.english),
               "italian": "english" if vectorizers.joint else tokenizer_to_state(vectorizers.italian),
               "metadata": vectorizers.metadata}
    return pickle.dumps(payload, protocol=4)


class ForbiddenPickleContent(pickle.UnpicklingError):
    """A pickle that asks for a class or callable."""


class _DataOnlyUnpickler(pickle.Unpickler):
    """Refuses every global: plain containers and scalars need none."""

    def find_class(self, module: str, name: str):
        raise ForbiddenPickleContent(f"refusing to load {module}.{name}: only plain data is allowed")


def safe_loads(data: bytes) -> Any:
    return _DataOnlyUnpickler(io.BytesIO(data)).load()


def _read_payload(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise VectorizerFileError(f"vectorizer file {path}: not found" if not path.exists() else
                                  f"vectorizer file {path}: is a directory, expected a file")
    try:
        payload = safe_loads(path.read_bytes())
    except ForbiddenPickleContent as exc:
        raise VectorizerFileError(f"vectorizer file {path}: {exc}") from None
    except Exception as exc:  # truncated or not a pickle at all
        raise VectorizerFileError(f"vectorizer file {path}: corrupt ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(payload, dict) or payload.get("format") not in (1, PICKLE_FORMAT):
        raise VectorizerFileError(f"vectorizer file {path}: expected a format {PICKLE_FORMAT} dict, "
                                  f"got {type(payload).__name__}")
    return payload


def _tokenizers_from_payload(payload: dict[str, Any]) -> tuple[Tokenizer, Tokenizer]:
    if payload["format"] == 1:    # TextVectorization vocabularies without pad and [UNK]
        return tuple(WordTokenizer([PAD, UNK, *payload[side]["vocabulary"]]) for side in ("english", "italian"))
    english = tokenizer_from_state(payload["english"])
    italian = english if payload["italian"] == "english" else tokenizer_from_state(payload["italian"])
    return english, italian


def load_vectorizers(path: str | Path) -> Vectorizers:
    """Load a vectorizer pickle with the restricted unpickler and rebuild both tokenizers."""
    path = Path(path)
    payload = _read_payload(path)
    try:
        english, italian = _tokenizers_from_payload(payload)
        return Vectorizers(english, italian, dict(payload["metadata"]))
    except (KeyError, TypeError, ValueError, TokenizerError) as exc:
        raise VectorizerFileError(f"vectorizer file {path}: invalid contents ({exc})") from None


def vocabulary_sizes(path: str | Path) -> tuple[int, int]:
    """(English, Italian) vocabulary sizes from a vectorizer pickle."""
    vectorizers = load_vectorizers(path)
    return len(vectorizers.english), len(vectorizers.italian)


__all__ = ["Vectorizers", "VectorizerFileError", "load_vectorizers", "vectorizers_to_bytes", "vocabulary_sizes",
           "make_text_vectorization", "pretokenize", "pretokenize_texts", "detokenize", "safe_loads",
           "SentencePieceTokenizer", "WordTokenizer", "PAD", "UNK", "START", "END"]
