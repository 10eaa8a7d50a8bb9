"""Which language a text is in: `/detect` and `source: "auto"` (the service's LibreTranslate routes).

lingua-language-detector (well kept, its models ship in the wheel: nothing is downloaded) compares the text with
the languages a run serves and with `OTHERS`, close neighbours that an English-Italian user's text may really be
in, so that a German or Spanish text, or one with no letters, gets a low confidence for English and Italian
instead of 100. Confidences are lingua's, over those languages, in percent.

    LanguageDetector(("en", "it")).detect("Dov'è la stazione?")    # [("it", 96.7), ("en", ...)]
"""
from __future__ import annotations

import threading
from typing import Sequence

from pipeline.extras import require

OTHERS = ("de", "fr", "es", "pt")     # compared with, never answered


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
        no letters, or in another language, gets low confidences."""
        with self._lock:
            values = self._detector.compute_language_confidence_values(text)
        found = {value.language.iso_code_639_1.name.lower(): value.value for value in values}
        ranked = sorted(((code, round(100.0 * found.get(code, 0.0), 1)) for code in self.languages),
                        key=lambda pair: -pair[1])
        return ranked

    def best(self, text: str) -> tuple[str, float]:
        """The most likely served language and its confidence; the first served language at 0 when nothing tells."""
        return self.detect(text)[0]
