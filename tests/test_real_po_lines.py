"""Gettext catalogs written back line for line: a translated catalog's diff is its translations (and the header's
changed fields), whatever tool wrapped it. polib wrote every entry again by its own wrapping, so a GNU-wrapped
catalog (msgcat, xgettext, msgmerge: 79 columns) came back with untouched msgids folded elsewhere, the header's
fields reordered and a lone `#` above it, and a `--no-wrap` catalog with every long line folded."""
import difflib

import polib
import pytest

from pipeline.documents import translate_document
from pipeline.documents.gettext import PoDocument
from pipeline.documents.po_lines import wrap_width
from pipeline.documents.segments import translate_segments

# as GNU msgcat 0.21 writes it (79 columns): a msgid that polib's textwrap folds after "option of"
GNU_CATALOG = """\
# Italian translations for the Example manual.
msgid ""
msgstr ""
"Project-Id-Version: manual 2.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: \\n"
"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION; with a note that is long "
"enough to be wrapped\\n"
"X-Generator: msgcat\\n"

#: src/dither.c:9
msgid ""
"The different dithering modes are explained in the Dithering Method option "
"of the Dither filter."
msgstr ""

#: src/tools.c:28
#, c-format
msgid ""
"These common features are described here; the variations are explained in "
"the following sections for each tool, %d of them."
msgstr ""

#. a translator's note
#: src/done.c:3
#| msgid "Done"
msgctxt "status"
msgid "Finished"
msgstr "Finito"

#: src/files.c:50
msgid "One file"
msgid_plural "%d files"
msgstr[0] ""
msgstr[1] ""

#~ msgid "These old words are no longer used by the program"
#~ msgstr "Vecchie parole"
"""

def translated(data: bytes, name: str = "manual.po") -> str:
    document = PoDocument(data, name)
    translate_segments(document.segments, lambda texts: [text.upper() for text in texts])
    return document.render().decode("utf-8")


def assert_only_translations_changed(source: str, out: str, header: str) -> None:
    """`out`'s header block is `header`; every other block is the source's up to its msgstr lines, but for its
    flags line; a block not translated (a translation kept, the obsolete one) is the source's whole."""
    before, after = source.split("\n\n"), out.split("\n\n")
    assert len(before) == len(after) and after[0] == header
    for old, new in zip(before[1:], after[1:]):
        if "msgstr \"\"" not in old and 'msgstr[0] ""' not in old:
            assert new == old
            continue
        head = [line for line in old[:old.index("\nmsgstr")].splitlines() if not line.startswith("#,")]
        assert [line for line in new[:new.index("\nmsgstr")].splitlines() if not line.startswith("#,")] == head
        assert "#, fuzzy" in new


def test_a_gnu_wrapped_catalog_changes_only_where_it_is_translated():
    out = translated(GNU_CATALOG.encode())
    header = GNU_CATALOG.split("\n\n")[0].replace('"Language: \\n"', '"Language: it\\n"').replace(
        '"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION; with a note that is long "\n"enough to be wrapped\\n"',
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"')
    assert_only_translations_changed(GNU_CATALOG, out, header)
    # the untouched msgids as GNU wrapped them (polib folded the first after "option of")
    assert '"The different dithering modes are explained in the Dithering Method option "\n"of the Dither filter."' \
        in out
    assert "#, fuzzy, c-format\nmsgid" in out and "#: src/dither.c:9\n#, fuzzy\nmsgid" in out
    catalog = polib.pofile(out)                              # what gettext reads: every translation in its place
    assert catalog.metadata["Language"] == "it" and catalog.metadata["X-Generator"] == "msgcat"
    entries = {entry.msgid: entry for entry in catalog}
    assert entries["The different dithering modes are explained in the Dithering Method option of the Dither "
                   "filter."].msgstr.startswith("THE DIFFERENT DITHERING")
    assert entries["One file"].msgstr_plural == {0: "ONE FILE", 1: "%d FILES"}
    assert entries["Finished"].msgstr == "Finito" and "fuzzy" not in entries["Finished"].flags
    assert max(len(line) for line in out.splitlines() if line.startswith('"')) <= 79   # new lines wrapped as GNU's


def test_a_catalog_written_without_wrapping_stays_unwrapped():
    text = GNU_CATALOG.replace('option "\n"of', "option of").replace('in "\n"the', "in the") \
        .replace('long "\n"enough', "long enough")
    assert wrap_width(text) == 0 and wrap_width(GNU_CATALOG) == 79
    out = translated(text.encode())
    assert 'msgstr "THE DIFFERENT DITHERING MODES ARE EXPLAINED IN THE DITHERING METHOD OPTION OF THE DITHER ' \
           'FILTER."' in out
    header = text.split("\n\n")[0].replace('"Language: \\n"', '"Language: it\\n"').replace(
        '"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION; with a note that is long enough to be wrapped\\n"',
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"')
    assert_only_translations_changed(text, out, header)


def test_babel_s_width_is_kept_for_new_lines():
    babel = ('msgid ""\nmsgstr ""\n"Language: it\\n"\n\nmsgid ""\n"Words that Babel wrapped at seventy-six columns, '
             'as pybabel writes "\n"them, and a few more words."\nmsgstr ""\n')
    assert wrap_width(babel) == 76
    out = translated(babel.encode())
    msgstr = out[out.rindex("msgstr"):].splitlines()
    assert len(msgstr) == 3 and max(len(line) for line in out.splitlines()) <= 76


def test_crlf_and_a_header_without_the_field_are_kept():
    text = GNU_CATALOG.replace('"Language: \\n"\n', "")
    out = translated(text.replace("\n", "\r\n").encode())
    assert "\n" not in out.replace("\r\n", "")
    header = text.split("\n\n")[0].replace(
        '"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION; with a note that is long "\n"enough to be wrapped\\n"',
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"') + '\n"Language: it\\n"'          # added at the end
    assert_only_translations_changed(text, out.replace("\r\n", "\n"), header)


@pytest.mark.parametrize("layout", ["no blank lines between entries", "no header"])
def test_a_catalog_not_laid_out_as_tools_write_it_is_still_written_whole(layout):
    if layout == "no header":
        text = GNU_CATALOG[GNU_CATALOG.index("#: src/dither.c"):]
    else:
        text = GNU_CATALOG.replace('msgstr ""\n\n#: src/tools.c', 'msgstr ""\n#: src/tools.c')
    catalog = polib.pofile(translated(text.encode()))
    assert catalog.metadata["Language"] == "it"
    assert {entry.msgid: entry.msgstr for entry in catalog if not entry.obsolete and not entry.msgid_plural} == {
        "The different dithering modes are explained in the Dithering Method option of the Dither filter.":
            "THE DIFFERENT DITHERING MODES ARE EXPLAINED IN THE DITHERING METHOD OPTION OF THE DITHER FILTER.",
        "These common features are described here; the variations are explained in the following sections for "
        "each tool, %d of them.": "THESE COMMON FEATURES ARE DESCRIBED HERE; THE VARIATIONS ARE EXPLAINED IN THE "
                                  "FOLLOWING SECTIONS FOR EACH TOOL, %d OF THEM.",
        "Finished": "Finito"}


GNU_WRAPPED = [   # (a msgstr, the lines GNU gettext 0.21's `msgcat` writes it in at 79 columns)
    ("Il file è stato salvato correttamente nella cartella dell'utente; premere il pulsante OK per continuare, "
     "oppure Annulla per tornare indietro senza-salvare le modifiche.",
     ['msgstr ""', '"Il file è stato salvato correttamente nella cartella dell\'utente; premere il "',
      '"pulsante OK per continuare, oppure Annulla per tornare indietro senza-"', '"salvare le modifiche."']),
    ("Prima riga\nseconda riga con \"virgolette\" e\tuna tabulazione, abbastanza lunga da andare a capo più di una "
     "volta prima della fine del testo.\n",
     ['msgstr ""', '"Prima riga\\n"', '"seconda riga con \\"virgolette\\" e\\tuna tabulazione, abbastanza lunga da "',
      '"andare a capo più di una volta prima della fine del testo.\\n"']),
    ("Valore %(name)s per %s nella cartella C:\\percorso\\file, con un indirizzo "
     "http://example.com/percorso/lungo-con-trattini e poi ancora parole.",
     ['msgstr ""', '"Valore %(name)s per %s nella cartella C:\\\\percorso\\\\file, con un indirizzo "',
      '"http://example.com/percorso/lungo-con-trattini e poi ancora parole."']),
    ("Breve.", ['msgstr "Breve."']),
]


@pytest.mark.parametrize("value, lines", GNU_WRAPPED)
def test_a_new_msgstr_is_wrapped_as_gnu_msgcat_wraps_it(value, lines):
    """polib wraps with Python's textwrap (a space at a line's start, hyphens never a break, some strings left
    whole): a later `msgmerge` or `msgcat` rewrapped most translated entries."""
    from pipeline.documents.po_lines import gnu_lines

    assert gnu_lines("msgstr", value, 79) == lines


def test_a_translated_catalog_is_one_msgcat_leaves_as_it_is(tmp_path):
    import shutil
    import subprocess

    if shutil.which("msgcat") is None:
        pytest.skip("GNU gettext's msgcat is not installed")
    source = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
              + "".join(f'msgid "Entry {n}: the file was saved in the folder of the user, press OK to go on or '
                        f'Cancel to go back without-saving the changes"\nmsgstr ""\n\n' for n in range(20)))
    (tmp_path / "raw.po").write_text(source, encoding="utf-8")
    subprocess.run(["msgcat", str(tmp_path / "raw.po"), "-o", str(tmp_path / "gnu.po")], check=True)
    out = translate_document(None, (tmp_path / "gnu.po").read_bytes(), name="a.po",
                             translate=lambda texts: [t.replace("the", "il").replace("folder", "cartella-utente")
                                                      for t in texts])
    assert out.count(b'msgstr ""\n"Entry') == 20                  # wrapped, as the catalog is
    (tmp_path / "a.po").write_bytes(out)
    subprocess.run(["msgcat", str(tmp_path / "a.po"), "-o", str(tmp_path / "b.po")], check=True)
    assert (tmp_path / "b.po").read_bytes() == out
