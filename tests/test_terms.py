"""Training-time term annotations (pipeline/terms.py) and prepare's data.term_annotation."""
import numpy as np
import pytest

from pipeline.config import ConfigError, load_config
from pipeline.terms import DEFAULT_DICTIONARY, TermAnnotator, read_dictionary
from pipeline.glossary import CLOSE, OPEN, strip_markers
from pipeline.rundir import prepared_path


@pytest.fixture(scope="module")
def dictionary(tmp_path_factory):
    path = tmp_path_factory.mktemp("dict") / "d.tsv"
    path.write_text("# comment\ncar\tauto|automobile\ncar\tvagone\nred\trosso\ndog\tcane\n", encoding="utf-8")
    return path


def test_the_bundled_dictionary_reads_and_keeps_senses_apart():
    senses = read_dictionary(DEFAULT_DICTIONARY)
    assert len(senses) > 3000 and senses["car"] == [["auto", "automobile"]]


def test_dictionary_headwords_are_cleaned_and_merged_across_case(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_text("ice  cream\tgelato\nIce cream\tcrema gelata\n", encoding="utf-8")
    annotate = TermAnnotator(path, share=1.0, swap=0.0, seed=1)
    assert annotate("I like ice cream.", "Mi piace la crema gelata.", key="0") == (
        "I like ice cream ‹ crema gelata ›.", "Mi piace la crema gelata.")


def test_a_bad_dictionary_line_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("car\tauto\ncar only\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv line 2: expected english<TAB>synonym"):
        read_dictionary(path)


def test_terms_the_reference_uses_are_annotated_with_its_form(dictionary):
    annotate = TermAnnotator(dictionary, share=1.0, swap=0.0, seed=1)
    english, italian = annotate("My dog has a car.", "Il mio cane ha un'automobile.", key="0")
    assert italian == "Il mio cane ha un'automobile."
    assert english in {"My dog ‹ cane › has a car ‹ automobile ›.", "My dog ‹ cane › has a car.",
                       "My dog has a car ‹ automobile ›."}
    # a term whose translation the reference does not use is never annotated: the pair teaches nothing false
    assert annotate("A red dog.", "Un cane nero.", key="1")[0] in {"A red dog ‹ cane ›.", "A red dog."}
    assert annotate("Nothing here.", "Niente qui.", key="2") == ("Nothing here.", "Niente qui.")


def test_names_kept_verbatim_are_do_not_translate_annotations(dictionary):
    annotate = TermAnnotator(dictionary, share=1.0, swap=0.0, seed=3)
    english, _ = annotate("Open LibreOffice Calc 7.", "Aprite LibreOffice Calc 7.", key="0")
    assert f"LibreOffice {OPEN} LibreOffice {CLOSE}" in english or f"Calc {OPEN} Calc {CLOSE}" in english
    assert not english.startswith(f"Open {OPEN}")            # a sentence's first word is no name


def test_a_swap_rewrites_the_reference_to_the_annotated_synonym(dictionary):
    annotate = TermAnnotator(dictionary, share=1.0, swap=1.0, seed=1)
    english, italian = annotate("The car.", "L'auto.", key="0")
    assert (english, italian) == ("The car ‹ automobile ›.", "L'automobile.")


def test_made_up_names_replace_a_kept_name_on_both_sides(dictionary):
    annotate = TermAnnotator(dictionary, share=1.0, swap=1.0, seed=5)
    english, italian = annotate("I met Mary yesterday.", "Ho incontrato Mary ieri.", key="0")
    name = italian.split()[2]
    assert name != "Mary" and english == f"I met {name} ‹ {name} › yesterday." and annotate.stats.terms["invented"] == 1


def test_replace_puts_the_marked_italian_in_place_of_the_english_term(dictionary):
    annotate = TermAnnotator(dictionary, share=1.0, swap=0.0, seed=1, replace=1.0)
    assert annotate("The red car.", "L'auto rossa.", key="0") in {("The red ‹ auto ›.", "L'auto rossa."),
                                                                  ("The ‹ rosso › ‹ auto ›.", "L'auto rossa.")}
    assert annotate("Here is my dog.", "Ecco il mio cane.", key="1") == ("Here is my ‹ cane ›.", "Ecco il mio cane.")


def test_annotation_is_seeded_per_pair_and_respects_the_share(dictionary):
    pairs = [("My dog.", "Il mio cane.")] * 400
    first = [TermAnnotator(dictionary, 0.3, 0.0, seed=7)(en, it, key=str(i)) for i, (en, it) in enumerate(pairs)]
    again = [TermAnnotator(dictionary, 0.3, 0.0, seed=7)(en, it, key=str(i)) for i, (en, it) in enumerate(pairs)]
    other = [TermAnnotator(dictionary, 0.3, 0.0, seed=8)(en, it, key=str(i)) for i, (en, it) in enumerate(pairs)]
    assert first == again and first != other
    share = sum(OPEN in en for en, _ in first) / len(first)
    assert 0.22 < share < 0.38


def test_strip_markers_removes_echoed_markers_only():
    assert strip_markers("L'auto ‹ rossa ›  è qui.") == "L'auto rossa è qui."
    assert strip_markers("Un'‹ auto ›.") == "Un'auto."
    assert strip_markers("Nessun  marcatore.") == "Nessun  marcatore."


def test_config_checks_the_annotation_keys():
    with pytest.raises(ConfigError, match="data.term_annotation"):
        load_config(None, ["data.term_annotation=1.5"])
    with pytest.raises(ConfigError, match="data.term_swap"):
        load_config(None, ["data.term_swap=-0.1"])


def test_prepare_annotates_training_pairs_only(prepared_tiny, tiny_config_path, tmp_path):
    from pipeline.prepare import prepare
    from pipeline.shards import open_split

    plain_config, _ = prepared_tiny
    config = load_config(tiny_config_path, ["data.term_annotation=0.5"], workdir=str(tmp_path))
    report = prepare(config, progress=False)
    annotated = report["term_annotation"]
    assert annotated["annotated_pairs"] > 0.1 * annotated["pairs"] and annotated["terms"]["dictionary"] > 0
    for split in ("valid.tsv", "test.tsv"):     # held-out text is untouched and split as without annotations (the
        text = (prepared_path(config) / split).read_text(encoding="utf-8")        # vocabulary differs, so a few
        plain = set((prepared_path(plain_config) / split).read_text(encoding="utf-8").splitlines())  # lengths do)
        assert OPEN not in text and len(set(text.splitlines()) ^ plain) < 0.01 * len(plain)
    from pipeline.vectorizers import load_vectorizers

    english = load_vectorizers(prepared_path(config) / "vectorizers.pkl").english
    marker = english.token_ids(f"a {OPEN} b")
    train_english = np.asarray(open_split(prepared_path(config), "train")[0])
    rows_with_marker = np.isin(train_english, [i for i in marker if english.vocabulary[i].strip("▁") == OPEN]).any(1)
    assert 0.1 < rows_with_marker.mean() < 0.6
