"""What every route shares: the settings, the translator behind its batcher, and the request limits."""
from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Sequence

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from pipeline.service.batcher import Batcher, BatcherClosed
from pipeline.service.errors import ServiceError
from pipeline.service.file_store import FileStore
from pipeline.service.glossary_store import GlossaryStore
from pipeline.service.ratelimit import RateLimit
from pipeline.service.settings import MAX_BEAM, ServiceSettings
from pipeline.text import gate_texts
from pipeline.rundir import run_path


LANGUAGES = ("en", "it")         # what this service reads and writes (the model translates en -> it)


class ClientGone(ServiceError):
    """The client disconnected before its translation was done: its remaining work was dropped."""

    def __init__(self) -> None:
        super().__init__(499, "the client disconnected")


async def disconnected(request: Request, every_s: float = 0.05) -> None:
    """Returns once `request`'s client has disconnected."""
    while not await request.is_disconnected():
        await asyncio.sleep(every_s)


class ServiceState:
    """The translator (an `Engine`, or any object with `translate(texts, beam=, batch_size=)` and `config`;
    `n_best` and `backend` are optional) and its batcher."""

    def __init__(self, translator: Any, settings: ServiceSettings, model_info: dict[str, Any] | None = None):
        self.translator, self.settings = translator, settings
        self.default_beam = settings.beam or min(translator.config.decode.resolve().beam, MAX_BEAM)
        self.model_info = dict(model_info or {})
        n_best = self._n_best_batch if hasattr(translator, "n_best") else None
        self.batcher = Batcher(self._translate_batch, settings.max_batch, settings.max_wait_ms, n_best)
        self.rate_limit = RateLimit(settings.req_limit) if settings.req_limit else None
        self.waiting = 0          # requests waiting for their translations (touched on the event loop only)
        self.glossaries = GlossaryStore(settings.glossary_db or ":memory:")
        self.files = FileStore(settings.files_dir, settings.file_ttl_s)
        self.shutting_down = threading.Event()   # set when the server begins to stop: documents stop between jobs
        self._detector, self._detector_lock = None, threading.Lock()     # made on the first /detect or auto

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

    def admit(self, sentences: Sequence[str]) -> list[str]:
        """The texts of a request through the gate (`text.gate_text`), after the limits (413s)."""
        self.check_limits(sentences)
        return gate_texts(sentences)

    def check_limits(self, sentences: Sequence[str]) -> None:
        """413 for too many sentences or one too long."""
        limits = self.settings
        if len(sentences) > limits.max_sentences:
            raise ServiceError(413, f"{len(sentences)} sentences in one request; the limit is {limits.max_sentences}")
        for index, sentence in enumerate(sentences):
            if len(sentence) > limits.max_chars:
                raise ServiceError(413, f"sentence {index} has {len(sentence)} characters; "
                                        f"the limit is {limits.max_chars}")

    async def translate(self, sentences: Sequence[str], beam: int, n_best: int = 1, glossary: Any = None,
                        timeout_s: float | None = None, request: Request | None = None,
                        bulk: bool = False) -> list[Any]:
        """Translations from the batcher (with `n_best` > 1, up to `n_best` per sentence, best first; with
        `glossary`, a `Glossary` applied to every sentence), or a 503 once `timeout_s` (default: the settings')
        has passed or while shutting down. With `request`, a client that disconnects meanwhile withdraws the job
        (`ClientGone`). `bulk`: a document's piece, which yields to every string request (`Batcher`)."""
        timeout_s = timeout_s or self.settings.timeout_s
        if self.shutting_down.is_set():
            raise ServiceError(503, "the service is shutting down", {"Retry-After": "1"})
        try:
            future = self.batcher.submit(sentences, beam, n_best, glossary, bulk=bulk)
        except BatcherClosed:
            raise ServiceError(503, "the service is shutting down", {"Retry-After": "1"}) from None
        self.waiting += 1
        try:
            return await self._result(future, timeout_s, request)
        finally:
            self.waiting -= 1

    async def _result(self, future: Future, timeout_s: float, request: Request | None) -> list[Any]:
        result = asyncio.wrap_future(future)
        watcher = asyncio.ensure_future(disconnected(request)) if request is not None else None
        done, _ = await asyncio.wait({result} | ({watcher} if watcher else set()), timeout=timeout_s,
                                     return_when=asyncio.FIRST_COMPLETED)
        if watcher is not None:
            watcher.cancel()
        if result in done:
            return result.result()
        future.cancel()                              # still queued: the worker skips it
        result.cancel()
        if watcher is not None and watcher in done:
            raise ClientGone()
        raise ServiceError(503, f"no translation within {timeout_s:g} s: the service is busy, try again later",
                           {"Retry-After": "1"})

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

        async def translate_all(texts: list[str]) -> list[str]:
            out: list[str] = []
            deadline, size = time.monotonic() + timeout_s, job_size or max(len(texts), 1)
            for start in range(0, len(texts), size):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ServiceError(503, f"no translation within {timeout_s:g} s: the service is busy, try again "
                                            "later", {"Retry-After": "1"})
                out += await self.translate(texts[start:start + size], self.default_beam, glossary=glossary,
                                            timeout_s=remaining, request=request, bulk=bulk)
            return out

        def translate(texts: list[str]) -> list[str]:
            texts = gate_texts(texts)
            split = getattr(self.translator, "split", None)
            if split is None:                       # a translator that takes whole texts only
                return asyncio.run_coroutine_threadsafe(translate_all(texts), loop).result()
            layouts = split(texts)
            pieces = [piece for layout in layouts for piece in layout.to_translate]
            done = iter(asyncio.run_coroutine_threadsafe(translate_all(pieces), loop).result())
            return [layout.join(done) for layout in layouts]

        return translate

    async def detect(self, texts: Sequence[str]) -> list[list[tuple[str, float]]]:
        """Each text's languages among those served (`pipeline.language`), most likely first, with confidences."""
        def run() -> list[list[tuple[str, float]]]:
            with self._detector_lock:
                if self._detector is None:
                    from pipeline.language import LanguageDetector

                    self._detector = LanguageDetector(LANGUAGES)
            return [self._detector.detect(text) for text in texts]
        return await run_in_threadpool(run)

    def health(self) -> dict[str, Any]:
        config = self.translator.config
        model = {"run": str(run_path(config)), **self.model_info, "translator": type(self.translator).__name__}
        network = getattr(self.translator, "model", None)
        if network is not None and hasattr(network, "count_params"):
            model.setdefault("parameters", int(network.count_params()))
        return {"status": "ok", "model": model, "config": Path(config.workdir).name,
                "backend": getattr(self.translator, "backend", None), "default_beam": self.default_beam,
                "max_input_tokens": getattr(self.translator, "max_input_length", None),
                "limits": {name: getattr(self.settings, name)
                           for name in ("max_sentences", "max_chars", "timeout_s", "max_body_bytes")},
                "auth": self.settings.api_key is not None, "waiting_requests": self.waiting,
                "batching": self.batcher.stats()}


def service_state(request: Request) -> ServiceState:
    """FastAPI dependency: the app's ServiceState."""
    return request.app.state.service
