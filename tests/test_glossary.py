"""Glossaries (pipeline/translate/glossary.py): the formats, their bad inputs, and matching."""
import time

import pytest

from pipeline.translate.glossary import Glossary, GlossaryError

TBX = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX" xml:lang="en"><martifHeader><fileDesc><sourceDesc><p>test</p></sourceDesc></fileDesc>
</martifHeader><text><body>
<termEntry id="t1">
  <langSet xml:lang="it"><tig><term>conto</term></tig></langSet>
  <langSet xml:lang="en"><tig><term>account</term></tig><tig><term>user account</term></tig></langSet>
</termEntry>
<termEntry id="t2">
  <langSet xml:lang="en-US"><ntig><termGrp><term>Pipeline</term></termGrp></ntig></langSet>
  <langSet xml:lang="it-IT"><ntig><termGrp><term>Pipeline</term></termGrp></ntig></langSet>
</termEntry>
<termEntry id="t3"><langSet xml:lang="de"><tig><term>Wagen</term></tig></langSet></termEntry>
</body></text></martif>
"""


def spans(glossary, text):
    return [(text[m.start:m.end], m.term.target) for m in glossary.find(text)]


def test_tsv_with_header_comments_and_blank_lines(tmp_path):
    path = tmp_path / "terms.tsv"
    path.write_text("english\titalian\n# house style\n\naccount\tconto\nPipeline\tPipeline\n"
                    "red car\tauto rossa\n", encoding="utf-8")
    glossary = Glossary.load(path)
    assert len(glossary) == 3
    assert spans(glossary, "My Account and the pipeline.") == [("Account", "conto"), ("pipeline", "Pipeline")]
    assert [t.keep for t in glossary.terms.values()] == [False, True, False]


def test_csv_is_read_by_the_csv_module_quotes_included(tmp_path):
    path = tmp_path / "terms.csv"
    path.write_text('source,target\n"save, then close","salva, poi chiudi"\nfile,file\n', encoding="utf-8")
    glossary = Glossary.load(path)
    assert spans(glossary, "Save, then close the file.") == [("Save, then close", "salva, poi chiudi"),
                                                               ("file", "file")]


def test_tbx_maps_each_english_term_of_an_entry_to_its_italian(tmp_path):
    path = tmp_path / "terms.tbx"
    path.write_text(TBX, encoding="utf-8")
    glossary = Glossary.load(path)
    assert {t.source: t.target for t in glossary.terms.values()} == {"account": "conto", "user account": "conto",
                                                                     "Pipeline": "Pipeline"}


@pytest.mark.parametrize("name,content,fragment", [
    ("cols.tsv", "account\tconto\textra\n", "line 1: 3 columns, expected 2"),
    ("one.tsv", "# c\naccount\n", "line 2: 1 columns, expected 2"),
    ("empty.tsv", "account\t \n", "line 1: empty Italian side"),
    ("empty_en.csv", ",conto\n", "line 1: empty English side"),
    ("dup.tsv", "account\tconto\nAccount\tprofilo\n", "line 2: 'Account' is already 'conto'"),
    ("latin.tsv", "caf\xe9\tcaff\xe8\n".encode("latin-1"), "line 1: not valid UTF-8"),
    ("bad.tbx", "<martif><text><body><termEntry>", "not a TBX file"),
    ("terms.xlsx", "x", "unknown extension"),
])
def test_bad_files_are_one_line_errors_naming_file_line_and_reason(tmp_path, name, content, fragment):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(GlossaryError) as error:
        Glossary.load(path)
    message = str(error.value)
    assert str(path) in message and fragment in message and "\n" not in message


def test_a_repeated_entry_with_the_same_target_is_fine_and_a_missing_file_is_named(tmp_path):
    assert len(Glossary({"car": "auto"}.items())) == 1
    assert len(Glossary([("car", "auto"), ("Car", "auto")])) == 1
    with pytest.raises(GlossaryError, match="not found"):
        Glossary.load(tmp_path / "missing.tsv")
    with pytest.raises(GlossaryError, match="is a directory"):
        Glossary.load(tmp_path)


def test_word_boundaries_longest_match_and_case():
    glossary = Glossary({"car": "automobile", "red car": "auto rossa", "C++": "C++", "new york": "New York",
                         "york times": "York Times"})
    assert spans(glossary, "A scar, a cargo, a car.") == [("car", "automobile")]
    assert spans(glossary, "The Red Car and C++ code.") == [("Red Car", "auto rossa"), ("C++", "C++")]
    assert spans(glossary, "C++11 and ObjC++") == [("C++", "C++")]   # a "+" edge needs no boundary; "C" does
    assert spans(glossary, "in New York Times Square") == [("York Times", "York Times")]   # the longest wins
    even = Glossary({"big apple": "Grande Mela", "apple pie": "torta di mele"})
    assert spans(even, "a big apple pie") == [("big apple", "Grande Mela")]               # equal length: leftmost


def test_case_sensitive_glossaries_match_only_the_given_case():
    glossary = Glossary({"Apple": "Apple"}, case_sensitive=True)
    assert spans(glossary, "Apple and apple") == [("Apple", "Apple")]
    assert spans(Glossary({"Apple": "Apple"}), "Apple and apple") == [("Apple", "Apple"), ("apple", "Apple")]


def test_offsets_survive_case_folding_that_changes_length():
    glossary = Glossary({"straße": "strada"})
    text = "İ go to the STRASSE and the Straße."
    assert spans(glossary, text) == [("Straße", "strada")]


def test_ten_thousand_entries_load_in_under_a_second(tmp_path):
    path = tmp_path / "big.tsv"
    path.write_text("".join(f"term{i} word{i % 97}\ttermine{i}\n" for i in range(10_000)), encoding="utf-8")
    started = time.perf_counter()
    glossary = Glossary.load(path)
    assert time.perf_counter() - started < 1.0 and len(glossary) == 10_000
    assert spans(glossary, "Use term42 word42 here.") == [("term42 word42", "termine42")]
