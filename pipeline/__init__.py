"""English->Italian Transformer translation pipeline on Keras 3.

`import pipeline` stays cheap and backend-neutral: it imports neither Keras nor TensorFlow, and heavy
modules load when they are used (`from pipeline import Translator`). It still registers the package's
Keras-serializable classes, as `import keras_hub` does, so that `keras.saving.load_model("run/best.keras")`
works after it: at once if Keras is already imported, otherwise right after Keras is first imported.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import Any

__all__ = ["Translator", "load_config", "load_model", "build_model", "make_dataset", "format_dataset",
           "PositionalEmbedding", "load_vectorizers", "Tokenizer", "WordTokenizer", "SentencePieceTokenizer",
           "RunDir"]
_HOMES = {"Translator": "pipeline.translator", "load_config": "pipeline.config", "load_model": "pipeline.training",
          "build_model": "pipeline.model", "make_dataset": "pipeline.datasets", "format_dataset": "pipeline.datasets",
          "PositionalEmbedding": "pipeline.layers", "load_vectorizers": "pipeline.vectorizers",
          "Tokenizer": "pipeline.tokenizers", "WordTokenizer": "pipeline.tokenizers",
          "SentencePieceTokenizer": "pipeline.tokenizers", "RunDir": "pipeline.rundir"}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")


def _register() -> None:
    importlib.import_module("pipeline.serializable")


class _RegisterAfterKeras(importlib.abc.MetaPathFinder):
    """Finds `keras` like the normal machinery, then registers our classes once Keras has loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "keras":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            load = spec.loader.exec_module

            def exec_module(module):
                load(module)
                try:
                    _register()
                except ImportError:   # Keras was first imported by one of the classes' own modules, which
                    pass              # register themselves as they finish; pipeline.rundir registers all

            spec.loader.exec_module = exec_module
        return spec


if "keras" in sys.modules:
    _register()
elif not any(isinstance(finder, _RegisterAfterKeras) for finder in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterKeras())
