"""Property tests (hypothesis) of the text path on arbitrary Unicode: lone surrogates, combining marks,
right-to-left text, emoji, control characters, 10,000-character strings and whitespace only."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.text import REPLACEMENT, clean_side, gate_text
from pipeline.translate.engine import Engine
from pipeline.translate.splitting import LINE_BREAK
from pipeline.rundir import prepared_path

ANY = st.characters(exclude_categories=[])          # every code point, lone surrogates included
TRICKY = st.sampled_from(["\ud800", "\udfff", "\u0301", "e\u0301", "\u05e9\u05dc\u05d5\u05dd", "\u202e", "\u200f",
                          "😀", "👩‍👩‍👧", "\x00", "\x1b", "\x7f", "\u2028", "\u2029", "\n", "\r\n", "\r", "\t",
                          "\x0b", "\x0c", " ", "\u00a0", "\u3000", ".", "...", "Mr.", "e.g.", "3.5", "?!", "Tom",
                          "is", "here", ",", "—", "\"", "\ufeff", "\uffed", "\ufffd"])
WORDS = st.lists(st.one_of(TRICKY, st.text(ANY, max_size=6)), max_size=40).map("".join)
LONG = st.tuples(st.lists(st.one_of(TRICKY, st.text(ANY, max_size=4)), min_size=1, max_size=8).map("".join),
                 st.just(10_000)).map(lambda pair: (pair[0] * (pair[1] // max(len(pair[0]), 1) + 1))[:pair[1]])
WHITESPACE = st.lists(st.sampled_from([" ", "\t", "\n", "\r\n", "\u00a0", "\u2028", "\u3000", "\x0b"]),
                      max_size=30).map("".join)
TEXT = st.one_of(WORDS, st.text(ANY, max_size=300), WHITESPACE, LONG)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.data_too_large])


class EchoEngine(Engine):
    """The real tokenizer and limits of the tiny run, each piece "translated" as itself."""

    def __init__(self, vectorizers, config):
        self.vectorizers, self.config, self.calls = vectorizers, config, 0

    def translate_sentences(self, sentences, **options):
        self.calls += 1
        return list(sentences)

    def n_best_sentences(self, sentences, n, **options):
        return [[s, s.upper()] for s in sentences]


@pytest.fixture(scope="module")
def engine(prepared_tiny):
    from pipeline.vectorizers import load_vectorizers

    config, _ = prepared_tiny
    return EchoEngine(load_vectorizers(prepared_path(config) / "vectorizers.pkl"), config)


@SETTINGS
@given(st.lists(TEXT, max_size=5))
def test_segment_translate_join_gives_one_output_per_input_and_loses_no_character(engine, texts):
    calls = engine.calls
    out = engine.translate(texts)
    assert len(out) == len(texts) and engine.calls == calls + 1           # one batch of all pieces
    for text, translation in zip(texts, out):
        assert translation == gate_text(text).strip()                        # every character, in order
        assert len(LINE_BREAK.findall(translation)) == len(LINE_BREAK.findall(gate_text(text).strip()))


@SETTINGS
@given(st.lists(TEXT, max_size=4))
def test_n_best_gives_one_ranked_list_per_input_led_by_the_translation(engine, texts):
    ranked = engine.n_best(texts, 2)
    assert len(ranked) == len(texts)
    assert [hypotheses[0] for hypotheses in ranked] == engine.translate(texts)


@SETTINGS
@given(TEXT)
def test_the_gate_leaves_only_utf8_encodable_text_and_changes_nothing_else(text):
    gated = gate_text(text)
    gated.encode("utf-8")                                                     # never raises
    assert gated == reference_gate(text)


def reference_gate(text):
    """The gate's rule, written out code point by code point: a high-low surrogate pair is its character, any
    other surrogate U+FFFD, everything else unchanged."""
    out, i = [], 0
    while i < len(text):
        code = ord(text[i])
        if 0xD800 <= code <= 0xDBFF and i + 1 < len(text) and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
            i += 2
            continue
        out.append(REPLACEMENT if 0xD800 <= code <= 0xDFFF else text[i])
        i += 1
    return "".join(out)


@SETTINGS
@given(TEXT)
def test_the_tokenizer_round_trips_every_cleaned_string(engine, text):
    tokenizer = engine.vectorizers.english
    cleaned = clean_side(gate_text(text))
    assert tokenizer.decode(tokenizer.token_ids(cleaned)) == cleaned


@pytest.mark.parametrize("value", [None, 3, b"bytes", ["nested"]])
def test_anything_but_text_is_the_documented_type_error(engine, value):
    with pytest.raises(TypeError, match="expected a str"):
        engine.translate([value])
    with pytest.raises(TypeError, match="got one str"):
        engine.translate("one text")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.one_of(WORDS, WHITESPACE), min_size=1, max_size=3))
def test_the_real_engines_give_one_line_per_line_on_arbitrary_unicode(trained_tiny, keras_engine, texts):
    out = keras_engine.translate(texts, beam=1)
    assert len(out) == len(texts)
    for text, translation in zip(texts, out):
        assert len(LINE_BREAK.findall(translation)) == len(LINE_BREAK.findall(gate_text(text).strip()))
        translation.encode("utf-8")


@pytest.fixture(scope="module")
def keras_engine(tiny_engine_graph):
    return tiny_engine_graph
