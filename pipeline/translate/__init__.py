"""Translation: texts in, translations out, in one trained run's direction, with the engine chosen here.

    from pipeline.translate import open_translator
    translator = open_translator("runs/cpu60/run")                      # our Keras decoder, any backend
    translator = open_translator("runs/cpu60/run", engine="ctranslate2") # CTranslate2: no Keras, no TensorFlow
    translator.translate(["Where is the station? It is late."])

    splitting.py     pure text: paragraphs and sentences -> pieces -> the same layout again
    engine.py        `Engine`: translate / n_best over texts, sentences and ids; the decoding defaults
    glossing.py      the glossary strategy: which method a piece with a term is translated by, in which order
    keras_engine.py  `KerasEngine`: the cached Keras decoder (greedy, beam, sampling)
    ct2_engine.py    `CTranslate2Engine`: a CTranslate2 export, ranked as ours

`open_translator` is the one place an engine is chosen; only the chosen engine's modules are imported.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.options import ENGINES   # declared with the decoding options each supports

if TYPE_CHECKING:
    from pipeline.translate.engine import Engine

ENGINE_OPTIONS = {"keras": ("jit_compile",), "ctranslate2": ("compute_type", "threads", "device")}


def open_translator(run_dir: str | Path, which: str = "best", engine: str = "keras", target: str | None = None,
                    **options: Any) -> Engine:
    """The engine for a training run's `<which>.keras` (or, for `ctranslate2`, also a CTranslate2 export directory),
    translating into `target` (default: the run's direction; a bidirectional run translates either way).

    `options`: the Keras engine takes `jit_compile` (default: the run's `decode.jit_compile`); CTranslate2 takes
    `compute_type`, `threads` and `device`, and converts a training run once, on first use.
    """
    if engine not in ENGINES or set(options) - set(ENGINE_OPTIONS[engine]):
        raise ValueError(f"engine {engine!r} with options {sorted(options)}: expected "
                         + " or ".join(f"{name!r} (options: {', '.join(ENGINE_OPTIONS[name])})" for name in ENGINES))
    if engine == "ctranslate2":
        from pipeline.translate.ct2_engine import CTranslate2Engine

        opened = CTranslate2Engine.from_run(run_dir, which, **options)
    else:
        from pipeline.translate.keras_engine import KerasEngine

        opened = KerasEngine.from_run(run_dir, which, **options)
    return opened.towards(target) if target else opened
