"""Every export follows its run's direction: an Italian -> English run's SavedModel takes `italian` and returns
`english`, its CTranslate2 export records the direction and its Argos package is an it -> en package, each
translating as the run's Keras engine does."""
import json
import shutil
import subprocess
import sys
import zipfile

import pytest

from pipeline.evaluation import load_split_set
from pipeline.export.savedmodel import export_saved_model, signature_names
from pipeline.language import Direction
from pipeline.rundir import prepared_path, run_path

from conftest import ROOT, SMALL_MODEL, prepared_once, random_weights_run, run_once
from test_export import serve_signature

IT_EN = Direction("it", "en")
SENTENCES = ["Ti amo.", "Dov'è la stazione?", "", "Il cane di Tom è qui, non è vero?", "Piove.",
             "Perché   non\u00a0vieni?"]

def validation_sources(config, n):
    return load_split_set(prepared_path(config) / "valid.tsv").sources[:n]


def test_signature_names_are_the_languages():
    assert signature_names(Direction()) == ("english", "italian")
    assert signature_names(IT_EN) == ("italian", "english")


def test_it_en_saved_model_takes_italian_and_returns_the_keras_engines_english(trained_tiny_it_en,
                                                                               tiny_it_en_engine, tmp_path):
    texts = validation_sources(trained_tiny_it_en, 20) + SENTENCES
    for beam in (1, 2):
        out = export_saved_model(run_path(trained_tiny_it_en), tmp_path / f"sm{beam}", beam=beam)
        names, served = serve_signature(out, texts, tmp_path, tf_text=True)
        assert names == ("italian", "english")
        expected = tiny_it_en_engine.translate_sentences(texts, beam=beam)
        assert served == expected
        assert expected[-4] == "" and all(expected[:20])


@pytest.fixture(scope="module")
def untrained_it_en_word(tmp_path_factory):
    """Word-level vocabularies, Italian -> English, the small model with random weights: its Config."""
    word = ["data.tokenizer=word", "data.joint_vocab_size=0", "model.share_embeddings=false",
            "data.source_language=it", "data.target_language=en"]
    prepared, _ = prepared_once(tmp_path_factory, "tiny_word_it_en", word)
    return run_once(tmp_path_factory, "untrained_word_it_en", prepared, word + SMALL_MODEL,
                    lambda config: random_weights_run(config, prepared_path(prepared)))


def test_it_en_word_level_saved_model_reads_italian_words(untrained_it_en_word, tmp_path):
    from pipeline.translate.keras_engine import KerasEngine

    out = export_saved_model(run_path(untrained_it_en_word), tmp_path / "sm", beam=1)
    names, served = serve_signature(out, SENTENCES, tmp_path, tf_text=False)
    assert names == ("italian", "english")
    assert served == KerasEngine.from_run(run_path(untrained_it_en_word)).translate_sentences(SENTENCES, beam=1)


def test_it_en_ctranslate2_export_records_its_direction_and_translates_as_the_keras_engine(
        tiny_it_en_ct2_export, tiny_it_en_engine, trained_tiny_it_en):
    pytest.importorskip("ctranslate2")
    from pipeline.translate.ct2_engine import CTranslate2Engine

    settings = json.loads((tiny_it_en_ct2_export / "pipeline.json").read_text(encoding="utf-8"))
    assert (settings["source_language"], settings["target_language"]) == ("it", "en")
    engine = CTranslate2Engine(tiny_it_en_ct2_export, threads=1)
    assert engine.direction == IT_EN
    texts = validation_sources(trained_tiny_it_en, 50) + SENTENCES
    expected = tiny_it_en_engine.translate(texts, beam=1)
    assert engine.translate(texts, beam=1) == expected
    assert all(expected[:50])


def test_a_ctranslate2_export_whose_settings_and_vectorizers_disagree_is_refused(tiny_it_en_ct2_export, tmp_path):
    pytest.importorskip("ctranslate2")
    from pipeline.export.ctranslate2 import CTranslate2ExportError
    from pipeline.translate.ct2_engine import CTranslate2Engine

    copy = shutil.copytree(tiny_it_en_ct2_export, tmp_path / "export")
    settings = json.loads((copy / "pipeline.json").read_text(encoding="utf-8"))
    (copy / "pipeline.json").write_text(json.dumps({**settings, "source_language": "en", "target_language": "it"}),
                                        encoding="utf-8")
    with pytest.raises(CTranslate2ExportError, match=r"pipeline.json says English -> Italian, its vectorizers.pkl "
                                                     r"Italian -> English$"):
        CTranslate2Engine(copy, threads=1)


def test_it_en_argos_package_is_an_italian_to_english_package(trained_tiny_it_en, tmp_path):
    pytest.importorskip("ctranslate2")
    from pipeline.export.argos import export_argos
    from pipeline.translate.ct2_engine import CTranslate2Engine
    from test_argos import argos_translate      # translates from the package's files, as Argos does

    stem = "translate-it_en-ita_nmt-1_0"
    package = export_argos(run_path(trained_tiny_it_en), tmp_path / "argos")
    assert package.name == f"{stem}.argosmodel"
    with zipfile.ZipFile(package) as archive:
        metadata = json.loads(archive.read(f"{stem}/metadata.json"))
        readme = archive.read(f"{stem}/README.md").decode("utf-8")
        archive.extractall(tmp_path / "packages")
    assert metadata == {"package_version": "1.0", "argos_version": "1.11", "type": "translate", "code": stem,
                        "name": "Italian - English (ita-nmt-pipeline)", "from_code": "it", "from_name": "Italian",
                        "to_code": "en", "to_name": "English", "links": [], "dependencies": []}
    assert readme.startswith("# Italian → English (1.0)\n")
    for expected in (f"install_from_path('{stem}.argosmodel')", "--from-lang it --to-lang en \"Dov'è la stazione?\"",
                     "MiniSBD, whose Italian model\n(`it.onnx`)", 'spacy.blank("it")',
                     "Trained on English–Italian sentence pairs from the Tatoeba project"):
        assert expected in readme, expected
    assert "English model" not in readme and "en.onnx" not in readme

    installed = tmp_path / "packages" / stem
    texts = validation_sources(trained_tiny_it_en, 20)
    ours = CTranslate2Engine(installed / "model", threads=1).translate(texts, beam=1)
    assert all(ours) and argos_translate(installed, texts) == ours


def test_export_script_names_the_direction_and_the_signature(trained_tiny_it_en, tmp_path):
    out, run = tmp_path / "sm", run_path(trained_tiny_it_en)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "export.py"), "--run", str(run), "--out", str(out),
                             "--beam", "1"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == (
        f"exported {run} (Italian -> English) to {out}; serve with "
        f"pipeline.export.savedmodel.load_saved_model('{out}').signatures['serving_default'](italian=...)['english']")
