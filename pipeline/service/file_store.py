"""Translated files awaiting download: random names in a private directory, deleted after a time to live.

Housekeeping: a sweeper thread (`FileStore.start`) deletes expired files every `min(60 s, ttl / 4)`. Without a
given directory the files wait in `$TMPDIR/nmt-files-<uid>/<pid>-<random>`, removed at exit; a directory left
there by a process that died (kill -9, a crash) is removed by the next store that starts or sweeps, once its
process is gone (`leftover_directories`). A given directory's files outlive the process: the next start adopts
them until their expiry (their modification time + the ttl) and deletes the expired ones at once.
"""
from __future__ import annotations

import logging
import os
import secrets
import shutil
import stat
import tempfile
import threading
import time
import unicodedata
from pathlib import Path

import regex

try:                                          # POSIX: each live store holds a lock in its temporary directory
    import fcntl
except ImportError:                           # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("pipeline.service")

STORED_NAME = regex.compile(r"^[0-9a-f]{32}\.[A-Za-z0-9._-]{1,160}$")
PARTIAL = regex.compile(r"^\.[0-9a-f]{32}\.[A-Za-z0-9._-]{1,160}\.part$")
UNSAFE = regex.compile(r"[^A-Za-z0-9._-]+")
PROCESS_DIRECTORY = regex.compile(r"^([0-9]{1,10})-[a-z0-9_]{1,64}$")     # <pid>-<mkdtemp's random letters>
LOCK_NAME = ".lock"
PARTIAL_GRACE_S = 60.0        # a partial file this old is no write in progress: a crash left it
MIN_SWEEP_S = 0.05

_live: set[Path] = set()      # the temporary directories this process's stores hold now
_live_lock = threading.Lock()


def translated_name(filename: str, target: str = "it") -> str:
    """The download name of a translation into `target`: `talk.srt` -> `talk.it.srt` (a template, `app.pot`, ->
    `app.it.po`), in safe characters only: a letter with a mark as the letter (`Über_café` -> `Uber_cafe`), the
    rest `_`."""
    path = Path(filename.replace("\\", "/")).name
    stem, suffix = os.path.splitext(path)
    stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode() if not stem.isascii() else stem
    stem = UNSAFE.sub("_", stem).strip("._") or "document"
    suffix = UNSAFE.sub("", suffix.lower())[:20]
    if suffix == ".pot":                   # a template, translated, is a catalog
        suffix = ".po"
    target = UNSAFE.sub("", target)[:10] or "translated"
    return f"{stem[:100]}.{target}{suffix}"


def temporary_parent() -> Path:
    """Where stores without a given directory make theirs: `$TMPDIR/nmt-files-<uid>`, one per user."""
    owner = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"nmt-files-{owner}"


def private_parent() -> Path | None:
    """`temporary_parent()`, made (mode 0700) if missing; None unless it is a real directory of this user that
    no one else can enter (a shared temporary directory lets anyone make that name first)."""
    parent = temporary_parent()
    try:
        parent.mkdir(mode=0o700, exist_ok=True)
        info = parent.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077):
        return None
    return parent


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists (a zombie, not yet reaped by its parent, counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:                           # another user's process, or cannot tell: alive
        return True
    return True


def locked_by_its_store(directory: Path) -> bool:
    """Whether a live store holds the lock in `directory` (False where there is no lock to check)."""
    if fcntl is None:
        return False
    try:
        descriptor = os.open(directory / LOCK_NAME, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(descriptor)                  # and with it the lock, if it was taken here
    return False


def leftover_directories(parent: Path) -> list[Path]:
    """The directories in `parent` whose store is gone: named `<pid>-<random>`, the pid is no running process
    (or is this one, and no store here holds it), and no live store holds its lock. A directory whose pid a new
    process reuses waits for that process to end."""
    if os.name != "posix":                    # os.kill(pid, 0) is no probe there
        return []
    found = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = PROCESS_DIRECTORY.match(entry.name)
        if match is None or entry.is_symlink() or not entry.is_dir():
            continue
        pid = int(match[1])
        if pid == os.getpid():
            with _live_lock:
                if entry in _live:
                    continue
        elif process_alive(pid):
            continue
        if not locked_by_its_store(entry):
            found.append(entry)
    return found


def remove_leftovers(parent: Path | None = None) -> int:
    """Delete `leftover_directories(parent)` (default: `private_parent()`); how many."""
    parent = parent if parent is not None else private_parent()
    if parent is None:
        return 0
    removed = 0
    for directory in leftover_directories(parent):
        shutil.rmtree(directory, ignore_errors=True)
        removed += not directory.exists()
    if removed:
        log.info("removed %d file director%s left in %s by stopped processes", removed,
                 "y" if removed == 1 else "ies", parent)
    return removed


class FileStore:
    """Translated files awaiting download: `put(bytes, filename) -> name`, `path(name)`, expired after `ttl_s`.

    `start()` sweeps now, then every `sweep_every_s` in a thread until `close()`. At most `max_bytes` wait in all:
    a file that would take the store past it deletes the oldest ones first (they are then a 404, as expired ones).
    """

    def __init__(self, directory: str | None, ttl_s: float, max_bytes: int = 500_000_000):
        self.ttl_s, self.max_bytes = ttl_s, max_bytes
        self.sweep_every_s = max(min(60.0, ttl_s / 4), MIN_SWEEP_S)
        self._given = Path(directory) if directory is not None else None
        self._directory: Path | None = None
        self._lock_descriptor: int | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    @property
    def directory(self) -> Path:
        """Made on first use (mode 0700): a private temporary directory unless one was given."""
        with self._lock:
            if self._directory is None:
                if self._given is None:
                    self._directory = self._make_temporary()
                else:                               # an operator's directory: made private if new, else as it is
                    self._given.mkdir(mode=0o700, parents=True, exist_ok=True)
                    self._directory = self._given
            return self._directory

    def _make_temporary(self) -> Path:
        parent = private_parent()
        if parent is None:
            log.warning("%s is not a private directory of this user: translated files wait in a temporary "
                        "directory that a crash would leave behind", temporary_parent())
            return Path(tempfile.mkdtemp(prefix="nmt-files-"))        # mode 0700
        with _live_lock:                    # known as live before a sweep here could see it
            directory = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent))
            _live.add(directory)
        if fcntl is not None:               # held while this store lives: released by the kernel at any death
            descriptor = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._lock_descriptor = descriptor
        return directory

    def _existing(self) -> Path | None:
        """The directory, if made (or given and there); never makes it."""
        with self._lock:
            if self._directory is not None:
                return self._directory
        return self._given if self._given is not None and self._given.is_dir() else None

    def put(self, data: bytes, filename: str, target: str = "it") -> str:
        """Store a translation into `target` of `filename`; the name it is found by (random, then
        `translated_name`)."""
        name = f"{secrets.token_hex(16)}.{translated_name(filename, target)}"
        partial = self.directory / f".{name}.part"
        self._make_room(len(data))
        partial.write_bytes(data)
        os.replace(partial, self.directory / name)
        return name

    def _make_room(self, size: int) -> None:
        """Delete the oldest stored files until `size` more bytes fit within `max_bytes`."""
        directory = self.directory
        with self._lock:
            ours = self._ours(directory)
            total = sum(status.st_size for _, status, _ in ours)
            for path, status, stored in sorted(ours, key=lambda item: item[1].st_mtime):
                if total + size <= self.max_bytes:
                    break
                if not stored:                              # another request's file being written
                    continue
                try:
                    path.unlink()
                    total -= status.st_size
                except OSError:
                    pass

    @staticmethod
    def _ours(directory: Path) -> list[tuple[Path, os.stat_result, bool]]:
        """(path, stat, stored) of each file of `directory` this store writes, stored or partial: an operator's
        other files are never touched. Empty where the directory cannot be read."""
        try:
            entries = list(directory.iterdir())
        except OSError:
            return []
        ours = []
        for path in entries:
            stored = bool(STORED_NAME.match(path.name))
            if stored or PARTIAL.match(path.name):
                try:
                    ours.append((path, path.stat(), stored))
                except OSError:
                    continue
        return ours

    def path(self, name: str) -> Path | None:
        """The file stored as `name`, or None (unknown, expired, or not a name this store gives)."""
        if not STORED_NAME.match(name):
            return None
        directory = self._existing()
        if directory is None:
            return None
        path = directory / name
        try:
            if path.is_file() and path.stat().st_mtime >= time.time() - self.ttl_s:
                return path
        except OSError:
            pass
        return None

    def purge(self) -> int:
        """Delete the expired files (and partial ones a crash left); how many."""
        directory = self._existing()
        if directory is None:
            return 0
        now, removed = time.time(), 0
        cutoffs = {True: now - self.ttl_s, False: now - min(self.ttl_s, PARTIAL_GRACE_S)}
        with self._lock:
            for path, status, stored in self._ours(directory):
                if stat.S_ISREG(status.st_mode) and status.st_mtime < cutoffs[stored]:
                    try:
                        path.unlink()
                        removed += 1
                    except OSError:
                        pass
        return removed

    def sweep(self) -> None:
        """Delete what has expired here and, without a given directory, what stopped processes left."""
        if self._given is None:
            remove_leftovers()
        self.purge()

    def start(self) -> None:
        """Sweep now (a given directory's files from an earlier run are adopted until their expiry), then every
        `sweep_every_s` in a daemon thread until `close()`."""
        self.sweep()
        if self._sweeper is None:
            self._stop.clear()
            self._sweeper = threading.Thread(target=self._sweep_loop, name="nmt-file-sweeper", daemon=True)
            self._sweeper.start()

    def _sweep_loop(self) -> None:
        while not self._stop.wait(self.sweep_every_s):
            try:
                self.sweep()
            except Exception:                 # noqa: BLE001 - keep sweeping; a disk error is logged, not fatal
                log.exception("sweeping translated files failed")

    def close(self) -> None:
        """Stop the sweeper; delete the temporary directory (a given one is kept, with the files still valid)."""
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join()
            self._sweeper = None
        with self._lock:
            if self._given is None and self._directory is not None:
                shutil.rmtree(self._directory, ignore_errors=True)
                with _live_lock:
                    _live.discard(self._directory)
                self._directory = None
            if self._lock_descriptor is not None:
                os.close(self._lock_descriptor)
                self._lock_descriptor = None
