"""Symbols (© ™ ♥ emoji: Unicode's "other symbol" class) in every format come back where they were: those that open
or end a text are never given to the model, those inside it must come back (else the text between them is
translated piece by piece). A model whose vocabulary lacks them drops them, as the tiny one does."""
import regex

from pipeline.documents import translate_document

from stand_ins import recording, suffixed


def dropping(texts: list[str]) -> list[str]:
    """Translates like `suffixed` and drops every symbol, arrow and keycap mark."""
    return [regex.sub(r"[\p{So}\u2190-\u21ff]\uFE0F?|\uFE0F?\u20e3", "", text) for text in suffixed(texts)]


def translated(text: str, name: str, model=dropping) -> tuple[str, list[str]]:
    translate, seen = recording(model)
    return translate_document(None, text.encode(), name=name, translate=translate).decode(), seen


def test_symbols_that_open_or_end_a_text_are_not_given_to_the_model():
    out, seen = translated("# 🚀 Fast startup\n\n- Works offline ✨\n", "README.md")
    assert seen == ["Fast startup", "Works offline"]
    assert out == "# 🚀 Fast-it startup-it\n\n- Works-it offline-it ✨\n"


def test_a_symbol_inside_a_text_comes_back_in_its_place():
    out, _ = translated("Made with ❤️ by the team.\n\nCopyright © 2024 Acme.\n", "notes.txt")
    assert "Made-it with-it ❤️ by the-it team-it." in out and "Copyright-it © 2024 Acme-it." in out


def test_a_model_that_keeps_the_symbol_translates_the_text_whole():
    _, seen = translated("Made with ❤️ by the team.\n", "notes.txt", model=suffixed)
    assert seen == ["Made with ❤️ by the team."]


def test_a_gettext_catalog_keeps_them_too():
    po = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "Saved ✔ to disk"\nmsgstr ""\n'
    out, _ = translated(po, "app.po")
    assert 'msgstr "Saved-it ✔ to disk-it"' in out


def test_soft_hyphens_and_break_opportunities_do_not_cut_a_word():
    """`inter&shy;national` and `configuration<wbr>manager` read as the words they are: the engines' text path drops
    soft hyphens and zero-width spaces (the model's vocabulary has none), and `<wbr>` cut the word in two texts; a
    text the model is not given keeps them."""
    from pipeline.text import clean_side

    out, seen = translated("<p>The inter&shy;national configuration<wbr>manager works.</p><pre>x<wbr>y</pre>",
                           "page.html", model=lambda texts: suffixed([clean_side(text) for text in texts]))
    assert seen == ["The inter\u00adnational configurationmanager works."]
    assert "<p>The-it international-it configurationmanager-it works-it.</p>" in out and "<pre>x<wbr>y</pre>" in out
    assert clean_side("The inter\u00adnational commit\u200btee\u2060 met.\ufeff") == "The international committee met."


def test_arrows_and_keycaps_come_back_in_their_place():
    out, _ = translated("Choose File \u2192 Save As to keep a copy.\n\n1\ufe0f\u20e3 Install the tool\n", "notes.txt")
    assert "Choose-it File-it \u2192 Save-it As to keep-it a copy-it." in out       # the arrow was dropped
    assert "1\ufe0f\u20e3 Install-it the-it tool-it" in out
