"""Subtitles: SubRip (`.srt`, with `srt`) and WebVTT (`.vtt`, with `webvtt-py`), both well kept and pure Python, and
Advanced SubStation Alpha (`.ass`, `.ssa`: `AssDocument`, its `[Events]` lines read here, as only their Text field
changes and a library would write the rest anew).

What survives exactly: cue numbers and identifiers (a SubRip file without numbers stays without), timings and
positioning (SRT coordinates, WebVTT cue settings), WebVTT's header, STYLE, REGION and NOTE blocks (byte for byte,
in their places), every tag in a cue (`<i>`, `<v Roger>`, `{\\an8}`), and the file's encoding: most subtitles in the
wild are not UTF-8, so a file that is not is read in the encoding charset-normalizer finds (`Encoded(...,
detect=True)`) and written back in it.
A SubRip cue's number and timing line are written back as they were read; a timing line that is not
`HH:MM:SS,mmm --> HH:MM:SS,mmm` (the `srt` library would read `-00:00:05,000` or `00:00:0x` as something else) is
one error naming the cue and its line.
A cue of several lines is one text for the model (the lines of a sentence are one sentence), and its translation
is wrapped again into at most two balanced lines of `WIDTH` visible characters where it fits, never cut inside a
tag. A dialogue cue, each line opening with a dash or a WebVTT voice tag (`<v Roger>`), after any tags that open
the line (`<i>- Hey!</i>`, `{\\an8}- Hey!`), keeps one line per speaker, each speaker's text translated alone.
Tags around the whole cue stay around it; a tag inside it must come back verbatim (else its text is translated
between the tags, `segments`), as must a URL, e-mail address, entity or file path (`protected_spans`). So must the
symbols `SYMBOL` (♪ ♫ 🎵 © ™, any Unicode "other symbol" with its emoji modifiers), which a model whose vocabulary
lacks them would drop: those around a cue's text (`♪ Never gonna give you up ♪`) stay around it, unseen by the
model, and those inside it come back where they were.
Word-timed WebVTT cues (YouTube's automatic captions: `so<00:00:01.839><c> today</c><00:00:02.159><c> we're</c>`)
are translated as one sentence: their inline timestamps and the `<c>` class spans around the timed words, which
would no longer line up with the translated words, are dropped (`without_word_timing`); the cue's timing and
settings (`align:start position:0%`) stay exactly, and its other tags (`<v Roger>`, `<i>`, `<b>`) as above.
A sentence that runs on across cues (a cue that ends with no sentence's end, the next opening in lower case:
`I think that we should` / `go to the station now.`; plain cues, no tags or speakers, at most `MAX_JOINED`) is
one text for the model, its translation shared among the cues by their lengths, cut at spaces (`split_by_weights`;
a cue left without a word, where the translation has fewer words than the cues, shows `…`). A cue whose text the
model gave back empty keeps its own text.
Rolling captions (YouTube again: each cue opens with the line the cue before ended with, and the new words below
it) keep that repeated line as a line of its own, so it reads the same in both cues; and a text that occurs in
several cues of a file is translated once, so it comes back the same in each.
"""
from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.segments import SYMBOL as SYMBOL_PATTERN
from pipeline.documents.segments import Segment, keeps_spans, protected_spans, run_at_end, wrap_balanced
from pipeline.extras import require
from pipeline.language import REGIONS, Direction, FollowsDirection

WIDTH = 42                  # characters per subtitle line (the common broadcast and streaming guideline)
TAG = regex.compile(r"<[^<>\n]{1,200}>|\{\\[^{}\n]{0,200}\}")
# Symbols no translation changes and a model whose vocabulary lacks them drops (♪ ♫ 🎵 © ™): a run of characters
# (with what joins to them: 👍🏽, ❤️) of Unicode's "other symbol" class. Punctuation is left to the translation.
SYMBOL = regex.compile(SYMBOL_PATTERN)
KEPT = regex.compile(rf"{TAG.pattern}|{SYMBOL.pattern}")                    # a cue's spans that come back verbatim
LEADING_TAGS = regex.compile(rf"(?:\s*(?:{KEPT.pattern}))*\s*")             # the tags and symbols a text opens with
TRAILING_TAGS = regex.compile(rf"(?:\G|(?<!\s))(?:\s*+(?:{KEPT.pattern}))++\s*+")   # runs of them (`run_at_end`)
# WebVTT's word timing: a timestamp before a word (`<00:00:01.839>`, `<01:01.839>`), and the class spans (`<c>`,
# `<c.colorE5E5E5>`) around the timed words
WORD_TIMESTAMP = regex.compile(r"<(?:[0-9]{2,}:)?[0-5][0-9]:[0-5][0-9]\.[0-9]{3}>")
CLASS_SPAN = regex.compile(r"</?c(?:\.[^\s<>.]+)*>")
HTML_TAG = regex.compile(r"<(/?)([A-Za-z][\w-]*)[^<>\n]{0,200}?(?<!/)>")     # an opening or closing tag (`<c.x>`)
# a speaker's line: a dash or a voice, after the tags that open the line (`<i>- Hey!</i>`, `{\an8}- Hey!`, `<i>-Hey`)
DIALOGUE = regex.compile(rf"^(?:\s*(?:{TAG.pattern}))*?\s*(?:[-–—]|<v[ .][^<>\n]{{0,200}}>)\s*")
SENTENCE_END = regex.compile(r"[.!?…:;♪)\]}\"'»”’-]\s*$")         # a cue that ends so ends its sentence
LOWER_START = regex.compile(r"\s*(?:\.{3}|…)?\s*\p{Ll}")                # the next one going on with it
ELLIPSIS = "…"             # a joined cue's part where the translation has fewer words than the cues
MAX_JOINED = 4              # cues of one sentence read as one text, at most
SRT_INDEX = regex.compile(r"[ \t]*-?[0-9]+(?:\.[0-9]*)?[ \t]*")         # a cue number, as the srt library reads one
SRT_TIMESTAMP = r"[0-9]+:[0-5][0-9]:[0-5][0-9][,.][0-9]{3}"
SRT_TIMING = regex.compile(rf"[ \t]*(?P<start>{SRT_TIMESTAMP})[ \t]*-->[ \t]*(?P<end>{SRT_TIMESTAMP})(?:[ \t][^\n]*)?")
# A line where a cue's timing is due (a cue's first line, or the one after its number) that is meant as one: it opens
# with a number (or a minus) and has an arrow, or opens with three numbers as a timestamp does.
SRT_TIMING_LIKE = regex.compile(r"[ \t]*-?[0-9].*-->.*|[ \t]*-?[0-9]+[,.:][0-9]+[,.:][0-9]+.*")
# between a WebVTT file's blocks: empty lines only (a line of spaces, which YouTube writes into its cues, is cue text)
VTT_BLANK_LINES = regex.compile(r"(\n\n+)")
VTT_LANGUAGE = regex.compile(r"^(Language:[ \t]*)([A-Za-z]{2})((?:[-_][A-Za-z0-9]+)?)(?=[ \t]*$)", regex.M)
ASS_START = regex.compile(rb"\A(?:\xef\xbb\xbf|\xff\xfe|\xfe\xff)?\s*\[Script Info\]", regex.I)
ASS_SECTION = regex.compile(r"^\[([^\]\n]+)\][ \t]*$")
ASS_EVENT = regex.compile(r"^(Dialogue:[ \t]*)(.*)$", regex.S)
# An event left as written: a drawing (`{\p1}m 0 0 l 100 0`: vector commands, no text) or karaoke (`{\k20}Ka{\k30}ra`:
# each syllable timed, which a translation's would not match)
ASS_UNTOUCHED = regex.compile(r"\{[^{}]*?\\(?:p[1-9]|[kK][fo]?[0-9])")       # (in an override block)
ASS_LINE_BREAKS = regex.compile(r"\\[Nn]")                   # hard (`\N`) and soft (`\n`) line breaks
# What opens or ends an event's text and stays as written, unseen by the model: override blocks and line breaks
# (`{\an8}\N\N`: typesetters shift a line so) and hard spaces
ASS_EDGE = r"(?:\{[^{}]*\}|\\[Nnh])"
ASS_HEAD, ASS_TAIL = regex.compile(rf"{ASS_EDGE}*"), regex.compile(rf"{ASS_EDGE}++")   # (`run_at_end`)
ASS_HARD_SPACE = "{\\h}"          # `\h` inside a text, read as an override block is: kept verbatim
# A block of text between braces inside a text (`{TN: a pun on "Bank"}`, `{=3}`) is a comment no player shows: read
# as an override block is (kept verbatim, where it stood, taking no width on the screen): a numbered mark stands in
# for it while translating (`{\ue0003}`), so that nothing in it reads as a line break or a hard space (`{TN: a\Nb}`)
ASS_COMMENT, ASS_COMMENT_MARK = regex.compile(r"\{(?!\\)([^{}\n]{0,190})\}"), "\\\ue000"
ASS_COMMENT_HELD = regex.compile(r"\{\\\ue000([0-9]+)\}")
SRT_START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*[0-9]+[ \t]*(?:\r\n?|\n)"
                          rb"[0-9]{1,2}:[0-9]{2}:[0-9]{2}[,.][0-9]{1,3}\s*-->")


def line_end(text: str) -> str:
    """A subtitle file's line end: CR LF, a lone CR (old Mac files, where no LF is), else LF."""
    return "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"


def as_lf(text: str) -> str:
    """`text` with its line ends (`line_end`) read as LF."""
    return text.replace(line_end(text), "\n")


def printable(text: str) -> str:
    """`text` for a one-line message: control characters (a stray CR) written as escapes."""
    return regex.sub(r"[\x00-\x1f\x7f]", lambda match: repr(match.group(0))[1:-1], text)


def looks_like_srt(data: bytes) -> bool:
    """A SubRip file's start: a cue number, then a timing line."""
    return bool(SRT_START.match(data[:4096]))


def looks_like_ass(data: bytes) -> bool:
    """An Advanced SubStation Alpha (or SSA) file's start: its `[Script Info]` section."""
    return bool(ASS_START.match(data[:4096].replace(b"\x00", b"")))


def looks_like_vtt(data: bytes) -> bool:
    """A WebVTT file's start: its signature."""
    return data[:4096].lstrip(b"\xef\xbb\xbf").startswith(b"WEBVTT")


def without_word_timing(text: str) -> str:
    """A WebVTT cue's text without its word timing: where it holds inline timestamps (`<00:00:01.839>`), those and
    its class spans (`<c>`, `</c>`) are dropped, which would not line up with a translation's words; other tags
    (`<v Roger>`, `<i>`) stay. A cue without a timestamp is returned as it is (its class spans are styling)."""
    if not WORD_TIMESTAMP.search(text):
        return text
    return CLASS_SPAN.sub("", WORD_TIMESTAMP.sub("", text))


def one_line(text: str) -> str:
    """`text` with its runs of spaces and line ends as one space, and none at its ends."""
    return " ".join(text.split())


class Cue:
    """One cue's text as units (a speaker's line, a rolled line, or all of it), and the cue's text again from their
    segments' translations (`read_cues` gives each unit its segment).

    `rolled`: the line the cue before ended with; a cue of several lines that opens with it (a rolling caption)
    keeps it as a unit of its own, translated as it was there."""

    def __init__(self, text: str, rolled: str = ""):
        lines = [line for line in text.splitlines() if line.strip()]
        self.last_line = one_line(lines[-1]) if lines else ""
        self._dialogue = len(lines) > 1 and all(DIALOGUE.match(line) for line in lines)
        if self._dialogue:
            units = lines
        elif len(lines) > 1 and rolled and one_line(lines[0]) == rolled:
            units = [lines[0], " ".join(line.strip() for line in lines[1:])]
        else:
            units = [" ".join(line.strip() for line in lines)]
        self._units = []
        for unit in units:
            dash = DIALOGUE.match(unit).group(0) if self._dialogue else ""
            body = unit[len(dash):]
            head = LEADING_TAGS.match(body).group(0)
            tail = _tail(TRAILING_TAGS, body, len(head))
            if not tags_nest(body[len(head):len(body) - len(tail)]):      # `<i>A</i> <b>B</b>`: no one pair around
                head, tail = body[:len(body) - len(body.lstrip())], body[len(body.rstrip()):]   # it: kept inside,
            self._units.append((dash, head, tail, body[len(head):len(body) - len(tail)]))   # where they must nest
        self.inners = [inner for _, _, _, inner in self._units]
        self.segments: list[Segment] = []            # one per unit, from `read_cues`
        self.share: tuple[Segment, int, list[int]] | None = None      # a sentence across cues: its part

    @property
    def plain(self) -> str | None:
        """The cue's text where it is one unit of plain text (no speaker dash, tag or symbol around it, no tag in
        it): what may be part of a sentence that runs on across cues; else None."""
        if len(self._units) != 1 or self._dialogue:
            return None
        dash, head, tail, inner = self._units[0]
        return inner if not (dash or head.strip() or tail.strip() or TAG.search(inner)) and inner else None

    def render(self) -> str:
        if self.share is not None:
            segment, index, weights = self.share
            _, head, tail, _ = self._units[0]
            part = split_by_weights(segment.translation, weights)[index] or ELLIPSIS     # fewer words than cues
            return head + "\n".join(wrap_balanced(part, WIDTH)) + tail
        lines = []
        for (dash, head, tail, inner), segment in zip(self._units, self.segments):
            if not segment.translation.strip():
                segment.translation = inner                  # a model that gave nothing back: never an empty cue
            if self._dialogue:
                lines.append(dash + head + one_line(segment.translation) + tail)
            else:
                wrapped = wrap_balanced(segment.translation, WIDTH)
                lines.append(head + "\n".join(wrapped) + tail)
        return "\n".join(lines)


def tags_nest(text: str) -> bool:
    """Whether a text's tags nest (`<i>a <b>b</b></i>`): each closing tag closes the last one open; one left open
    is closed by the cue's end, as players read it (`<v Mary>Hello`). Not `<i>a <b>b</i></b>`, which a translation
    that moved words across tags makes."""
    open_tags: list[str] = []
    for match in HTML_TAG.finditer(text):
        closing, name = match.group(1), match.group(2).lower()
        if not closing:
            open_tags.append(name)
        elif not open_tags or open_tags.pop() != name:
            return False
    return True


def runs_on(text: str, following: str) -> bool:
    """Whether a cue's text is a sentence that the next cue's text goes on with: it ends with no sentence's end
    and the next opens in lower case (`I think that we should` / `go to the station now.`)."""
    return not SENTENCE_END.search(text) and bool(LOWER_START.match(following))


def split_by_weights(text: str, weights: list[int]) -> list[str]:
    """`text` cut at spaces into `len(weights)` parts of about the weights' shares of its length, each cut at the
    space nearest its share, preferring one after punctuation nearby (a comma, a full stop); every part has a word
    where `text` has as many words as parts (else the first parts get a word each, the last the rest, then none)."""
    text = text.strip()
    spaces = [match.start() for match in regex.finditer(r"\s+", text)]
    if len(spaces) < len(weights) - 1:
        words = text.split()
        return [*words[:len(weights) - 1], " ".join(words[len(weights) - 1:])] + [""] * (len(weights) - 1 - len(words))
    total, cuts, done = sum(weights), [], 0
    for number in range(1, len(weights)):
        done += weights[number - 1]
        goal = len(text) * done / total
        left = len(weights) - number                                  # spaces still needed after this one
        first = bisect.bisect_right(spaces, cuts[-1]) if cuts else 0      # after the last cut, leaving `left - 1`
        usable = spaces[first:len(spaces) - left + 1]                       # (counted by place: spaces are sorted)
        best = min(usable, key=lambda at: abs(at - goal) - (0.1 * len(text) if text[at - 1] in ",;:.!?…" else 0))
        cuts.append(best)
    bounds = [0, *cuts, len(text)]
    return [text[bounds[i]:bounds[i + 1]].strip() for i in range(len(weights))]


def read_cues(texts: list[str], groups: list[str] | None = None) -> tuple[list[Cue], list[Segment]]:
    """A file's cues and their segments: a sentence that runs on across cues (`runs_on`, plain cues of one group,
    at most `MAX_JOINED` of them) is one segment, its translation shared among them by their lengths
    (`split_by_weights`); else one per unit, and one per distinct text, shared by the cues that hold it, so that it
    reads the same in each (a rolling caption's repeated line, a refrain). `groups`: each cue's (an ASS event's
    style): a sentence goes on in the group's next cue, over other groups' (a sign between two dialogue lines);
    one group where None."""
    groups = groups or [""] * len(texts)
    cues: list[Cue] = []
    for text in texts:
        cues.append(Cue(text, cues[-1].last_line if cues else ""))
    known: dict[str, Segment] = {}

    def segment(text: str) -> Segment:
        if text not in known:
            spans = protected_spans(text, KEPT)
            nested = tags_nest(text)          # a translation that moved words across tags is redone between them
            known[text] = Segment(text, spans, accept=lambda translation: keeps_spans(translation, Counter(spans))
                                  and (not nested or tags_nest(translation)))
        return known[text]

    def close(chain: list[Cue]) -> None:
        if len(chain) > 1:
            joined = segment(" ".join(link.plain for link in chain))
            weights = [len(link.plain) for link in chain]
            for index, link in enumerate(chain):
                link.share = (joined, index, weights)

    chains: dict[str, list[Cue]] = {}                   # each group's sentence so far (its cues in order)
    for cue, group in zip(cues, groups):
        chain = chains.get(group, [])
        if (chain and cue.plain is not None and len(chain) < MAX_JOINED
                and cue.plain != chain[-1].plain and runs_on(chain[-1].plain, cue.plain)):    # not a repeat
            chain.append(cue)
            continue
        close(chain)
        chains[group] = [cue] if cue.plain is not None else []
    for chain in chains.values():
        close(chain)
    for cue in cues:
        if cue.share is None:
            cue.segments = [segment(inner) for inner in cue.inners]
    return cues, list(known.values())


class SrtDocument:
    """A SubRip file: `segments`, and `render()` its bytes. The `srt` library reads the cues; each cue's number
    line (where it has one) and timing line are kept as written and written back so, its text translated."""

    def __init__(self, data: bytes, name: str = "document"):
        srt = require("srt", "documents")
        self._encoded = Encoded(data, name, detect=True)
        text = as_lf(self._encoded.text)
        self._end = text[len(text.rstrip("\n")):]             # the file's last line ends, as written (a blank line)
        self._heads = srt_heads(text, name)
        try:
            subtitles = list(srt.parse(text))
        except srt.SRTParseError as exc:
            raise ValueError(f"{name}: not a SubRip file: {str(exc).splitlines()[0]}") from None
        except (OverflowError, ValueError) as exc:           # a timing past what a timedelta holds
            raise ValueError(f"{name}: not a SubRip file: a timing out of range ({exc})") from None
        if not subtitles:
            raise ValueError(f"{name}: not a SubRip file: no cues")
        for number in range(max(len(self._heads), len(subtitles))):      # the library and the heads agree
            head = self._heads[number] if number < len(self._heads) else None
            subtitle = subtitles[number] if number < len(subtitles) else None
            if head is None or subtitle is None or (head.start, head.end) != (subtitle.start, subtitle.end):
                line = f" (line {head.line})" if head is not None else ""
                raise ValueError(f"{name}: cue {number + 1}{line}: not read as one SubRip cue (expected a number, "
                                 "a timing line, its text, and a blank line before the next cue)")
        self._cues, self.segments = read_cues([subtitle.content for subtitle in subtitles])
        self._separators = _separators(text.split("\n"), self._heads)

    def render(self) -> bytes:
        blocks = [head.text + "".join("\n" + text for text in [cue.render()] if text)      # an empty cue: no line
                  for head, cue in zip(self._heads, self._cues)]
        text = "".join(block + separator for block, separator in zip(blocks, [*self._separators, ""])) + self._end
        if line_end(self._encoded.text) != "\n":
            text = text.replace("\n", line_end(self._encoded.text))
        return self._encoded.encode(text)


def _separators(lines: list[str], heads: list["SrtHead"]) -> list[str]:
    """What parts each cue from the next as written: its blank lines (two, or one holding spaces, as some rippers
    write them), each a line end and what it holds; one blank line where they are not all blank."""
    separators = []
    for head in heads[1:]:
        first = head.line - 1 - head.text.count("\n")           # the next cue's first line (its number's)
        blank = first
        while blank > 0 and not lines[blank - 1].strip():
            blank -= 1
        written = lines[blank:first]
        separators.append("\n" + "".join(line + "\n" for line in written) if written else "\n\n")
    return separators


@dataclass(frozen=True)
class SrtHead:
    """A SubRip cue's number line (if it has one) and timing line, as written; its timing; the timing's line."""
    text: str
    start: timedelta
    end: timedelta
    line: int


def srt_heads(text: str, name: str) -> list[SrtHead]:
    """Every cue's number and timing lines, checked: a timing line that is not `HH:MM:SS,mmm --> HH:MM:SS,mmm`
    (with `.` for `,` as many editors write) is a ValueError naming the cue and the line, where the srt library
    would read it as something else (`-00:00:05,000` as a line of the cue before, `00:00:0x` as `00:00:00,000`)."""
    srt = require("srt", "documents")
    lines = text.split("\n")
    heads: list[SrtHead] = []
    block_start, at = True, 0
    while at < len(lines):
        line = lines[at]
        following = lines[at + 1] if at + 1 < len(lines) else ""
        if not line.strip():
            block_start, at = True, at + 1
            continue
        if SRT_INDEX.fullmatch(line) and SRT_TIMING_LIKE.fullmatch(following):
            number, timing, at = line, following, at + 1                 # a number and a timing line: a cue
        elif block_start and SRT_TIMING_LIKE.fullmatch(line):
            number, timing = None, line                                  # a cue without a number
        else:
            block_start, at = False, at + 1
            continue
        match = SRT_TIMING.fullmatch(timing)
        shown = printable(timing.strip() if len(timing.strip()) <= 80 else timing.strip()[:77] + "...")
        if match is None:
            raise ValueError(f'{name}: cue {len(heads) + 1} (line {at + 1}): timing "{shown}" is not '
                             "HH:MM:SS,mmm --> HH:MM:SS,mmm")
        try:
            start, end = (srt.srt_timestamp_to_timedelta(match.group(key)) for key in ("start", "end"))
        except (OverflowError, ValueError):                  # past what a timedelta holds
            raise ValueError(f'{name}: not a SubRip file: a timing out of range (cue {len(heads) + 1}, line '
                             f'{at + 1}: "{shown}")') from None
        heads.append(SrtHead(timing if number is None else f"{number}\n{timing}", start, end, at + 1))
        block_start, at = False, at + 1
    return heads


class VttDocument(FollowsDirection):
    """A WebVTT file: `segments`, and `render()` its bytes, a header's `Language:` naming the run's source language
    naming its target (`direction`, `direct`; English -> Italian where none is given), as YouTube's files carry one."""

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None):
        self.direction = direction
        webvtt = require("webvtt", "documents")
        self._encoded = Encoded(data, name, detect=True)
        try:
            self._vtt = webvtt.from_string(as_lf(self._encoded.text))
        except (webvtt.errors.MalformedFileError, webvtt.errors.MalformedCaptionError) as exc:
            raise ValueError(f"{name}: not a WebVTT file: {printable(str(exc))}") from None
        timings = sum("-->" in line for line in self._encoded.text.splitlines())
        if timings != len(self._vtt.captions):               # webvtt-py skips a cue it cannot read
            raise ValueError(f"{name}: not a WebVTT file: {timings - len(self._vtt.captions)} of {timings} cues "
                             "cannot be read (timings must look like 00:00:01.000 --> 00:00:02.500)")
        self._cues, self.segments = read_cues([without_word_timing(caption.raw_text)
                                               for caption in self._vtt.captions])

    def render(self) -> bytes:
        text = self._rewritten()
        if text is None:                                     # blocks not as webvtt-py read them: its writer
            for caption, cue in zip(self._vtt.captions, self._cues):
                caption.text = cue.render()
            text = self._vtt.content
        if line_end(self._encoded.text) != "\n":
            text = text.replace("\n", line_end(self._encoded.text))
        return self._encoded.encode(text)

    def _rewritten(self) -> str | None:
        """The file as written, each cue's text replaced by its translation: the header, NOTE, STYLE and REGION
        blocks and the blank lines between blocks stay byte for byte. None where the cue blocks (those with a
        timing line first, or after an identifier) are not the cues webvtt-py read."""
        parts = VTT_BLANK_LINES.split(as_lf(self._encoded.text))   # block, blank run, block, ...
        cues = iter(self._cues)
        found = 0
        header = parts[0].startswith(("WEBVTT", "\ufeffWEBVTT"))
        if header:
            parts[0] = VTT_LANGUAGE.sub(self._relabelled, parts[0])
        for index in range(2 if header else 0, len(parts), 2):
            block = parts[index].rstrip("\n")                  # the file's last block keeps its line end
            lines, end = block.split("\n"), parts[index][len(block):]
            timing = next((at for at, line in enumerate(lines[:2]) if "-->" in line), None)
            if timing is None or lines[0].startswith("NOTE"):
                continue
            found += 1
            cue = next(cues, None)
            if cue is None:
                return None
            text = cue.render()
            parts[index] = "\n".join(lines[:timing + 1] + ([text] if text else [])) + end
        return "".join(parts) if found == len(self._cues) else None

    def _relabelled(self, match: regex.Match) -> str:
        """A header's `Language: en` (`en-US`) as the target's (`it`, `it-IT`) where it names the source."""
        direction = self.output_direction
        if match.group(2).lower() != direction.source:
            return match.group(0)
        region = match.group(3)
        return match.group(1) + direction.target + (region[0] + REGIONS[direction.target] if region else "")


class AssDocument:
    """An Advanced SubStation Alpha (`.ass`) or SubStation Alpha (`.ssa`) file, as Aegisub and fansubs write them:
    `segments` of its dialogue events' text, and `render()` its bytes. Only the Text field of each `Dialogue:` line
    in `[Events]` changes; every other line (the script info, styles, comments, embedded fonts, the event's layer,
    timing, style, actor, margins and effect) comes back byte for byte. A text is read as a cue: override blocks
    (`{\\i1}`, `{\\an8\\pos(320,50)}`), comments between braces (`{TN: a pun}`) and hard spaces (`\\h`) come back
    verbatim, as do the line breaks a text opens or ends with (`\\N\\N`: a line shifted); one inside it (`\\N`,
    `\\n`) is a cue's line (a text of one line stays one line, which the player wraps; one of several is wrapped as a
    SubRip cue is), and a sentence runs on only across events of one style. Drawings (`{\\p1}`) and karaoke
    (`{\\k20}`) are left as written, as are `Comment:` events."""

    def __init__(self, data: bytes, name: str = "document"):
        self._encoded = Encoded(data, name, detect=True)
        text = self._encoded.text
        self._lines = as_lf(text).split("\n")
        self._events: list[tuple[int, str, str, str]] = []   # (line, what comes before the text, after it, the text)
        self._comments: list[str] = []                       # each comment block, by its mark's number
        section, fields = "", None
        texts, styles = [], []
        for number, line in enumerate(self._lines):
            header = ASS_SECTION.match(line.strip())
            if header:
                section, fields = header.group(1).strip().lower(), None
                continue
            if section != "events":
                continue
            if line.lower().startswith("format:"):
                fields = [field.strip().lower() for field in line.split(":", 1)[1].split(",")]
                if "text" not in fields or fields[-1] != "text":
                    raise ValueError(f"{name}: line {number + 1}: an [Events] Format line whose last field is not "
                                     f"Text (got {line.strip()!r})")
                continue
            event = ASS_EVENT.match(line)
            if event is None:
                continue
            if fields is None:
                raise ValueError(f"{name}: line {number + 1}: a Dialogue line before the [Events] Format line")
            values = event.group(2).split(",", len(fields) - 1)
            if len(values) != len(fields):
                raise ValueError(f"{name}: line {number + 1}: a Dialogue line of {len(values)} fields; the Format "
                                 f"line names {len(fields)}")
            if ASS_UNTOUCHED.search(values[-1]):
                continue
            text_field = values[-1]
            head = ASS_HEAD.match(text_field).group(0)
            tail = found.group(0) if (found := run_at_end(ASS_TAIL, text_field, len(head))) else ""
            inner = text_field[len(head):len(text_field) - len(tail)]
            self._events.append((number, event.group(1) + ",".join(values[:-1]) + "," + head, tail, inner))
            shown = ASS_COMMENT.sub(self._held_comment, inner)
            texts.append(ASS_LINE_BREAKS.sub("\n", shown).replace("\\h", ASS_HARD_SPACE))
            styles.append(values[fields.index("style")].strip() if "style" in fields else "")
        if not ASS_START.match(text.lstrip().encode("utf-8")[:4096]):
            raise ValueError(f"{name}: not an ASS/SSA file: it does not open with [Script Info]")
        if not any(ASS_SECTION.match(line.strip()) and line.strip().lower() == "[events]" for line in self._lines):
            raise ValueError(f"{name}: not an ASS/SSA file: it has no [Events] section")
        self._cues, self.segments = read_cues(texts, styles)

    def _held_comment(self, comment: regex.Match) -> str:
        self._comments.append(comment.group(0))
        return "{" + ASS_COMMENT_MARK + str(len(self._comments) - 1) + "}"

    def render(self) -> bytes:
        lines = list(self._lines)
        for (number, head, tail, inner), cue in zip(self._events, self._cues):
            rendered = cue.render()                  # one line where the source had one: the player wraps it
            rendered = rendered.replace("\n", "\\N" if ASS_LINE_BREAKS.search(ASS_COMMENT.sub("", inner)) else " ")
            rendered = ASS_COMMENT_HELD.sub(lambda match: self._comments[int(match.group(1))],
                                            rendered.replace(ASS_HARD_SPACE, "\\h"))
            lines[number] = head + rendered + tail
        text = "\n".join(lines)
        if line_end(self._encoded.text) != "\n":
            text = text.replace("\n", line_end(self._encoded.text))
        return self._encoded.encode(text)


def _tail(runs: regex.Pattern, text: str, pos: int) -> str:
    """What `text` ends with past `pos` that `runs` (tags, symbols and spaces) matches, else its trailing spaces."""
    found = run_at_end(runs, text, pos)
    return found.group(0) if found is not None else text[max(len(text.rstrip()), pos):]
