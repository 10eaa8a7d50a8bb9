"""XLIFF 1.2 and 2.x, as translation tools and Angular or Symfony write them: each unit without a translation gets
a target after its source, marked as a machine translation to review; inline codes come back exactly, once, well
formed, even from a model that drops or moves one; units not to translate, approved ones and translations someone
wrote are kept; a file for other languages, or with a DOCTYPE, is a one-line error."""
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from pipeline.documents import by_extension, detected, translate_document
from pipeline.documents.messages import icu_messages
from pipeline.language import Direction
from stand_ins import recording, suffixed

V1 = "urn:oasis:names:tc:xliff:document:1.2"
V2 = "urn:oasis:names:tc:xliff:document:2.0"
ANGULAR = f"""<?xml version="1.0" encoding="UTF-8" ?>
<xliff version="1.2" xmlns="{V1}">
  <file source-language="en" datatype="plaintext" original="ng2.template">
    <body>
      <trans-unit id="introductionHeader" datatype="html">
        <source>Hello i18n!</source>
        <context-group purpose="location"><context context-type="sourcefile">app.html</context></context-group>
      </trans-unit>
      <trans-unit id="save">
        <source>Click <g id="1" ctype="x-b">Save</g> to keep <x id="INTERPOLATION" equiv-text="{{{{count}}}}"/> changes &amp; settings.</source>
      </trans-unit>
      <trans-unit id="tag">
        <source>Press <bpt id="1">&lt;kbd&gt;</bpt>Enter<ept id="1">&lt;/kbd&gt;</ept> to go on.</source>
        <target/>
      </trans-unit>
      <trans-unit id="brand" translate="no"><source>ACME Cloud</source></trans-unit>
      <trans-unit id="done" approved="yes"><source>Open the door</source></trans-unit>
      <group id="g" translate="no"><trans-unit id="inner"><source>Left alone</source></trans-unit></group>
      <trans-unit id="human"><source>Close the door</source><target>Chiudi la porta</target></trans-unit>
    </body>
  </file>
</xliff>
"""
SYMFONY_2 = f"""<?xml version="1.0" encoding="utf-8"?>
<xliff xmlns="{V2}" version="2.0" srcLang="en-US" trgLang="it-IT">
  <file id="messages">
    <unit id="welcome">
      <segment>
        <source>Press <pc id="1">Enter</pc> to start <ph id="2" disp="%name%"/> the setup.</source>
      </segment>
      <segment state="final"><source>Kept as it is.</source><target>Lasciato così.</target></segment>
    </unit>
    <unit id="code" translate="no"><segment><source>Not for translation</source></segment></unit>
  </file>
</xliff>
"""


def targets(out: bytes, namespace: str) -> dict:
    root = etree.fromstring(out)
    unit = "trans-unit" if namespace == V1 else "unit"
    return {element.get("id"): element.find(f".//{{{namespace}}}target")
            for element in root.iter(f"{{{namespace}}}{unit}")}


def inner(element) -> str:
    text = etree.tostring(element, encoding="unicode", with_tail=False)
    return text[text.index(">") + 1:text.rindex("<")]


def test_an_xliff_1_2_file_gets_targets_marked_for_review_and_keeps_what_is_not_to_translate():
    model, seen = recording(suffixed)
    out = translate_document(None, ANGULAR.encode(), name="messages.it.xlf", translate=model)
    assert seen == ["Hello i18n!", 'Click <g id="1" ctype="x-b">Save</g> to keep <x id="INTERPOLATION" '
                    'equiv-text="{{count}}"/> changes & settings.',          # text as text, not markup
                    'Press <bpt id="1">&lt;kbd&gt;</bpt>Enter<ept id="1">&lt;/kbd&gt;</ept> to go on.']
    found = targets(out, V1)
    assert inner(found["save"]).replace(f' xmlns="{V1}"', "") == (
        'Click-it <g id="1" ctype="x-b">Save</g> to keep-it <x id="INTERPOLATION" equiv-text="{{count}}"/> '
        'changes-it &amp; settings-it.')
    assert found["introductionHeader"].text == "Hello-it i18n!"
    assert dict(found["tag"].attrib) == {"{http://www.w3.org/XML/1998/namespace}lang": "it",
                                         "state": "needs-review-translation", "state-qualifier": "mt-suggestion"}
    assert found["brand"] is None and found["done"] is None and found["inner"] is None
    assert found["human"].text == "Chiudi la porta"
    root = etree.fromstring(out)
    assert root.find(f"{{{V1}}}file").get("target-language") == "it"
    assert b'        <source>Hello i18n!</source>\n        <target xml:lang="it"' in out     # on a line of its own


def test_an_ampersand_or_a_less_than_sign_the_model_writes_is_text_in_the_target():
    def writes_marks(texts):           # what a model may write: `&` and `<` as text, around the codes it kept
        return [text.replace("Save", "Salva & chiudi").replace("Hello", "Ciao <3") for text in texts]
    out = translate_document(None, ANGULAR.encode(), name="messages.it.xlf", translate=writes_marks)
    found = targets(out, V1)
    assert inner(found["save"]).replace(f' xmlns="{V1}"', "") == (
        'Click <g id="1" ctype="x-b">Salva &amp; chiudi</g> to keep <x id="INTERPOLATION" equiv-text="{{count}}"/> '
        'changes &amp; settings.')
    assert found["introductionHeader"].text == "Ciao <3 i18n!"          # not the source copied in


def test_an_xliff_2_file_keeps_every_inline_code_once_even_where_the_model_drops_one():
    model, seen = recording(lambda texts: [text.replace('<ph id="2" disp="%name%"/>', "") for text in suffixed(texts)])
    out = translate_document(None, SYMFONY_2.encode(), name="messages+intl-icu.it.xlf", translate=model)
    assert seen[0] == 'Press <pc id="1">Enter</pc> to start <ph id="2" disp="%name%"/> the setup.'
    assert len(seen) > 1                                       # the whole translation lost the ph: redone by pieces
    root = etree.fromstring(out)
    segments = list(root.iter(f"{{{V2}}}segment"))
    assert segments[0].get("state") == "translated" and segments[1].get("state") == "final"
    target = segments[0].find(f"{{{V2}}}target")
    assert [(child.tag.rpartition("}")[2], child.get("id")) for child in target] == [("pc", "1"), ("ph", "2")]
    assert "".join(target.itertext()) == "Press-it Enter-it to start-it  the-it setup-it."
    assert segments[1].find(f"{{{V2}}}target").text == "Lasciato così."
    assert targets(out, V2)["code"] is None


def test_a_model_that_moves_a_closing_tag_still_gives_a_well_formed_target():
    def swapped(texts):
        return [text.replace('<g id="1" ctype="x-b">Save</g>', '</g>Save<g id="1" ctype="x-b">') for text in texts]
    out = translate_document(None, ANGULAR.encode(), name="messages.xlf", translate=swapped)
    assert targets(out, V1)["save"].find(f"{{{V1}}}g").text == "Save"


def test_the_format_is_known_and_wrong_files_are_one_line_errors():
    assert by_extension(".xliff").name == "xliff" and detected(ANGULAR.encode()).name == "xliff"
    with pytest.raises(ValueError, match=r"from 'en-US' to 'it-IT'; this run translates it -> en"):
        translate_document(None, SYMFONY_2.encode(), name="m.xlf", translate=suffixed, direction=Direction("it", "en"))
    with pytest.raises(ValueError, match="m.xlf: an XLIFF file with a DOCTYPE"):
        translate_document(None, b'<!DOCTYPE x [<!ENTITY a "b">]><xliff/>', name="m.xlf", translate=suffixed)
    with pytest.raises(ValueError, match="m.xlf: not an XLIFF 1.2 or 2.x file"):
        translate_document(None, b"<root/>", name="m.xlf", translate=suffixed)


def test_prefixes_namespaced_attributes_and_targets_of_codes_alone_are_kept():
    prefixed = (f'<xlf:xliff version="1.2" xmlns:xlf="{V1}"><xlf:file source-language="en" original="a"><xlf:body>'
                '<xlf:trans-unit id="1"><xlf:source>Hello <xlf:g id="1">bold words</xlf:g> there <xlf:x id="2"/> end'
                '</xlf:source></xlf:trans-unit><xlf:trans-unit id="2"><xlf:source><xlf:x id="1"/></xlf:source>'
                '<xlf:target state="final"><xlf:x id="1"/></xlf:target></xlf:trans-unit></xlf:body></xlf:file>'
                '</xlf:xliff>')
    found = targets(translate_document(None, prefixed.encode(), name="a.xlf", translate=suffixed), V1)
    assert [child.tag for child in found["1"]] == [f"{{{V1}}}g", f"{{{V1}}}x"]      # were in no namespace
    assert found["2"].get("state") == "final"                                      # a target of codes alone
    its = "http://www.w3.org/2005/11/its"
    marked = (f'<xliff xmlns="{V2}" version="2.0" srcLang="en"><file id="f"><unit id="u" xmlns:its="{its}">'
              '<segment state="reviewed"><source>Hello <mrk id="m" its:locNote="x">marked words</mrk> end <!-- c -->'
              ' world</source><target/></segment></unit></file></xliff>')
    root = etree.fromstring(translate_document(None, marked.encode(), name="a.xlf", translate=suffixed))
    segment = root.find(f".//{{{V2}}}segment")
    target = segment.find(f"{{{V2}}}target")
    assert target.find(f"{{{V2}}}mrk").get(f"{{{its}}}locNote") == "x"             # was a plain locNote
    assert "".join(target.itertext()) == "Hello-it marked-it words-it end-it world-it"    # one space, no comment
    assert segment.get("state") == "translated"                                    # a machine's, not "reviewed"


def test_a_unit_segmented_by_a_tool_is_translated_segment_by_segment():
    sdlxliff = f"""<xliff xmlns="{V1}" xmlns:sdl="http://sdl.com/FileTypes/SdlXliff/1.0" version="1.2">
  <file source-language="en-US" target-language="it-IT" original="a.docx"><body>
    <trans-unit id="1">
      <source>Open the file. Then save it.</source>
      <seg-source><mrk mtype="seg" mid="1">Open the file.</mrk> <mrk mtype="seg" mid="2">Then <g id="5">save</g> it.</mrk></seg-source>
      <target><mrk mtype="seg" mid="1">Apri il file.</mrk> <mrk mtype="seg" mid="2"/></target>
      <sdl:seg-defs><sdl:seg id="1" conf="Translated"/><sdl:seg id="2"/></sdl:seg-defs>
    </trans-unit>
    <trans-unit id="2">
      <source>Close the door.</source>
      <seg-source><mrk mtype="seg" mid="3">Close the door.</mrk></seg-source>
    </trans-unit>
  </body></file>
</xliff>"""
    model, seen = recording(suffixed)
    out = translate_document(None, sdlxliff.encode(), name="a.docx.sdlxliff", translate=model)
    assert seen == ['Then <g id="5">save</g> it.', "Close the door."]          # the translated segment kept
    found = targets(out, V1)
    assert [(mark.get("mid"), "".join(mark.itertext())) for mark in found["1"]] == [
        ("1", "Apri il file."), ("2", "Then-it save it.")]
    assert [(mark.get("mid"), mark.text) for mark in found["2"]] == [("3", "Close-it the-it door-it.")]
    assert found["2"].get("state-qualifier") == "mt-suggestion" and by_extension(".sdlxliff").name == "xliff"


def test_segmented_units_keep_what_someone_wrote_and_pair_segments_without_ids_by_place():
    def unit(target: str, mids: tuple = ("1", "2")) -> str:
        marks = " ".join(f'<mrk mtype="seg"{f" mid={chr(34)}{mid}{chr(34)}" if mid else ""}>{text}</mrk>'
                         for mid, text in zip(mids, ("Hello there.", "Good morning.")))
        return (f'<trans-unit id="u"><source>Hello there. Good morning.</source><seg-source>{marks}</seg-source>'
                f'{target}</trans-unit>')

    def translated_unit(body: str) -> tuple[list[str], list[str]]:
        page = f'<xliff xmlns="{V1}" version="1.2"><file source-language="en"><body>{body}</body></file></xliff>'
        model, seen = recording(suffixed)
        target = targets(translate_document(None, page.encode(), name="s.xlf", translate=model), V1)["u"]
        return seen, ["".join(mark.itertext()) for mark in target] if len(target) else [target.text]

    assert translated_unit(unit("<target>Ciao. Buongiorno.</target>")) == ([], ["Ciao. Buongiorno."])   # was lost
    assert translated_unit(unit('<target><mrk mtype="seg" mid="1">Ciao.</mrk></target>')) == ([], ["Ciao."])
    assert translated_unit(unit("", mids=(None, None))) == (["Hello there.", "Good morning."],
                                                            ["Hello-it there-it.", "Good-it morning-it."])


def test_a_comment_inside_a_native_code_is_left_out_not_a_crash():
    page = (f'<xliff xmlns="{V1}" version="1.2"><file source-language="en"><body><trans-unit id="1"><source>Press '
            '<ph id="1"><!-- c -->&lt;b&gt;</ph> now please</source></trans-unit></body></file></xliff>')
    found = targets(translate_document(None, page.encode(), name="c.xlf", translate=suffixed), V1)
    assert found["1"].find(f"{{{V1}}}ph").text == "<b>"
    assert "".join(found["1"].itertext()) == "Press-it <b> now-it please-it"


ICU = f"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="{V1}">
  <file source-language="en" target-language="it" datatype="plaintext" original="messages+intl-icu.en.xlf">
    <body>
      <trans-unit id="inbox"><source>You have {{count, plural, =0 {{no new messages}} one {{# new message}} other {{# new messages from {{sender}}}}}}.</source></trans-unit>
      <trans-unit id="ago"><source>{{VAR_PLURAL, plural, =0 {{just now}} =1 {{one minute ago}} other {{<x id="INTERPOLATION" equiv-text="{{{{minutes}}}}"/> minutes ago}}}}</source></trans-unit>
      <trans-unit id="invite"><source>{{host, select, female {{She invited you}} other {{They invited you}}}} to {{party}}.</source></trans-unit>
      <trans-unit id="quoted"><source>{{n, plural, one {{It''s one file, use '{{braces}}'}} other {{It''s # files}}}}</source></trans-unit>
      <trans-unit id="broken"><source>{{count, plural, one {{# file}} other {{# files}}</source></trans-unit>
      <trans-unit id="plain"><source>Hello %name%, you have {{count}} new items and {{{{ total }}}} more.</source></trans-unit>
      <trans-unit id="apples"><source>{{0}} There are no apples|{{1}} There is one apple|]1,Inf[ There are %count% apples</source></trans-unit>
      <trans-unit id="pears"><source>There is one pear|There are %count% pears</source></trans-unit>
      <trans-unit id="title"><source>Home | About us</source></trans-unit>
    </body>
  </file>
</xliff>
"""


def icu_targets(model) -> dict[str, str]:
    out = translate_document(None, ICU.encode(), name="messages+intl-icu.it.xlf", translate=model)
    return {key: inner(target).replace(f' xmlns="{V1}"', "") for key, target in targets(out, V1).items()}


def test_an_icu_message_keeps_its_syntax_and_each_case_is_translated_alone():
    model, seen = recording(suffixed)
    found = icu_targets(model)
    assert found["inbox"] == ("You-it have-it {count, plural, =0 {no new-it messages-it} one {# new-it message-it} "
                              "other {# new-it messages-it from-it {sender}}}.")
    assert found["ago"] == ('{VAR_PLURAL, plural, =0 {just-it now-it} =1 {one-it minute-it ago-it} other '
                            '{<x id="INTERPOLATION" equiv-text="{{minutes}}"/> minutes-it ago-it}}')
    assert found["invite"] == ("{host, select, female {She-it invited-it you-it} other {They-it invited-it you-it}} "
                               "to {party}.")
    assert "no new messages" in seen and "one minute ago" in seen and "She invited you" in seen
    assert [text for text in seen if "plural," in text or "select," in text] == [      # the model never reads syntax
        "{count, plural, one {# file} other {# files}"]                                 # but where it is not ICU
    assert found["broken"] == "{count, plural-it, one-it {# file} other-it {# files}"   # not ICU: plain text


def test_icu_quoting_survives_a_translation_with_apostrophes():
    def italian(texts: list[str]) -> list[str]:
        return [text.replace("It's one file, use", "C'è un file, usa").replace("It's", "Sono")
                .replace("They invited you", "Ti ha invitato l'") for text in texts]
    found = icu_targets(italian)
    assert found["quoted"] == "{n, plural, one {C''è un file, usa '{braces}'} other {Sono # files}}"
    assert found["invite"] == "{host, select, female {She invited you} other {Ti ha invitato l''}} to {party}."


def test_placeholders_and_the_pound_reach_the_model_as_numbers_and_come_back_as_they_were():
    def meddling(texts: list[str]) -> list[str]:        # translates inside anything that looks like a word
        return [text.replace("name", "nome").replace("count", "conteggio").replace("total", "totale")
                .replace("#", "n.") for text in texts]
    model, seen = recording(meddling)
    found = icu_targets(model)
    assert found["plain"] == "Hello %name%, you have {count} new items and {{ total }} more."
    assert found["inbox"].startswith("You have {count, plural, =0 {no new messages} one {# new message}")
    assert not any("#" in text or "%name%" in text or "{count}" in text for text in seen if "plural" not in text)


def test_a_symfony_choice_keeps_its_intervals_and_bars_and_each_message_is_translated_alone():
    model, seen = recording(suffixed)
    found = icu_targets(model)
    assert found["apples"] == ("{0} There-it are-it no apples-it|{1} There-it is one-it apple-it|"
                               "]1,Inf[ There-it are-it %count% apples-it")
    assert found["pears"] == "There-it is one-it pear-it|There-it are-it %count% pears-it"
    assert "There are no apples" in seen and "There is one pear" in seen
    assert "Home | About us" in seen and found["title"] == "Home-it | About-it us"      # a bar alone is no choice


def skeleton(text: str) -> list[str]:
    """What lies between an ICU message's texts (its syntax), or None where it is not ICU."""
    spans = icu_messages(text)
    if spans is None:
        return None
    bounds = [0, *(edge for start, end, _ in spans for edge in (start, end)), len(text)]
    return [text[start:end] for start, end in zip(bounds[::2], bounds[1::2])]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_no_translation_breaks_an_icu_message_s_syntax(data):
    """A model writing anything (braces, apostrophes, `#`, bars): each ICU target still reads as ICU, with the
    source's syntax between its texts, and a Symfony choice keeps its messages."""
    def wild(texts: list[str]) -> list[str]:
        return [data.draw(st.text(alphabet="ab '{}#|,=", max_size=12)) for _ in texts]
    out = translate_document(None, ICU.encode(), name="messages+intl-icu.it.xlf", translate=wild)
    found = {key: inner(target).replace(f' xmlns="{V1}"', "") for key, target in targets(out, V1).items()}
    for key in ("inbox", "invite", "quoted"):
        source = etree.fromstring(ICU.encode()).find(f".//{{{V1}}}trans-unit[@id='{key}']/{{{V1}}}source").text
        assert skeleton(found[key]) == skeleton(source), found[key]
    messages = regex.findall(r"(?:\|\||[^|])+", found["apples"])            # as Symfony splits them
    assert len(messages) == 3 and messages[0].startswith("{0} ") and messages[1].startswith("{1} ")


def xliff_of(*sources: str) -> bytes:
    units = "".join(f'<trans-unit id="{index}"><source>{source}</source></trans-unit>'
                    for index, source in enumerate(sources))
    return (f'<xliff version="1.2" xmlns="{V1}"><file source-language="en" target-language="it"><body>{units}'
            "</body></file></xliff>").encode()


def test_apostrophes_inside_an_icu_case_s_codes_are_the_code_s_not_icu_quoting():
    source = """{n, plural, one {Show <x id="1" equiv-text="{{ a ? 'x' : '' }}"/> file} other {# files}}"""
    out = translate_document(None, xliff_of(source), name="m.xlf", translate=suffixed)
    found = inner(targets(out, V1)["0"]).replace(f' xmlns="{V1}"', "")
    assert found == ("""{n, plural, one {Show-it <x id="1" equiv-text="{{ a ? 'x' : '' }}"/> file-it} """
                     "other {# files-it}}")
    # was: equiv-text="{{ a ? ''x'' : '' }}", the code's apostrophes doubled as ICU text's


def test_a_brace_the_model_makes_up_in_an_icu_case_keeps_that_case_s_source():
    def inventive(texts: list[str]) -> list[str]:       # adds an argument the message does not have
        return [text.replace("files", "{nome} files") for text in suffixed(texts)]
    out = translate_document(None, xliff_of("{n, plural, one {One file} other {# files}}"), name="m.xlf",
                             translate=inventive)
    found = inner(targets(out, V1)["0"]).replace(f' xmlns="{V1}"', "")
    assert found == "{n, plural, one {One-it file-it} other {# files}}"     # was: other {# {nome} files-it}


def test_printf_conversions_side_by_side_are_not_a_symfony_placeholder():
    catalog = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n#, c-format\n'
               'msgid "Version %d.%d.%d, pages %s-%s at %dx%d pixels, %count% in all"\nmsgstr ""\n')
    out = translate_document(None, catalog.encode(), name="a.po", translate=lambda texts: [t.upper() for t in texts])
    msgstr = out.decode().rsplit("msgstr ", 1)[1]
    kept = ["%d"] * 3 + ["%s"] * 2 + ["%d"] * 2 + ["%count%"]
    assert regex.findall(r"%[a-z]+%(?!\w)|%[A-Za-z]", msgstr) == kept, msgstr
    # was: `%d.%` and `%s-%` read as Symfony's %name%, so "VERSION %d.%D.%d, PAGES %s-%S AT %dx%D"


def test_laravel_s_open_interval_is_a_choice():
    source = "{0} There are none|[1,19] There are some|[20,*] There are many"
    out = translate_document(None, xliff_of(source), name="m.xlf", translate=suffixed)
    assert inner(targets(out, V1)["0"]) == ("{0} There-it are-it none-it|[1,19] There-it are-it some-it|"
                                            "[20,*] There-it are-it many-it")       # was: [20,*]-it read as text


def test_many_placeholders_in_a_unit_take_linear_time():
    import time

    source = "Values " + "{x} " * 4000 + "end"
    started = time.perf_counter()
    out = translate_document(None, xliff_of(source), name="m.xlf", translate=suffixed)
    assert time.perf_counter() - started < 4, "quadratic"          # was 9-13 s: each pattern searched again
    assert inner(targets(out, V1)["0"]).count("{x}") == 4000


def test_a_symfony_choice_s_labels_are_kept_not_translated():
    source = "one: There is one apple|more: There are %count% apples"
    model, seen = recording(suffixed)
    out = translate_document(None, xliff_of(source), name="m.xlf", translate=model)
    assert inner(targets(out, V1)["0"]) == "one: There-it is one-it apple-it|more: There-it are-it %count% apples-it"
    assert "There is one apple" in seen and not any("one:" in text for text in seen)      # was: one-it: ...


def test_a_symfony_choice_mixing_intervals_and_labels():
    source = "{0} There are no apples|one: There is one apple|more: There are %count% apples"
    model, seen = recording(lambda texts: [text.replace("|", " o ") for text in suffixed(texts)])
    out = translate_document(None, xliff_of(source), name="m.xlf", translate=model)
    assert inner(targets(out, V1)["0"]) == ("{0} There-it are-it no apples-it|one: There-it is one-it apple-it|"
                                            "more: There-it are-it %count% apples-it")        # was: bars lost
    assert "There is one apple" in seen


def test_what_lies_around_the_root_is_kept_and_a_target_names_the_file_s_regional_language():
    source = ('<?xml version="1.0" encoding="UTF-8"?>\n<!-- exported by a tool -->\n'
              f'<xliff version="1.2" xmlns="{V1}">\n  <file source-language="en-US" target-language="it-IT" '
              'datatype="plaintext" original="x">\n    <body>\n      <trans-unit id="a">\n'
              '        <source>Hello world.</source>\n      </trans-unit>\n    </body>\n  </file>\n</xliff>\n')
    out = translate_document(None, source.encode(), name="m.xlf", translate=suffixed)
    assert out.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<!-- exported by a tool -->\n<xliff ')
    assert out.endswith(b"</xliff>\n")                         # was: the declaration rewritten, the line end gone
    assert targets(out, V1)["a"].get("{http://www.w3.org/XML/1998/namespace}lang") == "it-IT"   # was: it


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_root_s_start_tag_comes_back_as_written(newline):
    """lxml writes a root's namespace declarations before its attributes, in its own quotes, on one line: every
    XLIFF and .resx file's first element changed in the diff."""
    root = "<xliff version='1.2'\n       xmlns=\"urn:oasis:names:tc:xliff:document:1.2\" xmlns:x=\"urn:x\">"
    source = (f'<?xml version="1.0" encoding="UTF-8"?>\n{root}\n  <file source-language="en" target-language="it" '
              'datatype="plaintext" original="a.txt"><body>\n    <trans-unit id="1"><source>Hello world</source>'
              '</trans-unit>\n  </body></file>\n</xliff>\n').replace("\n", newline)
    out = translate_document(None, source.encode(), name="a.xlf", translate=suffixed).decode()
    assert out.startswith(source[:source.index("<file")])
    assert "Hello-it world-it</target>" in out and out.count("\r\n") == source.count("\r\n")
    resx = ('<?xml version="1.0" encoding="utf-8"?>\n<root xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" a="1">\n  <data name="Hello" '
            'xml:space="preserve"><value>Hello world</value></data>\n</root>\n')
    assert translate_document(None, resx.encode(), name="a.resx", translate=suffixed).decode() == \
        resx.replace("<value>Hello world", "<value>Hello-it world-it")


def test_a_root_whose_target_language_is_set_keeps_the_rest_of_its_start_tag_as_written():
    """XLIFF 2 names the target language on the root (`trgLang`): setting it rewrote the whole start tag in lxml's
    layout (declarations first, double quotes, one line), so every such file's first element showed in the diff."""
    root = f"<xliff version='2.0' srcLang='en'\n       xmlns='{V2}'>"
    source = (f"<?xml version='1.0' encoding='UTF-8'?>\n{root}\n  <file id='f'>\n    <unit id='u'><segment>"
              "<source>Hello world</source></segment></unit>\n  </file>\n</xliff>\n")
    out = translate_document(None, source.encode(), name="a.xlf", translate=suffixed).decode()
    assert out.startswith(f"<?xml version='1.0' encoding='UTF-8'?>\n<xliff version='2.0' srcLang='en'\n"
                          f"       xmlns='{V2}'\n       trgLang='it'>\n")
    assert etree.fromstring(out.encode()).get("trgLang") == "it"


NAMES = st.sampled_from(["a", "b", "xml:lang", "x:c", "d"])
VALUES = st.text(st.sampled_from("a'\"&<> \t\nè"), max_size=6)


@given(st.dictionaries(NAMES, VALUES, max_size=5), st.dictionaries(NAMES, VALUES, max_size=5),
       st.sampled_from(["'", '"']), st.sampled_from([" ", "\n  "]))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_an_edited_start_tag_reads_back_as_the_attributes_it_was_given(before, now, quote, space):
    """Whatever is changed, removed or added, the start tag written parses to the new attributes, and the
    attributes left alone are byte for byte as written."""
    from xml.sax.saxutils import escape
    from pipeline.documents.xml_file import edited_start_tag

    def clark(name: str) -> str:
        prefix, _, local = name.rpartition(":")
        return {"": local, "xml": f"{{http://www.w3.org/XML/1998/namespace}}{local}", "x": f"{{urn:x}}{local}"}[
            prefix]

    entities = {quote: "&quot;" if quote == '"' else "&apos;", "\t": "&#9;", "\n": "&#10;"}
    written_attributes = [f"{space}{name}={quote}{escape(value, entities)}{quote}" for name, value in before.items()]
    written = f"<r xmlns:x={quote}urn:x{quote}{''.join(written_attributes)}>".encode()
    parsed = etree.fromstring(written + b"</r>")
    wanted = {clark(name): value for name, value in now.items()}
    edited = edited_start_tag(written, dict(parsed.attrib), wanted, dict(parsed.nsmap), "utf-8")
    assert dict(etree.fromstring(edited + b"</r>").attrib) == wanted
    for piece, name in zip(written_attributes, before):
        if name in now and now[name] == before[name]:
            assert piece.encode() in edited


def test_a_visual_studio_resx_changes_only_in_its_values():
    """lxml wrote every element anew: the schema's `<xsd:import ... />` as `<xsd:import .../>`, its `id` after
    the namespaces, `<value />` as `<value/>`: lines no one translated, in every .resx Visual Studio writes."""
    resx = ('<?xml version="1.0" encoding="utf-8"?>\r\n<root>\r\n  <xsd:schema id="root" xmlns="" '
            'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:msdata="urn:schemas-microsoft-com:xml-msdata">\r\n'
            '    <xsd:import namespace="http://www.w3.org/XML/1998/namespace" />\r\n  </xsd:schema>\r\n'
            "  <resheader name='resmimetype'>\r\n    <value>text/microsoft-resx</value>\r\n  </resheader>\r\n"
            '  <data name="Greeting" xml:space="preserve">\r\n    <value>Hello world &amp; more</value>\r\n'
            '    <comment>Shown on start</comment>\r\n  </data>\r\n  <data name="Empty" xml:space="preserve">\r\n'
            '    <value />\r\n  </data>\r\n</root>\r\n')
    out = translate_document(None, resx.encode(), name="a.resx", translate=suffixed).decode()
    assert out == resx.replace("Hello world &amp; more", "Hello-it world-it &amp; more-it")
