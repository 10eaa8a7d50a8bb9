"""Java resource bundles (`messages.properties`) as Java and Spring projects write them: values translated, keys,
comments, separators and line ends as written, MessageFormat's apostrophes doubled where Java reads them so, and
the encoding the bundle came in (ASCII with `\\uXXXX` escapes, ISO-8859-1 or UTF-8)."""
import javaproperties
import pytest

from pipeline.documents import by_extension, translate_document
from stand_ins import recording, suffixed

BUNDLE = ("# Messages for the shop\n"
          "app.title=Welcome to the shop\n"
          "greeting = Hello {0}, you have {1,number,integer} new messages\r\n"
          "apostrophe=It''s {0} o''clock\n"
          "plain.apostrophe=Don't forget to save\n"
          "files={0,choice,0#no files|1#one file|1<{0} files} in the folder\n"
          "long.text=This is a long message \\\n    that continues on the next line\n"
          "  spaced.key   :   Spaced value here\n"
          "db.url=jdbc:mysql://localhost/db\n"
          "unicode=Caf\\u00e9 is open today\n"
          "empty=\n"
          "last=No newline at the end")


def test_a_bundle_keeps_everything_but_its_values_translations():
    model, seen = recording(suffixed)
    out = translate_document(None, BUNDLE.encode(), name="messages.properties", translate=model).decode()
    assert out == ("# Messages for the shop\n"
                   "app.title=Welcome-it to the-it shop-it\n"
                   "greeting = Hello-it {0}, you-it have-it {1,number,integer} new-it messages-it\r\n"
                   "apostrophe=It''s {0} o''clock\n"
                   "plain.apostrophe=Don't forget-it to save-it\n"
                   "files={0,choice,0#no files|1#one file|1<{0} files} in the-it folder-it\n"
                   "long.text=This-it is a long-it message-it that-it continues-it on the-it next-it line-it\n"
                   "  spaced.key   :   Spaced-it value-it here-it\n"
                   "db.url=jdbc:mysql://localhost/db\n"
                   "unicode=Caf\\u00e9 is open-it today-it\n"
                   "empty=\n"
                   "last=No newline-it at the-it end-it")
    assert "It's 70 o'clock" in seen                 # MessageFormat's `''` read as one apostrophe
    assert not any("choice" in text or "jdbc" in text for text in seen)


def test_apostrophes_and_characters_are_written_as_java_reads_them():
    def italian(texts: list[str]) -> list[str]:
        return [{"It's 70 o'clock": "Sono le 70 dell'orologio", "Don't forget to save": "Non dimenticare l'ultimo",
                 "Welcome to the shop": " Benvenuti: città\tperò"}.get(text, text) for text in texts]
    ascii_out = translate_document(None, BUNDLE.encode(), name="m.properties", translate=italian).decode()
    assert "apostrophe=Sono le {0} dell''orologio\n" in ascii_out            # an argument: MessageFormat's quote
    assert "plain.apostrophe=Non dimenticare l'ultimo\n" in ascii_out       # none: as Spring reads it
    assert "app.title=\\ Benvenuti: citt\\u00e0\\tper\\u00f2\n" in ascii_out  # an ASCII bundle stays ASCII
    assert javaproperties.loads(ascii_out)["app.title"] == " Benvenuti: città\tperò"
    def euro(texts: list[str]) -> list[str]:
        return ["Benvenuti nel negozio €" if text.startswith("Welcome") else text for text in texts]
    latin = translate_document(None, ("a=Caf\xe9 here\nb=Welcome to the shop\n").encode("iso-8859-1"),
                               name="m.properties", translate=euro)
    assert latin == "a=Caf\xe9 here\nb=Benvenuti nel negozio \\u20ac\n".encode("iso-8859-1")   # € lacks in Latin-1
    utf8 = translate_document(None, "a=Caffè here\nb=Welcome to the shop\n".encode(), name="m.properties",
                              translate=lambda texts: ["Benvenuti €" if text.startswith("Welcome") else text
                                                       for text in texts])
    assert utf8 == "a=Caffè here\nb=Benvenuti €\n".encode()


def test_the_format_is_known_and_bad_escapes_are_one_line_errors():
    assert by_extension(".properties").name == "properties"
    with pytest.raises(ValueError, match=r"^bad\.properties: line 2: an invalid escape `\\uZZ1`: expected \\u and "
                                         r"four hex digits$"):
        translate_document(None, b"a=fine\nb=broken \\uZZ1 here\n", name="bad.properties", translate=suffixed)


def test_review_cases_read_back_as_java_reads_them():
    cases = [("ke\\\n  y=Hello world\n", suffixed, {"key": "Hello-it world-it"}),        # a key cut by a line
             ("greeting Hello there\n", lambda texts: [":) Ciao"], {"greeting": ":) Ciao"}),   # a leading `:`
             ("key=Type '{' to open {0} now\n", lambda texts: [t.replace("Type", "L'utente digita") for t in texts],
              {"key": "L''utente digita '{' to open {0} now"}),                      # a quoted brace kept
             ("greeting=Hello there {0}\n", lambda texts: [t.replace("there", "{amico") for t in texts],
              {"greeting": "Hello there {0}"}),                                      # a brace of its own: refused
             ("key=Home dir ${user.home} folder\n", lambda texts: [t.replace("home", "casa") for t in texts],
              {"key": "Home dir ${user.home} folder"})]                              # Spring's variable whole
    for source, model, expected in cases:
        out = translate_document(None, source.encode(), name="m.properties", translate=model).decode()
        assert javaproperties.loads(out) == expected, (source, out)


def test_a_choice_keeps_its_doubled_apostrophes():
    source = "k={0,choice,0#no files|1#one user''s file|1<{0} files} found for {1}\n"
    out = translate_document(None, source.encode(), name="m.properties", translate=suffixed).decode()
    assert out == "k={0,choice,0#no files|1#one user''s file|1<{0} files} found-it for-it {1}\n"   # (was: user's)
