"""Export a run as a TensorFlow SavedModel: the run's source-language strings in, its target-language strings
out, all in the graph.

The `serving_default` signature names its input and output after the run's languages (`signature_names`):
`english` in and `italian` out for an English -> Italian run, `italian` in and `english` out for Italian ->
English. A bidirectional run's export translates both ways: one signature per direction (`signature_key`:
`translate_en_it`, `translate_it_en`), each adding its target language's tag in the graph as the engines do, and
`serving_default` is its default direction's. It cleans the input as `text.clean_side` does (NFC, whitespace),
tokenises with the run's own tokenizer (the word rules as TF string ops, or the SentencePiece model through
`tensorflow-text`), decodes with the cached beam search and detokenises, so the SavedModel and the Python API's
`translate_sentences` give the same output (one sentence per input: the SavedModel does not split paragraphs or
cut long sentences as an engine's `translate` does). A SentencePiece export needs `import tensorflow_text` before
`tf.saved_model.load`: use `load_saved_model`, which does that and says so when it is missing.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.decoding import decode_loop, decode_options, make_strategy
from pipeline.extras import require
from pipeline.language import Direction, language_name
from pipeline.rundir import check_output_dir
from pipeline.serializable import load_run
from pipeline.text import INVISIBLE, JOINER
from pipeline.vectorizers import pretokenize

# the whitespace that Python's str.split() collapses in text.clean_side, as an RE2 class
_WHITESPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f\x{85}\p{Z}]+"


def _clean(texts, nfc: bool):
    """`text.clean_side` as TF string ops: drop joiners and what takes no room (`INVISIBLE`), NFC (with
    tensorflow-text), collapse whitespace, strip.

    Word-level exports skip NFC so that they need nothing but TensorFlow: inputs are then expected in NFC.
    """
    import tensorflow as tf

    texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="replace")
    texts = tf.strings.regex_replace(texts, JOINER, " ")
    texts = tf.strings.regex_replace(texts, "[" + "".join(map(chr, INVISIBLE)) + "]", "")
    if nfc:
        texts = require("tensorflow_text", "export").normalize_utf8(texts, "NFC")
    texts = tf.strings.regex_replace(texts, _WHITESPACE, " ")
    return tf.strings.regex_replace(texts, r"^ | $", "")


def signature_names(direction: Direction) -> tuple[str, str]:
    """The `serving_default` signature's input and output names: the source and target languages' names in lower
    case, ("english", "italian") for English -> Italian."""
    return language_name(direction.source).lower(), language_name(direction.target).lower()


def signature_key(direction: Direction) -> str:
    """The signature of one direction in a bidirectional run's export: `translate_en_it` for English -> Italian."""
    return f"translate_{direction.source}_{direction.target}"


def serving_hint(out: str | Path, vectorizers: Any) -> str:
    """How to call the export of a run with these `Vectorizers` (one signature per direction for a bidirectional
    run), for the export script; a SentencePiece export is loaded with `load_saved_model`, which registers
    tensorflow-text's ops first."""
    directions = vectorizers.directions
    loader = "pipeline.export.savedmodel.load_saved_model" if vectorizers.source.kind == "sentencepiece" \
        else "tf.saved_model.load"

    def call(signature: str, direction: Direction) -> str:
        source, target = signature_names(direction)
        return f"{loader}('{out}').signatures['{signature}']({source}=...)['{target}']"

    if len(directions) == 1:
        return f"serve with {call('serving_default', directions[0])}"
    return "serve with " + " or ".join(call(signature_key(direction), direction) for direction in directions)


def _word_graph(source, target, max_length: int, source_name: str):
    """(encode: strings -> (batch, max_length) ids, decode: ids -> strings) for a word vocabulary; the source
    vectorizer layer is `<source_name>_vectorizer`."""
    import tensorflow as tf

    from pipeline.vectorizers import make_text_vectorization

    layer = make_text_vectorization(source.vocabulary[2:], max_length, f"{source_name}_vectorizer")
    layer(tf.constant(["warm up"]))           # builds the layer so that it can be tracked
    vocabulary = tf.constant(target.vocabulary)

    def encode(texts):
        return tf.cast(layer(pretokenize(texts)), tf.int32)

    def decode(ids, keep):
        words = tf.where(keep, tf.gather(vocabulary, ids), "")
        text = tf.strings.reduce_join(words, axis=1, separator=" ")
        text = tf.strings.strip(tf.strings.regex_replace(text, " +", " "))
        return tf.strings.regex_replace(text, f" ?{JOINER} ?", "")

    return encode, decode, layer


def _sentencepiece_graph(source, target, max_length: int):
    """The same pair for SentencePiece: tensorflow-text runs the source model; the target ids are turned back
    into text through a table of each piece's bytes, which is what SentencePiece's decoder does for these models
    (identity normaliser, byte fallback). One SentencePiece op per graph: two would share one resource."""
    import tensorflow as tf

    text = require("tensorflow_text", "export")
    source_sp = text.SentencepieceTokenizer(model=source.model_proto, out_type=tf.int32)
    pieces = tf.constant(_piece_bytes(target))

    def encode(texts):
        return source_sp.tokenize(texts)[:, :max_length].to_tensor(default_value=0, shape=[None, max_length])

    def decode(ids, keep):
        joined = tf.strings.reduce_join(tf.where(keep, tf.gather(pieces, ids), b""), axis=1)
        joined = tf.strings.regex_replace(joined, "^ ", "")          # the dummy prefix of the first piece
        return tf.strings.unicode_transcode(joined, "UTF-8", "UTF-8", errors="replace")

    return encode, decode, (source_sp,)


def _piece_bytes(tokenizer) -> list[bytes]:
    """What each SentencePiece id decodes to: a raw byte for <0xNN>, nothing for control pieces."""
    table = []
    for i, piece in enumerate(tokenizer.vocabulary):
        if i in (tokenizer.pad_id, tokenizer.start_id, tokenizer.end_id):
            table.append(b"")
        elif i == tokenizer.unk_id:
            table.append(tokenizer.decode([i]).encode("utf-8"))
        elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            table.append(bytes([int(piece[3:5], 16)]))
        else:
            table.append(piece.replace("\u2581", " ").encode("utf-8"))
    return table


def export_saved_model(run_dir: str | Path, out_dir: str | Path, beam: int | None = None,
                       length_penalty: float | None = None, which: str = "best") -> Path:
    """Write `out_dir` (atomically) from `RUN/<which>.keras` and return it: source-language strings in, the
    target language out, under `signature_names(direction)`; a bidirectional run both ways (`signature_key`).
    `beam` and `length_penalty` are baked into the graph (default: the run's `decode` settings)."""
    import keras

    from pipeline.io_utils import atomic_directory

    if keras.backend.backend() != "tensorflow":
        raise ValueError(f"SavedModel export needs TensorFlow and the TensorFlow backend (KERAS_BACKEND=tensorflow), "
                         f"got {keras.backend.backend()!r}")
    check_output_dir(out_dir, "export directory")
    import tensorflow as tf
    run = load_run(run_dir, which)
    decode_config, model, vectorizers = run.config.decode, run.model, run.vectorizers
    beams, alpha, _ = decode_config.resolve(beam, length_penalty)
    source, target = vectorizers.source, vectorizers.target
    start_id, end_id, extra = target.start_id, target.end_id, decode_config.max_extra_length
    banned_id = target.unk_id if decode_config.ban_unk else None
    subwords = source.kind == "sentencepiece"
    # a bidirectional row is the target's tag, then at most max_length - 1 tokens (`Vectorizers.source_rows`)
    width = vectorizers.max_length - vectorizers.bidirectional
    if subwords:
        encode, decode, tracked = _sentencepiece_graph(source, target, width)
    else:
        encode, decode, layer = _word_graph(source, target, width, signature_names(vectorizers.direction)[0])
        tracked = (layer,)

    def endpoint(direction: Direction):
        """The graph translating `direction`'s source strings (tagged for it in a bidirectional run)."""
        source_name, target_name = signature_names(direction)
        tag = vectorizers.tag_id(direction.target) if vectorizers.bidirectional else None

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=source_name)])
        def translate(texts):
            ids = encode(_clean(texts, nfc=subwords))                                         # (batch, width)
            words = tf.reduce_sum(tf.cast(ids != 0, tf.int32), axis=1)
            if tag is not None:
                ids = tf.concat([tf.fill([tf.shape(ids)[0], 1], tf.constant(tag, tf.int32)), ids], axis=1)
            lengths = tf.reduce_sum(tf.cast(ids != 0, tf.int32), axis=1)                 # the tag counts
            ids = ids[:, :tf.maximum(tf.reduce_max(lengths), 1)]
            out = decode_loop(model, ids, lengths + extra, make_strategy(decode_options(beams, alpha)), start_id,
                              end_id, banned_id=banned_id)                               # (batch, table - 1)
            keep = tf.math.cumprod(tf.cast((out != end_id) & (out != 0), tf.int32), axis=1) > 0
            return {target_name: tf.where(words > 0, decode(out, keep), "")}

        return translate

    archive = keras.export.ExportArchive()
    archive.track(model)
    for item in tracked:
        archive.track(item)
    endpoints = {direction: endpoint(direction) for direction in vectorizers.directions}
    archive.add_endpoint("serving_default", endpoints[vectorizers.direction])
    if vectorizers.bidirectional:
        for direction, function in endpoints.items():
            archive.add_endpoint(signature_key(direction), function)
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as tmp:
        archive.write_out(str(tmp), verbose=False)
    return out_dir


def load_saved_model(path: str | Path) -> Any:
    """`tf.saved_model.load` with tensorflow-text's ops registered (SentencePiece exports need them)."""
    import tensorflow as tf

    try:
        import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)
    except ImportError:
        pass
    try:
        return tf.saved_model.load(str(path))
    except (tf.errors.NotFoundError, ValueError, KeyError, RuntimeError) as exc:
        if "Sentencepiece" in str(exc) or "not registered" in str(exc):   # tensorflow-text's ops
            raise ValueError(f"SavedModel {path}: uses SentencePiece ops; `import tensorflow_text` before loading it "
                             "(pip install -e '.[export]')") from None
        raise
