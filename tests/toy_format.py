"""A toy document format, the whole of what a new format takes besides its one registry line: a reader that gives
`segments` and renders the file again. A `.toy` file holds `key = text` lines; only the text is translated."""
from pipeline.documents.segments import Segment


class ToyDocument:
    def __init__(self, data: bytes, name: str = "document"):
        try:
            self._lines = data.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            raise ValueError(f"{name}: a .toy file is UTF-8") from None
        self._entries = [(index, *line.split(" = ", 1)) for index, line in enumerate(self._lines) if " = " in line]
        self.segments = [Segment(text) for _, _, text in self._entries]

    def render(self) -> bytes:
        lines = list(self._lines)
        for (index, key, _), segment in zip(self._entries, self.segments):
            lines[index] = f"{key} = {segment.translation}"
        return "\n".join(lines).encode("utf-8")
