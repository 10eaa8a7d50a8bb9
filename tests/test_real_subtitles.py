"""Subtitles as real projects hand them over (issue 37: files from the pysrt and webvtt-py test suites): tags with
spaces inside (`<font color="red">`, `<v John Smith>`) are never cut by the re-wrapping, files in a legacy 8-bit
encoding come back in it, a SubRip file without cue numbers stays without them, a malformed timing is one clear
error (never a silently changed timing), and a URL in a cue survives a model that drops it."""
import re
from collections import Counter

import pytest

from pipeline.documents import open_document, translate_document
from pipeline.documents.encoding import Encoded
from pipeline.documents.segments import wrap_balanced


def faithful(texts):
    """A model that translates words and keeps every mark: "Word" -> "Word-it"."""
    return [re.sub(r"(?<![^\s(])([A-Za-z]{3,})(?=[\s.,;:?!)]|$)", r"\1-it", text) for text in texts]


def translated(data: bytes, name: str, translate=faithful) -> bytes:
    return translate_document(translate, data, name=name)


TAG = re.compile(r"<[^<>]*>|\{\\[^{}]*\}")           # a tag, also one cut across lines


def visible(line: str) -> int:
    return len(TAG.sub("", line))


# -- 1. re-wrapping never cuts inside a tag ------------------------------------------------------------------------
def test_wrap_balanced_never_cuts_inside_a_tag():
    assert wrap_balanced('It was then that the <font color="red">train</font> left', 42) == \
        ['It was then that the <font color="red">train</font> left']              # tags take no width
    assert wrap_balanced('We waited for hours <font color="red">in the rain</font> outside the old station', 42) == \
        ['We waited for hours <font color="red">in the', 'rain</font> outside the old station']
    assert wrap_balanced("Here is what our guest said <v John Smith>about the night before", 30) == \
        ["Here is what our guest said", "<v John Smith>about the night before"]
    assert wrap_balanced("a  b", 42) == ["a b"] and wrap_balanced("", 42) == [""]


SRT_TAGS = """1
00:00:01,000 --> 00:00:04,000
We waited for hours <font color="red">in the rain</font> outside the old station

2
00:00:05,000 --> 00:00:08,000
{\\an8}Then the <font color="#ffff00" face="Arial">night train</font> finally arrived at last

3
00:00:09,000 --> 00:00:11,000
<font color="red">Nobody on the platform said a single word to anyone</font>
"""

VTT_TAGS = """WEBVTT

00:00:01.000 --> 00:00:04.000
And here is what our guest said <v John Smith>about the night</v>

00:00:05.000 --> 00:00:08.000
<v Roger Bingham>We are in New York City
<v Neil deGrasse Tyson>and we talk about stars

00:00:09.000 --> 00:00:11.000
<c.loud>We waited a long time</c> for the <v Mary Ann Lee>train to finally leave</v>
"""


@pytest.mark.parametrize("name, source", [("x.srt", SRT_TAGS), ("x.vtt", VTT_TAGS)])
def test_rewrapping_keeps_tags_with_spaces_whole(name, source):
    out = translated(source.encode(), name).decode()
    assert Counter(TAG.findall(out)) == Counter(TAG.findall(source))           # every tag, whole, as often
    assert not any("\n" in tag for tag in TAG.findall(out))
    for block in out.split("\n\n")[1 if name.endswith(".vtt") else 0:]:
        text = [line for line in block.split("\n") if line and "-->" not in line and not line.isdigit()]
        assert 1 <= len(text) <= 2 and all(visible(line) <= 42 for line in text), block
    if name.endswith(".vtt"):                                                   # a line per voice, as per dash
        assert "<v Roger Bingham>We are-it in New-it York-it City-it\n<v Neil deGrasse Tyson>and-it we" in out


# -- 2. legacy 8-bit encodings: detected, and written back in them ------------------------------------------------
CUES_1252 = ["“Where’s the café?” — she asked.", "The naïve résumé, déjà vu.", "José broke the piñata…",
             "It’s late — we go.", "Thank you, Renée."]
ITALIAN = "Perché è già l’ora… “sì”"


def srt_of(cues, eol="\n"):
    return eol.join(f"{n}{eol}00:00:{n:02d},000 --> 00:00:{n:02d},900{eol}{cue}{eol}" for n, cue in enumerate(cues, 1))


def test_a_windows_1252_srt_comes_back_in_windows_1252():
    source = srt_of(CUES_1252, "\r\n")
    data = source.encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    assert Encoded(data, "talk.srt", detect=True).text == source
    assert translated(data, "talk.srt").decode("cp1252") == srt_of(faithful(CUES_1252), "\r\n")
    italian = translated(data, "talk.srt", lambda texts: [ITALIAN for _ in texts])
    assert italian.decode("cp1252") == srt_of([ITALIAN] * len(CUES_1252), "\r\n")
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n" + CUES_1252[0] + "\n").encode("cp1252")
    assert translated(vtt, "talk.vtt").decode("cp1252").endswith("— she-it asked-it.\n")


def test_latin_1_and_iso_8859_9_srt_come_back_byte_for_byte_where_untranslated():
    latin = ["We met at the café in München.", "It costs £5, señor.", "The niño sleeps."]
    out = translated(srt_of(latin).encode("latin-1"), "talk.srt")
    assert out == srt_of(faithful(latin)).encode("latin-1")
    turkish = ["We flew to İzmir with Şule.", "Ağaç is a tree.", "Thank you, Ayşe."]
    out = translated(srt_of(turkish).encode("iso8859_9"), "talk.srt")
    assert out.decode("iso8859_9") == srt_of(faithful(turkish))


def test_a_character_the_encoding_lacks_becomes_its_closest():
    russian = ["Привет, как дела? Я не знаю, что сказать.", "Мы уходим завтра утром."]
    data = srt_of(russian).encode("cp1251")
    assert Encoded(data, "talk.srt", detect=True).codec == "cp1251"
    out = translated(data, "talk.srt", lambda texts: ["È già l’ora… “perché”" for _ in texts])
    assert out.decode("cp1251") == srt_of(["E gia l’ora… “perche”"] * 2)      # cp1251 has no È, à, é
    utf8 = srt_of(CUES_1252).encode("utf-8")                                     # UTF-8 stays UTF-8
    assert translated(utf8, "talk.srt").decode("utf-8") == srt_of(faithful(CUES_1252))
    with pytest.raises(ValueError, match=r"^a\.txt: not UTF-8"):                 # only subtitles detect
        Encoded("café".encode("cp1252"), "a.txt")



@pytest.mark.parametrize("mark,codec", [(b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le")])
def test_a_utf_16_srt_comes_back_in_its_own_byte_order_with_its_mark(mark, codec):
    data = mark + srt_of(CUES_1252, "\r\n").encode(codec)
    assert Encoded(data, "talk.srt").text == srt_of(CUES_1252, "\r\n")
    out = translated(data, "talk.srt")
    assert out.startswith(mark) and out[2:].decode(codec) == srt_of(faithful(CUES_1252), "\r\n")
    assert Encoded(data, "a.txt").encode("Perché") == mark + "Perché".encode(codec)

# -- 3. a SubRip file without cue numbers stays without them -------------------------------------------------------
def test_an_srt_without_cue_numbers_stays_without_them():
    import srt

    source = ("00:00:01,000 --> 00:00:02,000\nHello there.\n\n"
              "00:00:03,000 --> 00:00:04,500 X1:10 X2:90 Y1:5 Y2:20\nGood night.\n")
    out = translated(source.encode(), "x.srt").decode()
    assert out == source.replace("Hello there.", "Hello-it there-it.").replace("Good night.", "Good-it night-it.")
    assert [(c.index, c.start, c.end, c.proprietary) for c in srt.parse(out)] == \
        [(c.index, c.start, c.end, c.proprietary) for c in srt.parse(source)]
    mixed = "7\n00:00:01.000 --> 00:00:02,000\nHello.\n\n00:00:03,000 --> 00:00:04,000\nBye.\n"   # as written
    assert translated(mixed.encode(), "x.srt").decode() == mixed.replace("Hello", "Hello-it").replace("Bye", "Bye-it")


# -- 4. a malformed timing is one clear error naming the cue --------------------------------------------------------
@pytest.mark.parametrize("timing", ["-00:00:05,000 --> 00:00:06,000", "00:00:05,000 --> 00:00:0x",
                                    "00:00:0x,000 --> 00:00:06,000", "00:00:05,5 --> 00:00:06,000"])
def test_a_malformed_timing_is_one_error_naming_the_cue(timing):
    source = ("1\n00:00:01,000 --> 00:00:02,000\nOne.\n\n2\n00:00:03,000 --> 00:00:04,000\nTwo.\n\n"
              f"3\n{timing}\nThree.\n\n4\n00:00:07,000 --> 00:00:08,000\nFour.\n")
    with pytest.raises(ValueError) as caught:
        open_document(source.encode(), name="talk.srt")
    assert str(caught.value) == (f'talk.srt: cue 3 (line 10): timing "{timing}" is not '
                                 "HH:MM:SS,mmm --> HH:MM:SS,mmm")


# -- the verbatim spans every format now protects -------------------------------------------------------------------
def test_a_url_in_a_cue_survives_a_model_that_drops_it():
    url = "https://example.org/help?topic=trains"

    def dropping(texts):                     # loses the URL when it reads it inside a sentence
        return faithful([text.replace(url, "").replace("  ", " ") if text != url else text for text in texts])

    source = f"1\n00:00:01,000 --> 00:00:03,000\n<i>See {url} for the times.</i>\n"
    import srt

    [cue] = srt.parse(translated(source.encode(), "x.srt", dropping).decode())
    assert " ".join(cue.content.split()) == f"<i>See-it {url} for-it the-it times-it.</i>"


@pytest.mark.parametrize("end", ["", "\n", "\n\n", "\r\n\r\n"])
def test_a_srt_file_ends_as_it_was_written_and_an_empty_cue_stays_empty(end):
    line = "\r\n" if "\r" in end else "\n"
    source = line.join(["1", "00:00:01,000 --> 00:00:02,000", "Hello.", "", "2", "00:00:03,000 --> 00:00:04,000",
                        "", "3", "00:00:04,000 --> 00:00:05,000", "Good night."]) + end     # cue 2 empty
    assert translated(source.encode(), "talk.srt", lambda texts: texts).decode() == source   # a blank line was
    #                                                             lost at the end, and one added after cue 2


def test_a_cue_s_tags_nest_in_its_translation_whatever_order_the_model_writes_its_words():
    from pipeline.documents.subtitles import tags_nest

    reversed_words = lambda texts: [" ".join(reversed(text.split(" "))) for text in texts]     # noqa: E731
    srt = ("1\n00:00:03,000 --> 00:00:04,000\n<i>Where are you going?</i>\n<b>To the station now.</b>\n\n"
           "2\n00:00:05,000 --> 00:00:06,000\n<font color=\"red\">Red words</font> and plain words here.\n")
    vtt = ("WEBVTT\n\n00:00:07.000 --> 00:00:09.000\n<v Mary>Hello there, my friend!</v> <c.yellow>How are you today?"
           "</c>\n")
    for data, name in ((srt, "talk.srt"), (vtt, "talk.vtt")):
        out = translated(data.encode(), name, reversed_words).decode()
        cues = [block.split("\n", 2)[-1] for block in out.strip().split("\n\n") if "-->" in block]
        assert all(tags_nest(cue) for cue in cues), cues        # was: <i>now. station the <b>To going?</i> ...</b>
        assert "<i>going? you are Where</i>" in out or name != "talk.srt"


def test_the_blank_lines_between_cues_come_back_as_written():
    """Two blank lines, or one holding a space (as rippers write them), were written back as one empty line."""
    source = ("1\n00:00:01,000 --> 00:00:03,000\nHello world\n\n\n2\n00:00:03,000 --> 00:00:05,000\nGood bye\n \n"
              "3\n00:00:05,000 --> 00:00:06,000\nAgain\n")
    out = translate_document(None, source.encode(), name="a.srt", translate=lambda texts: [t.upper() for t in texts])
    assert out.decode() == source.replace("Hello world", "HELLO WORLD").replace("Good bye", "GOOD BYE").replace(
        "Again", "AGAIN")
