"""Plain text as READMEs and INSTALL files write it: indented commands and code, and prompt lines, come back as
written and are never given to the model; an indented quotation is still prose; command options stay verbatim."""
from pipeline.documents import translate_document

from stand_ins import recording, suffixed

INSTALL = """Installation
============

To install the program, run the following commands in the
source directory, as described in the manual that comes with it:

    ./configure --prefix=/usr
    make
    sudo make install

Then start it:
$ myprog --help

    This indented paragraph is a quotation from the manual.
    It ends with a sentence.

Options:
    --verbose    print more
"""


def translated(text: str, model=suffixed) -> tuple[str, list[str]]:
    translate, seen = recording(model)
    return translate_document(None, text.encode(), name="INSTALL.txt", translate=translate).decode(), seen


def test_indented_commands_and_prompt_lines_are_kept_and_not_translated():
    out, seen = translated(INSTALL)
    assert "\n\n    ./configure --prefix=/usr\n    make\n    sudo make install\n\n" in out
    assert "\n$ myprog --help\n" in out
    assert not any("configure" in text or "myprog" in text or text.strip() == "make" for text in seen), seen


def test_an_indented_quotation_is_still_prose():
    out, seen = translated(INSTALL)
    assert "This indented paragraph is a quotation from the manual. It ends with a sentence." in seen
    assert "    This-it indented-it paragraph-it" in out


def test_a_text_indented_throughout_is_prose():
    page = "    The whole text is indented by four.\n\n    So is this second paragraph here.\n"
    out, seen = translated(page)
    assert seen == ["The whole text is indented by four.", "So is this second paragraph here."]


def test_command_options_come_back_as_written_when_a_model_changes_them():
    def mangling(texts):
        return [text.replace("--verbose", "--verboso").replace("print more", "stampa di più") for text in texts]

    out, _ = translated("Options:\n    --verbose    print more\n", mangling)
    assert "--verbose" in out and "--verboso" not in out and "stampa di più" in out


def test_a_list_item_s_marker_is_kept_out_of_what_the_model_reads():
    out, seen = translated("Steps:\n1. Download the installer\n- Run it now\n  • Then reboot\n",
                           lambda texts: [" ".join(reversed(text.split())) for text in texts])
    assert seen == ["Steps:", "Download the installer", "Run it now", "Then reboot"]
    assert out == "Steps:\n1. installer the Download\n- now it Run\n  • reboot Then\n"


def test_a_form_feed_s_line_is_a_page_break_between_paragraphs():
    text = ("This paragraph is hard wrapped at a narrow width so that\nit spans several lines in the file and should "
            "be\nrewrapped after translation.\n\f\nNext page starts here.\n")
    model, seen = recording(lambda texts: list(texts))
    assert translate_document(None, text.encode(), name="a.txt", translate=model) == text.encode()
    assert seen[0].startswith("This paragraph is hard wrapped") and seen[0].endswith("rewrapped after translation.")
