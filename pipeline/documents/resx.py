""".NET resource files (`Resources.resx`, a WinForms form's `.resx`), for a `Resources.it.resx` beside them.

Each string resource's `<value>` (a `<data>` with no `type`, or `System.String`, and no `mimetype`: the others are
images, sizes, positions, numbers) that is a message (`messages.is_message`) is translated as a catalog's message
(`messages.CatalogMessage`), its composite format items (`{0}`, `{0:N2}`, `{1,-10}`) and placeholders kept, never
with a brace `String.Format` would throw on, nor a character XML cannot hold; a form's designer entries
(`>>button1.Name`) and the `<comment>` for translators are not read. Everything else (the schema, `resheader`s,
other resources, comments, layout) comes back as lxml keeps it, and what lies around the root as written.
"""
from __future__ import annotations

import regex

from pipeline.documents.messages import CatalogMessage, is_message
from pipeline.documents.segments import Segment
from pipeline.documents.xml_file import XmlFile

FORMAT_ITEM = regex.compile(r"\{[0-9]+(?:\s*,\s*-?[0-9]+)?(?::[^{}\n]{0,40})?\}")     # .NET's composite format
STRAY_BRACE = regex.compile(r"(?<!\{)\{(?!\{)|(?<!\})\}(?!\})")     # one `{{` or `}}` is an escaped brace
STRING_TYPE = regex.compile(r"System\.String(?:,|$)")                   # `type="System.String, mscorlib"`: a string
XML_CHARACTERS = regex.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class ResxDocument:
    """A `.resx` file: `segments` of its string resources, and `render()` the file again."""

    def __init__(self, data: bytes, name: str = "document"):
        self._file = XmlFile(data, name, "root", "a .NET resource file")
        self._values: list[tuple[object, CatalogMessage]] = []
        for data_element in self._file.root.iterchildren("data"):
            value = data_element.find("value")
            kind = data_element.get("type")
            if kind and not STRING_TYPE.match(kind) or data_element.get("mimetype") or value is None or \
                    data_element.get("name", "").startswith(">>") or not is_message(value.text or ""):
                continue
            text = value.text
            codes = [(match.start(), match.group(0)) for match in FORMAT_ITEM.finditer(text)]
            self._values.append((value, CatalogMessage(text, codes)))
        self.segments: list[Segment] = [segment for _, message in self._values for segment in message.segments]

    def render(self) -> bytes:
        for value, message in self._values:
            translation = message.translation()
            if translation is None or not translation.strip() or XML_CHARACTERS.search(translation):
                continue                              # none, or one XML cannot hold (a control character)
            if FORMAT_ITEM.search(value.text) and STRAY_BRACE.search(FORMAT_ITEM.sub("", translation)):
                continue                              # a brace String.Format would throw on
            value.text = translation
        return self._file.render()
