"""The CLI as a user runs it (`python scripts/translate.py ...` from any folder), and its honest errors: a TBX
glossary loads (scripts/ no longer shadows translate-toolkit's `translate`), a damaged model file says so, an
unwritable --output fails before any translating, and out-of-range options are one line, exit 2."""
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from pipeline.rundir import run_path

SCRIPT = str(ROOT / "scripts" / "translate.py")
TBX = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX" xml:lang="en"><text><body>
<termEntry id="t1"><langSet xml:lang="en"><tig><term>file</term></tig></langSet>
<langSet xml:lang="it"><tig><term>archivio</term></tig></langSet></termEntry>
</body></text></martif>
"""


def translate(*args, cwd=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_a_tbx_glossary_loads_from_the_cli_whatever_the_working_directory(trained_tiny, tmp_path):
    pytest.importorskip("lxml.etree")
    terms = tmp_path / "terms.tbx"
    terms.write_text(TBX, encoding="utf-8")
    for cwd in (ROOT, ROOT / "scripts", tmp_path):
        result = translate("--run", str(run_path(trained_tiny)), "--beam", "1", "--glossary", str(terms),
                           "Open the file.", cwd=cwd)
        assert result.returncode == 0, result.stderr[-2000:]                  # was: "translate is not installed"
        assert result.stdout.count("\n") == 1 and "not installed" not in result.stderr


def test_scripts_keep_their_own_folder_off_the_import_path():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import _bootstrap; "
            "print(all(p.rstrip('/') != sys.argv[1] for p in sys.path))")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "scripts")], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "True", out.stderr[-2000:]


def test_a_truncated_model_file_is_called_damaged_not_missing(trained_tiny, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(run_path(trained_tiny), run, ignore=shutil.ignore_patterns("checkpoint", "logs", "ctranslate2*"))
    best = run / "best.keras"
    best.write_bytes(best.read_bytes()[: best.stat().st_size // 2])
    one_line_error(translate("--run", str(run), "Hello."), str(best), "truncated or damaged")


def test_an_unwritable_output_fails_before_translating(trained_tiny):
    started = time.monotonic()
    one_line_error(translate("--run", str(run_path(trained_tiny)), "--output", "/proc/version", "Hello."),
                   "/proc/version", "cannot be written")
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("flags, message", [
    (["--batch-size", "0"], "--batch-size must be >= 1, got 0"),
    (["--max-length", "-5"], "--max-length must be >= 1, got -5"),
    (["--beam", "0"], "--beam must be >= 1, got 0"),
    (["--beam", "100000"], "beam must be from 1 to"),
])
def test_out_of_range_options_are_one_line_errors(trained_tiny, flags, message):
    one_line_error(translate("--run", str(run_path(trained_tiny)), *flags, "Hello."), message)


def test_the_python_api_checks_the_same_ranges(tiny_engine):
    for options, message in ((dict(batch_size=0), "batch_size must be >= 1, got 0"),
                             (dict(max_length=-5), "max_length must be >= 1, got -5"),
                             (dict(beam=100000), f"beam must be from 1 to {len(tiny_engine.vocabulary)}, got 100000")):
        with pytest.raises(ValueError) as info:
            tiny_engine.translate(["Hello."], **options)
        assert str(info.value) == message
