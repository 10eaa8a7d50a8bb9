"""Glossaries (pipeline/translate/glossary.py): the formats, their bad inputs, and matching."""

import pytest

from pipeline.glossary import Glossary, GlossaryError
from pipeline.rundir import prepared_path, run_path

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


TBX_V3 = """<?xml version="1.0" encoding="UTF-8"?>
<tbx style="dca" type="TBX-Basic" xml:lang="en" xmlns="urn:iso:std:iso:30042:ed-2">
<tbxHeader><fileDesc><sourceDesc><p>v3</p></sourceDesc></fileDesc></tbxHeader><text><body>
<conceptEntry id="c1">
  <langSec xml:lang="EN-gb"><termSec><term>account</term></termSec>
    <termSec><term>user account</term></termSec></langSec>
  <langSec xml:lang="it"><termSec><term>conto</term></termSec></langSec>
</conceptEntry>
<conceptEntry id="c2"><langSec xml:lang="de"><termSec><term>Wagen</term></termSec></langSec></conceptEntry>
</body></text></tbx>
"""
TBX_MIN = """<?xml version="1.0" encoding="UTF-8"?>
<TBX dialect="TBX-Min"><header><id>min</id><languages source="en" target="it"/></header><body>
<entry id="1"><langGroup xml:lang="en"><termGroup><term>car</term></termGroup></langGroup>
<langGroup xml:lang="IT"><termGroup><term>automobile</term></termGroup></langGroup></entry>
</body></TBX>
"""


@pytest.mark.parametrize("content", [
    TBX_V3.encode("utf-8"),
    TBX_MIN.encode("utf-8"),
    TBX.replace('encoding="UTF-8"', 'encoding="UTF-16"').replace("conto", "cont\xf2").encode("utf-16"),  # BOM
    TBX.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"').replace("conto", "cont\xf2").encode("latin-1"),
])
def test_tbx_v3_tbx_min_and_the_declared_encoding_are_read(tmp_path, content):
    path = tmp_path / "terms.tbx"
    path.write_bytes(content)
    terms = {t.source: t.target for t in Glossary.load(path).terms.values()}
    if b"TBX-Min" in content:
        assert terms == {"car": "automobile"}
    else:
        assert terms["account"] in ("conto", "cont\xf2") and terms["user account"] == terms["account"]
        assert "Wagen" not in terms


STATUSES = {            # each dialect's way to say a term's status, around a deprecated term listed first
    "TBX-Basic": ('<martif type="TBX-Basic"><text><body><termEntry>'
                  '<langSet xml:lang="en-US"><tig><term>e-mail</term><termNote type="administrativeStatus">'
                  'deprecatedTerm-admn</termNote></tig><tig><term>email</term></tig></langSet>'
                  '<langSet xml:lang="it-IT"><tig><term>e-mail</term><termNote type="administrativeStatus">'
                  'deprecatedTerm-admn</termNote></tig><ntig><termGrp><term>mail</term></termGrp></ntig>'
                  '<ntig><termGrp><term>posta elettronica</term><termNote type="administrativeStatus">'
                  'preferredTerm-admn</termNote></termGrp></ntig></langSet></termEntry></body></text></martif>'),
    "TBX v3 DCT": ('<tbx style="dct" xmlns="urn:iso:std:iso:30042:ed-2" xmlns:basic="http://www.tbxinfo.net/ns/basic">'
                   '<text><body><conceptEntry><langSec xml:lang="en"><termSec><term>e-mail</term>'
                   '<basic:administrativeStatus>supersededTerm-admn</basic:administrativeStatus></termSec>'
                   '<termSec><term>email</term></termSec></langSec><langSec xml:lang="it"><termSec><term>e-mail'
                   '</term><basic:administrativeStatus>supersededTerm-admn</basic:administrativeStatus></termSec>'
                   '<termSec><term>posta elettronica</term><basic:administrativeStatus>preferredTerm-admn'
                   '</basic:administrativeStatus></termSec></langSec></conceptEntry></body></text></tbx>'),
    "TBX-Min": ('<TBX dialect="TBX-Min"><body><entry><langGroup xml:lang="en"><termGroup><term>e-mail</term>'
                '<termStatus>notRecommended</termStatus></termGroup><termGroup><term>email</term></termGroup>'
                '</langGroup><langGroup xml:lang="it"><termGroup><term>e-mail</term><termStatus>notRecommended'
                '</termStatus></termGroup><termGroup><term>posta elettronica</term><termStatus>preferred'
                '</termStatus></termGroup></langGroup></entry></body></TBX>'),
}


@pytest.mark.parametrize("dialect", STATUSES)
def test_a_tbx_term_marked_preferred_is_the_target_and_one_to_avoid_never_is(tmp_path, dialect):
    path = tmp_path / "terms.tbx"
    path.write_text(STATUSES[dialect], encoding="utf-8")
    terms = {t.source: t.target for t in Glossary.load(path).terms.values()}
    assert terms == {"e-mail": "posta elettronica", "email": "posta elettronica"}   # a deprecated source term too
    avoided_only = STATUSES[dialect].replace("posta elettronica", "e-mail").replace(
        "<ntig><termGrp><term>mail</term></termGrp></ntig>", "")                    # (a term of no status)
    avoided_only = avoided_only.replace("preferredTerm-admn", "deprecatedTerm-admn").replace(
        ">preferred<", ">obsolete<")
    path.write_text(avoided_only, encoding="utf-8")
    with pytest.raises(GlossaryError, match="no entries"):            # nothing left to ask a translation for
        Glossary.load(path)


@pytest.mark.parametrize("content,fragment", [
    ('<?xml version="1.0"?>\n<foo><termEntry/></foo>', "line 2: not TBX: expected a <martif>, <tbx> or <TBX> root, "
                                                      "got <foo>"),
    ('<?xml version="1.0"?>\n<!DOCTYPE martif [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<martif><text><body>'
     '<termEntry><langSet xml:lang="en"><tig><term>a&x;</term></tig></langSet></termEntry></body></text></martif>',
     "entity &x; is not expanded"),
    ('<martif><text><body>' + "<p>" * 300 + "</p>" * 300 + "</body></text></martif>", "Excessive depth"),
    ('<?xml version="1.0"?>\n<martif>\n<text><body></text></martif>', "line 3: not a TBX file"),
])
def test_a_tbx_with_a_wrong_root_an_entity_or_too_deep_is_a_one_line_error(tmp_path, content, fragment):
    path = tmp_path / "terms.tbx"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(GlossaryError) as error:
        Glossary.load(path)
    message = str(error.value)
    assert message.startswith(f"glossary {path}") and fragment in message and "\n" not in message


@pytest.mark.parametrize("name,content,fragment", [
    ("cols.tsv", "account\tconto\textra\n", "line 1: 3 columns, expected 2"),
    ("one.tsv", "# c\naccount\n", "line 2: 1 columns, expected 2"),
    ("empty.tsv", "account\t \n", "line 1: empty Italian side"),
    ("empty_en.csv", ",conto\n", "line 1: empty English side"),
    ("dup.tsv", "account\tconto\nAccount\tprofilo\n", "line 2: 'Account' is already 'conto'"),
    ("nul.tsv", "account\tconto\nsave\tsal\x00va\n", "line 2: Italian side holds the control character U+0000"),
    ("esc.csv", "\x1b[31mred,rosso\n", "line 1: English side holds the control character U+001B"),
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


def test_ten_thousand_entries_load_and_match(tmp_path):
    # Its load time (target < 1 s) is bench/bench_glossary.py's figure, not a timed test: wall clock in a shared
    # CI process measures the machine's load (a 0.07 s load took 1.2 s once there).
    path = tmp_path / "big.tsv"
    path.write_text("".join(f"term{i} word{i % 97}\ttermine{i}\n" for i in range(10_000)), encoding="utf-8")
    glossary = Glossary.load(path)
    assert len(glossary) == 10_000
    assert spans(glossary, "Use term42 word42 here.") == [("term42 word42", "termine42")]


# -- applying a glossary in translation ---------------------------------------------------------------------------
class UpperEngine:
    """Stands in for a model: "translates" each piece by upper-casing it, except the words it copies."""

    def __init__(self, vectorizers, config):
        from pipeline.translate.engine import Engine

        class Echo(Engine):
            def translate_sentences(self, sentences, **options):
                self.seen = list(sentences)
                return [s.upper() for s in sentences]

            def n_best_sentences(self, sentences, n, **options):
                return [[s.upper(), s.lower()] for s in sentences]
        self.engine = Echo.__new__(Echo)
        self.engine.vectorizers, self.engine.config = vectorizers, config


@pytest.fixture(scope="module")
def echo(prepared_tiny):
    from pipeline.vectorizers import load_vectorizers

    config, _ = prepared_tiny
    return UpperEngine(load_vectorizers(prepared_path(config) / "vectorizers.pkl"), config).engine


def test_a_text_without_a_term_is_translated_exactly_as_without_a_glossary(echo):
    texts = ["Nothing  to see here.", "Two sentences. No terms at all."]
    assert echo.translate(texts, glossary={"car": "automobile"}) == echo.translate(texts)


@pytest.mark.parametrize("style,model_reads", [("target", "The auto rossa and the Pipeline, ok."),
                                               ("placeholder", "The 70 and the 71, ok.")])
def test_terms_are_masked_for_the_model_and_restored_in_the_glossary_s_form(echo, style, model_reads):
    glossary = {"red car": "auto rossa", "pipeline": "Pipeline"}
    out = echo.translate(["The red car and the pipeline, ok."], glossary=glossary, glossary_style=style)
    assert echo.seen == [model_reads]
    assert out == ["THE auto rossa AND THE Pipeline, OK."]


def test_a_placeholder_is_a_number_the_sentence_does_not_hold_and_only_it_is_restored():
    from pipeline.glossary import unmask

    masked = Glossary({"car": "automobile"}).mask("Room 70, car 7.", "placeholder")
    assert masked.text == "Room 70, 71 7."
    assert unmask("Stanza 70, 71 7.", masked) == "Stanza 70, automobile 7."
    masked = Glossary({"station": "71", "car": "X"}).mask("Where is the station and the car?", "placeholder")
    assert masked.text == "Where is the 70 and the 71?"
    assert unmask("Dov'è il 70 e il 71?", masked) == "Dov'è il 71 e il X?"    # was "il X e il 71": swapped


def test_a_run_trained_with_annotations_reads_them_and_others_read_placeholders(echo):
    assert echo.glossary_style == "placeholder"              # the tiny run has no data.term_annotation
    glossary = {"red car": "auto rossa", "pipeline": "Pipeline"}
    echo.translate(["The red car and the pipeline, ok."], glossary=glossary)
    assert echo.seen == ["The 70 and the 71, ok."]
    annotated = echo.config.data.term_annotation
    try:
        echo.config.data.term_annotation = 0.5
        assert echo.glossary_style == "annotate"
        follows = type(echo).translate_sentences
        answers = {"A red car ‹ auto rossa ›.": "UN'‹ auto rossa ›.",       # a model that carries annotations over,
                   "The pipeline ‹ Pipeline ›.": "LA PIPELINE."}           # echoing a marker, a term's case its own
        type(echo).translate_sentences = lambda self, sentences, **options: [
            follows(self, sentences) and answers.get(sentence, sentence.replace("pipeline", "tubo").upper())
            for sentence in sentences]
        try:
            out = echo.translate(["A red car.", "The pipeline.", "The red car and the pipeline, ok, fine, yes."],
                                 glossary=glossary)
        finally:
            type(echo).translate_sentences = follows
        assert echo.seen[:2] == list(answers)           # after its own translations lacked the terms
        assert out[:2] == ["UN'auto rossa.", "LA Pipeline."]
        # annotated, the third no longer fits the tiny model's 20 input tokens: it gets placeholders instead
        assert echo.source_tokens(echo.seen[2]) <= echo.max_input_length and "70" in echo.seen[2]
    finally:
        echo.config.data.term_annotation = annotated


def test_a_piece_that_lost_a_term_gets_the_next_method_until_one_keeps_it(echo):
    follows = type(echo).translate_sentences
    type(echo).translate_sentences = lambda self, sentences, **options: [     # a model that drops placeholders
        out.replace("70", "") for out in follows(self, sentences)]
    try:
        out = echo.translate(["A car.", "No term."], glossary={"car": "automobile"})
        seen = echo.seen
        forced = echo.translate(["A car."], glossary={"car": "automobile"}, glossary_style="placeholder")
    finally:
        type(echo).translate_sentences = follows
    assert seen == ["A automobile."]                 # the third call: the Italian written in, for the lost term only
    assert out == ["A automobile.", "NO TERM."] and forced == ["A ."]


def test_the_order_of_methods_can_be_chosen_and_is_checked(echo):
    assert echo.glossary_methods == ("placeholder", "target")       # the tiny run has no data.term_annotation
    try:
        echo.glossary_methods = ["target"]
        assert echo.translate(["A car."], glossary={"car": "automobile"}) == ["A automobile."]
        assert echo.seen == ["A automobile."]
        with pytest.raises(ValueError, match="glossary methods"):
            echo.glossary_methods = ["magic"]
        with pytest.raises(ValueError, match="glossary methods"):
            echo.glossary_methods = []
    finally:
        echo.glossary_methods = ("placeholder", "target")


def test_a_piece_whose_own_translation_holds_its_terms_is_kept_and_tried_no_further(echo):
    calls = []
    follows = type(echo).translate_sentences
    type(echo).translate_sentences = lambda self, sentences, **options: calls.append(list(sentences)) or \
        follows(self, sentences)
    try:
        out = echo.translate(["The Pipeline is slow.", "A car.", "No term."],
                             glossary={"pipeline": "Pipeline", "car": "automobile"})
    finally:
        type(echo).translate_sentences = follows
    assert calls[0] == ["The Pipeline is slow.", "A car.", "No term."]      # the run's own translation, every piece
    assert calls[1:] == [["A 70."]]                  # then only the piece that lacked its term, by the next method
    assert out == ["THE Pipeline IS SLOW.", "A automobile.", "NO TERM."]   # a term kept is written the glossary's way


@pytest.mark.parametrize("output,expected", [
    ("űkasz parlava.", "Łukasz parlava."),                  # characters outside the vocabulary, copied nearly
    ("Il Kubernete di Kubernete.", "Il Kubernetes di Kubernete."),   # the first near copy
    ("IPhone è qui.", "iPhone è qui."),                      # a kept term keeps its case, even first
    ("Il gatto è qui.", "Il gatto è qui."),                  # nothing alike: nothing placed
])
def test_a_near_copy_of_a_do_not_translate_term_is_put_back_verbatim(output, expected):
    from pipeline.glossary import unmask

    glossary = Glossary({"Łukasz": "Łukasz", "Kubernetes": "Kubernetes", "iPhone": "iPhone"})
    masked = glossary.mask("Łukasz, Kubernetes and iPhone.", "annotate")
    assert unmask(output, masked) == expected


def test_a_list_gives_each_text_its_own_glossary(echo):
    out = echo.translate(["A car.", "A car.", "A car."], glossary=[{"car": "auto"}, None, {"car": "vettura"}],
                         glossary_style="placeholder")
    assert out == ["A auto.", "A CAR.", "A vettura."]
    with pytest.raises(ValueError, match="one glossary per text; got 1 for 3 texts"):
        echo.translate(["a", "b", "c"], glossary=[{"car": "auto"}])


def test_do_not_translate_terms_come_out_verbatim_even_outside_the_vocabulary(echo):
    out = echo.translate(["Install Ꝏꝏ-Tool 3 now."], glossary={"Ꝏꝏ-Tool": "Ꝏꝏ-Tool"}, glossary_style="placeholder")
    assert out == ["INSTALL Ꝏꝏ-Tool 3 NOW."]


def test_a_do_not_translate_term_no_method_got_through_is_kept_by_translating_around_it(echo):
    def lossy(self, sentences, **options):      # a model that drops what its vocabulary lacks and any placeholder
        self.seen = list(sentences)
        outs = [" ".join(w for w in s.split() if w.isascii() and not w[:1].isdigit()) for s in sentences]
        return [out[:1].upper() + out[1:] for out in outs]
    follows = type(echo).translate_sentences
    type(echo).translate_sentences = lossy
    try:
        glossary = {"Łukasz": "Łukasz", "car": "automobile"}
        out = echo.translate(["Łukasz grimaced.", "Łukasz saw Łukasz.", "Łukasz has a car.", "Łukasz.", "No term."],
                             glossary=glossary)
        last_call = echo.seen
        plain = echo.translate(["Łukasz grimaced."], glossary={"car": "automobile"})
    finally:
        type(echo).translate_sentences = follows
    # every method lost the name; the text around it was translated on its own (with the rest of the glossary:
    # "car" by the last method), the name put back verbatim, a part's lower-case start kept
    assert out == ["Łukasz grimaced.", "Łukasz saw Łukasz.", "Łukasz has a automobile.", "Łukasz.", "No term."]
    assert last_call == ["has a automobile."]
    assert plain == ["Grimaced."]                # without the term in the glossary nothing is cut


def test_n_best_applies_the_glossary_to_every_hypothesis(echo):
    ranked = echo.n_best(["The car."], 2, glossary=Glossary({"car": "automobile"}), glossary_style="placeholder")
    assert ranked == [["THE automobile.", "the automobile."]]


def test_a_path_a_dict_or_a_glossary_and_nothing_else(echo, tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("car\tautomobile\n", encoding="utf-8")
    assert echo.translate(["A car."], glossary=path) == echo.translate(["A car."], glossary={"car": "automobile"})
    with pytest.raises(TypeError, match="expected a Glossary, a dict or a path"):
        echo.translate(["A car."], glossary=42)
    with pytest.raises(ValueError, match="glossary style"):
        echo.translate(["A car."], glossary={"car": "auto"}, glossary_style="magic")


def test_keras_and_ctranslate2_apply_a_glossary_alike(tiny_engine_graph, tiny_ct2_engine):
    keras_engine, ct2 = tiny_engine_graph, tiny_ct2_engine
    texts = ["Tom has a red car.", "I love you.", "The pipeline is slow. Tom is here."]
    glossary = Glossary({"red car": "auto rossa", "pipeline": "Pipeline", "Tom": "Tom"})
    for style in ("annotate", "target", "placeholder", None):          # None: the default order of methods
        out = keras_engine.translate(texts, beam=1, glossary=glossary, glossary_style=style)
        assert out == ct2.translate(texts, beam=1, glossary=glossary, glossary_style=style)
        assert out[1] == keras_engine.translate([texts[1]], beam=1)[0]          # no term: no change


def test_cli_glossary_equals_the_python_api_and_a_bad_file_is_one_line(trained_tiny, tmp_path):
    import subprocess
    import sys

    from conftest import ROOT
    from pipeline.translate import open_translator

    terms = tmp_path / "terms.tsv"
    terms.write_text("english\titalian\nred car\tauto rossa\nTom\tTom\n", encoding="utf-8")
    texts = ["Tom has a red car.", "I love you."]
    script = [sys.executable, str(ROOT / "scripts" / "translate.py"), "--run", str(run_path(trained_tiny)), "--beam", "1"]
    done = subprocess.run(script + ["--glossary", str(terms), *texts], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    expected = open_translator(run_path(trained_tiny)).translate(texts, beam=1, glossary=terms)
    assert done.stdout.splitlines() == expected
    assert "was not trained with term annotations" in done.stderr     # the tiny run: placeholders, and a note
    bad = tmp_path / "bad.tsv"
    bad.write_text("car\tauto\ncar\tmacchina\n", encoding="utf-8")
    failed = subprocess.run(script + ["--glossary", str(bad), "A car."], capture_output=True, text=True, timeout=300)
    assert failed.returncode == 2 and failed.stderr.count("\n") == 1, failed.stderr
    assert f"glossary {bad} line 2: 'car' is already 'auto'" in failed.stderr
