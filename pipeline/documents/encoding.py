"""A text file's bytes as text, and the text back in the same encoding: what every text format reads with."""
from __future__ import annotations


class Encoded:
    """Text decoded from bytes, and encoded back the same way: UTF-8 (with or without a byte-order mark) or
    UTF-16 with its mark. Anything else is a ValueError naming `name`."""

    def __init__(self, data: bytes, name: str):
        for mark, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
            if data.startswith(mark):
                break
        else:
            codec = "utf-8"
        try:
            self.text = data.decode(codec)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{name}: not UTF-8 (or UTF-16 with a byte-order mark) text: byte {exc.start} "
                             f"cannot be decoded") from None
        self.codec = codec

    def encode(self, text: str) -> bytes:
        return text.encode(self.codec, errors="surrogatepass" if self.codec == "utf-16" else "strict")
