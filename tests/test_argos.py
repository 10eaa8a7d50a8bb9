"""Argos Translate packages: the zip's layout and metadata, translating from its files alone as Argos does,
reproducible atomic writes, one-line refusals."""
import json
import subprocess
import sys
import zipfile

import pytest
import yaml

pytest.importorskip("ctranslate2")

from pipeline.export.argos import ARGOS_POSITIONS, ArgosExportError, check_joint_sentencepiece, export_argos
from pipeline.translate.ct2_engine import CTranslate2Engine
from pipeline.evaluation import load_split_set
from pipeline.translate.keras_engine import KerasEngine
from pipeline.vectorizers import load_vectorizers

from conftest import ROOT
from pipeline.rundir import prepared_path, run_path

STEM = "translate-en_it-ita_nmt-1_0"
SCRIPTS = str(ROOT / "scripts")
EXPORT = str(ROOT / "scripts" / "export.py")
SENTENCES = ["I love you.", "Where is the station?", "Tom is my friend.", "We have to go now."]


@pytest.fixture(scope="module")
def package(trained_tiny, tmp_path_factory):
    return export_argos(run_path(trained_tiny), tmp_path_factory.mktemp("argos"))


@pytest.fixture(scope="module")
def installed(package, tmp_path_factory):
    """The package unzipped, as `argostranslate.package.install_from_path` does: its one folder."""
    packages = tmp_path_factory.mktemp("packages")
    with zipfile.ZipFile(package) as archive:
        archive.extractall(packages)
    return packages / STEM


def test_package_is_one_folder_with_metadata_model_sentencepiece_and_credit(package, trained_tiny):
    assert package.name == f"{STEM}.argosmodel"
    with zipfile.ZipFile(package) as archive:
        assert archive.testzip() is None
        names = sorted(archive.namelist())
        metadata = json.loads(archive.read(f"{STEM}/metadata.json"))
        readme = archive.read(f"{STEM}/README.md").decode("utf-8")
        sentencepiece_model = archive.read(f"{STEM}/sentencepiece.model")
        model_config = json.loads(archive.read(f"{STEM}/model/config.json"))
        vocabulary = json.loads(archive.read(f"{STEM}/model/shared_vocabulary.json"))
        settings = json.loads(archive.read(f"{STEM}/model/pipeline.json"))
    model_files = ["config.json", "config.yaml", "model.bin", "pipeline.json", "sentencepiece.model",
                   "shared_vocabulary.json", "vectorizers.pkl"]
    assert names == sorted([f"{STEM}/{name}" for name in ("README.md", "metadata.json", "sentencepiece.model")]
                           + [f"{STEM}/model/{name}" for name in model_files])
    assert metadata == {"package_version": "1.0", "argos_version": "1.11", "type": "translate", "code": STEM,
                        "name": "English - Italian (ita-nmt-pipeline)", "from_code": "en", "from_name": "English",
                        "to_code": "it", "to_name": "Italian", "links": [], "dependencies": []}
    for credit in ("Tatoeba", "https://tatoeba.org", "CC-BY 2.0 FR", "https://creativecommons.org/licenses/by/2.0/fr/",
                   "ManyThings.org", "install_from_path"):
        assert credit in readme, credit
    vectorizers = load_vectorizers(run_path(trained_tiny) / "vectorizers.pkl")
    assert sentencepiece_model == vectorizers.english.model_proto == vectorizers.italian.model_proto
    assert vocabulary == vectorizers.english.vocabulary          # Argos's pieces are our ids, one for one
    assert (model_config["unk_token"], model_config["bos_token"], model_config["eos_token"],
            model_config["decoder_start_token"]) == ("<unk>", "<s>", "</s>", "<s>")
    assert settings["position_table"] == ARGOS_POSITIONS


def argos_translate(package_dir, sentences):
    """Translate as Argos Translate does, from the package's files alone: SentencePiece pieces -> CTranslate2
    -> the pieces joined, Argos's `_` -> space and leading-space rules included. Greedy, and (Argos sets no
    limit) each sentence's output limit as our engine sets it, from the package's config.yaml."""
    import ctranslate2
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(package_dir / "sentencepiece.model"))
    translator = ctranslate2.Translator(str(package_dir / "model"))
    extra = yaml.safe_load((package_dir / "model" / "config.yaml").read_text())["decode"]["max_extra_length"]
    outputs = []
    for sentence in sentences:
        pieces = processor.encode(sentence, out_type=str)
        result = translator.translate_batch([pieces], beam_size=1, replace_unknowns=True,
                                            max_decoding_length=len(pieces) + extra - 1)[0]
        text = processor.decode_pieces(result.hypotheses[0]).replace("\u2581", " ").replace("_", " ")
        outputs.append(text[1:] if text.startswith(" ") else text)
    return outputs


def test_package_files_alone_translate_200_validation_sentences_as_the_ctranslate2_engine(installed, tiny_ct2_engine,
                                                                                          trained_tiny):
    sources = load_split_set(prepared_path(trained_tiny) / "valid.tsv").sources[:200]
    ours = tiny_ct2_engine.translate(sources, beam=1)
    assert len(sources) == 200 and sum(map(bool, ours)) == 200
    assert argos_translate(installed, sources) == ours
    # the package's model/ is also a CTranslate2 export our own engine loads: its longer tables change nothing
    assert CTranslate2Engine(installed / "model").translate(sources[:50], beam=4) == \
        tiny_ct2_engine.translate(sources[:50], beam=4)


def test_package_model_takes_the_lengths_argos_asks_for_where_the_plain_export_stops(installed, tiny_ct2_engine):
    import ctranslate2
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(installed / "sentencepiece.model"))
    long_input = processor.encode("word " * 300, out_type=str)      # one unsplit 300-word sentence
    argos_defaults = dict(beam_size=1, min_decoding_length=256, max_decoding_length=256)  # 256: Argos's limit
    result = ctranslate2.Translator(str(installed / "model")).translate_batch([long_input], **argos_defaults)
    assert len(result[0].hypotheses[0]) == 256
    plain = ctranslate2.Translator(str(tiny_ct2_engine.model_dir))
    with pytest.raises(Exception, match="No position encodings are defined for positions >= "):
        plain.translate_batch([long_input], **argos_defaults)


def test_export_is_reproducible_and_atomic(package, trained_tiny, monkeypatch):
    before = package.read_bytes()
    assert export_argos(run_path(trained_tiny), package.parent) == package
    assert package.read_bytes() == before                           # same run, same bytes
    import pipeline.export.argos

    def fail(root, zip_path):
        zip_path.write_bytes(b"half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(pipeline.export.argos, "zip_folder", fail)
    with pytest.raises(OSError, match="disk full"):
        export_argos(run_path(trained_tiny), package.parent)
    assert package.read_bytes() == before and [p.name for p in package.parent.iterdir()] == [package.name]


def run_export(*args, prelude=""):
    code = "\n".join(["import runpy, sys", f"sys.path.insert(0, {SCRIPTS!r})", prelude,
                      f"sys.argv = {[EXPORT, '--format', 'argos', *args]!r}",
                      "runpy.run_path(sys.argv[0], run_name='__main__')"])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_a_run_without_one_joint_sentencepiece_vocabulary_is_refused_in_one_line(trained_tiny_sp, prepared_tiny_word,
                                                                                 trained_tiny, tmp_path):
    separate = run_export("--run", str(run_path(trained_tiny_sp)), "--out", str(tmp_path))
    assert separate.returncode == 2
    assert separate.stderr == (f"error: run {run_path(trained_tiny_sp)}: an Argos package needs one joint SentencePiece "
                               "vocabulary for both sides (data.tokenizer: sentencepiece, data.joint_vocab_size > 0); "
                               "this run has separate SentencePiece vocabularies\n")
    word_config, _ = prepared_tiny_word
    with pytest.raises(ArgosExportError, match="this run has word-level vocabularies$"):
        check_joint_sentencepiece(load_vectorizers(prepared_path(word_config) / "vectorizers.pkl"), run_path(word_config))
    missing = run_export("--run", str(run_path(trained_tiny)), "--out", str(tmp_path),
                         prelude="sys.modules['ctranslate2'] = None")
    assert missing.returncode == 2
    assert missing.stderr == ("error: ctranslate2 is not installed; it comes with the 'ctranslate2' extra: "
                              "pip install -e '.[ctranslate2]'\n")
    bad_version = run_export("--run", str(run_path(trained_tiny)), "--out", str(tmp_path), "--package-version", "1.x")
    assert bad_version.returncode == 2
    assert bad_version.stderr == "error: package version '1.x': expected numbers separated by dots, e.g. 1.0\n"
    named_file = tmp_path / "en_it.argosmodel"
    file_name = run_export("--run", str(run_path(trained_tiny)), "--out", str(named_file))
    assert file_name.returncode == 2
    assert file_name.stderr == (f"error: Argos package directory {named_file}: expected a directory, not a .argosmodel "
                                f"file name (the package is written as {STEM}.argosmodel inside it)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_longer_position_tables_keep_the_model_rows_and_continue_them(positional, prepared_tiny, tmp_path):
    import numpy as np

    from conftest import SMALL_MODEL
    from pipeline.config import load_config
    from pipeline.export.ctranslate2 import transformer_spec
    from pipeline.layers import pos_enc_matrix
    from pipeline.model import build_model

    prepared, _ = prepared_tiny
    config = load_config(ROOT / "configs" / "tiny.yaml", [*SMALL_MODEL, f"model.positional={positional}"],
                         str(tmp_path))
    vectorizers = load_vectorizers(prepared_path(prepared) / "vectorizers.pkl")
    model = build_model(config, len(vectorizers.english), len(vectorizers.italian))
    plain, longer = transformer_spec(model, vectorizers), transformer_spec(model, vectorizers, positions=100)
    for side in ("encoder", "decoder"):
        own = getattr(plain, side).position_encodings.encodings
        table = getattr(longer, side).position_encodings.encodings
        assert len(own) < 100 and table.shape == (100, 32)
        np.testing.assert_array_equal(table[:len(own)], own)
        expected = np.repeat(own[-1:], 100 - len(own), axis=0) if positional == "learned" \
            else pos_enc_matrix(100, 32)[len(own):]
        np.testing.assert_array_equal(table[len(own):], expected)


def test_the_package_readme_credits_every_training_corpus():
    from pipeline.config import load_config
    from pipeline.export.argos import training_data_credit

    config = load_config(ROOT / "configs" / "broad60.yaml")
    credit = training_data_credit(config)
    for expected in ("- anki: ", "Tatoeba", "CC-BY 2.0 FR", "- libreoffice: ", "MPL-2.0", "- gimp: ", "GFDL-1.2",
                     "- debian: ", "GPL-2+", "MIT", "CC-BY-SA-3.0"):
        assert expected in credit, expected
    tiny = training_data_credit(load_config(ROOT / "configs" / "tiny.yaml"))
    assert tiny.startswith("Trained on English–Italian sentence pairs from the Tatoeba project")
    mine = load_config(ROOT / "configs" / "tiny.yaml", ["data.corpora=[{path: my/own.tsv, name: mine}]"])
    assert "- mine: my/own.tsv (a corpus of the model's trainer; see its licence)" in training_data_credit(mine)
