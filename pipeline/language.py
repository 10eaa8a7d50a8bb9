"""The languages a run translates between (`Direction`), and which language a text is in: `/detect` and
`source: "auto"` (the service's LibreTranslate routes).

A run translates one way, `data.source_language` -> `data.target_language` (English -> Italian unless its config
says otherwise); its vectorizers record the direction, and every door reads it from there.

lingua-language-detector (well kept, its models ship in the wheel: nothing is downloaded) compares the text with
the languages a run serves and with `OTHERS`, close neighbours that an English-Italian user's text may really be
in, so that a German or Spanish text, or one with no letters, gets a low confidence for English and Italian
instead of 100. Confidences are lingua's, over those languages, in percent.

    LanguageDetector(("en", "it")).detect("Dov'è la stazione?")    # [("it", 96.7), ("en", ...)]
"""
from __future__ import annotations

import threading
from typing import Any, Mapping, NamedTuple, Sequence

from pipeline.extras import require

OTHERS = ("de", "fr", "es", "pt")     # compared with, never answered
LANGUAGE_NAMES = {"en": "English", "it": "Italian"}     # the languages the corpora hold, by ISO 639-1 code
LANGUAGE_TAGS = {code: f"<2{code}>" for code in LANGUAGE_NAMES}   # a bidirectional run's source-side target tags
REGIONS = {"en": "US", "it": "IT"}     # the region a document's language tag gets where a run changes it (it-IT)


def language_name(code: str) -> str:
    """"English" for "en"; a code this project has no corpus for is refused (one line)."""
    try:
        return LANGUAGE_NAMES[code]
    except KeyError:
        raise ValueError(f"language {code!r}: expected one of {', '.join(LANGUAGE_NAMES)}") from None


class Direction(NamedTuple):
    """Which way a run translates: ISO 639-1 codes of its source and target languages."""
    source: str = "en"
    target: str = "it"

    @property
    def code(self) -> str:
        """ "en-it": how run names, Argos packages and messages spell it."""
        return f"{self.source}-{self.target}"

    @property
    def pair(self) -> str:
        """ "en -> it": how the service's messages name a served pair."""
        return f"{self.source} -> {self.target}"

    @property
    def label(self) -> str:
        """ "English -> Italian"."""
        return f"{language_name(self.source)} -> {language_name(self.target)}"

    @property
    def swapped(self) -> bool:
        """True when the source language is the corpora's second column (Italian): pairs are read (English,
        Italian) and turned round."""
        return self.source != "en"

    @property
    def reverse(self) -> "Direction":
        return Direction(self.target, self.source)

    def orient(self, pair: tuple[str, str]) -> tuple[str, str]:
        """An (English, Italian) pair as (source, target)."""
        return (pair[1], pair[0]) if self.swapped else pair

    @classmethod
    def of(cls, metadata: Mapping[str, Any]) -> "Direction":
        """The direction a vectorizer pickle's metadata records; English -> Italian for runs made before
        directions were recorded."""
        return cls(str(metadata.get("source_language", "en")), str(metadata.get("target_language", "it")))


class FollowsDirection:
    """For a document whose output names its language (a page's root `lang`, Markdown front matter, an office
    file's language tags): `direct(direction)` gives it the direction of the run that translates it, and
    `output_direction` is that direction, English -> Italian until one is given."""
    direction: Direction | None = None

    def direct(self, direction: Direction) -> None:
        self.direction = Direction(*direction)

    @property
    def output_direction(self) -> Direction:
        return self.direction or Direction()


MAX_DETECTED_CHARS = 5000     # a text's language is detected on this much of it, at most


class LanguageDetector:
    """Detects among `languages` (ISO 639-1 codes); `detect` ranks them with their confidence (0-100)."""

    def __init__(self, languages: Sequence[str] = ("en", "it"), preload: bool = False):
        lingua = require("lingua", "serve")
        codes = list(dict.fromkeys([*languages, *OTHERS]))
        by_code = {language.iso_code_639_1.name.lower(): language for language in lingua.Language.all()}
        unknown = [code for code in languages if code not in by_code]
        if unknown:
            raise ValueError(f"language codes {unknown}: not ISO 639-1 codes lingua knows")
        builder = lingua.LanguageDetectorBuilder.from_languages(*(by_code[code] for code in codes if code in by_code))
        if preload:
            builder = builder.with_preloaded_language_models()
        self.languages = tuple(languages)
        self._detector = builder.build()
        self._lock = threading.Lock()

    def detect(self, text: str) -> list[tuple[str, float]]:
        """The served languages, most likely first, each with its confidence in percent (one decimal); a text with
        no letters, or in another language, gets low confidences. Read on its first `MAX_DETECTED_CHARS` characters:
        lingua's time grows with the square of a word's length (a 200,000-letter word took 9 s) and holds the
        interpreter, and a longer text tells no more."""
        with self._lock:
            values = self._detector.compute_language_confidence_values(text[:MAX_DETECTED_CHARS])
        found = {value.language.iso_code_639_1.name.lower(): value.value for value in values}
        ranked = sorted(((code, round(100.0 * found.get(code, 0.0), 1)) for code in self.languages),
                        key=lambda pair: -pair[1])
        return ranked

    def best(self, text: str) -> tuple[str, float]:
        """The most likely served language and its confidence; the first served language at 0 when nothing tells."""
        return self.detect(text)[0]
