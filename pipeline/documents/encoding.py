"""A text file's bytes as text, and the text back in the same encoding: what every text format reads with."""
from __future__ import annotations

import unicodedata

from pipeline.extras import require

UNICODE = ("utf-8", "utf-8-sig", "utf-16-le", "utf-16-be")

# What stands in for a character an 8-bit code page lacks, after Unicode's own compatibility forms (NFKC: "…" is
# "...") and the letter without its accents (NFKD: "è" is "e"): typographic punctuation, in plain ASCII.
PUNCTUATION = {"\u2018": "'", "\u2019": "'", "\u201a": ",", "\u201b": "'", "\u2032": "'", "\u201c": '"', "\u201d": '"',
               "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"', "\u2039": "'", "\u203a": "'",
               "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
               "\u20ac": "EUR", "\u2022": "*", "\u00b7": "*", "\u00a0": " ", "\u202f": " "}


def _holds(encoding: str, text: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def closest(text: str, encoding: str) -> str:
    """`text` with each character `encoding` cannot hold as the closest it can: its compatibility form, the
    letter without its accents, ASCII punctuation, else "?" (a lone combining accent is dropped)."""
    out = []
    for char in unicodedata.normalize("NFC", text):
        if _holds(encoding, char):
            out.append(char)
        elif not unicodedata.combining(char):
            bare = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
            options = (unicodedata.normalize("NFKC", char), bare, PUNCTUATION.get(char, ""))
            out.append(next((option for option in options if option and _holds(encoding, option)), "?"))
    return "".join(out)


def guessed_encoding(data: bytes) -> str | None:
    """The 8-bit (or other legacy) encoding `data` reads as, or None where none reads as text.

    charset-normalizer, not a guess of our own: it knows every code page Python does and judges how plausible
    each decoding reads. But it cannot tell the Latin code pages apart on English text (they differ in a few
    letters, too few in a subtitle's accented names for its language models: it takes windows-1252 English for
    Baltic cp1257), so windows-1252 is taken wherever it reads as plausible text: the commonest encoding of such
    files, what browsers read ISO-8859-1 as, and one that holds every Italian letter, so the right choice for an
    Italian source too (legacy Italian subtitles are windows-1252 or ISO-8859-1/-15, which it reads alike but
    for the euro sign) and for either direction's output. A file windows-1252 does not read (Cyrillic, Greek,
    Chinese, Japanese code pages) gets charset-normalizer's best guess."""
    from_bytes = require("charset_normalizer", "documents").from_bytes
    match = from_bytes(data, cp_isolation=["cp1252"]).best() or from_bytes(data).best()
    return match.encoding if match is not None else None


class Encoded:
    """Text decoded from bytes, and encoded back the same way: UTF-8 (with or without a byte-order mark) or
    UTF-16 with its mark. Anything else is a ValueError naming `name`, unless `detect` (subtitles, which are
    mostly not UTF-8 in the wild): then the encoding is `guessed_encoding`'s, and text goes back in it with
    each character it cannot hold as its closest (`closest`: "è" as "e", "’" as "'"), never an error."""

    def __init__(self, data: bytes, name: str, detect: bool = False):
        # utf-16-le/-be by the mark, not "utf-16": Python's encoder writes the machine's order (LE), not the file's
        for mark, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
            if data.startswith(mark):
                break
        else:
            mark, codec = b"", "utf-8"
        self.mark = mark if codec.startswith("utf-16") else b""     # utf-8-sig writes its own
        try:
            self.text = data[len(self.mark):].decode(codec)
        except UnicodeDecodeError as exc:
            guessed = guessed_encoding(data) if detect and codec == "utf-8" else None
            if guessed is None:
                also = ", and no other encoding reads it as text" if detect and codec == "utf-8" else ""
                line = data[:exc.start].count(b"\n") + 1
                raise ValueError(f"{name}: not UTF-8 (or UTF-16 with a byte-order mark) text{also}: byte "
                                 f"{exc.start} (line {line}) cannot be decoded") from None
            codec, self.text = guessed, data.decode(guessed)
        self.codec = codec

    def encode(self, text: str) -> bytes:
        if self.codec not in UNICODE:
            try:
                return text.encode(self.codec)
            except UnicodeEncodeError:
                return closest(text, self.codec).encode(self.codec)
        return self.mark + text.encode(self.codec, errors="surrogatepass" if self.mark else "strict")
