"""Dynamic batching: one worker thread runs the model on requests merged from many callers, strings first.

Two queues: requests (`submit`) and bulk work (`submit(..., bulk=True)`: a document's pieces, in jobs of at most
`max_batch` sentences). The worker always serves the request queue first and takes one bulk job only when no
request waits, so a string request waits behind at most the one model call in progress, whatever the documents in
flight. A batch waits for company (`max_wait_ms`) only when other requests were queued with it: a lone request runs
at once."""
from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

TranslateFn = Callable[..., list[str]]          # (sentences, beam[, glossaries]) -> translations
NBestFn = Callable[..., list[list[str]]]        # (sentences, beam, n[, glossaries]) -> n-best lists


class BatcherClosed(RuntimeError):
    """The batcher is shutting down and takes no new work."""


@dataclass
class _Job:
    sentences: list[str]
    beam: int
    n_best: int = 1             # > 1: the job wants each sentence's n-best list
    glossary: Any = None        # a `Glossary` for every sentence of the job, or None
    bulk: bool = False          # a document's piece: served when no request waits
    future: Future = field(default_factory=Future)


class Batcher:
    """Merge concurrent `submit` calls into batches of at most `max_batch` sentences.

    The worker takes the oldest request, and more queued requests until `max_batch` sentences are in hand; where
    other requests were queued with it (traffic), it waits up to `max_wait_ms` for more, a lone request not at
    all. Only when no request waits does it take one bulk job, alone. Jobs are never split, and one job larger than
    `max_batch` runs alone. A batch holding several beam sizes (or n-best sizes) runs once per size. A job whose
    future was cancelled while it queued (the caller timed out) is skipped. Jobs asking for n-best
    lists run through `n_best`. Jobs with glossaries share batches with those without: the functions then
    get one more argument, each sentence's glossary (None for none).
    """

    def __init__(self, translate: TranslateFn, max_batch: int = 64, max_wait_ms: float = 10.0,
                 n_best: NBestFn | None = None):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if max_wait_ms < 0:
            raise ValueError(f"max_wait_ms must be >= 0, got {max_wait_ms}")
        self.translate, self.max_batch, self.max_wait = translate, max_batch, max_wait_ms / 1000.0
        self.n_best = n_best
        self._jobs: deque[_Job] = deque()
        self._bulk: deque[_Job] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        self.batches = 0          # model calls made (one per beam size in a batch)
        self.sentences = 0        # sentences translated
        self.largest_batch = 0    # most sentences in one model call

    def start(self) -> "Batcher":
        """Start the worker thread: once while it runs (a second call does nothing), and again after `close`."""
        with self._cond:
            if self._thread is not None and self._thread.is_alive():
                return self
            self._closing = False
            self._thread = threading.Thread(target=self._run, name="translation-worker", daemon=True)
            self._thread.start()
        return self

    def submit(self, sentences: Sequence[str], beam: int, n_best: int = 1, glossary: Any = None,
               bulk: bool = False) -> Future:
        """Queue sentences; the future resolves to their translations, in order (with `n_best` > 1:
        to a list of up to `n_best` translations per sentence), with `glossary` (if any) applied. `bulk`: a
        document's piece, served only when no request waits."""
        if n_best > 1 and self.n_best is None:
            raise ValueError("this batcher has no n-best function")
        job = _Job(list(sentences), int(beam), int(n_best), glossary, bool(bulk))
        with self._cond:
            if self._closing or self._thread is None:
                raise BatcherClosed("the translation worker is not running")
            (self._bulk if bulk else self._jobs).append(job)
            self._cond.notify()
        return job.future

    def close(self, timeout: float | None = None) -> None:
        """Take no new jobs, finish the queued ones, then stop the worker."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def stats(self) -> dict[str, int | float]:
        with self._cond:
            queued = sum(len(job.sentences) for job in self._jobs)
            bulk = sum(len(job.sentences) for job in self._bulk)
        return {"max_batch": self.max_batch, "max_wait_ms": self.max_wait * 1000.0, "model_calls": self.batches,
                "sentences": self.sentences, "largest_batch": self.largest_batch, "queued_sentences": queued,
                "queued_document_sentences": bulk}

    # -- worker --------------------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            self._process(batch)

    def _next_batch(self) -> list[_Job] | None:
        """Block for work; then the queued requests up to `max_batch` sentences (waiting for more only where
        others were queued too), else one bulk job."""
        with self._cond:
            while not self._jobs and not self._bulk:
                if self._closing:
                    return None
                self._cond.wait()
            if not self._jobs:
                return [self._bulk.popleft()]
            company = len(self._jobs) > 1
            batch = [self._jobs.popleft()]
            size = len(batch[0].sentences)
            deadline = time.monotonic() + self.max_wait
            while size < self.max_batch:
                if self._jobs:
                    if size + len(self._jobs[0].sentences) > self.max_batch:
                        break
                    job = self._jobs.popleft()
                    batch.append(job)
                    size += len(job.sentences)
                    continue
                remaining = deadline - time.monotonic()
                if not company or remaining <= 0 or self._closing:
                    break
                self._cond.wait(remaining)
        return batch

    def _process(self, batch: list[_Job]) -> None:
        live = [job for job in batch if job.future.set_running_or_notify_cancel()]
        for beam, n_best in sorted({(job.beam, job.n_best) for job in live}):
            jobs = [job for job in live if (job.beam, job.n_best) == (beam, n_best)]
            sentences = [s for job in jobs for s in job.sentences]
            glossaries = [job.glossary for job in jobs for _ in job.sentences]
            extra = (glossaries,) if any(g is not None for g in glossaries) else ()
            try:
                if n_best == 1:
                    outputs: list = self.translate(sentences, beam, *extra)
                else:
                    outputs = self.n_best(sentences, beam, n_best, *extra)
            except Exception as exc:  # noqa: BLE001 - handed to every caller; the worker keeps serving
                for job in jobs:
                    job.future.set_exception(exc)
                continue
            self.batches += 1
            self.sentences += len(sentences)
            self.largest_batch = max(self.largest_batch, len(sentences))
            start = 0
            for job in jobs:
                job.future.set_result(outputs[start:start + len(job.sentences)])
                start += len(job.sentences)
