"""Translated files awaiting download: random names in a private directory, deleted after a time to live."""
from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
import time
from pathlib import Path

import regex

STORED_NAME = regex.compile(r"^[0-9a-f]{32}\.[A-Za-z0-9._-]{1,160}$")
PARTIAL = regex.compile(r"^\.[0-9a-f]{32}\.[A-Za-z0-9._-]{1,160}\.part$")
UNSAFE = regex.compile(r"[^A-Za-z0-9._-]+")


def translated_name(filename: str) -> str:
    """The download name of a translation: `talk.srt` -> `talk.it.srt`, in safe characters only."""
    path = Path(filename.replace("\\", "/")).name
    stem, suffix = os.path.splitext(path)
    stem = UNSAFE.sub("_", stem).strip("._") or "document"
    return f"{stem[:100]}.it{UNSAFE.sub('', suffix.lower())[:20]}"


class FileStore:
    """Translated files awaiting download: `put(bytes, filename) -> name`, `path(name)`, expired after `ttl_s`."""

    def __init__(self, directory: str | None, ttl_s: float):
        self.ttl_s = ttl_s
        self._given = Path(directory) if directory is not None else None
        self._directory: Path | None = None
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        """Made on first use (mode 0700): a private temporary directory unless one was given."""
        with self._lock:
            if self._directory is None:
                if self._given is None:
                    self._directory = Path(tempfile.mkdtemp(prefix="nmt-files-"))     # mode 0700
                else:                               # an operator's directory: made private if new, else as it is
                    self._given.mkdir(mode=0o700, parents=True, exist_ok=True)
                    self._directory = self._given
            return self._directory

    def put(self, data: bytes, filename: str) -> str:
        self.purge()
        name = f"{secrets.token_hex(16)}.{translated_name(filename)}"
        partial = self.directory / f".{name}.part"
        partial.write_bytes(data)
        os.replace(partial, self.directory / name)
        return name

    def path(self, name: str) -> Path | None:
        """The file stored as `name`, or None (unknown, expired, or not a name this store gives)."""
        self.purge()
        if not STORED_NAME.match(name):
            return None
        path = self.directory / name
        return path if path.is_file() else None

    def purge(self) -> None:
        cutoff, directory = time.time() - self.ttl_s, self.directory
        with self._lock:
            for path in directory.iterdir():      # only what this store writes: an operator's other files stay
                if not (STORED_NAME.match(path.name) or PARTIAL.match(path.name)):
                    continue
                try:
                    if path.is_file() and path.stat().st_mtime < cutoff:
                        path.unlink()
                except OSError:
                    pass

    def close(self) -> None:
        """Delete the temporary directory (a given one is kept, with the files still valid)."""
        if self._given is None and self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
