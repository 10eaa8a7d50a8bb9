"""Paragraphs and documents (issue 16.1): sentence splitting, cutting over-long sentences, layout, both engines."""
import subprocess
import sys
import warnings

import pytest

from pipeline.translate.engine import Engine
from pipeline.language import Direction
from pipeline.translate.splitting import SplitText, cut_sentence, split_text, sentence_spans

from conftest import ROOT
from pipeline.rundir import run_path

FIVE = ["Mr. Smith went to Washington on Monday.", "He paid $3.50 for a coffee, e.g. an espresso.",
        "The U.S. economy grew 3.5% last year!", "\"Are you coming?\" she asked.", "Wait... what did you say?"]
PARAGRAPH = FIVE[0] + " " + FIVE[1] + "  " + FIVE[2] + "\t" + FIVE[3] + " " + FIVE[4]
# 300 words, a comma after every 7th: the clause punctuation a long sentence is cut at.
LONG = " ".join(f"w{i}," if i % 7 == 6 else f"w{i}" for i in range(299)) + " w299."


def words(text: str) -> int:
    return len(text.split())


def rebuild(segmented: SplitText) -> str:
    return segmented.join(segmented.to_translate)


def test_a_paragraph_of_five_sentences_splits_at_sentence_ends_only():
    segmented = split_text(PARAGRAPH, words, 20)
    assert segmented.pieces == FIVE           # "Mr.", "e.g.", "$3.50", "U.S.", "3.5%" and the quote stay whole
    assert segmented.gaps == [" ", "  ", "\t", " "]
    assert rebuild(segmented) == PARAGRAPH


def test_blank_lines_and_line_breaks_are_kept_and_outer_whitespace_dropped():
    text = "\n  First line.  Second sentence.\n\n\nThird, after blank lines.\r\nFourth\u2028Fifth.\n\n"
    segmented = split_text(text, words, 20)
    assert segmented.pieces == ["First line.", "Second sentence.", "Third, after blank lines.", "Fourth", "Fifth."]
    assert segmented.gaps == ["  ", "\n\n\n", "\r\n", "\u2028"]
    assert rebuild(segmented) == text.strip()
    assert split_text(" \n\t\n ", words, 20) == SplitText([], [])


def test_a_line_of_punctuation_only_is_copied_not_translated():
    text = "Hello.\n...\n* * *\n?!\nBye."
    segmented = split_text(text, words, 20)
    assert segmented.pieces == ["Hello.", "...", "* * *", "?!", "Bye."]
    assert segmented.to_translate == ["Hello.", "Bye."]
    assert segmented.join(["Ciao.", "Addio."]) == "Ciao.\n...\n* * *\n?!\nAddio."


def test_a_300_word_sentence_is_cut_after_clause_punctuation():
    pieces = split_text(LONG, words, 20).pieces
    # the last comma within 20 words is after w13, w27, ...: two 7-word clauses a piece, until 20 words are left
    assert [words(p) for p in pieces] == [14] * 20 + [20]
    assert all(p.endswith(",") for p in pieces[:-1]) and pieces[-1] == " ".join(LONG.split()[-20:])
    assert " ".join(pieces) == LONG                              # every word in exactly one piece, in order


def test_without_clause_punctuation_the_cut_is_a_token_window():
    long = " ".join(f"w{i}" for i in range(300)) + "."
    pieces = split_text(long, words, 20).pieces
    assert [words(p) for p in pieces] == [20] * 15 and " ".join(pieces) == long
    # a clause end too early in the window (under half the limit) is passed over for the window
    early = "Well, " + long
    assert split_text(early, words, 20).pieces[0] == "Well, " + " ".join(f"w{i}" for i in range(19))


def test_one_overlong_word_is_cut_between_characters_and_nothing_is_lost():
    url = "https://example.org/" + "x" * 95
    spans = cut_sentence(url, 0, len(url), len, 40)                 # one token per character
    assert [end - start for start, end in spans] == [40, 40, 35]
    assert "".join(url[s:e] for s, e in spans) == url
    with pytest.raises(ValueError, match="max_tokens must be >= 1, got 0"):
        cut_sentence(url, 0, len(url), len, 0)


def test_a_huge_unbroken_line_is_cut_counting_short_prefixes_only():
    blob, counted = "ab" * 50_000, []

    def per_character(text):
        counted.append(len(text))
        return len(text)
    spans = cut_sentence(blob, 0, len(blob), per_character, 10)
    assert [end - start for start, end in spans] == [10] * 10_000
    assert counted[0] == len(blob) and max(counted[1:]) <= 32 * 10        # linear, not quadratic
    assert len(counted) < 20 * len(spans)


def test_sentence_spans_fall_back_to_the_whole_line_if_the_splitter_changes_text(monkeypatch):
    import pipeline.translate.splitting as segment
    monkeypatch.setattr(segment, "_splitter", lambda language: type("Changed", (), {"split": lambda self, t: ["Other."]})())
    assert sentence_spans("  One. Two.  ") == [(2, 11)]


class UpperCaseEngine(Engine):
    """An engine without a model: each piece "translates" to upper case (and, n-best, lower case after it
    when it starts with W); every call is recorded."""
    max_input_length = 20
    direction = Direction("en", "it")

    def __init__(self):
        self.calls = []

    def source_tokens(self, text):
        return words(text)

    def translate_sentences(self, sentences, **options):
        self.calls.append(list(sentences))
        return [s.upper() for s in sentences]

    def n_best_sentences(self, sentences, n, **options):
        return [[p.upper(), p.lower()] if p.startswith("W") else [p.upper()] for p in sentences]


def test_translate_makes_one_batch_of_all_pieces_and_keeps_one_output_per_text():
    engine = UpperCaseEngine()
    out = engine.translate([PARAGRAPH, "", "...", "A line.\n\nAnother one."])
    assert engine.calls == [FIVE + ["A line.", "Another one."]]
    assert out == [PARAGRAPH.upper(), "", "...", "A LINE.\n\nANOTHER ONE."]


def test_segmentation_imports_neither_tensorflow_nor_keras():
    code = ("import sys, pipeline.translate.splitting as s; s.split_text('One. Two.', len, 40); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'tensorflow', 'keras', 'jax', 'torch'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# -- with a trained SentencePiece model --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sp_engine(trained_tiny_sp):
    from pipeline.translate.keras_engine import KerasEngine
    return KerasEngine.from_run(run_path(trained_tiny_sp))


def test_n_best_joins_the_kth_best_of_each_piece_and_reuses_a_short_list_last():
    out = UpperCaseEngine().n_best(["Tom is here. We go.", "", "Why?"], 2)
    assert out == [["TOM IS HERE. WE GO.", "TOM IS HERE. we go."], [""], ["WHY?", "why?"]]


def test_translator_translates_a_paragraph_as_its_sentences_in_one_batch(sp_engine, monkeypatch):
    short = ["Tom is my friend.", "We have to go now.", "I don't know what to do.", "Where is the station?",
             "It's raining."]                                     # each within the model's limit
    expected = sp_engine.translate_sentences(short, beam=1)
    calls = []
    sentence_level = sp_engine.translate_sentences
    monkeypatch.setattr(sp_engine, "translate_sentences",
                        lambda pieces, **options: calls.append(list(pieces)) or sentence_level(pieces, **options))
    text = short[0] + " " + short[1] + "  " + short[2] + "\t" + short[3] + " " + short[4] + "\n\n...\n" + short[0]
    assert sp_engine.translate([text, "   "], beam=1) == [
        expected[0] + " " + expected[1] + "  " + expected[2] + "\t" + expected[3] + " " + expected[4] + "\n\n...\n"
        + expected[0], ""]
    assert calls == [short + short[:1]]
    with pytest.raises(TypeError, match=r"translate takes a list of texts, got one str: pass \[text\]"):
        sp_engine.translate(PARAGRAPH)


def test_translator_cuts_a_300_word_sentence_instead_of_truncating_it(sp_engine):
    tokenizer, limit = sp_engine.vectorizers.english, sp_engine.max_input_length
    segmented = split_text(LONG, sp_engine.source_tokens, limit)
    assert all(0 < sp_engine.source_tokens(p) <= limit for p in segmented.pieces) and len(segmented.pieces) > 1
    # every source token ends up in exactly one piece, in order
    assert [i for p in segmented.pieces for i in tokenizer.token_ids(p)] == tokenizer.token_ids(LONG)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # no truncation warning
        out = sp_engine.translate([LONG], beam=1)
    assert out == [segmented.join(sp_engine.translate_sentences(segmented.pieces, beam=1))]
    with pytest.warns(UserWarning, match=f"longer than the model's maximum of {limit} tokens were truncated"):
        sp_engine.translate_sentences([LONG], beam=1)


def test_cli_input_file_keeps_one_output_line_per_input_line(trained_tiny_sp, sp_engine, tmp_path):
    lines = [PARAGRAPH, "", "...", LONG, "I love you."]
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "translate.py"), "--run",
                             str(run_path(trained_tiny_sp)), "--beam", "1", "--input", str(source), "--output",
                             str(output)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    translated = output.read_text(encoding="utf-8").split("\n")
    assert translated[-1] == "" and translated[:-1] == sp_engine.translate(lines, beam=1)
    assert translated[1:3] == ["", "..."]


def test_service_translates_a_paragraph(sp_engine):
    from fastapi.testclient import TestClient

    from pipeline.service import ServiceSettings, create_app
    with TestClient(create_app(sp_engine, ServiceSettings(max_wait_ms=1))) as client:
        response = client.post("/translate", json={"text": [PARAGRAPH, "Hi."], "beam": 1})
    assert response.status_code == 200
    assert response.json()["translations"] == sp_engine.translate([PARAGRAPH, "Hi."], beam=1)


def test_n_best_of_a_paragraph_starts_with_its_translation(sp_engine):
    text = "Tom is my friend. We have to go now.\nWhere is the station?"
    ranked = sp_engine.n_best([text, ""], 3, beam=4)
    assert ranked[0][0] == sp_engine.translate([text], beam=4)[0]
    assert len(ranked[0]) == len(set(ranked[0])) and 1 <= len(ranked[0]) <= 3
    assert all(alternative.count("\n") == 1 for alternative in ranked[0])
    assert ranked[1] == [""]


def test_a_huge_line_is_read_in_windows_with_the_same_sentences(monkeypatch):
    from sentence_splitter import SentenceSplitter

    from pipeline.translate import splitting

    line = " ".join(f"Sentence number {i} ends here. Mr. Smith said so{'!' if i % 3 else '.'}" for i in range(900))
    whole = splitting.sentence_spans(line)                  # 44,000 characters: windows of 8,192
    seen = []
    split = SentenceSplitter.split
    monkeypatch.setattr(SentenceSplitter, "split", lambda self, text: seen.append(len(text)) or split(self, text))
    assert splitting.sentence_spans(line) == whole
    assert len(seen) > 1 and max(seen) <= splitting.SPLITTER_WINDOW
    monkeypatch.setattr(splitting, "SPLITTER_WINDOW", 10 ** 9)          # one window: the splitter reads it whole
    assert splitting.sentence_spans(line) == whole and len(whole) == 1800
    unbroken = "x" * 20000 + " " + "y" * 5                  # no space in a window: cut at its end, no character lost
    spans = splitting.sentence_spans(unbroken)
    assert "".join(unbroken[a:b] for a, b in spans).replace(" ", "") == unbroken.replace(" ", "")
    assert max(b - a for a, b in spans) <= splitting.SPLITTER_WINDOW
