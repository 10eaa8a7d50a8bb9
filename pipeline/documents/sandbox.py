"""A document read, translated and written in a process of its own, within a deadline and a memory cap: how the
service treats an upload, so that a file which costs a reader minutes or gigabytes (a crafted one, or one that no
test foresaw) is stopped at its limit, and never holds the service's interpreter, heap or threads.

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
import math
import multiprocessing
import os
import pickle
import resource
import signal
import sys
import time
import traceback
from multiprocessing import util
from typing import Any, Callable

from pipeline.documents import FORMATS, open_document, translate_document
from pipeline.documents.segments import Translate
from pipeline.language import Direction

# (opening text) -> (the texts' translator, the run's direction): the caller's choice once the document is read
Choose = Callable[[str], "tuple[Translate, Direction]"]
OPENING_CHARS = 2000          # what `choose` gets: the first characters of the document's segments
POLL_S = 0.1                  # how often `check` runs while the process reads or writes
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
except ImportError:                     # Windows: no forkserver
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
    process of its own: a forkserver exists and the format's reader can be sent there (`pickle`)."""
    if not available():
        return False
    return format is None or _spec(format) is not None


def _spec(format: str) -> Any:
    """The registered `format` as sent to the process (its reader by reference, without its content test, which
    may be a lambda and is not needed there), or None when it cannot be pickled."""
    spec = dataclasses.replace(FORMATS[format], detect=None)
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
    at `memory_bytes` (None: no cap), and it is killed `deadline_s` seconds from now, or as soon as `check()`
    raises (a client gone, a server stopping; it runs every `POLL_S`) or `choose` or a translation does.

    Raises `Refused` (a ValueError) for a file its reader rejects, over the memory cap, or whose process died;
    `TimeoutError` past the deadline; and what `check`, `choose` or the translator raise."""
    deadline = time.monotonic() + deadline_s
    spec = None if format is None else _spec(format)
    if format is not None and spec is None:
        raise ValueError(f"format {format!r}: its reader cannot be sent to another process (see `sandboxed`)")
    options = {"overwrite": overwrite, "direction": direction, "max_xml_bytes": max_xml_bytes,
               "max_unpacked_bytes": max_unpacked_bytes}
    context = _context()
    ours, theirs = context.Pipe()
    process = _Process(target=_serve, args=(theirs, data, spec, name, options, memory_bytes, deadline_s),
                       daemon=True, name=f"document {name}"[:64])
    try:
        process.start()
        theirs.close()
        translate: Translate | None = None
        while True:
            if check is not None:
                check()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{name}: not translated within {deadline_s:g} s")
            if not ours.poll(min(left, POLL_S)):
                continue
            try:
                kind, value = _decoded(ours.recv_bytes())
            except EOFError:
                process.join(1.0)
                raise Refused(f"{name}: its reader stopped ({_ended(process.exitcode)}); nothing was translated") \
                    from None
            if kind == "opened":
                translate, chosen = choose(value)
                ours.send(chosen)
            elif kind == "translate":
                assert translate is not None
                ours.send(translate(value))
            elif kind == "done":
                return value
            elif kind == "refused":
                raise Refused(value)
            else:                       # "failed": a reader's bug, with the process's traceback
                raise RuntimeError(f"{name}: reading or writing failed in its process:\n{value}")
    finally:
        ours.close()
        if process.pid is not None:
            if process.is_alive():
                process.kill()
            process.join()
            process.close()


def _said(connection: Any, kind: str, value: Any) -> None:
    """A message from the process: its kind, then the document's bytes ("done") or JSON (texts, a message). Data
    only, so that a process a crafted file took over cannot have its caller unpickle anything."""
    payload = value if kind == "done" else json.dumps(value).encode("ascii")
    connection.send_bytes(kind.encode("ascii") + b"\n" + payload)


def _decoded(message: bytes) -> tuple[str, Any]:
    kind, _, payload = message.partition(b"\n")
    name = kind.decode("ascii", "replace")
    if name == "done":
        return name, payload
    if name not in ("opened", "translate", "refused", "failed"):
        raise RuntimeError(f"a document's process said {name[:40]!r}: not a message")
    return name, json.loads(payload)


def _ended(code: int | None) -> str:
    if code is None:
        return "it did not end"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _serve(connection: Any, data: bytes, spec: Any, name: str, options: dict[str, Any], memory_bytes: int | None,
           deadline_s: float) -> None:
    """The process: read the document, say its opening text, translate it through `connection`, send the bytes. Its
    CPU time is capped a little past the deadline too: should its caller die, the kernel ends it."""
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_CPU, math.ceil(deadline_s) + 5)      # an orphan (its caller killed) spins no longer
    if memory_bytes is not None:
        _limit(resource.RLIMIT_AS, memory_bytes)
    if spec is not None:
        FORMATS[spec.name] = spec       # this process's own registry: the caller's format, as it registered it

    def translate(texts: list[str]) -> list[str]:
        _said(connection, "translate", list(texts))
        return connection.recv()

    try:
        document = open_document(data, None if spec is None else spec.name, name, **options)
        del data
        _said(connection, "opened", opening_text(document))
        direction = connection.recv()
        _said(connection, "done", translate_document(None, document, name=name, translate=translate,
                                                      direction=direction))
    except MemoryError:
        _said(connection, "refused", f"{name}: needs more than the {memory_bytes or 0:,} bytes of memory a document "
                                     "may take to read and write")
    except ValueError as exc:
        _said(connection, "refused", str(exc))
    except (EOFError, BrokenPipeError):             # the caller gave up on it
        pass
    except Exception:                               # noqa: BLE001 - a reader's bug: the caller says so, with this
        _said(connection, "failed", traceback.format_exc(limit=20))


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
