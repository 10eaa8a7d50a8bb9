"""English->Italian Transformer translation pipeline on Keras 3.

`import pipeline` stays cheap and backend-neutral: it imports neither Keras nor TensorFlow, and each name
below loads its module when first used (`from pipeline import open_translator`).

Keras reads our `.keras` files once the package's classes are registered: `pipeline.load_model(run)` and the
engines do that; before calling `keras.saving.load_model` yourself, `import pipeline.serializable`.
"""
from __future__ import annotations

import importlib
from typing import Any

_HOMES = {"open_translator": "pipeline.translate", "KerasEngine": "pipeline.translate.keras_engine",
          "CTranslate2Engine": "pipeline.translate.ct2_engine", "export_run": "pipeline.export",
          "load_config": "pipeline.config", "load_run": "pipeline.serializable", "load_model": "pipeline.serializable",
          "RunDir": "pipeline.rundir", "build_model": "pipeline.model", "make_dataset": "pipeline.datasets",
          "format_dataset": "pipeline.datasets", "PositionalEmbedding": "pipeline.layers",
          "load_vectorizers": "pipeline.vectorizers", "Tokenizer": "pipeline.tokenizers",
          "WordTokenizer": "pipeline.tokenizers", "SentencePieceTokenizer": "pipeline.tokenizers"}
__all__ = list(_HOMES)


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
