"""Text formats as real projects write them (issue 37: Django's catalogs, Sphinx, npm, rustfmt and systemd docs).

The stand-in model behaves as the real one did on those files: on the first pass (whole segments) it loses the
URLs, inline tags and emphasis marks, and the numbers that stand in for gettext's spans; on the second (the text
between the spans, piece by piece) it treats each piece as a sentence: it drops the punctuation a piece starts
with, capitalises it and ends it with a full stop. Every span must still come back, and emphasis render the same.
"""
import re
import shutil
import subprocess
from collections import Counter

import pytest

from pipeline.documents import open_document, translate_document, translate_segments

LOST = re.compile(r"https?://\S+|www\.\S+|<[^>]*>|[\w.+-]+@[\w.-]+\w|(?<!\w)~?/[\w/.-]+\w|\*+|(?<!\w)_|_(?!\w)"
                  r"|\b[7-9][0-9]\b")


class Careless:
    """A model that loses spans on the first pass and treats each piece as a sentence on the second."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            return [" ".join(LOST.sub(" ", text).split()).upper() for text in texts]
        out = []
        for text in texts:
            text = text.lstrip(":;,.!? ").upper()
            out.append(text if text.endswith((".", "!", "?")) else text + ".")
        return out


def markdown_marks(text: str) -> list[tuple[str, str]]:
    """The inline tokens but text that markdown-it finds, in order: what a renderer shows as markup."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    return [(child.type, child.markup or child.content) for token in tokens if token.type == "inline"
            for child in token.children if child.type not in ("text", "softbreak")]


def markdown_text(text: str) -> str:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    return "\n".join(child.content for token in tokens if token.type == "inline" for child in token.children
                     if child.type == "text")


def msgfmt_check(tmp_path, data: bytes) -> None:
    if shutil.which("msgfmt") is None:
        pytest.skip("msgfmt (gettext) is not installed")
    path = tmp_path / "out.po"
    path.write_bytes(data)
    result = subprocess.run(["msgfmt", "-c", "-o", "/dev/null", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# -- finding 1: emphasis survives the piece-by-piece fallback ------------------------------------------------------
EMPHASIS_SOURCE = """\
**Warning**: the work is lost when the disk fills.

Press **Save**, then *Close*: the window shuts.

_Note_ that a **bold**word and un*believ*able stay as they are.

A *b **c** d* e, ***both*** here, and __under__ (*in brackets*).

Say "*hi*" to **them**! And see **the manual**/*the guide*.

# Heading *em*: more

- item with **bold**: text
- **Note:** a *second* item

| column | **name**: value |
| --- | --- |
| *x*. | y |
"""


def test_markdown_emphasis_renders_as_in_the_source_when_pieces_are_translated():
    model = Careless()
    out = translate_document(None, EMPHASIS_SOURCE.encode(), name="guide.md", translate=model).decode()
    assert len(model.calls) == 2                                 # the first pass lost the marks: pieces
    assert markdown_marks(out) == markdown_marks(EMPHASIS_SOURCE)
    assert "**WARNING**: THE WORK IS LOST" in out                # no full stop glued to the closing `**`
    assert "*CLOSE*: THE WINDOW SHUTS." in out


# -- finding 2: URLs, addresses, tags, entities and paths come back verbatim ---------------------------------------
MARKDOWN_SPANS = """\
Read the guide at https://docs.example.org/en/stable/install.html before you start.

Write to help@example.org or open <kbd>Ctrl</kbd>+<kbd>O</kbd> and edit ~/.config/tool/settings.toml now.

Builds go to /var/lib/tool/cache; see **www.example.com/status** and <span class="note">this note</span>.
"""


def test_markdown_bare_urls_addresses_paths_and_inline_html_survive():
    model = Careless()
    out = translate_document(None, MARKDOWN_SPANS.encode(), name="spans.md", translate=model).decode()
    text = markdown_text(out)
    for span in ("https://docs.example.org/en/stable/install.html", "help@example.org", "~/.config/tool/settings.toml",
                 "/var/lib/tool/cache", "www.example.com/status"):
        assert span in text and span in out
    assert markdown_marks(out) == markdown_marks(MARKDOWN_SPANS)          # the <kbd> and <span> tags, the bold
    assert "READ THE GUIDE AT" in out and "BEFORE YOU START." in out


def test_a_whole_markdown_translation_that_kept_every_url_is_kept_whole():
    document = open_document(b"See https://example.org/a and **this**.\n", "md")
    translate_segments(document.segments, lambda texts: [t.replace("See", "Vedi").replace("this", "questo")
                                                          for t in texts])
    assert document.segments[0].whole
    assert document.render() == b"Vedi https://example.org/a and **questo**.\n"


def test_plain_text_paragraphs_and_lines_keep_urls_addresses_tags_and_paths():
    source = ("The project lives at https://example.org/tool and its mirror at www.example.net/tool; write\n"
              "to maintainers@example.org with the log from /var/log/tool.log attached to the message.\n\n"
              "Config: ~/.toolrc &amp; C:\\Tools\\tool.ini\n"
              "Open <b>Settings</b> first\n")
    model = Careless()
    out = translate_document(None, source.encode(), "txt", translate=model).decode()
    assert len(model.calls) == 2
    for span in ("https://example.org/tool", "www.example.net/tool", "maintainers@example.org", "/var/log/tool.log",
                 "~/.toolrc", "&amp;", "C:\\Tools\\tool.ini", "<b>", "</b>"):
        assert span in out
    assert out.count("\n\n") == 1 and "THE PROJECT LIVES AT" in out


DJANGO_LIKE = rb'''# A catalog as Django's are written.
msgid ""
msgstr ""
"Project-Id-Version: example\n"
"Report-Msgid-Bugs-To: \n"
"POT-Creation-Date: 2024-01-01 00:00+0000\n"
"PO-Revision-Date: 2024-01-01 00:00+0000\n"
"Last-Translator: Nobody <nobody@example.org>\n"
"Language-Team: Italian <it@example.org>\n"
"Language: it\n"
"MIME-Version: 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

#: views/templates/welcome.html:10
#, python-format
msgid ""
"You see this page because <a href=\"https://docs.example.org/en/%(version)s/"
"ref/settings/#debug\" target=\"_blank\" rel=\"noopener\">DEBUG=True</a> is "
"in your settings file and no URLs are configured."
msgstr ""

#: views/templates/welcome.html:20
msgid "Read the release notes at https://www.example.org/releases/ before upgrading."
msgstr ""

#: views/templates/welcome.html:21
msgid "Questions go to users@example.org or to https://forum.example.org/c/help."
msgstr ""

#: views/templates/welcome.html:22
#, python-format
msgid "%(name)s moved to https://example.org/new/%(name)s &mdash; update the link."
msgstr ""
'''


def test_gettext_keeps_long_tags_urls_and_addresses_and_passes_msgfmt(tmp_path):
    import polib

    model = Careless()
    out = translate_document(None, DJANGO_LIKE, name="django.po", translate=model)
    assert len(model.calls) == 2
    msgfmt_check(tmp_path, out)
    catalog = {entry.msgid: entry.msgstr for entry in polib.pofile(out.decode())}
    spans = re.compile(r"<[^>]+>|https?://[^\s\"<]+[\w/]|[\w.]+@[\w.]+\w|%\(\w+\)s|&\w+;")
    for msgid, msgstr in catalog.items():
        assert Counter(spans.findall(msgstr)) == Counter(spans.findall(msgid)), (msgid, msgstr)
        words = spans.sub("", msgstr)
        assert words == words.upper() and words != spans.sub("", msgid)        # translated around the spans
    tag = ('<a href="https://docs.example.org/en/%(version)s/ref/settings/#debug" target="_blank" rel="noopener">'
           'DEBUG=TRUE.</a>')
    assert tag in next(msgstr for msgid, msgstr in catalog.items() if "DEBUG" in msgid)


def test_an_underscore_inside_a_path_url_or_tag_is_not_an_accelerator():
    import polib

    data = (b'msgid ""\nmsgstr ""\n"Language: it\\n"\n\n'
            b'msgid "Styles are in /_static/css."\nmsgstr ""\n\n'
            b'msgid "See https://x.org/_p now"\nmsgstr ""\n\n'
            b'msgid "_Save"\nmsgstr ""\n')
    out = translate_document(None, data, name="a.po", translate=lambda texts: [text.upper() for text in texts])
    catalog = {entry.msgid: entry.msgstr for entry in polib.pofile(out.decode())}
    assert catalog == {"Styles are in /_static/css.": "STYLES ARE IN /_static/css.",
                       "See https://x.org/_p now": "SEE https://x.org/_p NOW", "_Save": "_SAVE"}


# -- finding 3: an English source catalog ----------------------------------------------------------------------
ENGLISH_CATALOG = rb'''# Source strings, as Django ships them.
msgid ""
msgstr ""
"Project-Id-Version: example\n"
"PO-Revision-Date: 2024-01-01 00:00+0000\n"
"Last-Translator: Nobody <nobody@example.org>\n"
"Language-Team: English <en@example.org>\n"
"Language: en\n"
"MIME-Version: 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

#: forms.py:3
msgid "Enter a valid value."
msgstr ""

#: forms.py:7
#, python-format
msgid "Ensure this value has at most %(limit_value)d character."
msgid_plural "Ensure this value has at most %(limit_value)d characters."
msgstr[0] ""
msgstr[1] ""

#: forms.py:9
msgid "Save"
msgstr "Save"
'''


@pytest.mark.parametrize("language", ["en", "en_US", "en-GB"])
def test_an_english_catalog_is_a_source_catalog_translated_into_italian(tmp_path, language):
    import polib

    data = ENGLISH_CATALOG.replace(b'"Language: en\\n"', f'"Language: {language}\\n"'.encode())
    out = translate_document(None, data, name="django.po", translate=lambda texts: [t.upper() for t in texts])
    msgfmt_check(tmp_path, out)
    catalog = polib.pofile(out.decode())
    assert catalog.metadata["Language"] == "it"
    assert catalog.metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);"
    entries = {entry.msgid: entry for entry in catalog}
    assert entries["Enter a valid value."].msgstr == "ENTER A VALID VALUE."
    assert entries["Save"].msgstr == "SAVE" and "fuzzy" in entries["Save"].flags     # English msgstrs are redone
    plural = entries["Ensure this value has at most %(limit_value)d character."]
    assert plural.msgstr_plural == {0: "ENSURE THIS VALUE HAS AT MOST %(limit_value)d CHARACTER.",
                                    1: "ENSURE THIS VALUE HAS AT MOST %(limit_value)d CHARACTERS."}


def test_other_languages_are_still_refused():
    data = ENGLISH_CATALOG.replace(b'"Language: en\\n"', b'"Language: eo\\n"')
    with pytest.raises(ValueError, match=r"^django\.po: a catalog for language 'eo'; expected an Italian one"):
        open_document(data, name="django.po")


# -- finding 4: a translated template downloads as a catalog ---------------------------------------------------
def test_a_translated_template_downloads_as_a_po_file(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from pipeline.service import ServiceSettings, create_app
    from pipeline.service.file_store import translated_name

    assert translated_name("locale/django.pot") == "django.it.po" and translated_name("APP.POT") == "APP.it.po"
    assert translated_name("talk.srt") == "talk.it.srt" and translated_name("app.po") == "app.it.po"
    assert translated_name("Über café.html") == "Uber_cafe.it.html"         # was mlaut-like: "ber_caf.it.html"
    assert translated_name("文档.docx") == "document.it.docx"

    class Upper:
        def translate(self, sentences, beam=None, batch_size=None, glossary=None):
            return [sentence.upper() for sentence in sentences]

    settings = ServiceSettings(beam=1, max_wait_ms=1, max_batch=4, files_dir=str(tmp_path / "files"))
    template = b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=CHARSET\\n"\n\nmsgid "Open"\nmsgstr ""\n'
    with TestClient(create_app(Upper(), settings)) as client:
        response = client.post("/translate_file", files={"file": ("app.pot", template)},
                               data={"source": "en", "target": "it"})
        assert response.status_code == 200, response.text
        url = response.json()["translatedFileUrl"]
        assert url.endswith(".app.it.po")
        download = client.get(url)
        assert download.headers["content-disposition"] == 'attachment; filename="app.it.po"'
        assert b'msgstr "OPEN"' in download.content
        native = client.post("/translate_document", files={"file": ("app.pot", template)})
        assert native.headers["content-disposition"] == 'attachment; filename="app.it.po"'


LINGUI = rb'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"X-Generator: @lingui/cli\n"

#: src/Inbox.tsx:12
msgid "{count, plural, one {You have # unread message} other {You have # unread messages}}"
msgstr ""

#: src/Invite.tsx:8
msgid "{host} invited you to {party}"
msgstr ""

#: src/Cart.php:4
msgid "{0} Your cart is empty|{1} One item in your cart|]1,Inf[ %count% items in your cart"
msgstr ""
'''


def test_icu_and_symfony_choices_in_a_catalog_keep_their_syntax(tmp_path):
    import polib
    from stand_ins import recording, suffixed

    model, seen = recording(suffixed)
    out = translate_document(None, LINGUI, name="messages.pot", translate=model)
    catalog = {entry.msgid: entry.msgstr for entry in polib.pofile(out.decode())}
    assert catalog["{count, plural, one {You have # unread message} other {You have # unread messages}}"] == (
        "{count, plural, one {You-it have-it # unread-it message-it} other {You-it have-it # unread-it messages-it}}")
    assert catalog["{host} invited you to {party}"] == "{host} invited-it you-it to {party}"
    assert catalog["{0} Your cart is empty|{1} One item in your cart|]1,Inf[ %count% items in your cart"] == (
        "{0} Your-it cart-it is empty-it|{1} One-it item-it in your-it cart-it|]1,Inf[ %count% items-it in your-it "
        "cart-it")
    assert not any("plural," in text or "|" in text for text in seen)
    msgfmt_check(tmp_path, out)


SPHINX = rb'''# A catalog as sphinx-build -b gettext writes it.
msgid ""
msgstr ""
"Project-Id-Version: Demo 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Generated-By: Babel 2.14.0\n"

#: ../../source/usage.rst:12
msgid "Run ``make html`` and open the ``_build/html`` folder, as :ref:`the install guide <install>` says."
msgstr ""

#: ../../source/usage.rst:20
msgid "Use :py:class:`~pathlib.Path` with |project| |version|, see `Python <https://www.python.org>`_ and [1]_."
msgstr ""

#: ../../source/usage.rst:31
msgid "Write ``{count, plural, one {# file} other {# files}}`` in the template."
msgstr ""

#: ../../source/usage.rst:40
msgid "Keep the _build folder out of version control."
msgstr ""

#: ../../source/guide.md:5
msgid "Run `make html` and see [the guide](install.md)."
msgstr ""
'''


@pytest.mark.parametrize("located", [True, False])
def test_a_sphinx_catalog_keeps_its_markup_as_written(tmp_path, located):
    import polib
    from stand_ins import recording

    catalog = SPHINX if located else re.sub(rb"#: [^\n]*\n", b"", SPHINX)      # gettext_location = False
    model, seen = recording(lambda texts: [text.upper() for text in texts])     # translates inside anything
    out = translate_document(None, catalog, name="usage.pot", translate=model)
    found = {entry.msgid: entry.msgstr for entry in polib.pofile(out.decode())}
    kept = ["``make html``", "``_build/html``", ":ref:`", " <install>`", ":py:class:`~pathlib.Path`",
            "|project|", "|version|", "<https://www.python.org>", "[1]_",
            "``{count, plural, one {# file} other {# files}}``"]
    for msgid, msgstr in found.items():
        for span in kept:
            assert msgstr.count(span) == msgid.count(span), (span, msgstr)   # was: ``MAKE HTML``, :REF:`THE ...`
    assert found["Keep the _build folder out of version control."] == "KEEP THE _BUILD FOLDER OUT OF VERSION CONTROL."
    assert not any("plural," in text for text in seen)            # a choice inside a literal is no choice
    markdown = found["Run `make html` and see [the guide](install.md)."]
    assert ("`make html`" in markdown and "](install.md)" in markdown) == located   # by the references alone
    msgfmt_check(tmp_path, out)


def test_a_titled_link_or_role_keeps_its_target_after_its_title_whatever_order_the_model_writes():
    reversed_words = lambda texts: [" ".join(reversed(text.split(" "))) for text in texts]    # noqa: E731
    found = translations(catalog_of(("../../source/install.rst:14", "See the `Python website <https://python.org/>`_ "
                                                                   "or :ref:`the setup guide <install>` first.")),
                         reversed_words)
    msgstr = next(iter(found.values()))
    link = re.search(r"`[^`<]+ <https://python\.org/>`_", msgstr)      # was: "... <https://python.org/>`_ website `Python"
    role = re.search(r":ref:`[^`<]+ <install>`", msgstr)
    assert link and role and msgstr.count("`") == 4, msgstr


def catalog_of(*entries: tuple) -> bytes:
    """A catalog of (reference or None, msgid) entries."""
    head = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    return (head + "".join((f"#: {reference}\n" if reference else "") + f'msgid "{msgid}"\nmsgstr ""\n\n'
                           for reference, msgid in entries)).encode()


def translations(catalog: bytes, model) -> dict[str, str]:
    import polib

    out = translate_document(None, catalog, name="messages.pot", translate=model)
    return {entry.msgid: entry.msgstr for entry in polib.pofile(out.decode())}


def test_only_an_entry_from_a_document_reads_its_markup():
    from stand_ins import suffixed

    found = translations(catalog_of(("src/main.c:11", "_Save"), ("src/main.c:12", "Pick a `name` for the |file|"),
                                    ("help/README.md:3", "Read the `manual` first"),
                                    ("docs/README.md:block 3 (paragraph)", "Run `make html` to build it"),
                                    ("../../pkg/mod.py:docstring of pkg.mod.f:1", "Returns a ``Path`` object")),
                         lambda texts: [text.upper() for text in suffixed(texts)])
    assert found["_Save"] == "_SAVE-IT"                     # was: _Save, its accelerator left to the model
    assert found["Pick a `name` for the |file|"] == "PICK-IT A `NAME` FOR-IT THE-IT |FILE|"   # a program's: text
    assert found["Read the `manual` first"] == "READ-IT THE-IT `manual` FIRST-IT"           # Markdown's code span
    assert found["Run `make html` to build it"] == "RUN-IT `make html` TO BUILD-IT IT"       # mdpo's reference
    assert found["Returns a ``Path`` object"] == "RETURNS-IT A ``Path`` OBJECT-IT"          # autodoc's docstring
    found = translations(catalog_of((None, "cannot open ``%s'': no such file"), (None, "_Open the file")),
                         lambda texts: [text.upper() for text in suffixed(texts)])
    assert found["_Open the file"] == "_OPEN-IT THE-IT FILE-IT"     # TeX quotes are no literal: no Sphinx catalog


def test_sphinx_codes_inside_codes_titles_and_links_read_as_one_sentence():
    reference = "../../source/usage.rst:12"
    model, seen = recording_upper()
    found = translations(catalog_of((reference, "The :class:`Path` class creates `Path` objects for you."),
                                    (reference, "Use ``make `html` now`` to build."),
                                    (reference, "See :ref:`the install guide <install>` first."),
                                    (reference, "Read `the manual <https://example.com>`_ today.")), model)
    assert "The 70 class creates 71 objects for you." in seen           # whole (was: cut at each code)
    assert found["Use ``make `html` now`` to build."] == "USE ``make `html` now`` TO BUILD."
    assert found["See :ref:`the install guide <install>` first."] == "SEE :ref:`THE INSTALL GUIDE <install>` FIRST."
    assert found["Read `the manual <https://example.com>`_ today."] == "READ `THE MANUAL <https://example.com>`_ TODAY."


def recording_upper():
    from stand_ins import recording

    return recording(lambda texts: [text.upper() for text in texts])


def test_symfony_placeholders_against_letters_and_printf_ones():
    found = translations(catalog_of(("src/a.php:1", "Image size: %width%x%height% pixels"),
                                    ("src/a.php:2", "Remaining time: %days%d %hours%h left")),
                         lambda texts: [text.upper() for text in texts])
    assert found["Image size: %width%x%height% pixels"] == "IMAGE SIZE: %width%X%height% PIXELS"   # was %WIDTH%
    assert found["Remaining time: %days%d %hours%h left"] == "REMAINING TIME: %days%D %hours%H LEFT"


def test_spans_side_by_side_reach_the_model_as_one_number_and_the_sentence_whole():
    catalog = catalog_of((None, "Click <b>%s</b> to open the settings page."),
                         (None, "Welcome <strong>{name}</strong>, you have %d new messages."))
    from stand_ins import recording

    model, seen = recording(lambda texts: [text.replace("Click", "Clicca") for text in texts])
    found = translations(catalog, model)
    assert seen == ["Click 70 to open the settings page.", "Welcome 70, you have 71 new messages."]   # was 707172
    assert found["Click <b>%s</b> to open the settings page."] == "Clicca <b>%s</b> to open the settings page."
    assert found["Welcome <strong>{name}</strong>, you have %d new messages."] == \
        "Welcome <strong>{name}</strong>, you have %d new messages."


@pytest.mark.parametrize("declared", ["UTF-16", "UTF-7", "base64", "rot13", "idna"])
def test_a_catalog_written_as_utf8_says_utf8_whatever_charset_it_declared(declared):
    import polib

    head = f'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset={declared}\\n"\n\nmsgid "Hello world."\nmsgstr ""\n'
    data = head.encode("utf-16") if declared == "UTF-16" else head.encode()
    out = translate_document(None, data, name="x.po", translate=lambda texts: [t + " (it)" for t in texts])
    assert b"charset=UTF-8" in out and polib.pofile(out.decode("utf-8")).find("Hello world.").msgstr    # was: its
    #     UTF-8 bytes under a UTF-16 header (a broken catalog), or a traceback (`base64` is no text encoding)
