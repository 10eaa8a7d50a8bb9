"""Run by test_jax_only.py where TensorFlow cannot be imported: the Python API on a trained run.

usage: jax_only_worker.py RUN_DIR OUT.json SENTENCE...
Writes the greedy, beam-3 and sampled translations, the backend and whether TensorFlow got imported.
"""
import json
import sys
from pathlib import Path

import keras

import pipeline.serializable  # noqa: F401  (registers the model classes for keras.saving.load_model)
from pipeline.translate.keras_engine import KerasEngine

run_dir, out, sentences = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
model = keras.saving.load_model(run_dir / "best.keras")        # the plain Keras way works too
translator = KerasEngine.from_run(run_dir)
result = {"greedy": translator.translate(sentences, beam=1),
          "beam": translator.translate(sentences, beam=3),
          "sampled": translator.translate(sentences, sample=True, top_p=0.9, seed=1),
          "sampled_again": translator.translate(sentences, sample=True, top_p=0.9, seed=1),
          "loaded_class": type(model).__name__,
          "backend": keras.backend.backend(),
          "tensorflow_imported": sorted({name.split(".")[0] for name in sys.modules} & {"tensorflow", "tensorboard"})}
Path(out).write_text(json.dumps(result), encoding="utf-8")
