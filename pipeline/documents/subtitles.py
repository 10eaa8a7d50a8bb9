"""Subtitles: SubRip (`.srt`, with `srt`) and WebVTT (`.vtt`, with `webvtt-py`), both well kept and pure Python.

What survives exactly: cue numbers and identifiers, timings, positioning (SRT coordinates, WebVTT cue settings),
WebVTT's header, STYLE, REGION and NOTE blocks, and every tag in a cue (`<i>`, `<v Roger>`, `{\\an8}`).
A cue of several lines is one text for the model (the lines of a sentence are one sentence), and its translation
is wrapped again into at most two balanced lines of `WIDTH` characters where it fits. A dialogue cue, each line
opening with a dash, keeps one line per speaker. Tags around the whole cue stay around it; a tag inside it must
come back verbatim (else its text is translated between the tags, `segments`).
"""
from __future__ import annotations

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.segments import Segment, protected_spans, wrap_balanced
from pipeline.extras import require

WIDTH = 42                  # characters per subtitle line (the common broadcast and streaming guideline)
TAG = regex.compile(r"<[^<>\n]{1,200}>|\{\\[^{}\n]{0,200}\}")
EDGE_TAGS = regex.compile(rf"^(?:\s*(?:{TAG.pattern}))*\s*|\s*(?:(?:{TAG.pattern})\s*)*$")
DIALOGUE = regex.compile(r"^\s*[-–—]\s*")
SRT_START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*[0-9]+[ \t]*\r?\n[0-9]{1,2}:[0-9]{2}:[0-9]{2}[,.][0-9]{1,3}\s*-->")


def looks_like_srt(data: bytes) -> bool:
    """A SubRip file's start: a cue number, then a timing line."""
    return bool(SRT_START.match(data[:4096]))


def looks_like_vtt(data: bytes) -> bool:
    """A WebVTT file's start: its signature."""
    return data[:4096].lstrip(b"\xef\xbb\xbf").startswith(b"WEBVTT")


class Cue:
    """One cue's text as segments, and the cue's text again from their translations."""

    def __init__(self, text: str):
        lines = [line for line in text.splitlines() if line.strip()]
        self._dialogue = len(lines) > 1 and all(DIALOGUE.match(line) for line in lines)
        units = lines if self._dialogue else [" ".join(line.strip() for line in lines)]
        self._units = []
        self.segments = []
        for unit in units:
            dash = DIALOGUE.match(unit).group(0) if self._dialogue else ""
            body = unit[len(dash):]
            head = EDGE_TAGS.match(body).group(0)
            tail = EDGE_TAGS.search(body, len(head)).group(0) if len(head) < len(body) else ""
            inner = body[len(head):len(body) - len(tail)]
            self._units.append((dash, head, tail))
            self.segments.append(Segment(inner, protected_spans(inner, TAG)))

    def render(self) -> str:
        lines = []
        for (dash, head, tail), segment in zip(self._units, self.segments):
            if self._dialogue:
                lines.append(dash + head + " ".join(segment.translation.split()) + tail)
            else:
                wrapped = wrap_balanced(segment.translation, WIDTH)
                lines.append(head + "\n".join(wrapped) + tail)
        return "\n".join(lines)


class SrtDocument:
    """A SubRip file: `segments`, and `render()` its bytes."""

    def __init__(self, data: bytes, name: str = "document"):
        srt = require("srt", "documents")
        self._encoded = Encoded(data, name)
        try:
            self._subtitles = list(srt.parse(self._encoded.text.replace("\r\n", "\n")))
        except srt.SRTParseError as exc:
            raise ValueError(f"{name}: not a SubRip file: {str(exc).splitlines()[0]}") from None
        except (OverflowError, ValueError) as exc:           # a timing past what a timedelta holds
            raise ValueError(f"{name}: not a SubRip file: a timing out of range ({exc})") from None
        if not self._subtitles:
            raise ValueError(f"{name}: not a SubRip file: no cues")
        self._cues = [Cue(subtitle.content) for subtitle in self._subtitles]
        self.segments = [segment for cue in self._cues for segment in cue.segments]

    def render(self) -> bytes:
        srt = require("srt", "documents")
        for subtitle, cue in zip(self._subtitles, self._cues):
            subtitle.content = cue.render()
        text = srt.compose(self._subtitles, reindex=False, strict=False)
        if "\r\n" in self._encoded.text:
            text = text.replace("\n", "\r\n")
        return self._encoded.encode(text)


class VttDocument:
    """A WebVTT file: `segments`, and `render()` its bytes."""

    def __init__(self, data: bytes, name: str = "document"):
        webvtt = require("webvtt", "documents")
        self._encoded = Encoded(data, name)
        try:
            self._vtt = webvtt.from_string(self._encoded.text.replace("\r\n", "\n"))
        except (webvtt.errors.MalformedFileError, webvtt.errors.MalformedCaptionError) as exc:
            raise ValueError(f"{name}: not a WebVTT file: {exc}") from None
        timings = sum("-->" in line for line in self._encoded.text.splitlines())
        if timings != len(self._vtt.captions):               # webvtt-py skips a cue it cannot read
            raise ValueError(f"{name}: not a WebVTT file: {timings - len(self._vtt.captions)} of {timings} cues "
                             "cannot be read (timings must look like 00:00:01.000 --> 00:00:02.500)")
        self._cues = [Cue(caption.raw_text) for caption in self._vtt.captions]
        self.segments = [segment for cue in self._cues for segment in cue.segments]

    def render(self) -> bytes:
        for caption, cue in zip(self._vtt.captions, self._cues):
            caption.text = cue.render()
        text = self._vtt.content
        if "\r\n" in self._encoded.text:
            text = text.replace("\n", "\r\n")
        return self._encoded.encode(text)
