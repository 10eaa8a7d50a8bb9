"""What every route shares: the settings, the runs served (each translator behind its own batcher), the request
limits, the glossaries and the files.

A service serves one run per direction (`Direction`: en -> it, it -> en); a request picks its run by source and
target language (`ServiceState.pick`, `ServiceState.auto`), and every route answers a pair it does not serve with a
400 naming the pairs it does. Each run has its own batcher, so the fair queues (strings before documents) are per
engine, and a busy run never delays another."""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Sequence

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from pipeline.language import Direction, language_name
from pipeline.service.batcher import Batcher, BatcherClosed
from pipeline.service.errors import ServiceError
from pipeline.service.file_store import FileStore
from pipeline.service.glossary_store import GlossaryStore
from pipeline.service.ratelimit import RateLimit
from pipeline.service.settings import MAX_BEAM, ServiceSettings
from pipeline.text import gate_texts
from pipeline.rundir import run_name, run_path


SPLIT_INLINE_CHARS = 4000     # a request's texts longer than this in all are cut into pieces in a worker thread
REFUSE_CONFIDENCE = 50.0       # source auto: a text this sure to be in a language with no run to its target is a 400


class ClientGone(ServiceError):
    """The client disconnected before its translation was done: its remaining work was dropped."""

    def __init__(self) -> None:
        super().__init__(499, "the client disconnected")


async def disconnected(request: Request, every_s: float = 0.05) -> None:
    """Returns once `request`'s client has disconnected."""
    while not await request.is_disconnected():
        await asyncio.sleep(every_s)


async def outcome(task: asyncio.Future, request: Request | None, timeout_s: float) -> str:
    """How waiting for `task` ended: "done", "gone" (`request`'s client disconnected first) or "late" (`timeout_s`
    passed first). The task is left as it is."""
    watcher = asyncio.ensure_future(disconnected(request)) if request is not None else None
    try:
        done, _ = await asyncio.wait({task} | ({watcher} if watcher else set()), timeout=timeout_s,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        if watcher is not None:
            watcher.cancel()
    return "done" if task in done else "gone" if watcher is not None and watcher in done else "late"


def direction_of(translator: Any) -> Direction:
    """The direction a translator serves: its `direction` (every `Engine`), else its config's `data.direction`,
    else English -> Italian (a stand-in with neither)."""
    direction = getattr(translator, "direction", None)
    if direction is None:
        direction = getattr(getattr(getattr(translator, "config", None), "data", None), "direction", None)
    return Direction(*direction) if direction is not None else Direction()


def title(directions: Sequence[Direction]) -> str:
    """ "English → Italian", or "English → Italian, Italian → English" for several runs: the page's and the API's
    title."""
    return ", ".join(direction.label.replace(" -> ", " → ") for direction in directions)


def busy(timeout_s: float) -> ServiceError:
    """The 503 of work that did not finish within `timeout_s`."""
    return ServiceError(503, f"no translation within {timeout_s:g} s: the service is busy, try again later",
                        {"Retry-After": "1"})


def stopping() -> ServiceError:
    """The 503 of work that arrives, or would go on, once the service has begun to stop."""
    return ServiceError(503, "the service is shutting down", {"Retry-After": "1"})


class ServedRun:
    """One run the service serves: its translator (an `Engine`, or any object with `translate(texts, beam=,
    batch_size=)` and `config`; `n_best`, `split`, `backend` and `direction` are optional), its direction, its
    default beam and its own batcher. `shutting_down` is the service's: set, no new work is taken."""

    def __init__(self, translator: Any, settings: ServiceSettings, model_info: dict[str, Any] | None = None,
                 shutting_down: threading.Event | None = None):
        self.translator, self.settings = translator, settings
        self.direction = direction_of(translator)
        self.default_beam = settings.beam or min(translator.config.decode.resolve().beam, MAX_BEAM)
        self.model_info = dict(model_info or {})
        n_best = self._n_best_batch if hasattr(translator, "n_best") else None
        self.batcher = Batcher(self._translate_batch, settings.max_batch, settings.max_wait_ms, n_best)
        self.shutting_down = shutting_down or threading.Event()
        self.waiting = 0          # requests waiting for their translations (touched on the event loop only)

    def _translate_batch(self, sentences: list[str], beam: int, glossaries: list | None = None) -> list[str]:
        extra = {"glossary": glossaries} if glossaries is not None else {}
        return self.translator.translate(sentences, beam=beam, batch_size=self.settings.max_batch, **extra)

    def _n_best_batch(self, sentences: list[str], beam: int, n: int, glossaries: list | None = None) -> list[list[str]]:
        extra = {"glossary": glossaries} if glossaries is not None else {}
        return self.translator.n_best(sentences, n, beam=beam, batch_size=self.settings.max_batch, **extra)

    @property
    def has_n_best(self) -> bool:
        """Whether the translator gives n-best lists (`translator.n_best`)."""
        return self.batcher.n_best is not None

    async def translate(self, sentences: Sequence[str], beam: int, n_best: int = 1, glossary: Any = None,
                        timeout_s: float | None = None, request: Request | None = None,
                        bulk: bool = False) -> list[Any]:
        """Translations from the batcher (with `n_best` > 1, up to `n_best` per sentence, best first; with
        `glossary`, a `Glossary` applied to every sentence), or a 503 once `timeout_s` (default: the settings')
        has passed or while shutting down. With `request`, a client that disconnects meanwhile withdraws its work
        (`ClientGone`). `bulk`: a document's piece, which yields to every string request (`Batcher`).

        Texts that make more than `max_batch` pieces (the translator's `split`: sentences within its input limit)
        go to the batcher as pieces, in jobs of at most `max_batch`, one after the other: so one request of 64 long
        paragraphs holds the model for one batch at a time, every other request is served between two of its
        jobs, and its work stops at the next job once its client has gone or its time is up."""
        timeout_s = timeout_s or self.settings.timeout_s
        split = getattr(self.translator, "split", None)
        if split is None:
            return await self._in_jobs(list(sentences), beam, n_best, glossary, timeout_s, request, bulk)
        texts = list(sentences)
        layouts = split(texts) if sum(map(len, texts)) < SPLIT_INLINE_CHARS else await asyncio.to_thread(split, texts)
        pieces = [piece for layout in layouts for piece in layout.to_translate]
        if len(pieces) <= self.settings.max_batch:          # one job: the texts as they came, split by the engine
            return await self._in_jobs(texts, beam, n_best, glossary, timeout_s, request, bulk)
        done = iter(await self._in_jobs(pieces, beam, n_best, glossary, timeout_s, request, bulk,
                                        self.settings.max_batch))
        if n_best > 1:
            return [layout.join_ranked([next(done) for _ in layout.to_translate]) for layout in layouts]
        return [layout.join(done) for layout in layouts]

    async def _in_jobs(self, sentences: list[str], beam: int, n_best: int, glossary: Any, timeout_s: float,
                       request: Request | None, bulk: bool, job_size: int | None = None) -> list[Any]:
        """`sentences` through the batcher in jobs of at most `job_size` (default: one job), each sent once the one
        before it is done, all of them within `timeout_s`, else a 503."""
        deadline = time.monotonic() + timeout_s
        out: list[Any] = []
        size = job_size or max(len(sentences), 1)
        for start in range(0, len(sentences), size):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise busy(timeout_s)
            out += await self._job(sentences[start:start + size], beam, n_best, glossary, remaining, timeout_s,
                                   request, bulk)
        return out

    async def _job(self, sentences: list[str], beam: int, n_best: int, glossary: Any, remaining_s: float,
                   timeout_s: float, request: Request | None, bulk: bool) -> list[Any]:
        if bulk and self.shutting_down.is_set():   # a document stops between two jobs; a string request finishes
            raise stopping()
        try:
            future = self.batcher.submit(sentences, beam, n_best, glossary, bulk=bulk)
        except BatcherClosed:
            raise stopping() from None
        self.waiting += 1
        try:
            return await self._result(future, remaining_s, timeout_s, request)
        finally:
            self.waiting -= 1

    async def _result(self, future: Future, remaining_s: float, timeout_s: float,
                      request: Request | None) -> list[Any]:
        result = asyncio.wrap_future(future)
        ended = await outcome(result, request, remaining_s)
        if ended == "done":
            return result.result()
        future.cancel()                              # still queued: the worker skips it
        result.cancel()
        if ended == "gone":
            raise ClientGone()
        raise busy(timeout_s)

    def blocking_translator(self, loop: asyncio.AbstractEventLoop, glossary: Any = None, job_size: int | None = None,
                            timeout_s: float | None = None, request: Request | None = None,
                            bulk: bool = False) -> Callable[[list[str]], list[str]]:
        """`texts -> texts` for a worker thread (the documents' door, `pipeline.documents.translate_document`).
        The texts pass the gate and are cut into the engine's pieces (sentences within its input limit, `split`),
        which go to the batcher on `loop` in jobs of at most `job_size` pieces (default: one job), one after the
        other, as bulk work with `bulk`: so a 10 MB paragraph is hundreds of bounded jobs, and every string request
        is served between two of them. Past `timeout_s` (default: the settings') for all of them, while shutting
        down, or once the client of `request` disconnects, no further job is sent (503, or `ClientGone`)."""
        timeout_s = timeout_s or self.settings.timeout_s

        def translate_all(texts: list[str]) -> list[str]:
            jobs = self._in_jobs(texts, self.default_beam, 1, glossary, timeout_s, request, bulk, job_size)
            return asyncio.run_coroutine_threadsafe(jobs, loop).result()

        def translate(texts: list[str]) -> list[str]:
            texts = gate_texts(texts)
            split = getattr(self.translator, "split", None)
            if split is None:                       # a translator that takes whole texts only
                return translate_all(texts)
            layouts = split(texts)
            done = iter(translate_all([piece for layout in layouts for piece in layout.to_translate]))
            return [layout.join(done) for layout in layouts]

        return translate

    def health(self) -> dict[str, Any]:
        """This run's model, config name, backend, default beam, input limit and batching counters."""
        config = self.translator.config
        model = {"run": run_name(run_path(config)), **self.model_info, "translator": type(self.translator).__name__}
        network = getattr(self.translator, "model", None)
        if network is not None and hasattr(network, "count_params"):
            model.setdefault("parameters", int(network.count_params()))
        return {"direction": self.direction.code, "model": model, "config": Path(config.workdir).name,
                "backend": getattr(self.translator, "backend", None), "default_beam": self.default_beam,
                "max_input_tokens": getattr(self.translator, "max_input_length", None),
                "batching": self.batcher.stats()}


class ServiceState:
    """The runs served (`ServedRun`s, one per direction, in the order given), and what they share: the settings,
    the rate limit, the glossaries, the translated files and the language detector.

    `translators`: one translator or several, each serving its own direction (a bidirectional run's engine serves
    both, through `Engine.towards`); two with the same direction are a ValueError (one line). `model_info`: a dict
    for one translator, or one dict per translator.
    """

    def __init__(self, translators: Any, settings: ServiceSettings,
                 model_info: dict[str, Any] | Sequence[dict[str, Any] | None] | None = None):
        translators = list(translators) if isinstance(translators, (list, tuple)) else [translators]
        if not translators:
            raise ValueError("a service needs at least one run")
        infos = list(model_info) if isinstance(model_info, (list, tuple)) else [model_info] * len(translators)
        if len(infos) != len(translators):
            raise ValueError(f"model_info: one per translator, got {len(infos)} for {len(translators)}")
        both_ways = [(view, info) for translator, info in zip(translators, infos)     # a bidirectional run serves
                     for view in [translator, *(translator.towards(d.target)               # both of its directions
                                               for d in getattr(translator, "directions", ())[1:])]]
        translators, infos = [view for view, _ in both_ways], [info for _, info in both_ways]
        self.settings = settings
        self.shutting_down = threading.Event()   # set when the server begins to stop: documents stop between jobs
        self.runs: dict[Direction, ServedRun] = {}
        for translator, info in zip(translators, infos):
            run = ServedRun(translator, settings, info, self.shutting_down)
            if run.direction in self.runs:
                first = self.runs[run.direction].model_info.get("run")
                both = f"runs {first} and {run.model_info['run']}" if first and run.model_info.get("run") else \
                    "two translators"
                raise ValueError(f"{both} both translate {run.direction.label} ({run.direction.code}): serve one run "
                                 "per direction")
            self.runs[run.direction] = run
        self.rate_limit = RateLimit(settings.req_limit) if settings.req_limit else None
        self.glossaries = GlossaryStore(settings.glossary_db or ":memory:")
        self.files = FileStore(settings.files_dir, settings.file_ttl_s, settings.max_files_bytes)
        self._document_turns: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self.documents_waiting = 0       # documents waiting for a turn (touched on the event loop only)
        self._detector, self._detector_lock = None, threading.Lock()     # made on the first /detect or auto

    # -- the runs and their languages --------------------------------------------------------------------------
    @property
    def directions(self) -> tuple[Direction, ...]:
        """The pairs served, in the order the runs were given."""
        return tuple(self.runs)

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(direction.source for direction in self.runs))

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(direction.target for direction in self.runs))

    @property
    def languages(self) -> tuple[str, ...]:
        """Every language the runs read or write, sources first: what `/languages` lists and `/detect` ranks."""
        return tuple(dict.fromkeys([*self.sources, *self.targets]))

    @property
    def served(self) -> str:
        """ "en -> it, it -> en": the pairs, as messages name them."""
        return ", ".join(direction.pair for direction in self.runs)

    def unsupported(self, source: str | None, target: str | None) -> ServiceError:
        """The 400 for a pair not served, LibreTranslate's wording ("de is not supported") and the served pairs."""
        if source is not None and source not in self.sources:
            what = source
        elif target is not None and target not in self.targets:
            what = target
        else:
            what = f"{source or '?'} -> {target or '?'}"
        return ServiceError(400, f"{what} is not supported; served pairs: {self.served}")

    def pick(self, source: str | None = None, target: str | None = None) -> ServedRun:
        """The run a request names by its `source` and `target` languages; either may be left out where the other
        (or the service's only run) tells. A pair not served is a 400 naming the served ones; with several runs
        and nothing that tells them apart, a 400 asking for both."""
        matches = [run for direction, run in self.runs.items()
                   if source in (None, direction.source) and target in (None, direction.target)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise self.unsupported(source, target)
        raise ServiceError(400, f"give 'source' and 'target': this service serves several pairs ({self.served})")

    async def auto(self, texts: Sequence[str], target: str) -> list[tuple[ServedRun, str, float]]:
        """`source: "auto"`: each text's (run, detected language, confidence). A text's language is detected among
        every served language (`detect`); the most likely one that has a run into `target` is taken, unless a
        language without one is more likely and at least `REFUSE_CONFIDENCE`% sure: such a text (an Italian text,
        target it) is a 400 saying so. So a text nothing tells (no letters, another language) still goes to a
        run, as LibreTranslate would send it."""
        if target not in self.targets:
            raise self.unsupported(None, target)
        candidates = {direction.source for direction in self.runs if direction.target == target}
        chosen = []
        for index, ranked in enumerate(await self.detect(texts)):
            language, confidence = min(ranked, key=lambda item: (-item[1], item[0] not in candidates))
            if language not in candidates and confidence < REFUSE_CONFIDENCE:
                language, confidence = min((item for item in ranked if item[0] in candidates),
                                           key=lambda item: -item[1])
            if language not in candidates:
                which = f"text {index}" if len(texts) > 1 else "the text"
                raise ServiceError(400, f"{which} is detected as {language_name(language)} ({language}, "
                                        f"{confidence:g}%), and there is no {language} -> {target} run; served "
                                        f"pairs: {self.served}")
            chosen.append((self.runs[Direction(language, target)], language, confidence))
        return chosen

    # -- what one run stands for: the first given, for a service of one run ------------------------------------
    @property
    def default(self) -> ServedRun:
        """The first run given: the only one of a one-run service."""
        return next(iter(self.runs.values()))

    @property
    def translator(self) -> Any:
        return self.default.translator

    @property
    def batcher(self) -> Batcher:
        return self.default.batcher

    @property
    def default_beam(self) -> int:
        return self.default.default_beam

    @property
    def waiting(self) -> int:
        """Requests waiting for their translations, every run's."""
        return sum(run.waiting for run in self.runs.values())

    def start(self) -> None:
        """Start every run's batcher."""
        for run in self.runs.values():
            run.batcher.start()

    def close(self) -> None:
        """Finish every run's queued work and stop its batcher."""
        for run in self.runs.values():
            run.batcher.close()

    # -- requests ------------------------------------------------------------------------------------------------
    def admit(self, sentences: Sequence[str]) -> list[str]:
        """The texts of a request through the gate (`text.gate_text`), after the limits (413s)."""
        self.check_limits(sentences)
        return gate_texts(sentences)

    def check_limits(self, sentences: Sequence[str]) -> None:
        """413 for too many texts or one too long (a text may be a paragraph: the limits count texts)."""
        limits = self.settings
        if len(sentences) > limits.max_sentences:
            raise ServiceError(413, f"{len(sentences)} texts in one request; the limit is {limits.max_sentences}")
        for index, sentence in enumerate(sentences):
            if len(sentence) > limits.max_chars:
                raise ServiceError(413, f"text {index} has {len(sentence)} characters; "
                                        f"the limit is {limits.max_chars}")

    @contextlib.asynccontextmanager
    async def document_turn(self, request: Request | None = None) -> AsyncIterator[None]:
        """A turn to read, translate and write one document: at most `max_documents` at once, the others waiting
        in order, so that many uploads never hold every thread (each document's reading and writing is Python work
        that holds the interpreter: 40 at once left /translate unanswered for minutes). More than
        `max_waiting_documents` waiting, or none free within `file_timeout_s`: a 503; a client that disconnects
        while it waits leaves the line (`ClientGone`)."""
        if self.documents_waiting >= self.settings.max_waiting_documents and self._turns().locked():
            raise ServiceError(503, f"{self.documents_waiting} documents are waiting for their turn: try again later",
                               {"Retry-After": "5"})
        turns = self._turns()
        self.documents_waiting += 1
        turn = asyncio.ensure_future(turns.acquire())
        try:
            ended = await outcome(turn, request, self.settings.file_timeout_s)
        finally:
            self.documents_waiting -= 1
        if ended != "done":
            turn.cancel()
            if turn.done() and not turn.cancelled():     # granted as it was cancelled: give it back
                turns.release()
            if ended == "gone":
                raise ClientGone()
            raise busy(self.settings.file_timeout_s)
        try:
            yield
        finally:
            turns.release()

    def _turns(self) -> asyncio.Semaphore:
        """The documents' turns on the running event loop (an app may be served by one loop after another)."""
        loop = asyncio.get_running_loop()
        if self._document_turns is None or self._document_turns[0] is not loop:
            self._document_turns = (loop, asyncio.Semaphore(self.settings.max_documents))
        return self._document_turns[1]

    async def detect(self, texts: Sequence[str]) -> list[list[tuple[str, float]]]:
        """Each text's languages among those the runs serve (`languages`; `pipeline.language`), most likely first,
        with confidences."""
        def run() -> list[list[tuple[str, float]]]:
            with self._detector_lock:
                if self._detector is None:
                    from pipeline.language import LanguageDetector

                    self._detector = LanguageDetector(self.languages)
            return [self._detector.detect(text) for text in texts]
        return await run_in_threadpool(run)

    def health(self) -> dict[str, Any]:
        """The first run's model, config, backend and batching at the top (as for one run), every run's under
        `runs`, and the limits."""
        first = self.default.health()
        return {"status": "ok", **{name: first[name] for name in ("model", "config", "backend", "default_beam",
                                                                   "max_input_tokens")},
                "directions": [direction.code for direction in self.runs],
                "limits": {name: getattr(self.settings, name)
                           for name in ("max_sentences", "max_chars", "timeout_s", "max_body_bytes")},
                "auth": self.settings.api_key is not None, "waiting_requests": self.waiting,
                "waiting_documents": self.documents_waiting,
                "batching": first["batching"], "runs": [run.health() for run in self.runs.values()]}


def service_state(request: Request) -> ServiceState:
    """FastAPI dependency: the app's ServiceState."""
    return request.app.state.service
