"""Export a run as a TensorFlow SavedModel: strings in, Italian strings out, all in the graph.

The `serving_default` signature tokenises (same TF string ops as training), vectorises,
decodes with the cached beam search and detokenises, so serving needs only
`tf.saved_model.load`. Inputs are expected in Unicode NFC (as almost all text is).
"""
from __future__ import annotations

from pathlib import Path

from pipeline.decoding import beam_search
from pipeline.text import JOINER
from pipeline.translator import Translator
from pipeline.vectorizers import pretokenize


def export_saved_model(run_dir: str | Path, out_dir: str | Path, beam: int | None = None,
                       length_penalty: float | None = None) -> Path:
    """Write `out_dir` (atomically) and return it."""
    import keras
    import tensorflow as tf

    from pipeline.io_utils import atomic_directory

    if keras.backend.backend() != "tensorflow":
        raise ValueError(f"SavedModel export needs the TensorFlow backend, got {keras.backend.backend()!r}")
    translator = Translator.from_run(run_dir)
    decode = translator.config.decode
    beams = decode.beam_size if beam is None else int(beam)
    alpha = decode.length_penalty if length_penalty is None else float(length_penalty)
    model, english = translator.model, translator.vectorizers.english
    start_id, end_id, extra = translator.start_id, translator.end_id, decode.max_extra_length
    vocabulary = tf.constant(translator.vocabulary)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="english")])
    def translate(texts):
        ids = tf.cast(english(pretokenize(texts)), tf.int32)                  # (batch, max_length)
        lengths = tf.reduce_sum(tf.cast(ids != 0, tf.int32), axis=1)
        ids = ids[:, :tf.maximum(tf.reduce_max(lengths), 1)]
        out = beam_search(model, ids, start_id, end_id, lengths + extra, beams, alpha,
                          banned_id=translator.banned_id)
        keep = tf.math.cumprod(tf.cast((out != end_id) & (out != 0), tf.int32), axis=1) > 0
        words = tf.where(keep, tf.gather(vocabulary, out), "")
        text = tf.strings.strip(tf.strings.regex_replace(tf.strings.reduce_join(words, axis=1, separator=" "),
                                                         " +", " "))
        text = tf.strings.regex_replace(text, f" ?{JOINER} ?", "")
        return {"italian": tf.where(lengths > 0, text, "")}

    english(tf.constant(["warm up"]))          # builds the layer so that it can be tracked
    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.track(english)
    archive.add_endpoint("serving_default", translate)
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as tmp:
        archive.write_out(str(tmp), verbose=False)
    return out_dir
