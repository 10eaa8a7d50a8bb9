"""Android string resources (`res/values/strings.xml`) as Android projects write them: strings, arrays and plurals
translated, read and written with Android's escapes, tags, `<xliff:g>` placeholders, CDATA, comments and resources
not for translation kept; the output is what `aapt` reads."""
import pytest
from lxml import etree

from pipeline.documents import by_extension, detected, translate_document
from stand_ins import recording, suffixed

STRINGS = b'''<?xml version="1.0" encoding="utf-8"?>
<!-- Copyright 2024 The App Authors -->
<resources xmlns:tools="http://schemas.android.com/tools" xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2">
    <!-- The app's name -->
    <string name="app_name">My App</string>
    <string name="hello">Hello, %1$s! You have %2$d new messages.</string>
    <string name="apos">Don\\'t forget to save</string>
    <string name="quoted">"It's quoted here"</string>
    <string name="styled">Welcome to <b>Android</b> today!</string>
    <string name="xl">Hello <xliff:g id="name" example="Bob">%1$s</xliff:g>, welcome back</string>
    <string name="nt" translatable="false">Do not translate</string>
    <string-array name="planets">
        <item>Mercury planet</item>
        <item>Venus planet</item>
    </string-array>
    <plurals name="songs">
        <item quantity="one">%d song found.</item>
        <item quantity="other">%d songs found.</item>
    </plurals>
    <string name="cdata"><![CDATA[<b>Bold</b> text here]]></string>
    <string name="ref">@string/app_name</string>
    <string name="amp">Tom &amp; Jerry show</string>
    <string name="nl">First line\\nSecond line</string>
    <dimen name="margin">16dp</dimen>
</resources>
'''


def test_strings_arrays_and_plurals_are_translated_and_the_rest_is_kept():
    model, seen = recording(suffixed)
    out = translate_document(None, STRINGS, name="strings.xml", translate=model)
    assert out == STRINGS.replace(b">My App<", b">My App-it<").replace(
        b"Hello, %1$s! You have %2$d new messages.", b"Hello-it, %1$s! You-it have-it %2$d new-it messages-it.") \
        .replace(b"Don\\'t forget to save", b"Don\\'t forget-it to save-it") \
        .replace(b'"It\'s quoted here"', b'"It\'s quoted-it here-it"') \
        .replace(b"Welcome to <b>Android</b> today!", b"Welcome-it to <b>Android</b> today-it!") \
        .replace(b", welcome back", b", welcome-it back-it").replace(b"Hello <xliff", b"Hello-it <xliff") \
        .replace(b"Mercury planet", b"Mercury-it planet-it").replace(b"Venus planet", b"Venus-it planet-it") \
        .replace(b"song found.", b"song-it found-it.").replace(b"songs found.", b"songs-it found-it.") \
        .replace(b"Bold</b> text here", b"Bold</b> text-it here-it") \
        .replace(b"Tom &amp; Jerry show", b"Tom-it &amp; Jerry-it show-it") \
        .replace(b"First line\\nSecond line", b"First-it line\\nSecond line-it")
    assert "Don't forget to save" in seen and "It's quoted here" in seen       # read as Android reads them
    assert not any("Do not translate" in text or "@string" in text or "16dp" in text for text in seen)


def test_a_translation_is_escaped_as_aapt_reads_it():
    def italian(texts: list[str]) -> list[str]:
        return [{"Don't forget to save": "Non dimenticare l'ultimo \"file\" & 5 < 6",
                 "It's quoted here": "È l'ultima \"volta\"", "My App": "@app mia"}.get(text, text) for text in texts]
    out = translate_document(None, STRINGS, name="strings.xml", translate=italian)
    assert b'<string name="apos">Non dimenticare l\\\'ultimo \\"file\\" &amp; 5 &lt; 6</string>' in out
    assert '<string name="quoted">"È l\'ultima \\"volta\\""</string>'.encode() in out
    assert b'<string name="app_name">\\@app mia</string>' in out           # `@` would read as a reference
    etree.fromstring(out)


def test_a_model_that_drops_a_tag_still_gives_well_formed_xml():
    def dropping(texts: list[str]) -> list[str]:
        return [text.replace("</b>", "").replace("<b>", "<b>") for text in suffixed(texts)]
    out = translate_document(None, STRINGS, name="strings.xml", translate=dropping)
    assert b'<string name="styled">Welcome-it to <b>Android-it</b> today-it!</string>' in out   # between its tags
    etree.fromstring(out)


def test_the_format_is_known_by_content_and_other_xml_is_a_one_line_error():
    assert by_extension(".xml").name == "android" and detected(STRINGS).name == "android"
    with pytest.raises(ValueError, match=r"^book\.xml: not an Android resource file: its root is <book>, not "
                                         r"<resources>$"):
        translate_document(None, b"<book><title>A title</title></book>", name="book.xml", translate=suffixed)
    with pytest.raises(ValueError, match=r"^bad\.xml: not well-formed XML: "):
        translate_document(None, b"<resources><string>x</resources>", name="bad.xml", translate=suffixed)


def resources(body: str, model) -> str:
    data = f'<?xml version="1.0" encoding="utf-8"?>\n<resources>\n{body}\n</resources>\n'.encode()
    out = translate_document(None, data, name="strings.xml", translate=model).decode()
    return out.split("<resources>\n")[1].split("\n</resources>")[0]


def test_review_cases_are_written_as_aapt_reads_them():
    assert resources('<string name="p">Path C:\\\\temp here</string>', suffixed) == \
        '<string name="p">Path-it C:\\\\temp here-it</string>'                  # `\\` then `t`: no tab
    assert resources('<string name="x">Add xmlns:a="http://a/b" now</string>', lambda texts: texts) == \
        '<string name="x">Add xmlns:a="http://a/b" now</string>'                # text that looks like a declaration
    assert resources('<string name="q">Hello "quoted" world</string>', suffixed) == \
        '<string name="q">Hello-it "quoted" world-it</string>'                  # aapt's quote toggles kept
    assert resources('<string name="f">Hello %1$s world</string>', lambda texts: [
        t.replace("world", "mondo 100% sicuro") for t in texts]) == \
        '<string name="f">Hello %1$s mondo 100%% sicuro</string>'               # getString(id, args) reads `%%`
    assert resources('<string name="c">Hello <!-- a > b --> world</string>', suffixed) == \
        '<string name="c">Hello-it <!-- a > b --> world-it</string>'
    assert resources('<string name="s">Hello world</string>', lambda texts: [" @Ciao\nmondo"]) == \
        '<string name="s"> \\@Ciao\\nmondo</string>'                             # not a reference, one line break
    assert resources('<item type="string" name="i">Item text here</item>', suffixed) == \
        '<item type="string" name="i">Item-it text-it here-it</item>'
    crlf = (b'<?xml version="1.0"?>\r\n<!-- Put strings inside <resources> tags -->\r\n<resources>\r\n'
            b'  <string name="a">Hello world</string>\r\n</resources><!-- trailing </resources> -->\r\n')
    assert translate_document(None, crlf, name="strings.xml", translate=suffixed) == crlf.replace(
        b"Hello world", b"Hello-it world-it")                                   # comments and CR LF as written


def test_second_review_cases():
    tail = (b'<?xml version="1.0" encoding="utf-8"?>\n<resources>\n    <!-- Main screen -->\n'
            b'    <string name="a">Hello world</string>\n</resources>\n<!-- generated -->\n')
    assert translate_document(None, tail, name="strings.xml", translate=suffixed) == tail.replace(
        b"Hello world", b"Hello-it world-it")                                  # (was: the file written twice)
    many = (b"<resources>\n" + b"<!-- section -->\n" * 40 + b'<string name="a">Hello world</string>\n'
            + b" " * 2000 + b"</resources>\n")
    import time
    started = time.perf_counter()
    translate_document(None, many, name="strings.xml", translate=suffixed)
    assert time.perf_counter() - started < 3                                   # (was: exponential in comments)
    assert resources('<string name="p">Save 50% on all items</string>', lambda texts: texts) == \
        '<string name="p">Save 50% on all items</string>'                      # no argument: `%` as written
    assert resources('<string name="l">This is a long\n        sentence here</string>', suffixed) == \
        '<string name="l">This-it is a long-it sentence-it here-it</string>'   # aapt's one space, no `\\n`


def test_third_review_cases():
    def free(texts: list[str]) -> list[str]:
        return [text + " (100% free)" for text in texts]
    for source in ("Downloaded %,d files", "Name %S here", "Due %tY now", "Save 100%% now"):
        out = resources(f'<string name="a">{source}</string>', free)
        assert out == f'<string name="a">{source} (100%% free)</string>', out    # a format string: `%%`
    assert resources('<string name="q">Press "  OK  " now to go</string>', lambda texts: texts) == \
        '<string name="q">Press "  OK  " now to go</string>'                    # spaces inside quotes kept
    data = (b'<?xml version="1.0"?>\n<resources>\n  <string name="a">Hello world</string>\n</resources>\n'
            b'<?pi a<?b?>\n')
    assert translate_document(None, data, name="strings.xml", translate=suffixed) == data.replace(
        b"Hello world", b"Hello-it world-it")


def test_a_letter_written_as_its_escape_is_read_as_the_letter_and_written_so_again():
    data = (b'<?xml version="1.0" encoding="utf-8"?>\n<resources>\n'
            b'    <string name="open">Caf\\u00e9 is open\\u2026 \\u0041\\u00a0here.</string>\n</resources>\n')
    model, seen = recording(lambda texts: [text.replace("Café is open…", "Il café è aperto…") for text in texts])
    out = translate_document(None, data, name="strings.xml", translate=model)
    assert seen == ["Café is open… \\u0041\\u00a0here."]          # was: Caf\u00e9, a code inside a word
    assert b"Il caf\\u00e9 \xc3\xa8 aperto\\u2026 \\u0041\\u00a0here." in out   # an ASCII or unprintable one: a code
