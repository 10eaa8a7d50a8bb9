"""The source and target vectorizers of a run: two tokenizers (or one joint one) and the run's direction, their
data-only pickle, and the tutorials' `TextVectorization` face.

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

from pipeline.language import LANGUAGE_TAGS, Direction, language_name
from pipeline.tokenizers import (WORD_END, WORD_START, WORD_UNK, SentencePieceTokenizer, Tokenizer, TokenizerError,
                                 WordTokenizer, join_word_tokens, tokenizer_from_state, tokenizer_to_state,
                                 word_tokens)

PAD, UNK, START, END = "", WORD_UNK, WORD_START, WORD_END
PICKLE_FORMAT = 3          # 2: "english"/"italian" tokenizer states, English -> Italian; 1: two TextVectorization
                           # configs + vocabularies (both still read)


class VectorizerFileError(ValueError):
    """A vectorizer pickle that is missing, corrupt or carries more than plain data."""


@dataclass
class Vectorizers:
    """The source and target tokenizers of a run (the same object when the vocabulary is joint) and metadata,
    which records the direction (`source_language`, `target_language`; English -> Italian when absent)."""
    source: Tokenizer
    target: Tokenizer
    metadata: dict[str, Any]

    @classmethod
    def for_direction(cls, english: Tokenizer, italian: Tokenizer, metadata: dict[str, Any]) -> "Vectorizers":
        """The English and Italian tokenizers in the roles `metadata`'s direction gives them."""
        direction = Direction.of(metadata)
        metadata = {**metadata, "source_language": direction.source, "target_language": direction.target}
        return cls(italian, english, metadata) if direction.swapped else cls(english, italian, metadata)

    @property
    def direction(self) -> Direction:
        """The run's direction; a bidirectional run's default one (`directions` lists both)."""
        return Direction.of(self.metadata)

    @property
    def bidirectional(self) -> bool:
        """One model for both ways (`data.bidirectional`): each source row starts with its target language's tag."""
        return bool(self.metadata.get("bidirectional"))

    @property
    def directions(self) -> tuple[Direction, ...]:
        """Every direction the run translates, its default first."""
        return (self.direction, self.direction.reverse) if self.bidirectional else (self.direction,)

    def source_rows(self, texts: Sequence[str], width: int, targets: str | Sequence[str] | None = None) -> np.ndarray:
        """(len(texts), width) int32 source ids, 0-padded and truncated. In a bidirectional run each row starts with
        the tag of its target language (`targets`: one code for every row, or one per row; default the run's
        target), as training saw it."""
        texts = list(texts)
        if not self.bidirectional:
            return self.source.encode(texts, width)
        targets = [targets or self.direction.target] * len(texts) if targets is None or isinstance(targets, str) \
            else list(targets)
        tags = np.array([self.tag_id(target) for target in targets], np.int32).reshape(-1, 1)
        return np.concatenate([tags, self.source.encode(texts, width - 1)], axis=1).astype(np.int32)

    def tag_id(self, target: str) -> int:
        """The source-side id of the tag that asks a bidirectional run for `target`."""
        if target not in {d.target for d in self.directions}:
            raise ValueError(f"this run translates {', '.join(d.label for d in self.directions)}: "
                             f"it has no direction into {language_name(target)}")
        index = self.source.piece_id(LANGUAGE_TAGS[target]) if hasattr(self.source, "piece_id") else None
        if index is None:
            raise ValueError(f"a bidirectional run's vocabulary lacks the tag {LANGUAGE_TAGS[target]}")
        return index

    @property
    def max_length(self) -> int:
        return int(self.metadata["max_length"])

    @property
    def joint(self) -> bool:
        return self.source is self.target

    @property
    def source_vocabulary(self) -> list[str]:
        return self.source.vocabulary

    @property
    def target_vocabulary(self) -> list[str]:
        return self.target.vocabulary

    def encode_source(self, texts: Sequence[str], targets: str | Sequence[str] | None = None) -> np.ndarray:
        """Source sentences -> (batch, max_length) int32 ids (tagged in a bidirectional run: `source_rows`)."""
        return self.source_rows(texts, self.max_length, targets)

    def encode_target(self, texts: Sequence[str]) -> np.ndarray:
        """Target sentences -> (batch, max_length + 2) int32 ids: [start] ... [end]."""
        return self.target.encode(list(texts), self.max_length + 2, add_start_end=True)

    def decode_target(self, ids: Iterable[int]) -> str:
        return self.target.decode(ids)

    # -- the tutorials' names: the tokenizer of a language, in whichever role this run gives it -------------
    @property
    def english(self) -> Tokenizer:
        return self._side("en")

    @property
    def italian(self) -> Tokenizer:
        return self._side("it")

    @property
    def english_vocabulary(self) -> list[str]:
        return self.english.vocabulary

    @property
    def italian_vocabulary(self) -> list[str]:
        return self.italian.vocabulary

    def encode_english(self, texts: Sequence[str]) -> np.ndarray:
        """English sentences -> ids as this run's model reads them (source ids, or target ids with [start]/[end])."""
        return self.encode_source(texts) if self.direction.source == "en" else self.encode_target(texts)

    def encode_italian(self, texts: Sequence[str]) -> np.ndarray:
        """Italian sentences -> ids as this run's model reads them (target ids with [start]/[end], or source ids)."""
        return self.encode_source(texts) if self.direction.source == "it" else self.encode_target(texts)

    def decode_italian(self, ids: Iterable[int]) -> str:
        return self.italian.decode(ids)

    def decode_english(self, ids: Iterable[int]) -> str:
        return self.english.decode(ids)

    def _side(self, language: str) -> Tokenizer:
        direction = self.direction
        if language == direction.source:
            return self.source
        if language == direction.target:
            return self.target
        raise ValueError(f"this run translates {direction.label}: it has no {language_name(language)} tokenizer")

    def text_vectorization(self, side: str):
        """A working `keras.layers.TextVectorization` for a word-level side ("source" or "target"; "english" and
        "italian" name a language's side), for the tutorials' API: it expects text already split by `pretokenize`
        (TensorFlow needed)."""
        role = side
        if side in ("english", "italian"):
            role = "source" if self.direction.source == side[:2] else "target"
        elif side not in ("source", "target"):
            raise ValueError(f"side {side!r}: expected source, target, english or italian")
        tokenizer = getattr(self, role)
        if tokenizer.kind != "word":
            raise ValueError(f"the {side} vectorizer is {tokenizer.kind}: TextVectorization exists only for "
                             "word-level vocabularies; use encode_source/encode_target instead")
        length = self.max_length if role == "source" else self.max_length + 2
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
    payload = {"format": PICKLE_FORMAT, "source": tokenizer_to_state(vectorizers.source),
               "target": "source" if vectorizers.joint else tokenizer_to_state(vectorizers.target),
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
    if not isinstance(payload, dict) or payload.get("format") not in (1, 2, PICKLE_FORMAT):
        raise VectorizerFileError(f"vectorizer file {path}: expected a format {PICKLE_FORMAT} dict, "
                                  f"got {type(payload).__name__}")
    return payload


def _tokenizers_from_payload(payload: dict[str, Any]) -> tuple[Tokenizer, Tokenizer]:
    """(source, target); formats 1 and 2 are English -> Italian, their sides named by language."""
    if payload["format"] == 1:    # TextVectorization vocabularies without pad and [UNK]
        return tuple(WordTokenizer([PAD, UNK, *payload[side]["vocabulary"]]) for side in ("english", "italian"))
    first, second = ("english", "italian") if payload["format"] == 2 else ("source", "target")
    source = tokenizer_from_state(payload[first])
    target = source if payload[second] == first else tokenizer_from_state(payload[second])
    return source, target


def load_vectorizers(path: str | Path) -> Vectorizers:
    """Load a vectorizer pickle with the restricted unpickler and rebuild both tokenizers."""
    path = Path(path)
    payload = _read_payload(path)
    try:
        source, target = _tokenizers_from_payload(payload)
        metadata = dict(payload["metadata"])
        direction = Direction.of(metadata)            # English -> Italian where it is not recorded (older runs)
        language_name(direction.source), language_name(direction.target)
        return Vectorizers(source, target, metadata)
    except (KeyError, TypeError, ValueError, TokenizerError) as exc:
        raise VectorizerFileError(f"vectorizer file {path}: invalid contents ({exc})") from None


def vocabulary_sizes(path: str | Path) -> tuple[int, int]:
    """(source, target) vocabulary sizes from a vectorizer pickle."""
    vectorizers = load_vectorizers(path)
    return len(vectorizers.source), len(vectorizers.target)


__all__ = ["Vectorizers", "VectorizerFileError", "load_vectorizers", "vectorizers_to_bytes", "vocabulary_sizes",
           "make_text_vectorization", "pretokenize", "pretokenize_texts", "detokenize", "safe_loads",
           "SentencePieceTokenizer", "WordTokenizer", "PAD", "UNK", "START", "END"]
