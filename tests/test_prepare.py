import gzip
import json
import subprocess
import sys

import numpy as np
import pytest

from pipeline.config import load_config
from pipeline.datasets import load_split
from pipeline.prepare import prepare
from pipeline.vectorizers import load_vectorizers

from conftest import ROOT, SHARED_CORPUS
from pipeline.rundir import prepared_path


def test_prepare_writes_whole_outputs(prepared_tiny):
    config, report = prepared_tiny
    out = prepared_path(config)
    assert sorted(p.name for p in out.iterdir()) == [
        "report.json", "splits.json", "test-00000-source.npy", "test-00000-target.npy", "test.tsv",
        "train-00000-source.npy", "train-00000-target.npy", "valid-00000-source.npy", "valid-00000-target.npy",
        "valid.tsv", "vectorizers.pkl"]
    assert json.loads((out / "report.json").read_text())["pairs_kept"] == report["pairs_kept"]
    assert report["pairs_kept"] + report["dropped"]["too_long"] == 50000
    assert report["round_trip_valid"]["exact_match_rate"] == 1.0
    assert report["round_trip_valid"]["sentences"] == report["split_sizes"]["valid"] > 800
    english, italian = (np.asarray(ids) for ids in load_split(out, "train"))
    assert english.shape == (report["split_sizes"]["train"], config.data.max_length)
    assert italian.shape[1] == config.data.max_length + 2
    vectorizers = load_vectorizers(out / "vectorizers.pkl")
    start, end = vectorizers.italian.start_id, vectorizers.italian.end_id
    assert (italian[:, 0] == start).all() and ((italian == end).sum(1) == 1).all()


def test_valid_round_trip_over_the_whole_split(prepared_tiny):
    config, _ = prepared_tiny
    vectorizers = load_vectorizers(prepared_path(config) / "vectorizers.pkl")
    italian = [line.split("\t")[1] for line in (prepared_path(config) / "valid.tsv").read_text().splitlines()]
    ids = np.asarray(load_split(prepared_path(config), "valid")[1])
    in_vocab = [(row, text) for row, text in zip(ids, italian) if not (row == 1).any()]
    assert len(in_vocab) > 200
    assert all(vectorizers.decode_italian(row) == text for row, text in in_vocab)


def test_prepare_is_byte_identical_across_runs(prepared_tiny, tmp_path, tiny_config_path):
    first, _ = prepared_tiny                          # the same config, prepared by the session's fixture
    config = load_config(tiny_config_path, workdir=str(tmp_path / "again"))
    prepare(config, progress=False)
    outputs = [{p.name: p.read_bytes() for p in prepared_path(c).iterdir() if p.name != "report.json"}
               for c in (first, config)]
    assert outputs[0] == outputs[1]


def test_failed_prepare_leaves_previous_output_untouched(prepared_tiny, tmp_path):
    config, _ = prepared_tiny
    before = (prepared_path(config) / "vectorizers.pkl").read_bytes()
    bad = tmp_path / "bad.txt"
    bad.write_text("no tabs\n")
    with pytest.raises(ValueError):
        prepare(config, bad, progress=False)
    assert (prepared_path(config) / "vectorizers.pkl").read_bytes() == before
    assert not [p for p in prepared_path(config).parent.iterdir() if p.name.endswith(".tmp")]


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
                                            "data.test_fraction=0.02", "data.tokenizer_max_sentences=50000"],
                         str(tmp_path))                          # the splits are the point, not the vocabulary
    report = prepare(config, SHARED_CORPUS, progress=False)
    assert report["pairs_kept"] + sum(report["dropped"].values()) == 320619
    assert report["round_trip_valid"]["exact_match_rate_in_vocabulary"] == 1.0
    distinct = report["distinct_english"]
    # disjoint groups: the per-split counts add up to the number of distinct sentences overall
    assert distinct["train"] + distinct["valid"] + distinct["test"] == report["distinct_english_total"]
    assert 140_000 < report["distinct_english_total"] <= 142_231
    assert report["split_sizes"]["train"] > 0.9 * report["pairs_kept"]


def test_sentencepiece_prepare_round_trips_every_validation_sentence(prepared_tiny_sp):
    config, report = prepared_tiny_sp                 # separate English and Italian vocabularies
    assert report["tokenizer"] == "sentencepiece (unigram)"
    assert report["round_trip_valid"]["exact_match_rate"] == 1.0              # 100% of sentences, not only in-vocab
    assert report["round_trip_valid"]["sentences"] == report["split_sizes"]["valid"] > 400
    assert report["valid_coverage"] == {"source": 1.0, "target": 1.0}       # no <unk>, thanks to byte fallback
    vectorizers = load_vectorizers(prepared_path(config) / "vectorizers.pkl")
    assert not vectorizers.joint and vectorizers.english.kind == vectorizers.italian.kind == "sentencepiece"
    assert len(vectorizers.english) <= config.data.en_vocab_size
    assert len(vectorizers.italian) <= config.data.it_vocab_size
    italian = [line.split("\t")[1] for line in (prepared_path(config) / "valid.tsv").read_text().splitlines()]
    ids = np.asarray(load_split(prepared_path(config), "valid")[1])
    assert [vectorizers.decode_italian(row) for row in ids] == italian


def test_joint_sentencepiece_vocabulary_is_one_tokenizer(prepared_tiny, tmp_path):
    config, report = prepared_tiny                    # tiny.yaml: one joint SentencePiece vocabulary, shared embeddings
    assert config.data.tokenizer == "sentencepiece" and config.model.share_embeddings
    assert report["vocabulary_sizes"]["joint"] is True
    vectorizers = load_vectorizers(prepared_path(config) / "vectorizers.pkl")
    assert vectorizers.joint and vectorizers.english is vectorizers.italian
    from pipeline.model import build_model
    model = build_model(config, len(vectorizers.english), len(vectorizers.italian))
    assert model.source_embedding is model.target_embedding
    model.save(tmp_path / "shared.keras")
    from pipeline.serializable import load_keras_file
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


@pytest.fixture(scope="module")
def prepared_in_shards(tmp_path_factory, tiny_config_path):
    """The bundled sample prepared like `prepared_tiny` but with shards of 10,000 rows."""
    config = load_config(tiny_config_path, ["data.shard_rows=10000"], str(tmp_path_factory.mktemp("shards")))
    return config, prepare(config, progress=False)


def test_shards_read_back_equal_to_one_whole_array(prepared_tiny, prepared_in_shards):
    whole_config, whole_report = prepared_tiny
    config, report = prepared_in_shards
    assert {k: v for k, v in report.items() if k != "seconds"} == {k: v for k, v in whole_report.items() if k != "seconds"}
    index = json.loads((prepared_path(config) / "splits.json").read_text())["splits"]
    assert [s["rows"] for s in index["train"]["shards"]] == [10000] * 4 + [report["split_sizes"]["train"] - 40000]
    rng = np.random.default_rng(0)
    for name in ("train", "valid", "test"):
        for whole, sharded in zip(load_split(prepared_path(whole_config), name), load_split(prepared_path(config), name)):
            assert all(isinstance(shard, np.memmap) for shard in sharded.shards)       # read lazily, not loaded
            full = np.asarray(whole)
            assert sharded.shape == full.shape and np.array_equal(np.asarray(sharded), full)
            rows = rng.integers(0, len(full), 300)
            assert np.array_equal(sharded[rows, :7], full[rows, :7])
            assert np.array_equal(sharded[9990:10010], full[9990:10010]) and np.array_equal(sharded[-1], full[-1])
            assert np.array_equal(sharded.row_lengths(), (full != 0).sum(axis=1))
    for name in ("valid.tsv", "test.tsv", "vectorizers.pkl"):
        assert (prepared_path(config) / name).read_bytes() == (prepared_path(whole_config) / name).read_bytes()


def test_training_feeders_read_shards_like_arrays(prepared_in_shards):
    from pipeline.datasets import ArrayBatches, Batching, make_dataset, target_tokens

    config, _ = prepared_in_shards
    english, italian = load_split(prepared_path(config), "train")
    arrays = np.asarray(english), np.asarray(italian)
    assert target_tokens(italian) == int((arrays[1][:, 1:] != 0).sum())
    batching = Batching.for_data(english, italian, batch_size=512, buckets=4)
    assert batching == Batching.for_data(*arrays, batch_size=512, buckets=4)
    sharded = ArrayBatches(english, italian, batching, seed=5)
    whole = ArrayBatches(*arrays, batching, seed=5)
    assert len(sharded) == len(whole)
    for i in (0, 7, len(whole) - 1):
        (x, y), (wx, wy) = sharded[i], whole[i]
        assert np.array_equal(x["decoder_inputs"], wx["decoder_inputs"]) and np.array_equal(y, wy)
    from_shards = make_dataset((english, italian), batching, seed=5).take(3).as_numpy_iterator()
    from_arrays = make_dataset(arrays, batching, seed=5).take(3).as_numpy_iterator()
    for (x, y), (wx, wy) in zip(from_shards, from_arrays):
        assert np.array_equal(x["encoder_inputs"], wx["encoder_inputs"]) and np.array_equal(y, wy)


def test_missing_or_damaged_shard_is_one_clear_error(prepared_in_shards, tmp_path):
    import shutil

    config, _ = prepared_in_shards
    copy = tmp_path / "prepared"
    shutil.copytree(prepared_path(config), copy)
    (copy / "train-00002-target.npy").unlink()
    with pytest.raises(FileNotFoundError, match=f"split shard {copy / 'train-00002-target.npy'}: not found"):
        load_split(copy, "train")
    shard = copy / "valid-00000-source.npy"
    shard.write_bytes(shard.read_bytes()[:-100])
    with pytest.raises(ValueError, match=f"split shard {shard}: "):
        load_split(copy, "valid")
    with pytest.raises(FileNotFoundError, match="split index .*splits.json: not found; run scripts/prepare.py"):
        load_split(tmp_path, "train")


def _sample_lines(count: int) -> list[bytes]:
    with gzip.open(ROOT / "data" / "ita-eng-sample.txt.gz") as handle:
        return [handle.readline() for _ in range(count)]


def test_line_aligned_files_prepare_like_the_same_pairs_as_tsv(tmp_path, tiny_config_path):
    lines = _sample_lines(3000)
    columns = [line.rstrip(b"\n").split(b"\t") for line in lines]
    (tmp_path / "pairs.tsv").write_bytes(b"".join(lines))
    (tmp_path / "train.en").write_bytes(b"".join(c[0] + b"\n" for c in columns))
    (tmp_path / "train.it.gz").write_bytes(gzip.compress(b"".join(c[1] + b"\n" for c in columns)))
    word = ["data.tokenizer=word", "data.joint_vocab_size=0", "model.share_embeddings=false",
            "data.valid_fraction=0.1", "data.test_fraction=0.1"]
    results = []
    for name, inputs in (("tsv", tmp_path / "pairs.tsv"), ("aligned", [tmp_path / "train.en", tmp_path / "train.it.gz"])):
        config = load_config(tiny_config_path, word, str(tmp_path / name))
        report = prepare(config, inputs, progress=False)
        for corpus in report["corpora"]:     # named after its file(s): pairs, train
            del corpus["name"], corpus["input"]
        results.append((prepared_path(config), {k: v for k, v in report.items() if k not in ("input", "seconds")}))
    (tsv_dir, tsv_report), (aligned_dir, aligned_report) = results
    assert aligned_report == tsv_report and tsv_report["pairs_kept"] > 2900
    assert load_vectorizers(aligned_dir / "vectorizers.pkl").english.vocabulary == \
        load_vectorizers(tsv_dir / "vectorizers.pkl").english.vocabulary
    for name in ("train-00000-target.npy", "valid.tsv", "test.tsv"):
        assert (aligned_dir / name).read_bytes() == (tsv_dir / name).read_bytes()
    assert (aligned_dir / "splits.json").read_text().replace('"name": "train"', '"name": "pairs"') == \
        (tsv_dir / "splits.json").read_text()


def test_script_reports_line_count_mismatch_in_one_line(tmp_path):
    (tmp_path / "a.en").write_text("One.\nTwo.\nThree.\n")
    (tmp_path / "a.it").write_text("Uno.\nDue.\n")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare.py"), "--config",
                             str(ROOT / "configs" / "tiny.yaml"), "--input", str(tmp_path / "a.en"),
                             str(tmp_path / "a.it"), "--workdir", str(tmp_path), "--quiet"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: line-aligned corpus: {tmp_path / 'a.en'} has 3 lines but {tmp_path / 'a.it'} has 2; "
        "expected one line per sentence in each"]
    assert not (tmp_path / "prepared").exists()
