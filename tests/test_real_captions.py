"""Captions as YouTube and other players write them: word-timed WebVTT cues (an inline timestamp and a `<c>` span
around each word) are translated as one sentence, rolling captions (each cue repeating the line the cue before
ended with) keep the repeated line as it was translated there, a text in several cues is translated once, and music
notes and other symbols (♪ ♫ 🎵) come back where they were from a model that drops them."""
import itertools

import regex

from pipeline.documents import translate_document
from pipeline.documents.subtitles import without_word_timing
from stand_ins import recording, suffixed


def dropping(texts: list[str]) -> list[str]:
    """A model as a real one is with marks it never learnt: it translates the words (`suffixed`) and drops every
    tag and symbol."""
    return [" ".join(regex.sub(r"<[^<>]*>|\p{So}", " ", text).split()) for text in suffixed(texts)]


def blocks(data: bytes) -> list[str]:
    """A subtitle file's blocks (header, cues), each as written."""
    return data.decode("utf-8").strip("\n").split("\n\n")


# -- 1. word-timed cues --------------------------------------------------------------------------------------------
TALK = ("so<00:00:01.839><c> today</c><00:00:02.159><c> we're</c><00:00:02.399><c> going</c>"
        "<00:00:02.560><c> to</c><00:00:02.720><c> talk</c>")     # as YouTube writes a line
WORD_TIMED = f"""WEBVTT
Kind: captions
Language: en

00:00:01.520 --> 00:00:04.190 align:start position:0%
{TALK}
"""


def test_a_word_timed_cue_is_translated_as_one_sentence():
    model, seen = recording(dropping)
    out = translate_document(model, WORD_TIMED.encode(), name="talk.vtt")
    assert seen == ["so today we're going to talk"]                  # not " today", " we're", ... one by one
    assert blocks(out)[-1] == ("00:00:01.520 --> 00:00:04.190 align:start position:0%\n"
                               "so today-it we're going-it to talk-it")


def test_word_timing_goes_and_meaningful_tags_stay():
    assert without_word_timing("so<00:00:01.839><c.colorE5E5E5> today</c><01:02.159><c> we're</c>") == "so today we're"
    assert without_word_timing("<c.yellow>Hello there</c>") == "<c.yellow>Hello there</c>"      # styling, not timing
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:03.000 line:0 align:start\n"
           "<v Roger><i>Hello<00:00:01.500><c> there</c><00:00:02.000><c> friend</c></i></v>\n\n"
           "00:00:03.000 --> 00:00:05.000\n"
           "We<00:00:03.500><c> really</c> <b>need<00:00:04.000><c> this</c></b><00:00:04.500><c> now</c>\n")
    out = blocks(translate_document(suffixed, vtt.encode(), name="talk.vtt"))
    assert out[1] == "00:00:01.000 --> 00:00:03.000 line:0 align:start\n<v Roger><i>Hello-it there-it friend-it</i></v>"
    assert out[2] == "00:00:03.000 --> 00:00:05.000\nWe really-it <b>need this</b> now-it"


# -- 2. rolling captions, and a text in several cues ---------------------------------------------------------------
ROLLING = f"""WEBVTT
Kind: captions
Language: en

00:00:01.520 --> 00:00:04.190 align:start position:0%
 
{TALK}

00:00:04.190 --> 00:00:04.200 align:start position:0%
so today we're going to talk
 

00:00:04.200 --> 00:00:07.000 align:start position:0%
so today we're going to talk
about<00:00:04.500><c> the</c><00:00:04.800><c> weather</c><00:00:05.100><c> outside</c>

00:00:07.000 --> 00:00:07.010 align:start position:0%
about the weather outside
 

00:00:07.010 --> 00:00:09.000 align:start position:0%
about the weather outside
and<00:00:07.500><c> the</c><00:00:08.000><c> rain</c>
"""


def test_a_rolling_caption_repeats_its_line_as_translated_before():
    model, seen = recording(dropping)
    out = blocks(translate_document(model, ROLLING.encode(), name="talk.vtt"))
    assert seen == ["so today we're going to talk", "about the weather outside", "and the rain"]   # each once
    first, second = "so today-it we're going-it to talk-it", "about-it the-it weather-it outside-it"
    assert [block.split("\n", 1)[1] for block in out[1:]] == \
        [first, first, f"{first}\n{second}", second, f"{second}\nand-it the-it rain-it"]
    assert all(block.startswith("00:") and block.split("\n")[0].endswith(" align:start position:0%")
               for block in out[1:])


def test_a_text_in_several_cues_is_translated_once():
    counter = itertools.count()
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nThank you.\n\n2\n00:00:03,000 --> 00:00:04,000\nSee you.\n\n"
           "3\n00:00:05,000 --> 00:00:06,000\nThank you.\n")
    model, seen = recording(lambda texts: [f"{text} #{next(counter)}" for text in texts])   # never the same twice
    out = blocks(translate_document(model, srt.encode(), name="talk.srt"))
    assert seen == ["Thank you.", "See you."]
    assert out[0].split("\n")[2] == out[2].split("\n")[2] == "Thank you. #0"


# -- 3. music notes and other symbols ------------------------------------------------------------------------------
SONG_SRT = """1
00:00:01,000 --> 00:00:04,000
♪ Never gonna give you up ♪

2
00:00:05,000 --> 00:00:08,000
<i>♫ Never gonna let you down</i>

3
00:00:09,000 --> 00:00:12,000
Sing along 🎵 with everyone 👍🏽
"""


def test_music_notes_and_symbols_come_back_in_a_subrip_file():
    model, seen = recording(dropping)
    out = blocks(translate_document(model, SONG_SRT.encode(), name="song.srt"))
    assert [block.split("\n", 2)[2] for block in out] == [
        "♪ Never-it gonna-it give-it you-it up ♪", "<i>♫ Never-it gonna-it let-it you-it down-it</i>",
        "Sing-it along-it 🎵 with-it everyone-it 👍🏽"]
    assert "Never gonna give you up" in seen                         # the notes around a cue never reach the model


def test_music_notes_and_symbols_come_back_in_a_webvtt_file():
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:04.000 align:center\n♪ Never gonna give you up ♪\n\n"
           "00:00:05.000 --> 00:00:08.000\n- ♪ Never gonna run around ♪\n- Stop singing!\n")
    out = blocks(translate_document(dropping, vtt.encode(), name="song.vtt"))
    assert out[1] == "00:00:01.000 --> 00:00:04.000 align:center\n♪ Never-it gonna-it give-it you-it up ♪"
    assert out[2] == "00:00:05.000 --> 00:00:08.000\n- ♪ Never-it gonna-it run-it around-it ♪\n- Stop-it singing-it!"
