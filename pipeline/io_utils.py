"""Atomic file and directory writes: outputs appear whole or not at all."""
from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Iterator


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


@contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory that replaces `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    os.chmod(tmp, 0o777 & ~_umask())
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if path.exists():
        old = path.with_name(f".{path.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
    os.replace(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextmanager
def exclusive_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive advisory lock on the file `path` (created if missing) for the block, so that processes
    which would write the same output (a conversion on first use) take turns; where the platform has no `fcntl`
    (Windows), the block runs unlocked."""
    try:
        import fcntl
    except ImportError:           # no advisory locks: one process at a time is then the caller's to ensure
        yield
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


MAX_LINE_BYTES = 1_000_000       # one line of a text file (a paragraph): longer lines are refused, not read whole
UTF8_BOM, UTF16_BOMS = b"\xef\xbb\xbf", (b"\xff\xfe", b"\xfe\xff")


def read_text_lines(path: str | os.PathLike, what: str = "input file",
                    max_line_bytes: int = MAX_LINE_BYTES) -> list[str]:
    """Lines of a UTF-8 text file (LF or CRLF; a UTF-8 byte-order mark is skipped), read line by line so that
    memory stays bounded by the file's text. One-line errors name the file and line: not found, a directory,
    UTF-16, a NUL byte (a binary file), not UTF-8, a line over `max_line_bytes`."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{what} {path}: is a directory, expected a text file")
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path}: not found")
    with path.open("rb") as handle:
        return read_lines(handle, f"{what} {path}", max_line_bytes)


def read_stdin_lines(max_line_bytes: int = MAX_LINE_BYTES) -> list[str]:
    """Lines of standard input, read and checked exactly as `read_text_lines` reads a file."""
    import sys

    if sys.stdin is None:
        raise ValueError("standard input: closed; give texts as arguments or --input FILE")
    return read_lines(sys.stdin.buffer, "standard input", max_line_bytes)


def read_lines(handle: BinaryIO, name: str, max_line_bytes: int = MAX_LINE_BYTES) -> list[str]:
    """Lines of a binary stream of UTF-8 text, split at LF only (a CR before it dropped), so that the same
    bytes give the same lines from a file or a pipe; errors are one line starting with `name`."""
    lines = []
    for number in itertools.count(1):
        line = handle.readline(max_line_bytes + 1)
        if not line:
            break
        if number == 1:
            if line.startswith(UTF16_BOMS):
                raise ValueError(f"{name}: UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8")
            line = line.removeprefix(UTF8_BOM)
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            raise ValueError(f"{name} line {number}: longer than {max_line_bytes:,} bytes; split it into "
                             "paragraphs of one line each")
        if b"\x00" in line:
            raise ValueError(f"{name} line {number}: a NUL byte; expected a UTF-8 text file, not a binary one")
        try:
            lines.append(line.decode("utf-8").removesuffix("\n").removesuffix("\r"))
        except UnicodeDecodeError:
            raise ValueError(f"{name} line {number}: not valid UTF-8") from None
    return lines


@contextmanager
def atomic_file(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a temporary path beside `path` for a writer that needs a file name (zip, tar; `suffix` for
    writers that check it, as Keras does ".keras"); it replaces `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
