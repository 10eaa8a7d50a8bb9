"""Xcode String Catalogs (`Localizable.xcstrings`): the run's target localization is added to each string that
lacks one, plural variations and placeholders kept, marked for review; someone's localizations, strings not for
translation and the file's Xcode layout kept; the run's direction must match the catalog's source language."""
import json

import pytest

from pipeline.documents import by_extension, translate_document
from pipeline.language import Direction
from stand_ins import recording, suffixed

CATALOG = {"sourceLanguage": "en", "strings": {
    "Hello %@": {"comment": "Greeting on start"},
    "Welcome back": {"localizations": {"de": {"stringUnit": {"state": "translated", "value": "Willkommen"}}}},
    "files.count": {"localizations": {"en": {"variations": {"plural": {
        "one": {"stringUnit": {"state": "translated", "value": "%lld file found"}},
        "other": {"stringUnit": {"state": "translated", "value": "%lld files found"}}}}}}},
    "Done": {"localizations": {"it": {"stringUnit": {"state": "translated", "value": "Fatto"}}}},
    "com.example.id": {},
    "Brand": {"shouldTranslate": False}},
    "version": "1.0"}


def xcode(catalog: dict) -> bytes:
    """A catalog as Xcode writes it."""
    text = json.dumps(catalog, indent=2, separators=(",", " : "), ensure_ascii=False)
    return (text.replace('"com.example.id" : {}', '"com.example.id" : {\n\n    }') + "\n").encode()


def test_each_string_gets_an_italian_localization_to_review():
    model, seen = recording(suffixed)
    out = translate_document(None, xcode(CATALOG), name="Localizable.xcstrings", translate=model)
    expected = json.loads(json.dumps(CATALOG))
    review = {"state": "needs_review"}
    expected["strings"]["Hello %@"]["localizations"] = {"it": {"stringUnit": {**review, "value": "Hello-it %@"}}}
    expected["strings"]["Welcome back"]["localizations"]["it"] = {
        "stringUnit": {**review, "value": "Welcome-it back-it"}}
    expected["strings"]["files.count"]["localizations"]["it"] = {"variations": {"plural": {
        "one": {"stringUnit": {**review, "value": "%lld file-it found-it"}},
        "other": {"stringUnit": {**review, "value": "%lld files-it found-it"}}}}}
    assert out == xcode(expected)                                      # Xcode's layout, an empty object too
    assert seen == ["Hello 70", "Welcome back", "70 file found", "70 files found"]


def test_the_catalog_s_source_language_decides_the_run():
    italian = dict(CATALOG, sourceLanguage="it", strings={"Ciao a tutti": {}})
    out = json.loads(translate_document(None, xcode(italian), name="a.xcstrings", translate=suffixed,
                                        direction=Direction("it", "en")))
    assert out["strings"]["Ciao a tutti"]["localizations"]["en"]["stringUnit"]["value"] == "Ciao-it a tutti-it"
    with pytest.raises(ValueError, match=r"^a\.xcstrings: a String Catalog whose source language is 'it'; this "
                                         r"run translates English"):
        translate_document(None, xcode(italian), name="a.xcstrings", translate=suffixed, direction=Direction())
    assert by_extension(".xcstrings").name == "xcstrings"
    with pytest.raises(ValueError, match=r"^b\.xcstrings: not a String Catalog: expected an object with"):
        translate_document(None, b'{"strings": []}', name="b.xcstrings", translate=suffixed)


def test_stale_strings_are_left_and_line_ends_kept():
    catalog = {"sourceLanguage": "en", "strings": {"Old one": {"extractionState": "stale"}, "%arg files": {}},
               "version": "1.0"}
    source = xcode(catalog).replace(b"\n", b"\r\n")
    out = translate_document(None, source, name="a.xcstrings", translate=lambda texts: [t.upper() for t in texts])
    assert b"\r\n" in out and b"\n" not in out.replace(b"\r\n", b"")
    data = json.loads(out)
    assert "localizations" not in data["strings"]["Old one"]
    assert data["strings"]["%arg files"]["localizations"]["it"]["stringUnit"]["value"] == "%arg FILES"
