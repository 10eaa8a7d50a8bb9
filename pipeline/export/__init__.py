"""Exports of one trained run, each a directory or file that translates without this repository's training code,
in the run's direction (`data.source_language` -> `data.target_language`):

    savedmodel.py   a TensorFlow SavedModel: source-language strings in, target-language strings out, all in the
                    graph (TensorFlow backend)
    ctranslate2.py  a CTranslate2 model directory (the CTranslate2 engine's format; fast CPU inference)
    argos.py        an Argos Translate / LibreTranslate package (`.argosmodel`), built on the CTranslate2 export

`export_run(run, out, format)` is what `scripts/export.py --format` calls; each format's module loads only what it
needs (the SavedModel TensorFlow, the others CTranslate2; all read the run through `pipeline.rundir`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

FORMATS = ("savedmodel", "ctranslate2", "argos")


def export_run(run_dir: str | Path, out: str | Path, format: str = "savedmodel", which: str = "best",
               **options: Any) -> Path:
    """Export `RUN/<which>.keras` as `format`; returns what was written. `options`: savedmodel takes `beam` and
    `length_penalty`; ctranslate2 `quantization`; argos `quantization` and `package_version`."""
    if format == "savedmodel":
        from pipeline.export.savedmodel import export_saved_model as export
    elif format == "ctranslate2":
        from pipeline.export.ctranslate2 import export_ctranslate2 as export
    elif format == "argos":
        from pipeline.export.argos import export_argos as export
    else:
        raise ValueError(f"export format {format!r}: expected one of {', '.join(FORMATS)}")
    return export(run_dir, out, which=which, **options)
