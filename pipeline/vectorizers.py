"""Reversible word-level tokenisation, the two `TextVectorization` layers, ids<->text,
and a data-only pickle of both.

Tokenisation keeps case, accents and apostrophes. Punctuation becomes its own token;
a joiner mark (U+FFED) on the side where it touched its neighbour records the missing
space, so `detokenize(pretokenize(s)) == s` for any whitespace-normalised `s`:

    "L'ho visto a Milano."  ->  "L ￭'￭ ho visto a Milano ￭."

The split runs as TensorFlow string ops so that the same code serves `prepare`, the
translator and the exported SavedModel graph.
"""
from __future__ import annotations

import io
import pickle
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from pipeline.text import JOINER

PAD, UNK, START, END = "", "[UNK]", "[start]", "[end]"
_WORD = r"\p{L}\p{N}\p{M}_"
_PUNCT = rf"[^{_WORD}\s{JOINER}]"
_NOT_SPACE_OR_JOINER = rf"[^\s{JOINER}]"
_DETOKENIZE = re.compile(rf" ?{JOINER} ?")
PICKLE_FORMAT = 1


class VectorizerFileError(ValueError):
    """A vectorizer pickle that is missing, corrupt or carries more than plain data."""


def pretokenize(texts: Any) -> Any:
    """Split punctuation into joiner-marked tokens (TensorFlow string op; any shape)."""
    import tensorflow as tf

    x = tf.strings.regex_replace(texts, JOINER, " ")
    x = tf.strings.strip(tf.strings.regex_replace(x, r"\s+", " "))
    for _ in range(2):  # two passes: a match consumes the next character, so runs need a second
        x = tf.strings.regex_replace(x, rf"({_NOT_SPACE_OR_JOINER})({_PUNCT})", rf"\1{JOINER}\2")
    for _ in range(2):
        x = tf.strings.regex_replace(x, rf"({_PUNCT})({_NOT_SPACE_OR_JOINER})", rf"\1{JOINER}\2")
    x = tf.strings.regex_replace(x, rf"{JOINER}({_PUNCT})", rf" {JOINER}\1")
    return tf.strings.regex_replace(x, rf"({_PUNCT}){JOINER}", rf"\1{JOINER} ")


def pretokenize_texts(texts: Sequence[str], batch_size: int = 65536) -> list[str]:
    """`pretokenize` over a Python list, in batches; returns space-separated token strings."""
    import tensorflow as tf

    out: list[str] = []
    for start in range(0, len(texts), batch_size):
        chunk = tf.constant(list(texts[start:start + batch_size]), dtype=tf.string)
        out.extend(s.decode("utf-8") for s in pretokenize(chunk).numpy())
    return out


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens back into normal text, re-attaching joiner-marked punctuation."""
    return _DETOKENIZE.sub("", " ".join(tokens))


def decorate_target(tokenized: str) -> str:
    return f"{START} {tokenized} {END}"


def ids_to_text(ids: Iterable[int], vocabulary: Sequence[str]) -> str:
    """Turn target ids into Italian text: skip [start], stop at [end] or padding."""
    tokens = []
    for i in ids:
        token = vocabulary[int(i)]
        if token == START:
            continue
        if token in (END, PAD):
            break
        tokens.append(token)
    return detokenize(tokens)


def build_vocabulary(tokenized: Iterable[str], size: int) -> list[str]:
    """The `size - 2` most frequent tokens (ties broken by the token), excluding pad and [UNK]."""
    counts = Counter(token for line in tokenized for token in line.split())
    counts.pop(UNK, None)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [token for token, _ in ranked[: size - 2]]


def make_vectorizer(vocabulary: Sequence[str], sequence_length: int, name: str):
    """A `TextVectorization` that splits on whitespace only (standardisation is ours)."""
    import keras

    layer = keras.layers.TextVectorization(
        max_tokens=len(vocabulary) + 2, standardize=None, split="whitespace",
        output_sequence_length=sequence_length, name=name)
    layer.set_vocabulary(list(vocabulary))
    return layer


@dataclass
class Vectorizers:
    """The English and Italian vectorizers plus the plain metadata stored beside them."""
    english: Any
    italian: Any
    metadata: dict[str, Any]

    @cached_property
    def english_vocabulary(self) -> list[str]:
        return [str(t) for t in self.english.get_vocabulary()]

    @cached_property
    def italian_vocabulary(self) -> list[str]:
        return [str(t) for t in self.italian.get_vocabulary()]

    @property
    def max_length(self) -> int:
        return int(self.metadata["max_length"])

    def encode_english(self, texts: Sequence[str]) -> np.ndarray:
        """English sentences -> (batch, max_length) int32 ids."""
        import tensorflow as tf
        return self.english(pretokenize(tf.constant(list(texts), dtype=tf.string))).numpy().astype(np.int32)

    def decode_italian(self, ids: Iterable[int]) -> str:
        return ids_to_text(ids, self.italian_vocabulary)


def _layer_state(layer) -> dict[str, Any]:
    config = {k: v for k, v in layer.get_config().items() if k not in ("vocabulary", "idf_weights")}
    vocabulary = [str(t) for t in layer.get_vocabulary()]
    return {"config": config, "vocabulary": vocabulary[2:]}  # pad and [UNK] are implicit


def vectorizers_to_bytes(vectorizers: Vectorizers) -> bytes:
    """Pickle configs, vocabularies and metadata: plain containers and scalars only."""
    payload = {"format": PICKLE_FORMAT,
               "english": _layer_state(vectorizers.english),
               "italian": _layer_state(vectorizers.italian),
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


def _layer_from_state(state: dict[str, Any]):
    import keras

    layer = keras.layers.TextVectorization.from_config(dict(state["config"]))
    layer.set_vocabulary(list(state["vocabulary"]))
    return layer


def _read_payload(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise VectorizerFileError(f"vectorizer file {path}: not found")
    try:
        payload = safe_loads(path.read_bytes())
    except ForbiddenPickleContent as exc:
        raise VectorizerFileError(f"vectorizer file {path}: {exc}") from None
    except Exception as exc:  # truncated or not a pickle at all
        raise VectorizerFileError(f"vectorizer file {path}: corrupt ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != PICKLE_FORMAT:
        raise VectorizerFileError(f"vectorizer file {path}: expected format {PICKLE_FORMAT} dict, "
                                  f"got {type(payload).__name__}")
    return payload


def vocabulary_sizes(path: str | Path) -> tuple[int, int]:
    """(English, Italian) vocabulary sizes from a vectorizer pickle, without TensorFlow."""
    payload = _read_payload(Path(path))
    return len(payload["english"]["vocabulary"]) + 2, len(payload["italian"]["vocabulary"]) + 2


def load_vectorizers(path: str | Path) -> Vectorizers:
    """Load a vectorizer pickle with the restricted unpickler and rebuild working layers."""
    path = Path(path)
    payload = _read_payload(path)
    try:
        return Vectorizers(_layer_from_state(payload["english"]), _layer_from_state(payload["italian"]),
                           dict(payload["metadata"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise VectorizerFileError(f"vectorizer file {path}: invalid contents ({exc})") from None
