"""JSON string catalogs as web and app projects write them (i18next, Flutter's ARB, a Chrome extension's
messages.json, FormatJS's extracted messages, vue-i18n): the interface's text is translated, placeholders,
references, keys, notes for translators and the file's layout come back as written."""
import json

import pytest

from pipeline.documents import by_extension, translate_document
from pipeline.language import Direction
from stand_ins import recording, suffixed

I18NEXT = """{
  "common": {
    "save": "Save changes",
    "greeting": "Hello {{name}}, you have {{count}} new messages",
    "nested": "$t(common.save) now",
    "key_ref": "common.save",
    "items_one": "{{count}} item",
    "items_other": "{{count}} items",
    "url": "https://example.com/help",
    "html": "Click <b>here</b> to continue",
    "empty": "",
    "num": 3, "flag": true, "list": ["First entry", "Second entry"]
  }
}
"""


def test_an_i18next_file_keeps_its_keys_placeholders_and_layout():
    model, seen = recording(suffixed)
    out = translate_document(None, I18NEXT.encode(), name="en/translation.json", translate=model).decode()
    assert out == I18NEXT.replace("Save changes", "Save-it changes-it").replace(
        "Hello {{name}}, you have {{count}} new messages", "Hello-it {{name}}, you-it have-it {{count}} new-it "
        "messages-it").replace("now", "now-it").replace("item\"", "item-it\"").replace("items\"", "items-it\"") \
        .replace("Click <b>here</b> to continue", "Click-it <b>here</b> to continue-it") \
        .replace("First entry", "First-it entry-it").replace("Second entry", "Second-it entry-it")
    assert not any("{{" in text or "$t(" in text or "common.save" in text for text in seen)   # stand-ins instead
    assert "https://example.com/help" not in seen and "" not in seen


def test_an_arb_file_keeps_its_metadata_and_names_the_target_locale():
    arb = ('{\n    "@@locale": "en",\n    "helloWorld": "Hello World!",\n    "@helloWorld": {"description": "The '
           'conventional greeting"},\n    "nFiles": "{count, plural, =0{No files} one{One file} other{{count} '
           'files}}",\n    "@nFiles": {"placeholders": {"count": {"type": "int"}}}\n}')
    model, seen = recording(suffixed)
    out = json.loads(translate_document(None, arb.encode(), name="app_en.arb", translate=model))
    assert out == {"@@locale": "it", "helloWorld": "Hello-it World-it!",
                   "@helloWorld": {"description": "The conventional greeting"},
                   "nFiles": "{count, plural, =0{No files-it} one{One-it file-it} other{{count} files-it}}",
                   "@nFiles": {"placeholders": {"count": {"type": "int"}}}}
    assert "No files" in seen and not any("plural" in text for text in seen)      # each ICU case alone
    back = translate_document(None, arb.replace('"en"', '"it"').encode(), name="app_it.arb", translate=suffixed,
                              direction=Direction("it", "en"))
    assert json.loads(back)["@@locale"] == "en"


def test_only_a_message_is_read_where_an_entry_holds_notes_for_translators():
    chrome = {"appName": {"message": "My extension", "description": "The name of the app"},
              "greet": {"message": "Hello $USER$, welcome", "placeholders": {"user": {"content": "$1",
                                                                                     "example": "Cira Rossi"}}}}
    formatjs = {"app.title": {"defaultMessage": "Welcome to the app", "description": "Title on the home page"}}
    vue = {"message": {"hello": "hello world", "link": "@:message.hello and more"}}
    for name, data, expected in (
            ("_locales/en/messages.json", chrome, {
                "appName": {"message": "My extension-it", "description": "The name of the app"},
                "greet": {"message": "Hello-it $USER$, welcome-it", "placeholders": chrome["greet"]["placeholders"]}}),
            ("lang/en.json", formatjs, {"app.title": {"defaultMessage": "Welcome-it to the-it app-it",
                                                      "description": "Title on the home page"}}),
            ("locales/en.json", vue, {"message": {"hello": "hello-it world-it",
                                                  "link": "@:message.hello and-it more-it"}})):
        out = translate_document(None, json.dumps(data).encode(), name=name, translate=suffixed)
        assert json.loads(out) == expected, name


def test_escapes_follow_the_source_and_bad_files_are_one_line_errors():
    escaped = b'{"city": "Caf\\u00e9 in the town", "quote": "Say \\"hi\\" now"}'
    out = translate_document(None, escaped, name="a.json", translate=lambda texts: [
        text.replace("Caf\u00e9 in the town", "Caff\u00e8 in citt\u00e0") for text in texts])
    assert out == b'{"city": "Caff\\u00e8 in citt\\u00e0", "quote": "Say \\"hi\\" now"}'    # all ASCII, as it came
    assert by_extension(".arb").name == "json" and by_extension(".json").name == "json"
    for data, message in ((b'{"a": "x",}', r"^b\.json: not JSON: Expecting property name enclosed in double quotes "
                                           r"\(line 1, column 11\)$"),
                          (b'"text"', r"^b\.json: not a JSON string catalog: its top level is a str"),
                          (b"[" * 100_000 + b"]" * 100_000, r"^b\.json: not a JSON string catalog: nested deeper")):
        with pytest.raises(ValueError, match=message):
            translate_document(None, data, name="b.json", translate=suffixed)


def test_apostrophes_follow_each_library_and_notes_are_only_an_extension_s():
    def elided(texts: list[str]) -> list[str]:
        return [text.replace("Open the ", "Apri l'").replace("Delete the ", "Elimina l'") for text in texts]
    choice = "{n, plural, one {Delete the {file}} other {Delete # files}}"
    arb = json.dumps({"@@locale": "en_US", "x": "Open the {file}", "y": choice})
    out = json.loads(translate_document(None, arb.encode(), name="app_en.arb", translate=elided))
    assert out == {"@@locale": "it_IT", "x": "Apri l'{file}",                       # Flutter reads them literally
                   "y": "{n, plural, one {Elimina l'{file}} other {Delete # files}}"}    # (was: l''{file})
    formatjs = json.dumps({"x": {"defaultMessage": "Open the {file}", "description": "A button"}})
    out = json.loads(translate_document(None, formatjs.encode(), name="en.json", translate=elided))
    assert out["x"]["defaultMessage"] == "Apri l''{file}"       # ICU: `'{` would open a literal (was: l'{file})
    nested = {"errors": {"notFound": {"message": "Page not found", "description": "The page does not exist."}}}
    out = json.loads(translate_document(None, json.dumps(nested).encode(), name="en.json", translate=suffixed))
    assert out == {"errors": {"notFound": {"message": "Page-it not-it found-it",            # two texts a user sees
                                           "description": "The-it page-it does-it not-it exist-it."}}}


def test_hostile_values_and_models_give_a_valid_file_fast():
    import time

    data = b'{"lone": "Hello \\ud800 there", "wide": "Wide' + b" " * 20000 + b'gap here", "e": "Caff\xc3\xa8 bar"}'
    started = time.perf_counter()
    out = translate_document(None, data, name="a.json", translate=lambda texts: [
        "" if text.startswith("Caff") else text.upper() for text in texts])
    assert time.perf_counter() - started < 4                     # was 20 s: trailing symbols searched from each space
    assert json.loads(out) == {"lone": "HELLO \ud800 THERE", "wide": "WIDE" + " " * 20000 + "GAP HERE",
                               "e": "Caff\u00e8 bar"}             # an empty translation keeps the source's
    assert b'"HELLO \\ud800 THERE"' in out                       # (was: UnicodeEncodeError)


def test_short_interface_words_are_messages_and_keys_are_data():
    data = {"a": "Yes/No", "b": "N/A", "c": "e.g.", "d": "@string/hello", "e": "com.example.app", "f": "Play/Pause"}
    out = json.loads(translate_document(None, json.dumps(data).encode(), name="en.json",
                                        translate=lambda texts: [t.upper() for t in texts]))
    assert out == {"a": "YES/NO", "b": "N/A", "c": "E.G.", "d": "@string/hello", "e": "com.example.app",
                   "f": "PLAY/PAUSE"}                                            # (was: the first four not read)


def test_patterns_and_media_types_are_data():
    data = {"date": "dd/MM/yyyy", "time": "HH:mm", "type": "application/json", "label": "Date format"}
    out = json.loads(translate_document(None, json.dumps(data).encode(), name="en.json",
                                        translate=lambda texts: [t.upper() for t in texts]))
    assert out == dict(data, label="DATE FORMAT")                               # (was: DD/MM/YYYY sent to the model)


def test_words_that_look_like_patterns_are_messages():
    data = {"a": "Ha-ha", "b": "audio/video", "c": "had/has", "d": "image/png"}
    out = json.loads(translate_document(None, json.dumps(data).encode(), name="en.json",
                                        translate=lambda texts: [t.upper() for t in texts]))
    assert out == {"a": "HA-HA", "b": "AUDIO/VIDEO", "c": "HAD/HAS", "d": "image/png"}
