"""Apple's `.strings` files as Xcode writes them (UTF-8, or UTF-16 with a byte-order mark): values translated with
their escapes and placeholders (`%@`, `%1$@`, `%lld`, `%#@files@`) as written, keys and comments kept."""
import pytest

from pipeline.documents import by_extension, translate_document
from stand_ins import recording, suffixed

LOCALIZABLE = '''/* Title of the main screen */
"main.title" = "Welcome back";

// A greeting
"greeting" = "Hello %@, you have %lld new \\"messages\\"";
NSCameraUsageDescription = "We need the camera to scan documents.";
"multi" = "Line one\\nLine two";
"files" = "%#@files@ found";
"empty" = "";
"id" = "com.example.app";
'''


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_values_are_translated_and_everything_else_is_kept(encoding):
    model, seen = recording(suffixed)
    out = translate_document(None, LOCALIZABLE.encode(encoding), name="Localizable.strings", translate=model)
    assert out == LOCALIZABLE.replace("Welcome back", "Welcome-it back-it").replace(
        'Hello %@, you have %lld new \\"messages\\"', 'Hello-it %@, you-it have-it %lld new-it \\"messages\\"') \
        .replace("We need the camera to scan documents.", "We need-it the-it camera-it to scan-it documents-it.") \
        .replace("Line one\\nLine two", "Line-it one-it\\nLine-it two-it") \
        .replace("%#@files@ found", "%#@files@ found-it").encode(encoding)
    assert 'Hello 70, you have 71 new "messages"' in seen and "Line one\nLine two" in seen    # escapes read
    assert not any("com.example" in text or "main.title" in text for text in seen)


def test_a_translation_is_escaped_and_a_broken_file_is_a_one_line_error():
    out = translate_document(None, '"a" = "Welcome back";\n'.encode(), name="a.strings",
                             translate=lambda texts: ['Bentornato "amico" \\ a\tte'])
    assert out == '"a" = "Bentornato \\"amico\\" \\\\ a\\tte";\n'.encode()
    assert by_extension(".strings").name == "strings"
    with pytest.raises(ValueError, match=r'^x\.strings: line 2: expected `"key" = "value";` or a comment, got'):
        translate_document(None, b'"a" = "b";\n"c" = "d"\n', name="x.strings", translate=suffixed)


def test_escaped_emoji_and_control_characters_read_as_apple_reads_them():
    model, seen = recording(lambda texts: texts)
    source = '"e" = "\\UD83D\\UDE00 smile at \\bnow";\n"p" = "Added a new placeholder";\n'
    out = translate_document(None, source.encode(), name="a.strings", translate=model)
    assert seen[0].endswith(" smile at \bnow") and "\ud83d" not in seen[0]    # a surrogate pair: one character
    assert out == '"e" = "\U0001F600 smile at \\bnow";\n"p" = "Added a new placeholder";\n'.encode()
    added = translate_document(None, source.encode(), name="a.strings", translate=lambda texts: [
        text.replace("Added a new", "Nuovo %@") for text in texts])
    assert b'"p" = "Added a new placeholder";' in added                     # a placeholder of its own: refused
