"""Run the service with uvicorn: load the run, warm the decoder up, serve until SIGTERM or Ctrl-C."""
from __future__ import annotations

import dataclasses
import ipaddress
import os
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from pipeline.extras import require

if TYPE_CHECKING:
    from pipeline.service.settings import ServiceSettings
    from pipeline.translate.engine import Engine


def api_key_from_env(variable: str | None) -> str | None:
    """The API key held in environment variable `variable`; None when no variable is named."""
    if variable is None:
        return None
    key = os.environ.get(variable, "")
    if not key:
        raise ValueError(f"--api-key-env {variable}: the environment variable is unset or empty")
    return key


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def warm_up(translator: Engine, beams: Iterable[int]) -> float:
    """Translate inputs of every length once per beam, so that the decoder compiles the shapes it needs
    (seconds each) now and not in the first requests; the seconds taken."""
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                       # word pieces past the length limit
        for beam in beams:
            for length in range(1, translator.max_input_length + 1):
                translator.translate([" ".join(["a"] * length)], beam=beam)
    return time.perf_counter() - started


def serve(run_dir: str | Path, settings: ServiceSettings | None = None, *, which: str = "best",
          engine: str = "keras", host: str = "127.0.0.1", port: int = 8000, api_key_env: str | None = None,
          log_level: str = "info") -> None:
    """Serve `run_dir` on host:port with `open_translator(run_dir, which, engine)`.

    SIGTERM stops taking connections, finishes the requests in flight, then exits.
    """
    uvicorn = require("uvicorn", "serve")
    require("fastapi", "serve")
    from pipeline.service.app import create_app
    from pipeline.service.settings import ServiceSettings
    from pipeline.translate import open_translator

    settings = settings or ServiceSettings()
    key = api_key_from_env(api_key_env)
    if key is not None:
        settings = dataclasses.replace(settings, api_key=key)
    if not _is_loopback(host) and settings.api_key is None:
        print(f"warning: serving on {host} without --api-key-env: anyone who can reach it can use it",
              file=sys.stderr)
    # Keras on TensorFlow serves in graph mode: one trace serves every batch size that dynamic batching
    # makes, where XLA would compile each batch shape (seconds) on its first request
    options = {"jit_compile": False} if engine == "keras" else {}
    translator = open_translator(run_dir, which, engine, **options)
    app = create_app(translator, settings, {"run": str(Path(run_dir).resolve()), "weights": which, "engine": engine})
    app.state.service.glossaries.check()           # a database that cannot be opened stops here, not per request
    if engine == "keras":                      # CTranslate2 compiles nothing per shape: nothing to warm up
        beams = sorted({1, app.state.service.default_beam})
        print(f"compiling the decoder for beam {' and '.join(map(str, beams))} ...", file=sys.stderr, flush=True)
        print(f"compiled in {warm_up(translator, beams):.1f} s", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                            timeout_graceful_shutdown=int(settings.timeout_s) + 5)
    # uvicorn shuts down gracefully on SIGTERM or Ctrl-C, then raises the signal again for the handler it found:
    # these make that a plain exit (0 after SIGTERM, 130 after Ctrl-C), not a death by signal or a traceback
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    signal.signal(signal.SIGINT, lambda number, frame: sys.exit(130))
    uvicorn.Server(config).run()
