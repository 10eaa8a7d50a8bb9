"""What the document tests share: a stand-in model that keeps every mark, a recorder of what a model was given, and
a way to build a .docx whose parts a test changes (python-docx writes only well-behaved ones)."""
from __future__ import annotations

import io
import re
import zipfile
from typing import Callable


def suffixed(texts: list[str]) -> list[str]:
    """A model that translates words and keeps every mark: "Word" -> "Word-it"."""
    return [re.sub(r"(?<![^\s(])([A-Za-z]{3,})(?=[\s.,;:?!)]|$)", r"\1-it", text) for text in texts]


def recording(model: Callable[[list[str]], list[str]]) -> tuple[Callable[[list[str]], list[str]], list[str]]:
    """(`model` that also notes each text it is given, the texts noted)."""
    seen: list[str] = []

    def translate(texts: list[str]) -> list[str]:
        seen.extend(texts)
        return model(texts)
    return translate, seen


def rezipped(package: bytes, edit: Callable[[str, bytes], bytes] = lambda name, data: data,
             added: dict[str, bytes] | None = None) -> bytes:
    """`package` (a zip: .docx, .pptx, .odt) with each entry passed through `edit(name, data)` and `added` entries
    appended, deflated."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            target.writestr(item, edit(item.filename, source.read(item.filename)))
        for name, data in (added or {}).items():
            target.writestr(name, data)
    return out.getvalue()


def new_docx() -> bytes:
    """An empty Word document, as python-docx writes it."""
    import docx

    buffer = io.BytesIO()
    docx.Document().save(buffer)
    return buffer.getvalue()


def docx_with(body: str, source: bytes | None = None) -> bytes:
    """A .docx (`source`, else an empty one) whose body starts with `body` (WordprocessingML paragraphs)."""
    def edit(name: str, data: bytes) -> bytes:
        if name != "word/document.xml":
            return data
        text = data.decode("utf-8")
        start = text.index("<w:body>") + len("<w:body>")
        return (text[:start] + body + text[start:]).encode("utf-8")
    return rezipped(source or new_docx(), edit)


def saved(document) -> bytes:
    """The bytes of a document a library writes with `save(file)` (odfpy, python-docx)."""
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()
