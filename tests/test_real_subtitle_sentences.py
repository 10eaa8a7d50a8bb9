"""A sentence that runs on across cues (`I think that we should` / `go to the station now.`) is read by the model as
one sentence, and its translation shared among the cues by their lengths, each cue keeping its timing. Before, each
half was translated alone. Cues that end a sentence, open one, speak as a dialogue, carry tags or repeat (a rolling
caption) stay alone."""
from pipeline.documents import translate_document
from pipeline.documents.subtitles import split_by_weights

from stand_ins import recording

SRT = """1
00:00:01,000 --> 00:00:03,000
I think that we should

2
00:00:03,100 --> 00:00:05,000
go to the station now.

3
00:00:05,100 --> 00:00:07,000
<i>Where are you going</i>

4
00:00:07,100 --> 00:00:09,000
home, he said.

5
00:00:09,100 --> 00:00:11,000
- Wait for me
- and for him.

6
00:00:11,100 --> 00:00:13,000
We left. Then

7
00:00:13,100 --> 00:00:15,000
we came back.
"""
ITALIAN = {"I think that we should go to the station now.": "Penso che dovremmo andare alla stazione adesso.",
           "We left. Then we came back.": "Siamo partiti. Poi siamo tornati."}


def translated(text: str, name: str = "talk.srt", model=None) -> tuple[list[str], list[str]]:
    translate, seen = recording(model or (lambda texts: [ITALIAN.get(t, t.upper()) for t in texts]))
    out = translate_document(None, text.encode(), name=name, translate=translate).decode()
    return out.strip().split("\n\n"), seen


def test_a_sentence_across_two_cues_is_one_text_shared_by_their_lengths():
    cues, seen = translated(SRT)
    assert "I think that we should go to the station now." in seen
    assert cues[0] == "1\n00:00:01,000 --> 00:00:03,000\nPenso che dovremmo andare"
    assert cues[1] == "2\n00:00:03,100 --> 00:00:05,000\nalla stazione adesso."


def test_tagged_dialogue_and_finished_cues_stay_alone():
    cues, seen = translated(SRT)
    assert {"Where are you going", "home, he said.", "Wait for me", "and for him."} <= set(seen)
    assert cues[2].endswith("\n<i>WHERE ARE YOU GOING</i>") and cues[4].endswith("\n- WAIT FOR ME\n- AND FOR HIM.")
    assert "We left. Then we came back." in seen     # a cue that ends mid-sentence after a full stop runs on
    assert cues[5].endswith("\nSiamo partiti.") and cues[6].endswith("\nPoi siamo tornati.")


def test_a_cue_of_a_capitalised_sentence_or_a_repeat_is_not_joined():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nwe go\n\n2\n00:00:02,000 --> 00:00:03,000\nwe go\n\n"
           "3\n00:00:03,000 --> 00:00:04,000\nand then\n\n4\n00:00:04,000 --> 00:00:05,000\nTom came\n")
    _, seen = translated(srt)
    assert sorted(seen) == ["Tom came", "we go", "we go and then"]


def test_at_most_four_cues_are_one_text_and_webvtt_does_the_same():
    vtt = "WEBVTT\n\n" + "".join(f"00:00:0{i}.000 --> 00:00:0{i}.900\nand word{i}\n\n" for i in range(6))
    cues, seen = translated(vtt, "talk.vtt")
    assert seen == ["and word0 and word1 and word2 and word3", "and word4 and word5"]
    assert [cue.split("\n")[1] for cue in cues[1:]] == [f"AND WORD{i}" for i in range(6)]


def test_a_translation_with_fewer_words_than_cues_leaves_no_cue_empty():
    cues, _ = translated(SRT, model=lambda texts: ["Sì." if "station" in t else t for t in texts])
    assert cues[0].endswith("\nSì.") and cues[1].endswith("\n…")            # never English, never empty


def test_a_cue_the_model_gave_back_empty_keeps_its_text():
    cues, _ = translated(SRT, model=lambda texts: ["" if t == "home, he said." else t for t in texts])
    assert cues[3] == "4\n00:00:07,100 --> 00:00:09,000\nhome, he said."


def test_the_split_prefers_a_comma_near_the_share():
    assert split_by_weights("Sì, ma dopo, andiamo a casa insieme stasera", [10, 10, 10]) == \
        ["Sì, ma dopo,", "andiamo a casa", "insieme stasera"]
    assert split_by_weights("uno due tre quattro", [1, 1]) == ["uno due tre", "quattro"]    # by characters
    assert split_by_weights(" uno\u00a0due\ttre ", [1, 1, 1]) == ["uno", "due", "tre"]        # any space
