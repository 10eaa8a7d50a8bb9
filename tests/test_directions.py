"""Both directions (issue 39): a run's direction in its config, prepare turning the same corpora round with splits
grouped by the English sentence, the direction recorded in the vectorizers and followed by the engines and the CLI,
and one bidirectional model whose source rows carry the target language's tag."""
import gzip
import pickle
import subprocess
import sys

import numpy as np
import pytest

from conftest import IT_EN, ROOT, prepared_once, random_weights_run, run_once
from pipeline.config import ConfigError, load_config
from pipeline.evaluation import load_split_set
from pipeline.language import LANGUAGE_TAGS, Direction
from pipeline.rundir import prepared_path, run_path
from pipeline.vectorizers import load_vectorizers

TINY = ROOT / "configs" / "tiny.yaml"
SAMPLE = ROOT / "data" / "ita-eng-sample.txt.gz"
ITALIAN = ["Dov'è la stazione?", "Ti amo.", "Tom è mio amico.", "Non so cosa fare.", "Sta piovendo.",
           "Dobbiamo andare adesso.", "Mi puoi aiutare?", "Ho fame.", "Questo è il mio libro.", "Dove sei?"]
BIDIRECTIONAL = ["data.bidirectional=true"]


@pytest.mark.parametrize("overrides, message", [
    (["data.source_language=it"], "config key 'data.target_language': must differ from data.source_language=it"),
    (["data.source_language=de"], "config key 'data.source_language': must be one of en, it"),
    (IT_EN + ["data.term_annotation=0.1"], "config key 'data.term_annotation': term annotation needs "
                                          "data.source_language=en"),
    (BIDIRECTIONAL + ["data.joint_vocab_size=0", "model.share_embeddings=false"],
     "config key 'data.bidirectional': needs one joint SentencePiece vocabulary"),
])
def test_impossible_directions_are_one_line_config_errors(overrides, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_config(TINY, overrides)


def test_prepare_turns_the_pairs_round_and_holds_out_the_same_english_sentences(prepared_tiny, prepared_tiny_it_en):
    (en_it, _), (it_en, report) = prepared_tiny, prepared_tiny_it_en
    assert report["direction"] == "it-en"
    for split in ("valid", "test"):
        forward = (prepared_path(en_it) / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        backward = (prepared_path(it_en) / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        # the same pairs, each turned round: a pair held out one way is held out the other way too
        assert sorted(forward) == sorted("\t".join(line.split("\t")[::-1]) for line in backward)
    vectorizers = load_vectorizers(prepared_path(it_en) / "vectorizers.pkl")
    assert vectorizers.direction == Direction("it", "en")
    assert vectorizers.source is vectorizers.italian and vectorizers.target is vectorizers.english     # joint: same
    italian = load_split_set(prepared_path(it_en) / "valid.tsv").sources[:5]
    ids = vectorizers.encode_source(italian)
    assert [vectorizers.source.decode(row) for row in ids] == italian


def test_word_vocabularies_give_start_and_end_to_the_target_side(tmp_path):
    config = load_config(TINY, IT_EN + ["data.tokenizer=word", "data.joint_vocab_size=0",
                                        "model.share_embeddings=false", "data.en_vocab_size=500",
                                        "data.it_vocab_size=500"], workdir=str(tmp_path))
    from pipeline.prepare import prepare

    prepare(config, progress=False)
    vectorizers = load_vectorizers(prepared_path(config) / "vectorizers.pkl")
    assert vectorizers.target is vectorizers.english and vectorizers.target.start_id is not None
    row = vectorizers.encode_target(["I love you."])[0]
    assert row[0] == vectorizers.target.start_id and vectorizers.decode_target(row) == "I love you."


def test_a_corpus_with_italian_first_is_read_by_its_columns(tmp_path):
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as handle:
        lines = [line.split("\t") for line in handle.read().splitlines()[:3000]]
    swapped = tmp_path / "it-en.tsv"
    swapped.write_text("".join(f"{it}\t{en}\n" for en, it, *_ in lines), encoding="utf-8")
    straight = tmp_path / "en-it.tsv"
    straight.write_text("".join(f"{en}\t{it}\n" for en, it, *_ in lines), encoding="utf-8")
    from pipeline.prepare import prepare

    reports = []
    for name, corpus in (("a", f"{{path: {straight}, name: c}}"), ("b", f"{{path: {swapped}, name: c, columns: it-en}}")):
        config = load_config(TINY, [f"data.corpora=[{corpus}]", "data.joint_vocab_size=1000"],
                             workdir=str(tmp_path / name))
        reports.append(prepare(config, progress=False))
        reports[-1]["valid"] = (prepared_path(config) / "valid.tsv").read_text(encoding="utf-8")
    assert reports[0]["split_sizes"] == reports[1]["split_sizes"] and reports[0]["valid"] == reports[1]["valid"]
    with pytest.raises(ConfigError, match="columns': must be one of en-it, it-en, got 'fr-en'"):
        load_config(TINY, [f"data.corpora=[{{path: {swapped}, columns: fr-en}}]"])


def test_older_vectorizer_pickles_load_as_english_to_italian(prepared_tiny, tmp_path):
    from pipeline.tokenizers import tokenizer_to_state

    current = load_vectorizers(prepared_path(prepared_tiny[0]) / "vectorizers.pkl")
    older = {"format": 2, "english": tokenizer_to_state(current.source), "italian": "english",
             "metadata": {"max_length": 20}}
    path = tmp_path / "vectorizers.pkl"
    path.write_bytes(pickle.dumps(older, protocol=4))
    loaded = load_vectorizers(path)
    assert loaded.direction == Direction("en", "it") and loaded.joint and not loaded.bidirectional


def test_training_refuses_data_prepared_the_other_way(prepared_tiny, tmp_path):
    import os

    from pipeline.training import train

    config = load_config(TINY, IT_EN, workdir=str(tmp_path))
    os.symlink(prepared_path(prepared_tiny[0]), tmp_path / "prepared")
    with pytest.raises(ValueError, match="translates English -> Italian, but data.source_language/target_language "
                                         "ask for Italian -> English"):
        train(config, verbose=0)


def _english_share(texts: list[str]) -> float:
    from pipeline.language import LanguageDetector

    detector = LanguageDetector(("en", "it"))
    return sum(detector.best(text)[0] == "en" for text in texts) / len(texts)


def test_the_it_en_run_writes_english_and_the_en_it_run_italian(tiny_it_en_engine, tiny_engine):
    pytest.importorskip("lingua")
    assert tiny_it_en_engine.direction == Direction("it", "en")
    english = tiny_it_en_engine.translate(ITALIAN, beam=1)
    assert _english_share(english) >= 0.8, english
    italian = tiny_engine.translate(english, beam=1)
    assert _english_share(italian) <= 0.2, italian


def test_the_cli_translates_italian_to_english_with_an_it_en_run(trained_tiny_it_en, tiny_it_en_engine):
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "translate.py"), "--run",
                             str(run_path(trained_tiny_it_en)), "--beam", "1", *ITALIAN[:3]],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == tiny_it_en_engine.translate(ITALIAN[:3], beam=1)


def test_a_one_way_engine_goes_only_its_own_way(tiny_it_en_engine):
    assert tiny_it_en_engine.towards("en") is tiny_it_en_engine
    with pytest.raises(ValueError, match="this run translates Italian -> English; it has no direction into Italian"):
        tiny_it_en_engine.towards("it")


@pytest.fixture(scope="module")
def bidirectional_run(tmp_path_factory):
    """The sample prepared both ways for one model, and a run of it with random weights: its Config."""
    prepared, _ = prepared_once(tmp_path_factory, "tiny_bidi", BIDIRECTIONAL)
    small = ["model.d_model=32", "model.num_heads=4", "model.ff_dim=64", "model.encoder_layers=1",
             "model.decoder_layers=1"]
    return run_once(tmp_path_factory, "random_bidi", prepared, BIDIRECTIONAL + small,
                    lambda config: random_weights_run(config, prepared_path(prepared)))


def test_bidirectional_prepare_writes_each_pair_both_ways_with_the_target_tag_first(bidirectional_run):
    from pipeline.datasets import load_split

    vectorizers = load_vectorizers(prepared_path(bidirectional_run) / "vectorizers.pkl")
    assert vectorizers.bidirectional and [d.code for d in vectorizers.directions] == ["en-it", "it-en"]
    tags = {vectorizers.tag_id(code): code for code in ("en", "it")}
    assert [vectorizers.source.vocabulary[i] for i in tags] == [LANGUAGE_TAGS[c] for c in tags.values()]
    source, target = (np.asarray(ids) for ids in load_split(prepared_path(bidirectional_run), "valid"))
    first = source[:, 0]
    assert set(first.tolist()) == set(tags) and abs(int((first == vectorizers.tag_id("en")).sum())
                                                     - int((first == vectorizers.tag_id("it")).sum())) < 0.05 * len(first)
    # the split file holds the default direction, English -> Italian, once per pair
    valid = load_split_set(prepared_path(bidirectional_run) / "valid.tsv")
    assert sum(len(r) for r in valid.references) == int((first == vectorizers.tag_id("it")).sum())
    row = vectorizers.encode_source(["I love you."], targets="it")[0]
    assert row[0] == vectorizers.tag_id("it") and vectorizers.source.decode(row[1:]) == "I love you."


def test_a_bidirectional_engine_translates_either_way_with_the_right_tag(bidirectional_run):
    from pipeline.translate import open_translator

    engine = open_translator(run_path(bidirectional_run), target="it")
    backward = engine.towards("en")
    assert engine.direction.code == "en-it" and backward.direction.code == "it-en" and backward.model is engine.model
    assert engine.max_input_length == engine.vectorizers.max_length - 1
    assert engine.source_ids(["Ciao."])[0, 0] == engine.vectorizers.tag_id("it")
    assert backward.source_ids(["Ciao."])[0, 0] == engine.vectorizers.tag_id("en")
    assert len(backward.translate(["Ciao. Come stai?"], beam=1)) == 1          # each piece gets the tag
    with pytest.raises(ValueError, match="language 'de': expected one of en, it"):
        engine.towards("de")


def test_a_bidirectional_saved_model_translates_either_way_as_the_engine(bidirectional_run, tmp_path):
    """One signature per direction, each adding its own tag in the graph: both equal the Keras engine's way."""
    pytest.importorskip("tensorflow_text")
    import tensorflow as tf

    from pipeline.export.savedmodel import export_saved_model, load_saved_model, serving_hint, signature_key
    from pipeline.translate import open_translator

    long = " ".join(["Tom is reading a very long book in the garden"] * 6) + "."          # past max_length - 1
    english = ["I love you.", "Where is the station?", "", "Tom is reading a book in the garden.", long]
    italian = ["Ti amo.", "Dov'è la stazione?", "Tom legge un libro in giardino."]
    engine = open_translator(run_path(bidirectional_run), target="it", jit_compile=False)
    loaded = load_saved_model(export_saved_model(run_path(bidirectional_run), tmp_path / "bidi", beam=2))
    assert set(loaded.signatures) == {"serving_default", "translate_en_it", "translate_it_en"}
    assert [signature_key(d) for d in engine.directions] == ["translate_en_it", "translate_it_en"]
    assert engine.source_tokens(long) > engine.max_input_length                 # truncated in both, the same way
    assert serving_hint("out", engine.vectorizers) == (
        "serve with pipeline.export.savedmodel.load_saved_model('out').signatures['translate_en_it'](english=...)"
        "['italian'] or pipeline.export.savedmodel.load_saved_model('out').signatures['translate_it_en']"
        "(italian=...)['english']")

    def run(signature: str, name: str, texts: list[str], out: str) -> list[str]:
        return [t.decode() for t in loaded.signatures[signature](**{name: tf.constant(texts)})[out].numpy()]

    to_italian = run("translate_en_it", "english", english, "italian")
    with pytest.warns(UserWarning, match="truncated"):
        expected = engine.translate_sentences(english, beam=2)
    assert to_italian == expected == run("serving_default", "english", english, "italian")
    assert to_italian[2] == ""
    assert run("translate_it_en", "italian", italian, "english") == engine.towards("en").translate_sentences(
        italian, beam=2)
    # the tag decides the way: the same text asked into the other language is decoded differently
    assert run("translate_it_en", "italian", english, "english") != to_italian


def test_a_bidirectional_run_is_served_both_ways(bidirectional_run):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from pipeline.service import ServiceSettings, create_app
    from pipeline.translate import open_translator

    engine = open_translator(run_path(bidirectional_run))
    with TestClient(create_app(engine, ServiceSettings(max_wait_ms=5))) as client:
        languages = {entry["code"]: entry["targets"] for entry in client.get("/languages").json()}
        assert languages == {"en": ["it"], "it": ["en"]}
        for source, target in (("en", "it"), ("it", "en")):
            answer = client.post("/translate", json={"q": "Ciao.", "source": source, "target": target})
            assert answer.status_code == 200 and isinstance(answer.json()["translatedText"], str), answer.text
