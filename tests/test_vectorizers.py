import pickle

import numpy as np
import pytest

from pipeline.vectorizers import (VectorizerFileError, Vectorizers, build_vocabulary, decorate_target,
                                  detokenize, ids_to_text, load_vectorizers, make_vectorizer,
                                  pretokenize_texts, vectorizers_to_bytes)

SENTENCES = ["L'ho visto a Milano.", "Perché? Non lo so...", "Tom's dog—really!", "«Sì», disse.",
             "C'è un caffè al 3,5%.", "(Forse) domani: alle 10.30!"]


def test_pretokenize_splits_punctuation_with_joiners():
    assert pretokenize_texts(["L'ho visto a Milano."]) == ["L \uffed'\uffed ho visto a Milano \uffed."]


def test_detokenize_inverts_pretokenize():
    for sentence, tokens in zip(SENTENCES, pretokenize_texts(SENTENCES)):
        assert detokenize(tokens.split()) == sentence


def test_ids_round_trip_through_vectorizer():
    tokenized = [decorate_target(t) for t in pretokenize_texts(SENTENCES)]
    layer = make_vectorizer(build_vocabulary(tokenized, 200), 24, "it")
    vocabulary = [str(t) for t in layer.get_vocabulary()]
    ids = layer(np.array(tokenized)).numpy()
    assert [ids_to_text(row, vocabulary) for row in ids] == SENTENCES


def test_vocabulary_is_frequency_then_alphabetical():
    assert build_vocabulary(["b a", "c b", "a d"], 5) == ["a", "b", "c"]


def make_vectorizers():
    tokenized = pretokenize_texts(SENTENCES)
    en = make_vectorizer(build_vocabulary(tokenized, 50), 8, "en")
    it = make_vectorizer(build_vocabulary([decorate_target(t) for t in tokenized], 60), 10, "it")
    return Vectorizers(en, it, {"max_length": 8})


def test_pickle_round_trip_gives_working_layers(tmp_path):
    original = make_vectorizers()
    path = tmp_path / "v.pkl"
    path.write_bytes(vectorizers_to_bytes(original))
    loaded = load_vectorizers(path)
    assert loaded.italian_vocabulary == original.italian_vocabulary
    assert loaded.metadata == {"max_length": 8}
    assert np.array_equal(loaded.encode_english(SENTENCES), original.encode_english(SENTENCES))
    assert loaded.encode_english(["L'ho visto"]).shape == (1, 8)


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


@pytest.mark.parametrize("payload, message", [
    ({"format": 1, "english": Evil()}, "refusing to load builtins.print"),
    ({"format": 1, "english": np.int64(3)}, "refusing to load numpy"),
    (len, "refusing to load builtins.len"),
])
def test_pickle_with_anything_but_plain_data_is_refused(tmp_path, payload, message):
    path = tmp_path / "v.pkl"
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(VectorizerFileError, match=message):
        load_vectorizers(path)


def test_missing_and_corrupt_pickles(tmp_path):
    with pytest.raises(VectorizerFileError, match="not found"):
        load_vectorizers(tmp_path / "none.pkl")
    path = tmp_path / "v.pkl"
    path.write_bytes(vectorizers_to_bytes(make_vectorizers())[:100])
    with pytest.raises(VectorizerFileError, match="corrupt"):
        load_vectorizers(path)
