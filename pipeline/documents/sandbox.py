"""A document read, translated and written in a process of its own, within a deadline and a memory cap: how the
service treats an upload, so that a file which costs a reader minutes or gigabytes (a crafted one, or one that no
test foresaw) is stopped at its limit, and never holds the service's interpreter or heap (one of its threads waits
on the process).

The process is forked from multiprocessing's forkserver, a clean interpreter started once that has imported the
readers (`start`, at the service's startup): never from the service itself, whose model and threads a fork would
copy. The model stays in the service: the process sends the texts it would translate and gets their translations
back (`translate_in_sandbox`'s `choose`), so the translation is the service's usual batched, fair, timed work.
Where a platform has no forkserver (Windows), or a registered format's reader cannot be sent to another process
(defined in `__main__` or in a function), `sandboxed` says so and the caller reads the document in its own
process, as before.
"""
from __future__ import annotations

import dataclasses
import io
import json
import logging
import math
import multiprocessing
import os
import pickle
import resource
import signal
import sys
import threading
import time
import traceback
from multiprocessing import util
from typing import Any, Callable

from pipeline.documents import FORMATS, open_document, translate_document
from pipeline.documents.segments import Translate
from pipeline.language import Direction

logger = logging.getLogger(__name__)
# (opening text) -> (the texts' translator, the run's direction): the caller's choice once the document is read
Choose = Callable[[str], "tuple[Translate, Direction]"]
OPENING_CHARS = 2000          # what `choose` gets: the first characters of the document's segments
POLL_S = 0.1                  # how often `check` runs while the process reads or writes
JOIN_S = 5.0                  # how long a killed process may take to be reported gone
# the most a process may say at once: the document's texts as JSON (6 bytes a character at worst), or its bytes
MIN_MESSAGE_BYTES, MESSAGE_FACTOR = 64_000_000, 16
# what the readers import on first use, imported once by the forkserver
READERS = ("lxml.etree", "zipfile", "html.parser", "markdown_it", "polib", "yaml", "ahocorasick", "regex")


class Refused(ValueError):
    """The document was not translated: its reader refused it, it needed more memory than the cap, or its process
    died. A ValueError naming the file, as `open_document`'s are."""


def _context() -> Any:
    return multiprocessing.get_context("forkserver")


try:
    from multiprocessing import forkserver, popen_forkserver, spawn
    from multiprocessing.context import ForkServerProcess, reduction, set_spawning_popen
    if not all(hasattr(forkserver, name) for name in ("connect_to_new_process", "read_signed")):
        raise ImportError("multiprocessing.forkserver is not the one `_Popen` was written against")
except ImportError:                     # Windows: no forkserver; a Python whose internals differ
    popen_forkserver = None
else:
    class _Popen(popen_forkserver.Popen):
        """popen_forkserver's, with the caller's main module left out of what the child prepares: multiprocessing's
        children run the main script again to find their target (for a service started as `scripts/serve.py`,
        or by uvicorn, all its imports), where `_serve` needs nothing of it."""

        def _launch(self, process_obj: Any) -> None:
            prep_data = {key: value for key, value in spawn.get_preparation_data(process_obj._name).items()
                         if key not in ("init_main_from_name", "init_main_from_path")}
            buf = io.BytesIO()
            set_spawning_popen(self)
            try:
                reduction.dump(prep_data, buf)
                reduction.dump(process_obj, buf)
            finally:
                set_spawning_popen(None)
            self.sentinel, w = forkserver.connect_to_new_process(self._fds)
            parent_w = os.dup(w)
            self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
            with open(w, "wb", closefd=True) as pipe:
                pipe.write(buf.getbuffer())
            self.pid = forkserver.read_signed(self.sentinel)

    class _Process(ForkServerProcess):
        @staticmethod
        def _Popen(process_obj: Any) -> Any:
            return _Popen(process_obj)


_failed: list[str] = []                # why the forkserver could not start, once it could not


def available() -> bool:
    """Whether this platform can fork documents' processes from a forkserver (Linux and macOS can, where the
    forkserver starts)."""
    return popen_forkserver is not None and "forkserver" in multiprocessing.get_all_start_methods() and not _failed


def start() -> bool:
    """Start the forkserver with the readers imported, so that the first document does not pay for it (about a
    second); a no-op once it runs. False where there is none (`available`), or it cannot start (a sandbox without
    Unix sockets): said once on standard error, and documents are read by their callers, as before."""
    if not available():
        return False
    _context().set_forkserver_preload([__name__, *READERS])     # a module missing there is skipped
    try:
        forkserver.ensure_running()
    except (OSError, RuntimeError) as exc:
        _failed.append(str(exc))
        print(f"documents are read in this process: no forkserver ({exc})", file=sys.stderr)
        return False
    return True


def sandboxed(format: str | None) -> bool:
    """Whether a document of `format` (a registered name; None: detected from the content) can be read in a
    process of its own: the forkserver runs (`start`) and the format's reader can be sent there (`pickle`)."""
    if not start():
        return False
    return format is None or _spec(format) is not None


def _spec(format: str) -> Any:
    """The registered `format` as sent to the process (its reader by reference, without its content test, which
    may be a lambda and is not needed there), or None when the process cannot import its reader (pickled by name:
    one defined in a function, or in the caller's `__main__`, which the process does not run)."""
    spec = dataclasses.replace(FORMATS[format], detect=None)
    if getattr(spec.open, "__module__", None) == "__main__":
        return None
    try:
        pickle.dumps(spec)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None
    return spec


def translate_in_sandbox(data: bytes, format: str | None, name: str, choose: Choose, *, deadline_s: float,
                         memory_bytes: int | None = None, check: Callable[[], None] | None = None,
                         overwrite: bool = False, direction: Direction | None = None,
                         max_xml_bytes: int | None = None, max_unpacked_bytes: int | None = None) -> bytes:
    """The translated document's bytes, as `translate_document` gives them, read and written in a process of its
    own (blocking: call it from a worker thread). `choose(opening text)` gives the translator and direction once the
    document is read (`direction`, where given, is the reader's already). The process's address space is capped
    at `memory_bytes` (None: no cap), and it is killed `deadline_s` seconds from now (by a timer, whatever this
    thread is doing), or as soon as `check()` raises (a client gone, a server stopping; it runs every `POLL_S`
    while the process works) or `choose` or a translation does.

    Raises `Refused` (a ValueError) for a file its reader rejects or fails on, over the memory cap, whose process
    died or said what it should not; `TimeoutError` past the deadline; and what `check`, `choose` or the
    translator raise. What the process says is data (bytes and JSON) checked here, never unpickled."""
    deadline = time.monotonic() + deadline_s
    spec = None if format is None else _spec(format)
    if format is not None and spec is None:
        raise ValueError(f"format {format!r}: its reader cannot be sent to another process (see `sandboxed`)")
    options = {"overwrite": overwrite, "direction": direction, "max_xml_bytes": max_xml_bytes,
               "max_unpacked_bytes": max_unpacked_bytes}
    start()                             # the forkserver with the readers imported, if this is the first document
    ours, theirs = _context().Pipe()
    process = _Process(target=_serve, args=(theirs, data, spec, name, options, memory_bytes, deadline_s),
                       daemon=True, name=f"document {name}"[:64])
    watchdog = threading.Timer(deadline_s, _kill, (process,))
    watchdog.daemon = True
    try:
        process.start()
        theirs.close()
        watchdog.start()
        translate: Translate | None = None
        while True:
            if check is not None:
                check()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{name}: not translated within {deadline_s:g} s")
            try:
                if not _channel(ours.poll, min(left, POLL_S)):
                    continue
                message = _channel(ours.recv_bytes, max(MIN_MESSAGE_BYTES, MESSAGE_FACTOR * len(data)))
                kind, value = _decoded(message, translate is not None)
                if kind == "opened":
                    translate, chosen = choose(value)
                    _channel(ours.send, chosen)
                elif kind == "translate":
                    _channel(ours.send, translate(value))
                elif kind == "done":
                    return value
                elif kind == "refused":
                    raise Refused(value)
                else:                   # a reader's bug: the traceback for the log, its last line for the client
                    logger.warning("%s: its reader failed in its process:\n%s", name, value)
                    last = (value.strip().splitlines() or ["a reader's error"])[-1]
                    raise Refused(f"{name}: could not be read ({last[:200]})")
            except _Lost:               # the process died, or was killed (the deadline's timer), mid-message
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"{name}: not translated within {deadline_s:g} s") from None
                process.join(1.0)
                raise Refused(f"{name}: its reader stopped ({_ended(process.exitcode)}); nothing was translated") \
                    from None
    finally:
        watchdog.cancel()
        if watchdog.ident is not None:
            watchdog.join()             # a kill it began ends before the process is closed
        ours.close()
        if process.pid is not None:
            _kill(process)
            process.join(JOIN_S)
            if process.exitcode is not None:
                process.close()


class _Lost(Exception):
    """The channel to the process broke: it died, or was killed."""


def _channel(operation: Callable[..., Any], *args: Any) -> Any:
    try:
        return operation(*args)
    except (EOFError, OSError) as exc:
        raise _Lost() from exc


def _kill(process: Any) -> None:
    try:
        if process.is_alive():
            process.kill()
    except (ValueError, OSError):       # closed, or gone already
        pass


def _said(connection: Any, kind: str, value: Any) -> None:
    """A message from the process: its kind, then the document's bytes ("done") or JSON (texts, a message). Data
    only, so that a process a crafted file took over cannot have its caller unpickle anything."""
    payload = value if kind == "done" else json.dumps(value).encode("ascii")
    connection.send_bytes(kind.encode("ascii") + b"\n" + payload)


def _decoded(message: bytes, opened: bool) -> tuple[str, Any]:
    """(kind, value) of a message from the process, checked: its kind, in its turn (texts to translate only once
    the document is opened, and once only opened), its value of the right type; else `Refused`."""
    kind, _, payload = message.partition(b"\n")
    name = kind.decode("ascii", "replace")
    if name == "done":
        return name, payload
    try:
        value = json.loads(payload)
    except ValueError:
        value = None
    if name in ("refused", "failed") or name == "opened" and not opened:
        if isinstance(value, str):
            return name, value
    elif name == "translate" and opened:
        if isinstance(value, list) and all(isinstance(text, str) for text in value):
            return name, value
    raise Refused(f"its process said what it should not ({name[:40]!r}); nothing was translated")


def _ended(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class _CallerGone(Exception):
    """The caller closed the channel: it gave up on this document."""


def _serve(connection: Any, data: bytes, spec: Any, name: str, options: dict[str, Any], memory_bytes: int | None,
           deadline_s: float) -> None:
    """The process: read the document, say its opening text, translate it through `connection`, send the bytes. Its
    address space may grow by `memory_bytes` past what it was forked with (the forkserver's imports: about 170 MB,
    more where OpenBLAS started a thread per core), and its CPU time is capped a little past the deadline too:
    should its caller die, the kernel ends it."""
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_CPU, math.ceil(deadline_s) + 5)      # an orphan (its caller killed) spins no longer
    if memory_bytes is not None:
        _limit(resource.RLIMIT_AS, _mapped_bytes() + memory_bytes)
    if spec is not None:
        FORMATS[spec.name] = spec       # this process's own registry: the caller's format, as it registered it

    def ask(kind: str, value: Any) -> Any:
        try:
            _said(connection, kind, value)
            return connection.recv()
        except (EOFError, OSError):
            raise _CallerGone() from None

    document: Any = None
    try:
        document = open_document(data, None if spec is None else spec.name, name, **options)
        del data
        direction = ask("opened", opening_text(document))
        said = ("done", translate_document(None, document, name=name, translate=lambda texts: ask(
            "translate", list(texts)), direction=direction))
    except _CallerGone:
        return
    except MemoryError:                 # said below, once the reader's frames and what they hold are let go
        said = ("refused", f"{name}: needs more than the {memory_bytes or 0:,} bytes of memory a document may take "
                           "to read and write")
    except ValueError as exc:
        said = ("refused", str(exc))
    except Exception:                               # noqa: BLE001 - a reader's bug: the caller says so, with this
        said = ("failed", traceback.format_exc(limit=20))
    document = None
    try:
        _said(connection, *said)
    except OSError:                     # the caller gave up on it
        pass


def _mapped_bytes() -> int:
    """This process's address space now (Linux's /proc; 0 where there is none)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _limit(which: int, value: int) -> None:
    """This process's soft limit `which` lowered to `value` (never above its hard limit), where the system allows."""
    _, hard = resource.getrlimit(which)
    try:
        resource.setrlimit(which, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))
    except (ValueError, OSError):       # a limit this system does not enforce (macOS: the address space)
        pass


def opening_text(document: Any, limit: int = OPENING_CHARS) -> str:
    """The first `limit` characters of a document's segments: what `source: auto` detects its language on."""
    texts, size = [], 0
    for segment in document.segments:
        texts.append(segment.text)
        size += len(segment.text) + 1
        if size >= limit:
            break
    return " ".join(texts)[:limit]
