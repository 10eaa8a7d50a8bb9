"""English->Italian Transformer translation pipeline on Keras 3.

Heavy modules load lazily, so `import pipeline` stays cheap and backend-neutral:
`from pipeline import Translator` pulls in TensorFlow only when it is used.
"""
from __future__ import annotations

from typing import Any

__all__ = ["Translator", "load_config", "load_model", "build_model", "make_dataset", "format_dataset",
           "PositionalEmbedding", "load_vectorizers"]
_HOMES = {"Translator": "pipeline.translator", "load_config": "pipeline.config", "load_model": "pipeline.training",
          "build_model": "pipeline.model", "make_dataset": "pipeline.datasets", "format_dataset": "pipeline.datasets",
          "PositionalEmbedding": "pipeline.layers", "load_vectorizers": "pipeline.vectorizers"}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
