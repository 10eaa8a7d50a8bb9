"""Readers that misbehave, for the documents' processes (`pipeline.documents.sandbox`): each writes its process id
to the path a file holds (so a test can see that process end), then spins, eats memory, or crashes. A module of
their own, so that the process can import them by name, as it would a registered format's."""
import builtins
import os
import signal

from pipeline.documents.formats import Format


def _started(data: bytes) -> str:
    """Write this process's id where the file's first line says; the file's second line, or ""."""
    path, _, rest = data.decode("utf-8").strip().partition("\n")
    with open(path + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.replace(path + ".tmp", path)
    return rest


class SpinningDocument:
    """Reads forever, holding a core: a reader that some file makes quadratic, at its worst."""

    def __init__(self, data: bytes, name: str = "document"):
        _started(data)
        count = 0
        while True:
            count += 1


class HungryDocument:
    """Takes memory until there is none: a decompression bomb that no byte limit foresaw."""

    def __init__(self, data: bytes, name: str = "document"):
        _started(data)
        held = []
        while True:
            held.append(bytearray(50_000_000))


class CrashingDocument:
    """Takes its process down, as a C library's bug on a crafted file would."""

    def __init__(self, data: bytes, name: str = "document"):
        _started(data)
        os.kill(os.getpid(), signal.SIGSEGV)


FORMATS = [Format("spin", (".spin",), "text/plain; charset=utf-8", False, SpinningDocument),
           Format("hungry", (".hungry",), "text/plain; charset=utf-8", False, HungryDocument),
           Format("crash", (".crash",), "text/plain; charset=utf-8", False, CrashingDocument)]


class BuggyDocument:
    """Fails as a reader's bug would on a file nobody foresaw: not a ValueError (a KeyError, or the built-in
    exception the file's second line names)."""

    def __init__(self, data: bytes, name: str = "document"):
        error = getattr(builtins, _started(data) or "KeyError")
        raise error("w:val")


def _connection():
    import gc
    from multiprocessing.connection import Connection

    return next(item for item in gc.get_objects() if isinstance(item, Connection))


class ForgingDocument:
    """A reader a crafted file took over, saying to its caller what the file's second line holds (`\\n` for a new
    line): by default, asking to translate before the document is open, and what is not a list of texts."""

    def __init__(self, data: bytes, name: str = "document"):
        said = _started(data) or "translate\\n[1, 2]"
        _connection().send_bytes(said.replace("\\n", "\n").encode("utf-8"))
        self.segments = []


class StallingDocument:
    """A reader a crafted file took over, saying the first bytes of a long message and no more."""

    def __init__(self, data: bytes, name: str = "document"):
        _started(data)
        os.write(_connection().fileno(), (1000).to_bytes(4, "big") + b"opened\n\"")
        while True:
            signal.pause()


FORMATS += [Format("buggy", (".buggy",), "text/plain; charset=utf-8", False, BuggyDocument),
            Format("forging", (".forging",), "text/plain; charset=utf-8", False, ForgingDocument),
            Format("stalling", (".stalling",), "text/plain; charset=utf-8", False, StallingDocument)]
