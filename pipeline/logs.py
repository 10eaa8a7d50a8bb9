"""Quiet native logs: on a machine without a GPU, TensorFlow and XLA print CUDA, cuInit, oneDNN and absl lines that
look like failures to a new user. They come from C++ before `TF_CPP_MIN_LOG_LEVEL` is read, so only filtering the
process's standard error removes them.

`quiet_native_logs()` (what `cli.run_main` calls before a script's work) points file descriptor 2 at a pipe that a
small filter process reads line by line, dropping native INFO lines and the known noise of a CPU-only machine, and
passing every other line on (real native warnings and errors, fatal errors of a crashing process, Python's
tracebacks and warnings, progress bars, uvicorn's logs).
Python's own `sys.stderr` keeps writing to the real standard error directly, so nothing Python prints is delayed.
`NMT_NATIVE_LOGS=1` turns the filter off.
"""
from __future__ import annotations

import atexit
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

SHOW_ALL = "NMT_NATIVE_LOGS"
NATIVE_LINE = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ ([\w.]+):\d+\] (.*)")
# Native warnings and errors that TensorFlow prints on every start, GPU or not: plugins registered twice, TensorRT
# absent, unused CPU features. Each is an exact message, so that a real error of the same library still shows.
ALWAYS_NOISE = re.compile(r"Unable to register (cuDNN|cuFFT|cuBLAS) factory: Attempting to register factory"
                          r"|computation placer already registered|TF-TRT Warning: Could not find TensorRT"
                          r"|oneDNN custom operations are on|rebuild TensorFlow with the appropriate compiler flags"
                          r"|oneDNN supports DT_INT64 only on platforms with AVX-512")
# ... and what a machine without an NVIDIA GPU adds: no driver, no device. Dropped only where no GPU is visible.
NO_GPU_NOISE = re.compile(r"failed call to cuInit|Could not find cuda drivers|no NVIDIA GPU device is present"
                          r"|CUDA_ERROR_NO_DEVICE|kernel driver does not appear to be running"
                          r"|could not open file to read NUMA node")
PLAIN_NOISE = ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
               "To enable the following instructions:")
MAX_LINE = 65536              # what the filter reads at once: a longer line passes on in pieces
_installed = False


def gpu_visible() -> bool:
    """Whether this machine shows an NVIDIA GPU (its device nodes), so that CUDA errors may be real."""
    return any(Path("/dev").glob("nvidia[0-9]*"))


def is_noise(line: str, no_gpu: bool = True) -> bool:
    """Whether a line of native standard error is dropped: a native INFO line, a known harmless warning or error
    (and, with `no_gpu`, one that only says there is no GPU), or absl's and cpu_feature_guard's plain notes."""
    match = NATIVE_LINE.match(line)
    if match:
        level, _, message = match.groups()
        return level == "I" or (level in "WE" and (ALWAYS_NOISE.search(message) is not None
                                                   or (no_gpu and NO_GPU_NOISE.search(message) is not None)))
    return line.startswith(PLAIN_NOISE)


def forward_filtered(source: BinaryIO, sink: BinaryIO, no_gpu: bool = True) -> None:
    """Copy lines from `source` to `sink` until end of file, dropping `is_noise` lines. Once `sink` fails (a closed
    terminal, a broken pipe) the rest is read and dropped, so that the writers never block on a full pipe."""
    broken = False
    for raw in iter(lambda: source.readline(MAX_LINE), b""):
        if broken or is_noise(raw.decode("utf-8", "replace"), no_gpu):
            continue
        try:
            sink.write(raw)
            sink.flush()
        except OSError:
            broken = True


FILTER_PROCESS = f"""
import signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C and SIGTERM are for the parent: the filter ends at EOF,
signal.signal(signal.SIGTERM, signal.SIG_IGN)     # once every writer has closed the pipe (exit, crash or kill)
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from pipeline.logs import forward_filtered, gpu_visible
forward_filtered(sys.stdin.buffer, sys.stdout.buffer, no_gpu=not gpu_visible())
"""


def quiet_native_logs() -> None:
    """Filter file descriptor 2 for the rest of the process (once; not when `NMT_NATIVE_LOGS=1` or when fd 2 or
    a filter process cannot be had).

    The filter is a small child process reading a pipe that fd 2 now points at. Being another process, it still
    passes on what a crashing parent wrote last (a native fatal error, faulthandler's traceback): it reads until
    every writer has closed the pipe, and only then exits."""
    global _installed
    if _installed or os.environ.get(SHOW_ALL, "") not in ("", "0"):
        return
    try:
        real = os.dup(2)
        read, write = os.pipe()
    except OSError:
        return
    try:
        child = subprocess.Popen([sys.executable, "-c", FILTER_PROCESS], stdin=read, stdout=real, stderr=real,
                                 close_fds=True)
    except OSError:
        for fd in (real, read, write):
            os.close(fd)
        return
    os.close(read)
    sys.stderr.flush()
    os.dup2(write, 2)
    os.close(write)
    sys.stderr = io.TextIOWrapper(io.FileIO(real, "w", closefd=False), encoding=sys.stderr.encoding or "utf-8",
                                  errors="backslashreplace", line_buffering=True, write_through=True)
    _installed = True

    def drain() -> None:                      # at exit: close our end of the pipe, let the filter pass what is left
        os.dup2(real, 2)
        try:
            child.wait(timeout=1.0)
        except subprocess.TimeoutExpired:     # a grandchild still holds the pipe: it keeps the filter running
            pass
    atexit.register(drain)
