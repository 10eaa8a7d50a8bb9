"""Argos Translate packages: `export_argos(run, out)` writes an `.argosmodel` file for Argos Translate and
LibreTranslate, on top of the CTranslate2 export (`pipeline.export.ctranslate2`), in the run's direction: its
codes, names and file name are the run's source and target languages (`translate-it_en-...` for Italian ->
English).

A package is a zip holding one folder (Argos extracts it into its package directory as is):

    <stem>/metadata.json        from_code, to_code, their names, package_version, argos_version, type ...
    <stem>/model/               the CTranslate2 export (as `export_ctranslate2` writes it)
    <stem>/sentencepiece.model  the run's joint SentencePiece model, for both sides
    <stem>/README.md            what the model is, how to install it, the training data's credit

Argos encodes the source with `sentencepiece.model` into pieces, decodes them with CTranslate2 (no source
BOS/EOS, no target prefix: CTranslate2 starts from the model's `decoder_start_token`, our `<s>`, and stops
at `</s>`) and joins the output pieces with the same model. Our SentencePiece vocabulary is the model's pieces,
id for id, so nothing needs mapping; but Argos has one `sentencepiece.model` for both sides, so the run needs
one joint vocabulary (`data.tokenizer: sentencepiece`, `data.joint_vocab_size > 0`). Any other run is refused
in one line before anything is converted.

Argos sets no length limit (CTranslate2's default of 256 output tokens, inputs as long as its sentence splitter
leaves them) and CTranslate2 raises on a position past the model's table, so the package's model has position
tables of `ARGOS_POSITIONS` rows (`export_ctranslate2(positions=...)`): the sinusoidal ones continued by their
formula, learned ones repeating their last row. The first rows, all the pipeline itself uses, are unchanged.

The package holds no sentence splitter: Argos 1.11 then splits with MiniSBD, whose model for the source language
it downloads on first use (offline alternatives: the package's README.md).
"""
from __future__ import annotations

import json
import re
import tempfile
import zipfile
from pathlib import Path

from pipeline.export.ctranslate2 import EXTRA, export_ctranslate2
from pipeline.extras import require
from pipeline.io_utils import atomic_file
from pipeline.language import Direction, language_name
from pipeline.rundir import RunDir, check_output_dir
from pipeline.vectorizers import Vectorizers

EXAMPLES = {"en": "Where is the station?", "it": "Dov'è la stazione?"}    # the README's example, by source language
ARGOS_VERSION = "1.11"             # the Argos Translate version the package was checked with
SUFFIX = ".argosmodel"
SENTENCEPIECE_FILE = "sentencepiece.model"
METADATA_FILE = "metadata.json"
README_FILE = "README.md"
MODEL_DIR = "model"
ARGOS_POSITIONS = 1024            # > 256, CTranslate2's default max_decoding_length, which Argos keeps
ZIP_DATE = (1980, 1, 1, 0, 0, 0)   # fixed timestamps: the same run gives the same package bytes
_VERSION = re.compile(r"\d+(\.\d+)*")


class ArgosExportError(ValueError):
    """A run that cannot become an Argos package, or a bad option; the message says which and why."""


def check_package_version(package_version: str) -> None:
    if not _VERSION.fullmatch(package_version):
        raise ArgosExportError(f"package version {package_version!r}: expected numbers separated by dots, e.g. 1.0")


def package_stem(package_version: str, direction: Direction = Direction()) -> str:
    """The package's file and folder name, e.g. `translate-en_it-ita_nmt-1_0` for an English -> Italian run's
    version 1.0, `translate-it_en-...` for Italian -> English (distinct from Argos's own en_it and it_en packages,
    which installing ours must not overwrite)."""
    check_package_version(package_version)
    return f"translate-{direction.source}_{direction.target}-ita_nmt-{package_version.replace('.', '_')}"


def check_joint_sentencepiece(vectorizers: Vectorizers, run_dir: Path) -> None:
    """Refuse, in one line, a run whose two sides do not share one SentencePiece model, or one model for both ways
    (Argos feeds the source text to the model as it is: it cannot put a target-language tag first)."""
    if vectorizers.bidirectional:
        raise ArgosExportError(f"run {run_dir}: a bidirectional run needs its target-language tag in each input, "
                               "which an Argos package cannot add; export a one-way run (data.bidirectional: false)")
    kinds = {vectorizers.source.kind, vectorizers.target.kind}
    if kinds != {"sentencepiece"} or not vectorizers.joint:
        has = ("word-level vocabularies" if kinds == {"word"} else "separate SentencePiece vocabularies"
               if kinds == {"sentencepiece"} else "a word-level and a SentencePiece vocabulary")
        raise ArgosExportError(f"run {run_dir}: an Argos package needs one joint SentencePiece vocabulary for "
                               f"both sides (data.tokenizer: sentencepiece, data.joint_vocab_size > 0); this run "
                               f"has {has}")


def package_metadata(package_version: str, direction: Direction = Direction()) -> dict:
    """Argos's `metadata.json` for a translation package in `direction`."""
    from_name, to_name = language_name(direction.source), language_name(direction.target)
    return {"package_version": package_version, "argos_version": ARGOS_VERSION, "type": "translate",
            "code": package_stem(package_version, direction),
            "name": f"{from_name} - {to_name} (ita-nmt-pipeline)",
            "from_code": direction.source, "from_name": from_name, "to_code": direction.target, "to_name": to_name,
            "links": [], "dependencies": []}


def export_argos(run_dir: str | Path, out_dir: str | Path, package_version: str = "1.0",
                 quantization: str = "float32", which: str = "best") -> Path:
    """Write `out_dir/<stem>.argosmodel` from `RUN/<which>.keras` (atomically), in the run's direction, and
    return its path."""
    check_package_version(package_version)
    run = RunDir(run_dir).require()
    vectorizers = run.load_vectorizers()
    check_joint_sentencepiece(vectorizers, run.path)
    direction = vectorizers.direction
    stem = package_stem(package_version, direction)
    require("ctranslate2", EXTRA)
    out_dir = check_output_dir(out_dir, "Argos package directory")
    if out_dir.suffix == SUFFIX:
        raise ArgosExportError(f"Argos package directory {out_dir}: expected a directory, not a {SUFFIX} file name "
                               f"(the package is written as {stem}{SUFFIX} inside it)")
    target = out_dir / f"{stem}{SUFFIX}"
    with tempfile.TemporaryDirectory(prefix="argos-") as staging:
        root = Path(staging) / stem
        export_ctranslate2(run.path, root / MODEL_DIR, quantization=quantization, which=which,
                           positions=ARGOS_POSITIONS)
        (root / SENTENCEPIECE_FILE).write_bytes(vectorizers.source.model_proto)
        (root / METADATA_FILE).write_text(json.dumps(package_metadata(package_version, direction), indent=2) + "\n",
                                          encoding="utf-8")
        (root / README_FILE).write_text(package_readme(run, vectorizers, package_version, quantization, which),
                                        encoding="utf-8")
        with atomic_file(target) as tmp:
            zip_folder(root, tmp)
    return target


def zip_folder(root: Path, zip_path: Path) -> None:
    """Zip `root` as one top-level folder, files in sorted order with fixed timestamps."""
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{root.name}/{path.relative_to(root).as_posix()}", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())


def package_readme(run: RunDir, vectorizers: Vectorizers, package_version: str, quantization: str,
                   which: str) -> str:
    """The package's README.md: the model in its run's direction, how to install it, and the training data's
    credit."""
    model = run.load_config().model
    direction = vectorizers.direction
    source, target = direction
    source_name, stem = language_name(source), package_stem(package_version, direction)
    steps = _training_steps(run)
    steps = f", {steps:,} training steps" if steps is not None else ""
    return f"""# {source_name} → {language_name(target)} ({package_version})

A Transformer trained with ita-nmt-pipeline (Keras 3) and converted to CTranslate2 ({quantization} weights,
the run's `{which}.keras`{steps}): d_model {model.d_model}, {model.encoder_layers}+{model.decoder_layers} layers,
{model.num_heads} heads, feed-forward {model.ff_dim}, one SentencePiece vocabulary of {len(vectorizers.source):,}
pieces for both languages, trained on sentences of at most {vectorizers.max_length} pieces.

Install it with Argos Translate's Python API (`argospm` installs from Argos's own index only):

    python -c "import argostranslate.package as p; p.install_from_path('{stem}{SUFFIX}')"
    argos-translate --from-lang {source} --to-lang {target} "{EXAMPLES[source]}"

This package holds no sentence splitter: Argos Translate 1.11 splits with MiniSBD, whose {source_name} model
(`{source}.onnx`) it downloads on first use. Offline, put that file into this package's `minisbd/` folder, or set
`ARGOS_CHUNK_TYPE=SPACY` and save a spaCy pipeline (e.g. `spacy.blank("{source}")`, rule-based) as its `spacy/`
folder.

## Training data and credit

{training_data_credit(run.load_config())}
"""


# What a model trained on each known corpus must say about it: the corpus files' names, and their credit.
TATOEBA_CREDIT = ("English–Italian sentence pairs from the Tatoeba project (https://tatoeba.org), licensed under "
                  "Creative Commons Attribution 2.0 France (CC-BY 2.0 FR, https://creativecommons.org/licenses/by/2.0/fr/), "
                  "as selected and distributed by ManyThings.org (https://www.manythings.org/anki/). Each sentence is "
                  "the work of its Tatoeba contributor.")
CORPUS_CREDITS = {
    "ita": TATOEBA_CREDIT, "ita-eng": TATOEBA_CREDIT, "ita-eng-sample": TATOEBA_CREDIT,
    "libreoffice-help": "The LibreOffice help in English and Italian (The Document Foundation and the LibreOffice "
                        "translators; MPL-2.0), as Debian ships it (libreoffice-help-en-us, libreoffice-help-it).",
    "gimp-help": "The GIMP manual in English and Italian (the GIMP documentation team and its translators; "
                 "GFDL-1.2 or later, no invariant sections), as Debian ships it (gimp-help-en, gimp-help-it).",
    "debian-docs": "The Debian Reference (GPL-2+), the Debian New Maintainers' Guide (MIT) and the GNOME user "
                   "documentation (CC-BY-SA-3.0), in English and Italian, by their authors and translators.",
}


def training_data_credit(config) -> str:
    """One paragraph per training corpus of the run's config crediting its source (a corpus this package does not
    know is named, with a reminder that its licence's notice belongs here)."""
    corpora = config.data.corpora or [None]          # none listed: prepare's --input or the bundled Tatoeba sample
    paragraphs = []
    for corpus in corpora:
        if corpus is None:
            paragraphs.append(f"Trained on {TATOEBA_CREDIT}")
            continue
        stem = Path(corpus.paths[0]).name.split(".")[0]
        credit = CORPUS_CREDITS.get(stem)
        paragraphs.append(f"- {corpus.name or stem}: " + (credit or f"{', '.join(corpus.paths)} (a corpus of the "
                                                                    "model's trainer; see its licence)"))
    if corpora == [None]:
        return paragraphs[0]
    return "Trained on these corpora:\n\n" + "\n".join(dict.fromkeys(paragraphs))


def _training_steps(run: RunDir) -> int | None:
    """The run's total optimizer steps from its training summary, if it has a readable one."""
    try:
        return int(json.loads(run.summary_file.read_text(encoding="utf-8"))["total_steps"])
    except (OSError, ValueError, TypeError, KeyError, UnicodeDecodeError):
        return None
