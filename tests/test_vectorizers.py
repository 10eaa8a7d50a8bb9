import gzip
import pickle

import numpy as np
import pytest

from pipeline.rundir import prepared_path
from pipeline.tokenizers import SentencePieceTokenizer, TokenizerError, WordTokenizer, word_tokens
from pipeline.vectorizers import (VectorizerFileError, Vectorizers, detokenize, load_vectorizers, pretokenize_texts,
                                  vectorizers_to_bytes)

SENTENCES = ["L'ho visto a Milano.", "Perché? Non lo so...", "Tom's dog—really!", "«Sì», disse.",
             "C'è un caffè al 3,5%.", "(Forse) domani: alle 10.30!"]


def test_word_tokens_split_punctuation_with_joiners():
    assert word_tokens("L'ho visto a Milano.") == ["L", "\uffed'\uffed", "ho", "visto", "a", "Milano", "\uffed."]
    assert pretokenize_texts(["  L'ho \t visto  "]) == ["L \uffed'\uffed ho visto"]
    assert word_tokens("") == [] and word_tokens("   ") == []


def test_detokenize_inverts_word_tokens():
    for sentence, tokens in zip(SENTENCES, pretokenize_texts(SENTENCES)):
        assert detokenize(tokens.split()) == sentence


def test_python_rules_equal_the_tensorflow_graph_rules():
    import tensorflow as tf

    from pipeline.vectorizers import pretokenize
    awkward = SENTENCES + ["\"Quoted\" 'single'…", "3:45 p.m. $3.50 €4,99", "see https://x.org/a?b=1&c=2",
                           "mail tom@example.com!", "emoji 😀👍🏽 ok", "Привет, мир!", "a\x00b", "\uffedjoiner\uffed",
                           "   ", "tabs\tand\nnewlines", "((nested))!!?"]
    graph = [s.decode("utf-8") for s in pretokenize(tf.constant(awkward)).numpy()]
    assert graph == pretokenize_texts(awkward)


def test_word_vocabulary_is_frequency_then_alphabetical():
    tokenizer = WordTokenizer.fit([["b", "a"], ["c", "b"], ["a", "d"]], 5)
    assert tokenizer.vocabulary == ["", "[UNK]", "a", "b", "c"]
    assert WordTokenizer.fit([["x"]], 6, extra=["[start]", "[end]"]).vocabulary == \
        ["", "[UNK]", "[start]", "[end]", "x"]


def test_word_ids_round_trip_and_unknown_words():
    tokens = [word_tokens(s) for s in SENTENCES]
    tokenizer = WordTokenizer.fit(tokens, 200, extra=["[start]", "[end]"])
    ids = tokenizer.encode(SENTENCES, 24, add_start_end=True)
    assert ids.shape == (6, 24) and ids.dtype == np.int32 and (ids[:, 0] == tokenizer.start_id).all()
    assert [tokenizer.decode(row) for row in ids] == SENTENCES
    assert tokenizer.encode(["Zebra ho visto."], 6).tolist() == [[1, tokenizer.index["ho"], tokenizer.index["visto"],
                                                                   tokenizer.index["\uffed."], 0, 0]]
    assert tokenizer.encode(SENTENCES, 3).shape == (6, 3)      # truncation


@pytest.fixture(scope="module")
def sentencepiece_pair(prepared_tiny):
    config, _ = prepared_tiny
    lines = (prepared_path(config) / "valid.tsv").read_text(encoding="utf-8").splitlines()
    english = [line.split("\t")[0] for line in lines] * 4
    italian = [line.split("\t")[1] for line in lines] * 4
    return (SentencePieceTokenizer.train(english, 400, seed=1), SentencePieceTokenizer.train(italian, 500, seed=1),
            italian)


def test_sentencepiece_round_trip_is_exact_for_any_input(sentencepiece_pair):
    english, italian, sentences = sentencepiece_pair
    assert (english.pad_id, english.unk_id, english.start_id, english.end_id) == (0, 1, 2, 3)
    assert english.vocabulary[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    odd = SENTENCES + ["Привет, мир! 😀", "tom@example.com https://x.org/?a=1", "3:45 p.m. €4,99 …", "a\x00b"]
    ids = italian.encode(sentences + odd, add_start_end=True)
    assert not (ids == italian.unk_id).any()                        # byte fallback: never <unk>
    assert [italian.decode(row) for row in ids] == sentences + odd
    assert italian.detokenize(italian.tokenize("L'ho visto.")) == "L'ho visto."


def test_sentencepiece_training_is_deterministic(sentencepiece_pair):
    english, _, sentences = sentencepiece_pair
    again = SentencePieceTokenizer.train([s for s in sentences], 500, seed=1)
    assert again.model_proto == sentencepiece_pair[1].model_proto
    assert english.model_proto != again.model_proto


def test_sentencepiece_refuses_a_bad_model():
    with pytest.raises(TokenizerError, match="not a SentencePiece model"):
        SentencePieceTokenizer(b"not a model")


def make_word_vectorizers():
    tokens = [word_tokens(s) for s in SENTENCES]
    return Vectorizers(WordTokenizer.fit(tokens, 50), WordTokenizer.fit(tokens, 60, extra=["[start]", "[end]"]),
                       {"max_length": 8})


def test_pickle_round_trip_word(tmp_path):
    original = make_word_vectorizers()
    path = tmp_path / "v.pkl"
    path.write_bytes(vectorizers_to_bytes(original))
    loaded = load_vectorizers(path)
    assert loaded.italian_vocabulary == original.italian_vocabulary
    assert loaded.metadata == {"max_length": 8}
    assert np.array_equal(loaded.encode_english(SENTENCES), original.encode_english(SENTENCES))
    assert loaded.encode_english(["L'ho visto"]).shape == (1, 8)


def test_pickle_carries_sentencepiece_models_as_plain_bytes(tmp_path, sentencepiece_pair):
    english, italian, sentences = sentencepiece_pair
    for joint in (False, True):
        original = Vectorizers(english, english if joint else italian, {"max_length": 12})
        path = tmp_path / f"sp{joint}.pkl"
        path.write_bytes(vectorizers_to_bytes(original))
        raw = pickle.loads(path.read_bytes())
        assert isinstance(raw["source"]["model_proto"], bytes)
        loaded = load_vectorizers(path)                      # the data-only unpickler
        assert loaded.joint is joint
        assert loaded.english.model_proto == english.model_proto
        assert np.array_equal(loaded.encode_italian(sentences), original.encode_italian(sentences))
        assert loaded.encode_italian(sentences).shape == (len(sentences), 14)


def test_text_vectorization_layers_give_the_numpy_ids_over_the_validation_split(prepared_tiny_word):
    from pipeline.vectorizers import pretokenize
    config, _ = prepared_tiny_word
    vectorizers = load_vectorizers(prepared_path(config) / "vectorizers.pkl")
    lines = (prepared_path(config) / "valid.tsv").read_text(encoding="utf-8").splitlines()
    english = [line.split("\t")[0] for line in lines]
    italian = [line.split("\t")[1] for line in lines]
    assert len(english) > 400
    layer = vectorizers.text_vectorization("english")
    assert np.array_equal(layer(pretokenize(english)).numpy(), vectorizers.encode_english(english))
    import tensorflow as tf
    decorated = tf.strings.join(["[start] ", pretokenize(italian), " [end]"])
    layer = vectorizers.text_vectorization("italian")
    assert np.array_equal(layer(decorated).numpy(), vectorizers.encode_italian(italian))


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


@pytest.mark.parametrize("payload, message", [
    ({"format": 2, "english": Evil()}, "refusing to load builtins.print"),
    ({"format": 2, "english": np.int64(3)}, "refusing to load numpy"),
    (len, "refusing to load builtins.len"),
])
def test_pickle_with_anything_but_plain_data_is_refused(tmp_path, payload, message):
    path = tmp_path / "v.pkl"
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(VectorizerFileError, match=message):
        load_vectorizers(path)


def test_missing_corrupt_and_invalid_pickles(tmp_path):
    with pytest.raises(VectorizerFileError, match="not found"):
        load_vectorizers(tmp_path / "none.pkl")
    with pytest.raises(VectorizerFileError, match="is a directory"):
        load_vectorizers(tmp_path)
    path = tmp_path / "v.pkl"
    path.write_bytes(vectorizers_to_bytes(make_word_vectorizers())[:100])
    with pytest.raises(VectorizerFileError, match="corrupt"):
        load_vectorizers(path)
    path.write_bytes(pickle.dumps({"format": 2, "english": {"kind": "sentencepiece", "model_proto": b"junk"},
                                   "italian": "english", "metadata": {}}))
    with pytest.raises(VectorizerFileError, match="invalid contents .not a SentencePiece model"):
        load_vectorizers(path)


NO_TENSORFLOW = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "tensorboard", "tensorflow_text"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked for this test)")
sys.meta_path.insert(0, Block())
sys.path.insert(0, sys.argv[1])
from pipeline.config import load_config
from pipeline.prepare import prepare
from pipeline.vectorizers import load_vectorizers
from pipeline.rundir import prepared_path
for tokenizer, vocabulary in (("sentencepiece", 1000), ("word", 6000)):
    config = load_config(sys.argv[1] + "/configs/tiny.yaml", [f"data.tokenizer={tokenizer}",
                         f"data.joint_vocab_size={vocabulary}"], sys.argv[2] + tokenizer)
    report = prepare(config, sys.argv[3], progress=False)
    v = load_vectorizers(prepared_path(config) / "vectorizers.pkl")
    ids = v.encode_italian(["Tom non è qui, vero?"])
    print(tokenizer, report["pairs_kept"], v.decode_italian(ids[0]), "tensorflow" in sys.modules, "keras" in sys.modules)
"""


def test_text_path_runs_without_tensorflow(tmp_path):
    """prepare, encode and decode in a process where `import tensorflow` fails."""
    import subprocess
    import sys

    from conftest import ROOT
    with gzip.open(ROOT / "data" / "ita-eng-sample.txt.gz", "rt", encoding="utf-8") as sample:
        head = [next(sample) for _ in range(5000)]                  # the sample's first 5,000 pairs: quicker
    corpus = tmp_path / "head.txt"
    corpus.write_text("".join(head), encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", NO_TENSORFLOW, str(ROOT), str(tmp_path / "w_"), str(corpus)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["sentencepiece", "word"]
    for line in lines:
        assert line.endswith("Tom non è qui, vero? False False") and int(line.split()[1]) > 4900, line
