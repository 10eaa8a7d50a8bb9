"""Run the service with uvicorn: load the run, warm the decoder up, serve until SIGTERM or Ctrl-C."""
from __future__ import annotations

import copy
import dataclasses
import gc
import ipaddress
import logging
import os
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence
from urllib.parse import unquote_plus

from pipeline.extras import require
from pipeline.rundir import run_name
from pipeline.service.settings import MAX_BEAM
from pipeline.text import shortened

if TYPE_CHECKING:
    import uvicorn as uvicorn_module

    from pipeline.service.settings import ServiceSettings
    from pipeline.translate.engine import Engine

LOGGED_PATH_CHARS = 200       # an access-log line shows at most this much of a request's path and query
LOGGED_METHOD_CHARS = 20
LOGGED_CLIENT_CHARS = 60
MASKED_FIELDS = frozenset({"api_key", "q"})   # query fields whose values the access log does not show


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


def warm_up(translator: Engine, beams: Iterable[int], n_best: Iterable[tuple[int, int]] = ()) -> float:
    """Translate inputs of every length once per beam, and ask for each (beam, n) n-best list of `n_best`, so
    that the decoder compiles the shapes it needs (seconds each) now and not in the first requests; the seconds
    taken."""
    started = time.perf_counter()
    inputs = [" ".join(["a"] * length) for length in range(1, translator.max_input_length + 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                       # word pieces past the length limit
        for beam in beams:
            for text in inputs:
                translator.translate([text], beam=beam)
        for beam, n in n_best:
            for text in inputs:
                translator.n_best([text], n, beam=beam)
    return time.perf_counter() - started


def warmed(default_beam: int, max_alternatives: int, which: str) -> tuple[list[int], list[tuple[int, int]]]:
    """(beams, (beam, n) n-best lists) a served run compiles before it listens: greedy's and the default beam's
    (`which` "default"), or every beam a request may ask for and the n-best list of every LibreTranslate
    `alternatives` count the service allows ("all"), as `libretranslate.translate_texts` asks for them."""
    if which == "default":
        return sorted({1, default_beam}), []
    from pipeline.service.libretranslate import n_best_list

    return list(range(1, MAX_BEAM + 1)), [n_best_list(default_beam, count) for count in range(1, max_alternatives + 1)]


def masked_query(path: str) -> str:
    """`path` with the values of its query's `MASKED_FIELDS` (a key, a client's text) written as `***`, whatever
    the spelling of their names (`api%5Fkey`)."""
    target, mark, query = path.partition("?")
    if not mark:
        return path
    parts = []
    for part in query.split("&"):
        name, equals, _ = part.partition("=")
        parts.append(f"{name}=***" if equals and unquote_plus(name) in MASKED_FIELDS else part)
    return f"{target}?{'&'.join(parts)}"


class AccessLogTrim(logging.Filter):
    """Shortens uvicorn's access-log records (client, method, path with query, version, status): a 100 KB
    query string is one line of a few hundred characters, not 100 KB; an API key or a text sent in the query is
    not written (`masked_query`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) == 5 and not getattr(record, "trimmed", False):
            record.trimmed = True
            client, method, path, version, status = record.args
            record.args = (shortened(str(client), LOGGED_CLIENT_CHARS), shortened(str(method), LOGGED_METHOD_CHARS),
                           shortened(masked_query(str(path)), LOGGED_PATH_CHARS), version, status)
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's logging configuration with `AccessLogTrim` on the access log (once: configuring logging again
    keeps a logger's filters)."""
    from uvicorn.config import LOGGING_CONFIG

    access = logging.getLogger("uvicorn.access")
    for old in [old for old in access.filters if isinstance(old, AccessLogTrim)]:
        access.removeFilter(old)
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["trim_access_log"] = {"()": AccessLogTrim}
    config["loggers"]["uvicorn.access"]["filters"] = ["trim_access_log"]
    return config


def uvicorn_config(app: Any, settings: ServiceSettings, *, host: str = "127.0.0.1", port: int = 8000,
                   log_level: str = "info") -> uvicorn_module.Config:
    """The server's configuration: graceful shutdown past `timeout_s`; the head buffer above the app's URL and
    header limits (`headlimit`); the connections guarded (`connections.guarded_protocol`: JSON refusals, head and
    body timeouts, connection caps; no WebSockets); `X-Forwarded-For` believed only from
    `settings.forwarded_allow_ips` (uvicorn believes 127.0.0.1 by default); access-log lines shortened and masked
    (`AccessLogTrim`)."""
    uvicorn = require("uvicorn", "serve")
    from pipeline.service.connections import guarded_protocol
    from pipeline.service.headlimit import head_buffer_bytes

    buffer_bytes = head_buffer_bytes(settings.max_url_bytes, settings.max_header_bytes)
    proxies = ",".join(settings.forwarded_allow_ips)
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, log_config=log_config(),
                          http=guarded_protocol(settings, buffer_bytes), ws="none",
                          proxy_headers=bool(proxies), forwarded_allow_ips=proxies or None,
                          h11_max_incomplete_event_size=buffer_bytes,
                          timeout_graceful_shutdown=int(settings.timeout_s) + 5)


def StoppingServer(config: Any, shutting_down: Any) -> Any:   # noqa: N802 - makes a uvicorn.Server
    """uvicorn's Server, telling the service when it begins to stop (`ServiceState.shutting_down`), so that a
    document in flight is answered with the documented JSON 503 between two of its jobs, before the graceful
    timeout cancels it (which would be a 500 and a traceback)."""
    uvicorn = require("uvicorn", "serve")

    class Stopping(uvicorn.Server):
        def handle_exit(self, sig, frame):
            shutting_down.set()
            super().handle_exit(sig, frame)
    return Stopping(config)


def open_runs(run_dirs: Sequence[str | Path], which: str = "best", engine: str = "keras",
              **options: Any) -> list[Engine]:
    """`open_translator(run_dir, which, engine)` for each run, each serving its own direction: a second run with a
    direction already served is a ValueError (one line naming both), raised before any further run is loaded."""
    from pipeline.translate import open_translator

    translators: list[Engine] = []
    seen: dict[Any, str | Path] = {}
    for run_dir in run_dirs:
        translator = open_translator(run_dir, which, engine, **options)
        direction = translator.direction
        if direction in seen:
            raise ValueError(f"--run {run_dir}: translates {direction.label} ({direction.code}), as --run "
                             f"{seen[direction]} does; serve one run per direction")
        seen[direction] = run_dir
        translators.append(translator)
    return translators


def serve(run_dir: str | Path | Sequence[str | Path], settings: ServiceSettings | None = None, *,
          which: str = "best", engine: str = "keras", host: str = "127.0.0.1", port: int = 8000,
          api_key_env: str | None = None, log_level: str = "info", warm: str = "default") -> None:
    """Serve `run_dir` (one run directory, or several: one per direction) on host:port, each with
    `open_translator(run_dir, which, engine)` and its own batcher; requests pick theirs by source and target.
    The Keras engine compiles its decoder first, for `warm` (`warmed`).

    SIGTERM stops taking connections, finishes the requests in flight, then exits.
    """
    require("uvicorn", "serve")
    require("fastapi", "serve")
    from pipeline.service.app import create_app
    from pipeline.service.settings import ServiceSettings

    run_dirs = [run_dir] if isinstance(run_dir, (str, os.PathLike)) else list(run_dir)
    from pipeline.service.connections import fit_open_files

    settings = fit_open_files(settings or ServiceSettings())
    key = api_key_from_env(api_key_env)
    if key is not None:
        settings = dataclasses.replace(settings, api_key=key)
    if _is_loopback(host) and not settings.allowed_hosts:      # a rebinding DNS name is not this machine's name
        from pipeline.service.cors import LOOPBACK_HOSTS
        settings = dataclasses.replace(settings, allowed_hosts=LOOPBACK_HOSTS)
    if not _is_loopback(host) and settings.api_key is None:
        print(f"warning: serving on {host} without --api-key-env: anyone who can reach it can use it",
              file=sys.stderr)
    # Keras on TensorFlow serves in graph mode: one trace serves every batch size that dynamic batching
    # makes, where XLA would compile each batch shape (seconds) on its first request
    options = {"jit_compile": False} if engine == "keras" else {}
    translators = open_runs(run_dirs, which, engine, **options)
    app = create_app(translators, settings, [{"run": run_name(run_dir), "weights": which, "engine": engine}
                                             for run_dir in run_dirs])
    app.state.service.glossaries.check()           # a database that cannot be opened stops here, not per request
    for run in app.state.service.runs.values():
        if engine == "keras":                  # CTranslate2 compiles nothing per shape: nothing to warm up
            beams, n_best = warmed(run.default_beam, settings.max_alternatives if run.has_n_best else 0, warm)
            lists = f" and {len(n_best)} n-best lists" if n_best else ""
            print(f"{run.direction.code}: compiling the decoder for beam {', '.join(map(str, beams))}{lists} ...",
                  file=sys.stderr, flush=True)
            print(f"compiled in {warm_up(run.translator, beams, n_best):.1f} s", file=sys.stderr, flush=True)
    # what is loaded by now (the models, the libraries) lives as long as the process: leave it out of the garbage
    # collector's full passes, so that the one after each document (`files.release_memory`) walks only what came
    # after (with the tiny run loaded, 440,000 objects: 215 ms holding the interpreter, every request waiting)
    gc.freeze()
    print(f"serving {app.state.service.served}", file=sys.stderr, flush=True)
    config = uvicorn_config(app, settings, host=host, port=port, log_level=log_level)
    # uvicorn shuts down gracefully on SIGTERM or Ctrl-C, then raises the signal again for the handler it found:
    # these make that a plain exit (0 after SIGTERM, 130 after Ctrl-C), not a death by signal or a traceback
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    signal.signal(signal.SIGINT, lambda number, frame: sys.exit(130))
    StoppingServer(config, app.state.service.shutting_down).run()
