"""Hostile files on the CLI: each ends in a one-line error or a correct output, and no output file is left
behind on failure."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from pipeline.rundir import run_path

TRANSLATE = str(ROOT / "scripts" / "translate.py")


def translate(*args, stdin=None):
    return subprocess.run([sys.executable, TRANSLATE, *map(str, args)], capture_output=True, timeout=300, cwd=ROOT,
                          input=stdin)


def assert_one_line_error(result, *fragments):
    stderr = result.stderr.decode()
    assert result.returncode == 2, stderr[-2000:]
    assert stderr.count("\n") == 1 and stderr.startswith("error: "), stderr
    for fragment in fragments:
        assert fragment in stderr, stderr


@pytest.fixture
def run_dir(tmp_path):
    """A run path for the errors raised before any model loads (reading the input comes first)."""
    return tmp_path / "no-run-needed"


@pytest.mark.parametrize("name,content,fragments", [
    ("binary", bytes(range(256)) * 4, ["line 1", "NUL byte", "binary"]),
    ("utf16", "Hello.\nWhere is the station?\n".encode("utf-16"), ["UTF-16", "save it as UTF-8"]),
    ("latin1", "Caf\xe9 au lait.\n".encode("latin-1"), ["line 1", "not valid UTF-8"]),
    ("long", b"a" * 2_000_001 + b"\n", ["line 1", "longer than 1,000,000 bytes"]),
], ids=lambda value: value if isinstance(value, str) and len(value) < 10 else "")
def test_unreadable_input_files_are_one_line_errors_and_write_nothing(tmp_path, run_dir, name, content, fragments):
    source, out = tmp_path / f"{name}.txt", tmp_path / "out.txt"
    source.write_bytes(content)
    result = translate("--run", run_dir, "--input", source, "--output", out)
    assert_one_line_error(result, str(source), *fragments)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [f"{name}.txt"]


def test_a_directory_as_input_and_an_unwritable_or_same_output(tmp_path, run_dir):
    assert_one_line_error(translate("--run", run_dir, "--input", tmp_path), "is a directory")
    source = tmp_path / "en.txt"
    source.write_text("Hello.\n", encoding="utf-8")
    assert_one_line_error(translate("--run", run_dir, "--input", source, "--output", source), "is the input file")
    assert source.read_text(encoding="utf-8") == "Hello.\n"
    assert_one_line_error(translate("--run", run_dir, "--input", source, "--output", tmp_path / "missing" / "it.txt"),
                          "does not exist")
    if os.geteuid() != 0:                         # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert_one_line_error(translate("--run", run_dir, "--input", source, "--output", locked / "it.txt"),
                              "no permission")


def test_binary_standard_input_is_a_one_line_error(run_dir):
    assert_one_line_error(translate("--run", run_dir, stdin=b"Hello.\n\xff\xfe\n"), "standard input line 2",
                          "not valid UTF-8")


def test_a_utf8_bom_and_100000_empty_lines_translate_line_for_line(trained_tiny, tmp_path):
    source, out = tmp_path / "en.txt", tmp_path / "it.txt"
    source.write_bytes(b"\xef\xbb\xbfI love you.\n" + b"\n" * 100_000 + b"Where is the station?\r\n")
    result = translate("--run", run_path(trained_tiny), "--input", source, "--output", out, "--beam", "1")
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 100_003 and lines[-1] == ""            # one output line per input line
    assert lines[0] and lines[-2] and set(lines[1:-2]) == {""}
    assert not lines[0].startswith("\ufeff")


DOCUMENTS = ROOT / "tests" / "data" / "documents"


@pytest.mark.parametrize("name,content,fragments", [
    ("talk.srt", b"1\nnot a timing\nHello.\n", ["talk.srt: not a SubRip file"]),
    ("guide.docx", b"plain text, not a package", ["guide.docx: not a .docx file (not a zip package)"]),
    ("app.po", b'msgid "a"\nmsgstr "b"\nnonsense\n', ["app.po: not a gettext catalog"]),
])
def test_a_bad_document_is_one_line_before_any_model_loads(tmp_path, run_dir, name, content, fragments):
    source, out = tmp_path / name, tmp_path / f"out-{name}"
    source.write_bytes(content)
    assert_one_line_error(translate("--run", run_dir, "--input", source, "--output", out), *fragments)
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]


def test_a_document_is_translated_whole_with_a_progress_bar(trained_tiny, tmp_path):
    import srt

    out = tmp_path / "talk.it.srt"
    result = translate("--run", run_path(trained_tiny), "--input", DOCUMENTS / "talk.srt", "--output", out, "--beam", 1)
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr[-2000:]
    assert "translate: 100%" in stderr and stderr.rstrip().endswith(f"into {out}")
    before, after = list(srt.parse((DOCUMENTS / "talk.srt").read_text())), list(srt.parse(out.read_text()))
    assert [(c.index, c.start, c.end, c.proprietary) for c in after] == \
        [(c.index, c.start, c.end, c.proprietary) for c in before]
    assert [c.content for c in after] != [c.content for c in before]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["talk.it.srt"]       # no temporary file left
    as_lines = translate("--run", run_path(trained_tiny), "--input", DOCUMENTS / "notes.txt", "--beam", 1)
    assert as_lines.stdout.decode().count("\n") == (DOCUMENTS / "notes.txt").read_text().count("\n")  # .txt: by line
