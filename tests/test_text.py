import gzip
import zipfile

import numpy as np
import pytest

from pipeline.text import CorpusError, read_pairs, split_by_source

GOOD = "Hi.\tCiao.\nI see.\tCapisco.\n"


def test_reads_manythings_zip_with_three_columns_and_crlf(tmp_path):
    path = tmp_path / "ita-eng.zip"
    body = "Hi.\tCiao.\tCC-BY 2.0 (France) Attribution: tatoeba.org #1 (a) & #2 (b)\r\n" \
           "Run!\tCorri!\tCC-BY 2.0 (France) Attribution: tatoeba.org #3 (c) & #4 (d)\r\n"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("_about.txt", "about this file\n")
        archive.writestr("ita.txt", body)
    pairs, dropped = read_pairs(path)
    assert pairs == [("Hi.", "Ciao."), ("Run!", "Corri!")]
    assert sum(dropped.values()) == 0


@pytest.mark.parametrize("suffix", [".txt", ".gz", ".data"])
def test_reads_plain_and_gzip_by_content(tmp_path, suffix):
    path = tmp_path / f"corpus{suffix}"
    data = GOOD.encode()
    path.write_bytes(gzip.compress(data) if suffix == ".gz" else data)
    assert read_pairs(path)[0] == [("Hi.", "Ciao."), ("I see.", "Capisco.")]


def test_malformed_lines_are_skipped_and_counted(tmp_path):
    path = tmp_path / "c.txt"
    lines = [
        b"Good.\tBuono.",
        b"one column only",
        b"a\tb\tc\td",
        b"Bad \xff bytes.\tByte \xfe.",
        b"Bell\x07.\tCampana.",
        b"   \tVuoto.",
        b"",
        b"Good.\tBuono.",                              # exact duplicate
        "Cafe\u0301  \u00a0ok.\tCaffe\u0300\tattr".encode(),  # NFD + odd spaces, 3 columns
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    pairs, dropped = read_pairs(path)
    assert pairs == [("Good.", "Buono."), ("Caf\u00e9 ok.", "Caff\u00e8")]
    assert {k: v for k, v in dropped.items() if v} == {
        "wrong_column_count": 2, "not_utf8": 1, "control_characters": 1,
        "empty_side": 1, "blank_line": 1, "duplicate": 1}


@pytest.mark.parametrize("make, message", [
    (lambda p: p, "not found"),
    (lambda p: (p.mkdir(), p)[1], "is a directory"),
    (lambda p: (p.write_bytes(b""), p)[1], "is empty"),
    (lambda p: (p.write_bytes(b"no tabs here\nnor here\n"), p)[1], "no valid sentence pairs in 2 lines (wrong_column_count=2)"),
    (lambda p: (p.write_bytes(b"PK\x03\x04garbage"), p)[1], "not a readable zip archive"),
])
def test_unusable_corpus_is_one_clear_error(tmp_path, make, message):
    path = make(tmp_path / "corpus.txt")
    with pytest.raises(CorpusError) as info:
        read_pairs(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_split_is_grouped_by_normalised_english_and_deterministic():
    english = [f"Sentence {i % 50}." if i % 3 else f"sentence  {i % 50}." for i in range(600)]
    first = split_by_source(english, 0.2, 0.2, seed=7)
    again = split_by_source(list(english), 0.2, 0.2, seed=7)
    other = split_by_source(english, 0.2, 0.2, seed=8)
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert not all(np.array_equal(first[k], other[k]) for k in first)
    groups = {name: {english[i].lower().replace("  ", " ") for i in index} for name, index in first.items()}
    assert not groups["train"] & groups["valid"] and not groups["train"] & groups["test"]
    assert not groups["valid"] & groups["test"]
    assert sorted(np.concatenate(list(first.values()))) == list(range(600))
    assert len(groups["valid"]) == len(groups["test"]) == 10


def _write_lines(path, lines, compress=False, newline=b"\n"):
    data = b"".join(line + newline for line in lines)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def test_reads_line_aligned_files_and_counts_bad_lines(tmp_path):
    english = _write_lines(tmp_path / "train.en", [b"Hi.", b"Bad \xff.", b"", b"Run!", b"Hi.", b"  Tab\there. ",
                                                   b"Bell\x07."], newline=b"\r\n")
    italian = _write_lines(tmp_path / "train.it.gz", [b"Ciao.", b"Male.", b"", b"", b"Ciao.", "Tab\u00a0qui.".encode(),
                                                      b"Campana."], compress=True)
    pairs, dropped = read_pairs([english, italian])
    assert pairs == [("Hi.", "Ciao."), ("Tab here.", "Tab qui.")]
    assert {k: v for k, v in dropped.items() if v} == {
        "not_utf8": 1, "blank_line": 1, "empty_side": 1, "duplicate": 1, "control_characters": 1}


@pytest.mark.parametrize("en_lines, it_lines", [(3, 2), (2, 3), (1, 5)])
def test_line_aligned_files_with_different_line_counts_are_one_error(tmp_path, en_lines, it_lines):
    english = _write_lines(tmp_path / "a.en", [f"Sentence {i}.".encode() for i in range(en_lines)])
    italian = _write_lines(tmp_path / "a.it", [f"Frase {i}.".encode() for i in range(it_lines)])
    with pytest.raises(CorpusError) as info:
        read_pairs([english, italian])
    assert str(info.value) == (f"line-aligned corpus: {english} has {en_lines:,} lines but {italian} has "
                               f"{it_lines:,}; expected one line per sentence in each")


def test_three_input_paths_are_refused(tmp_path):
    with pytest.raises(CorpusError, match="expected one tab-separated file or two line-aligned files"):
        read_pairs([tmp_path / "a", tmp_path / "b", tmp_path / "c"])


def test_hashed_split_does_not_depend_on_corpus_order():
    english = [f"Sentence {i % 400}." for i in range(2000)]
    first = split_by_source(english, 0.1, 0.1, seed=3)
    order = np.random.default_rng(0).permutation(len(english))
    shuffled = split_by_source([english[i] for i in order], 0.1, 0.1, seed=3)
    by_sentence = {name: {english[i] for i in index} for name, index in first.items()}
    assert by_sentence == {name: {english[order[i]] for i in index} for name, index in shuffled.items()}
    assert len(by_sentence["valid"]) == len(by_sentence["test"]) == 40       # round(0.1 x 400 groups)
