"""Quiet native logs: on a machine without a GPU, TensorFlow and XLA print CUDA, cuInit, oneDNN and absl lines that
look like failures to a new user. They come from C++ before `TF_CPP_MIN_LOG_LEVEL` is read, so only filtering the
process's standard error removes them.

`quiet_native_logs()` (what `cli.run_main` calls before a script's work) points file descriptor 2 at a pipe that a
thread reads line by line, dropping native INFO lines and the known noise of a CPU-only machine, and passing every
other line on (real native warnings and errors, Python's tracebacks and warnings, progress bars, uvicorn's logs).
Python's own `sys.stderr` keeps writing to the real standard error directly, so nothing Python prints is delayed.
`NMT_NATIVE_LOGS=1` turns the filter off.
"""
from __future__ import annotations

import atexit
import io
import os
import re
import sys
import threading

SHOW_ALL = "NMT_NATIVE_LOGS"
NATIVE_LINE = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ ([\w.]+):\d+\] (.*)")
# native warnings and errors that only say a GPU library is missing or a CPU feature unused
NOISE = re.compile(r"cuInit|CUDA|cuda|cuDNN|cuFFT|cuBLAS|TensorRT|TF-TRT|computation placer already registered"
                   r"|oneDNN custom operations|rebuild TensorFlow with the appropriate compiler flags")
PLAIN_NOISE = ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
               "To enable the following instructions:")
_installed = False


def is_noise(line: str) -> bool:
    """Whether a line of native standard error is dropped: a native INFO line, a native warning or error about a
    missing GPU library, or absl's and cpu_feature_guard's plain-text notes."""
    match = NATIVE_LINE.match(line)
    if match:
        level, _, message = match.groups()
        return level == "I" or (level in "WE" and NOISE.search(message) is not None)
    return line.startswith(PLAIN_NOISE)


def quiet_native_logs() -> None:
    """Filter file descriptor 2 for the rest of the process (once; not when `NMT_NATIVE_LOGS=1` or when fd 2 is
    unusable)."""
    global _installed
    if _installed or os.environ.get(SHOW_ALL, "") not in ("", "0"):
        return
    try:
        real = os.dup(2)
        read, write = os.pipe()
    except OSError:
        return
    sys.stderr.flush()
    os.dup2(write, 2)
    os.close(write)
    real_stream = io.TextIOWrapper(io.FileIO(real, "w", closefd=False), encoding=sys.stderr.encoding or "utf-8",
                                   errors="backslashreplace", line_buffering=True, write_through=True)
    sys.stderr = real_stream
    _installed = True

    def forward() -> None:
        with io.FileIO(read, "r") as pipe:
            for raw in iter(pipe.readline, b""):
                if not is_noise(raw.decode("utf-8", "replace")):
                    os.write(real, raw)

    thread = threading.Thread(target=forward, name="native-log-filter", daemon=True)
    thread.start()

    def drain() -> None:                      # at exit: close our end of the pipe, let the reader pass what is left
        os.dup2(real, 2)
        thread.join(timeout=1.0)
    atexit.register(drain)
