import json
import subprocess
import sys

import numpy as np
import pytest

from pipeline.config import load_config
from pipeline.prepare import prepare
from pipeline.vectorizers import load_vectorizers

from conftest import ROOT, SHARED_CORPUS


def test_prepare_writes_whole_outputs(prepared_tiny):
    config, report = prepared_tiny
    out = config.prepared_dir
    assert sorted(p.name for p in out.iterdir()) == [
        "report.json", "test.npz", "test.tsv", "train.npz", "valid.npz", "valid.tsv", "vectorizers.pkl"]
    assert json.loads((out / "report.json").read_text())["pairs_kept"] == report["pairs_kept"]
    assert report["pairs_kept"] + report["dropped"]["too_long"] == 50000
    assert report["round_trip_valid"]["exact_match_rate"] == 1.0
    assert report["round_trip_valid"]["sentences"] == report["split_sizes"]["valid"] > 800
    train = np.load(out / "train.npz")
    assert train["english"].shape == (report["split_sizes"]["train"], config.data.max_length)
    assert train["italian"].shape[1] == config.data.max_length + 2
    vectorizers = load_vectorizers(out / "vectorizers.pkl")
    start, end = vectorizers.italian.start_id, vectorizers.italian.end_id
    assert (train["italian"][:, 0] == start).all() and ((train["italian"] == end).sum(1) == 1).all()


def test_valid_round_trip_over_the_whole_split(prepared_tiny):
    config, _ = prepared_tiny
    vectorizers = load_vectorizers(config.prepared_dir / "vectorizers.pkl")
    italian = [line.split("\t")[1] for line in (config.prepared_dir / "valid.tsv").read_text().splitlines()]
    ids = np.load(config.prepared_dir / "valid.npz")["italian"]
    in_vocab = [(row, text) for row, text in zip(ids, italian) if not (row == 1).any()]
    assert len(in_vocab) > 200
    assert all(vectorizers.decode_italian(row) == text for row, text in in_vocab)


def test_prepare_is_byte_identical_across_runs(tmp_path, tiny_config_path):
    outputs = []
    for name in ("a", "b"):
        config = load_config(tiny_config_path, workdir=str(tmp_path / name))
        prepare(config, progress=False)
        outputs.append({p.name: p.read_bytes() for p in config.prepared_dir.iterdir() if p.name != "report.json"})
    assert outputs[0] == outputs[1]


def test_failed_prepare_leaves_previous_output_untouched(prepared_tiny, tmp_path):
    config, _ = prepared_tiny
    before = (config.prepared_dir / "vectorizers.pkl").read_bytes()
    bad = tmp_path / "bad.txt"
    bad.write_text("no tabs\n")
    with pytest.raises(ValueError):
        prepare(config, bad, progress=False)
    assert (config.prepared_dir / "vectorizers.pkl").read_bytes() == before
    assert not [p for p in config.prepared_dir.parent.iterdir() if p.name.endswith(".tmp")]


def test_script_reports_bad_input_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare.py"), "--config",
                             str(ROOT / "configs" / "tiny.yaml"), "--input", str(tmp_path / "missing.txt"),
                             "--workdir", str(tmp_path), "--quiet"], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: corpus file {tmp_path / 'missing.txt'}: not found"


@pytest.mark.skipif(not SHARED_CORPUS.exists(), reason="shared corpus not beside the checkout")
def test_full_corpus_split_keeps_english_sentences_apart(tmp_path, tiny_config_path):
    """The real corpus: 320k pairs; no normalised English sentence may span two splits."""
    config = load_config(tiny_config_path, ["data.max_length=40", "data.valid_fraction=0.02",
                                            "data.test_fraction=0.02"], str(tmp_path))
    report = prepare(config, SHARED_CORPUS, progress=False)
    assert report["pairs_kept"] + sum(report["dropped"].values()) == 320619
    assert report["round_trip_valid"]["exact_match_rate_in_vocabulary"] == 1.0
    distinct = report["distinct_english"]
    # disjoint groups: the per-split counts add up to the number of distinct sentences overall
    assert distinct["train"] + distinct["valid"] + distinct["test"] == report["distinct_english_total"]
    assert 140_000 < report["distinct_english_total"] <= 142_231
    assert report["split_sizes"]["train"] > 0.9 * report["pairs_kept"]


def test_sentencepiece_prepare_round_trips_every_validation_sentence(tmp_path, tiny_config_path):
    config = load_config(tiny_config_path, ["data.tokenizer=sentencepiece", "data.joint_vocab_size=0",
                                            "model.share_embeddings=false", "data.en_vocab_size=1000",
                                            "data.it_vocab_size=1200"], str(tmp_path))
    report = prepare(config, progress=False)
    assert report["tokenizer"] == "sentencepiece (unigram)"
    assert report["round_trip_valid"]["exact_match_rate"] == 1.0              # 100% of sentences, not only in-vocab
    assert report["round_trip_valid"]["sentences"] == report["split_sizes"]["valid"] > 400
    assert report["valid_coverage"] == {"english": 1.0, "italian": 1.0}       # no <unk>, thanks to byte fallback
    vectorizers = load_vectorizers(config.prepared_dir / "vectorizers.pkl")
    assert vectorizers.english.kind == "sentencepiece" and len(vectorizers.english) <= 1000
    italian = [line.split("\t")[1] for line in (config.prepared_dir / "valid.tsv").read_text().splitlines()]
    ids = np.load(config.prepared_dir / "valid.npz")["italian"]
    assert [vectorizers.decode_italian(row) for row in ids] == italian


def test_joint_sentencepiece_vocabulary_is_one_tokenizer(tmp_path, tiny_config_path):
    config = load_config(tiny_config_path, ["data.tokenizer=sentencepiece", "data.joint_vocab_size=1500",
                                            "model.share_embeddings=true"], str(tmp_path))
    report = prepare(config, progress=False)
    assert report["vocabulary_sizes"]["joint"] is True
    vectorizers = load_vectorizers(config.prepared_dir / "vectorizers.pkl")
    assert vectorizers.joint and vectorizers.english is vectorizers.italian
    from pipeline.model import build_model
    model = build_model(config, len(vectorizers.english), len(vectorizers.italian))
    assert model.source_embedding is model.target_embedding
    model.save(tmp_path / "shared.keras")
    from pipeline.rundir import load_keras_file
    loaded = load_keras_file(tmp_path / "shared.keras")
    assert loaded.source_embedding is loaded.target_embedding
    assert len(loaded.weights) == len(model.weights)
    inputs = {"encoder_inputs": vectorizers.encode_english(["I love you."]),
              "decoder_inputs": vectorizers.encode_italian(["Ti amo."])[:, :-1]}
    assert np.allclose(loaded(inputs), model(inputs), atol=1e-6)


def test_bad_tokenizer_settings_are_one_line_config_errors():
    from pipeline.config import ConfigError
    with pytest.raises(ConfigError, match="config key 'data.tokenizer': must be one of word, sentencepiece"):
        load_config(None, ["data.tokenizer=bytes"])
    with pytest.raises(ConfigError, match="'data.en_vocab_size': must be >= 300 with data.tokenizer=sentencepiece"):
        load_config(None, ["data.tokenizer=sentencepiece", "data.en_vocab_size=100"])
    assert load_config(None, ["data.tokenizer=word", "data.en_vocab_size=100"]).data.en_vocab_size == 100
    with pytest.raises(ConfigError, match="'model.share_embeddings': needs one joint vocabulary"):
        load_config(None, ["model.share_embeddings=true"])
