"""Documents over HTTP: LibreTranslate's `POST /translate_file` and `GET /download_file/{name}`, and the service's own
`POST /translate_document`, all over `pipeline.documents` and the shared batcher.

Each document is read and written in a process of its own (`pipeline.documents.sandbox`; where `document_processes`,
the platform and the format allow, else in a worker thread), killed at `file_timeout_s`, once its client disconnects
or when the server stops, with its memory capped at `max_document_memory_bytes`; the model stays here. A document's
pieces (its segments cut into the engine's sentences) go to the batcher as bulk work in jobs of `max_batch`
sentences, one after the other; the batcher serves every string request before the next bulk job, so a string
request waits behind at most one job whatever the documents in flight. A client that disconnects stops its
document's remaining jobs. Translated files wait in a private directory (mode 0700) under random names (128 bits),
found only by their exact name (no path is ever built from a client's text but the extension), and are deleted after
`file_ttl_s`. Uploads are limited to `max_file_bytes` and to the extensions of the format registry
(`pipeline.documents.formats`). Refusals are 4xx JSON errors: LibreTranslate's wording on its routes.

A document goes to the run of its pair (`source`, `target`): required on `/translate_file` as in LibreTranslate,
where `auto` detects the language of the document's text once it is read; optional on `/translate_document` where
the service serves one pair. A pair not served is a 400 naming the served ones.
"""
from __future__ import annotations

import asyncio
import codecs
import ctypes
import functools
import os
import threading
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from pipeline.documents import FORMATS, by_extension, open_document, sandbox, suffixes, translate_document
from pipeline.documents.sandbox import opening_text
from pipeline.documents.encoding import guessed_encoding
from pipeline.documents.formats import Format
from pipeline.documents.gettext import declared_charset
from pipeline.documents.html import declared_encoding
from pipeline.service.errors import ServiceError, error_responses
from pipeline.service.file_store import translated_name
from pipeline.service.ratelimit import rate_limited
from pipeline.service.state import (ClientGone, ServedRun, ServiceState, busy, disconnected, service_state,
                                    stopping)
from pipeline.language import Direction

Route = Callable[[str], Awaitable[tuple[ServedRun, Any]]]    # the opening text -> (its run, its glossary or None)
FILE_ROUTES = ("/translate_file", "/libretranslate/translate_file", "/translate_document")
XHTML_TYPE = "application/xhtml+xml; charset=utf-8"          # an `.xhtml` page's, where `.html` is `text/html`
# Files that say their own encoding: a page's `<meta charset>`, a catalog header's `charset=`
DECLARED_ENCODING = {"text/html": declared_encoding, "application/xhtml+xml": declared_encoding,
                     "text/x-gettext-translation": declared_charset}

ERRORS = error_responses([
    (400, "no file, an extension not in the list, a file its format's reader rejects, or a pair this service does "
          "not serve (GET /languages)", "Invalid request: .exe format is not supported"),
    (403, "missing or wrong API key (with --api-key-env)", "Invalid API key"),
    (413, "a file over --max-file-bytes", "request body over 10,000,000 bytes"),
    (429, "over --req-limit requests a minute from this address", "Slowdown: 60 per 1 minute"),
    (503, "not translated within --file-timeout-s, or shutting down", "the service is shutting down")])


def fixed(run: ServedRun, glossary: Any = None) -> Route:
    """The `Route` of a document whose pair the request names: `run`, with `glossary`."""
    async def route(text: str) -> tuple[ServedRun, Any]:
        return run, glossary
    return route


def download_type(format: Format, name: str, data: bytes) -> str:
    """A translated file's Content-Type: its format's media type (an `.xhtml` page's own, `application/xhtml+xml`),
    a text format's `charset` saying what `data` is (`labelled`)."""
    media_type = XHTML_TYPE if format.name == "html" and name.lower().endswith(".xhtml") else format.media_type
    return labelled(media_type, data)


def labelled(media_type: str, data: bytes) -> str:
    """`media_type` with its `charset` parameter (a text format's) saying what `data` is, where every download was
    labelled UTF-8: `utf-16` after a UTF-16 byte-order mark; the one the file declares, which it was written in
    (`DECLARED_ENCODING`: a page's `<meta charset>`, which a browser would overrule with the header's; a catalog's
    header); `utf-8` where it decodes so, else the code page a subtitle file came in and went back in
    (`guessed_encoding`: windows-1252 mostly)."""
    kind, mark, _ = media_type.partition(";")
    if not mark or "charset=" not in media_type:
        return media_type
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return f"{kind}; charset=utf-16"
    declared = DECLARED_ENCODING[kind](data) if kind in DECLARED_ENCODING else None
    if declared is not None:
        return f"{kind}; charset={charset_label(declared)}"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return f"{kind}; charset={charset_label(guessed_encoding(data) or 'utf-8')}"
    return f"{kind}; charset=utf-8"


def charset_label(codec: str) -> str:
    """A Python codec's name as HTTP labels it: `cp1252` is `windows-1252`, `iso8859-15` is `iso-8859-15`."""
    name = codecs.lookup(codec).name
    if name.startswith("cp125") and len(name) == 6:
        return "windows-" + name[2:]
    return name.replace("iso8859-", "iso-8859-")


async def translate_upload(state: ServiceState, data: bytes, filename: str, route: Route, format: str | None = None,
                           overwrite: bool = False, request: Request | None = None,
                           direction: Direction | None = None) -> bytes:
    """The translated document's bytes, by the run (and glossary) `route` gives for the document's opening text
    (`direction`: the run's where the request names it, given to the reader; with source auto, the door gives it
    once detected); 400 for a file its reader rejects or that needs more than `max_document_memory_bytes`, 503 past
    `file_timeout_s` (reading, translating and writing together) or while shutting down. Its pieces go to the run's
    batcher as bulk work, `max_batch` at a time, so string requests are served between them; once `request`'s
    client disconnects, no further piece is translated. At most `max_documents` documents at once
    (`ServiceState.document_turn`). The document is read and written in a process of its own
    (`pipeline.documents.sandbox`), killed at its deadline or once its client has gone, where the platform and
    its format allow (`document_processes`); else in a thread of the service."""
    async with state.document_turn(request):
        if state.settings.document_processes and sandbox.sandboxed(format):
            return await _in_process(state, data, filename, route, format, overwrite, request, direction)
        return await _in_thread(state, data, filename, route, format, overwrite, request, direction)


async def _in_process(state: ServiceState, data: bytes, filename: str, route: Route, format: str | None,
                      overwrite: bool, request: Request | None, direction: Direction | None) -> bytes:
    loop, settings = asyncio.get_running_loop(), state.settings
    deadline = time.monotonic() + settings.file_timeout_s
    gone = threading.Event()
    watch = asyncio.ensure_future(disconnected(request)) if request is not None else None
    if watch is not None:
        watch.add_done_callback(lambda _: gone.set())

    def check() -> None:
        if gone.is_set():
            raise ClientGone()
        if state.shutting_down.is_set():
            raise stopping()

    def choose(text: str) -> tuple[Callable[[list[str]], list[str]], Direction]:
        left = max(deadline - time.monotonic(), 0.001)
        run, glossary = asyncio.run_coroutine_threadsafe(route(text), loop).result(left)
        translate = run.blocking_translator(loop, glossary, job_size=settings.max_batch, request=request, bulk=True,
                                            timeout_s=max(deadline - time.monotonic(), 0.001))
        return translate, run.direction

    def work() -> bytes:                  # one deadline: the wait for a worker thread counts too
        return sandbox.translate_in_sandbox(
            data, format, filename, choose, deadline_s=max(deadline - time.monotonic(), 0.001),
            memory_bytes=settings.max_document_memory_bytes or None, check=check, overwrite=overwrite,
            direction=direction, max_xml_bytes=settings.max_document_xml_bytes,
            max_unpacked_bytes=settings.max_document_unpacked_bytes)

    try:
        return await run_in_threadpool(work)
    except TimeoutError:
        raise busy(settings.file_timeout_s) from None
    except ValueError as exc:
        raise ServiceError(400, f"Invalid request: {exc}") from None
    finally:
        if watch is not None:
            watch.cancel()


async def _in_thread(state: ServiceState, data: bytes, filename: str, route: Route, format: str | None,
                     overwrite: bool, request: Request | None, direction: Direction | None) -> bytes:
    try:
        document = await run_in_threadpool(functools.partial(
            open_document, data, format, filename, overwrite, state.settings.max_document_xml_bytes,
            direction=direction, max_unpacked_bytes=state.settings.max_document_unpacked_bytes))
    except ValueError as exc:
        await run_in_threadpool(release_memory)
        raise ServiceError(400, f"Invalid request: {exc}") from None
    try:
        run, glossary = await route(opening_text(document))
        translate = run.blocking_translator(asyncio.get_running_loop(), glossary,
                                            job_size=state.settings.max_batch,
                                            timeout_s=state.settings.file_timeout_s, request=request, bulk=True)
        return await run_in_threadpool(functools.partial(translate_document, translate, document, name=filename,
                                                         direction=run.direction))
    except ValueError as exc:
        raise ServiceError(400, f"Invalid request: {exc}") from None
    finally:
        del document
        await run_in_threadpool(release_memory)


def release_memory() -> None:
    """Hand the memory a document's parse freed back to the system (glibc keeps freed heap pages otherwise: RSS
    stayed at a peak of gigabytes after one large file); a no-op where the C library has no `malloc_trim`."""
    import gc

    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


async def read_upload(request: Request, max_bytes: int) -> tuple[dict[str, Any], UploadFile | None]:
    """The form's (and query string's) text fields, and its `file`."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    fields: dict[str, Any] = dict(request.query_params)
    upload = None
    if media in ("multipart/form-data", "application/x-www-form-urlencoded"):
        try:
            form = await request.form(max_part_size=max_bytes)
        except Exception as exc:          # noqa: BLE001 - a malformed form is the client's error
            raise ServiceError(400, f"Invalid request: cannot read the form ({exc})") from None
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                if name == "file":
                    if upload is not None:                # which one was meant: not ours to guess
                        raise ServiceError(400, "Invalid request: more than one file; send one per request")
                    upload = value
            else:
                fields[name] = value
    return fields, upload


def checked_file(upload: UploadFile | None) -> tuple[str, str]:
    """(filename, format) of an upload: 400 unless it is a file whose extension a registered format has."""
    if upload is None:
        raise ServiceError(400, "Invalid request: missing file parameter")
    filename = upload.filename or ""
    suffix = os.path.splitext(filename)[1].lower()
    format = by_extension(suffix)
    if format is None:
        raise ServiceError(400, f"Invalid request: {suffix or 'a file without an extension'} format is not "
                                f"supported; supported: {', '.join(suffixes())}")
    return filename, format.name


def pair_fields(fields: dict[str, Any]) -> tuple[Any, Any]:
    """A form's `source` and `target` (None when absent or empty)."""
    return fields.get("source") or None, fields.get("target") or None


def libretranslate_router(prefix: str = "", sources: tuple[str, ...] = ("en",),
                          targets: tuple[str, ...] = ("it",)) -> APIRouter:
    """LibreTranslate's file routes; `prefix` is the path they are mounted under (for the download URL); `sources`
    and `targets`: the codes the runs serve, for the OpenAPI document."""
    from pipeline.service.libretranslate import check_key, check_languages, requested_glossary

    router = APIRouter(tags=["LibreTranslate"])
    schema = {"type": "object", "required": ["file", "source", "target"], "properties": {
        "file": {"type": "string", "format": "binary", "description": f"one of {', '.join(suffixes())}"},
        "source": {"type": "string", "enum": [*sources, "auto"],
                   "description": "a served source language, or auto: detected on the document's opening text"},
        "target": {"type": "string", "enum": list(targets),
                   "description": "a served target language; a pair not served is a 400"},
        "api_key": {"type": "string"},
        "glossary_id": {"type": "string", "pattern": "^[0-9a-f]{32}$", "description": "extension"}}}

    @router.post("/translate_file", dependencies=[Depends(rate_limited)], responses={200: {
        "description": "where to download the translation", "content": {"application/json": {"schema": {
            "type": "object", "required": ["translatedFileUrl"],
            "properties": {"translatedFileUrl": {"type": "string"}}}}}}, **ERRORS},
        openapi_extra={"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": schema}}}})
    async def translate_file(request: Request, state: ServiceState = Depends(service_state)) -> dict[str, str]:
        """LibreTranslate's file translation: `{"translatedFileUrl": ...}` (at --public-url where it is set, else at
        the request's own Host), downloadable for --file-ttl-s. The pair
        (source, target) picks the run; with source auto, the document's opening text is detected once it is read
        (`ServiceState.auto`)."""
        fields, upload = await read_upload(request, state.settings.max_file_bytes)
        check_key(state, request, fields)
        for name in ("source", "target"):
            if not fields.get(name):
                raise ServiceError(400, f"Invalid request: missing {name} parameter")
        check_languages(state, {**fields, "format": "text"})
        filename, format = checked_file(upload)
        if fields["source"] == "auto":
            async def route(text: str) -> tuple[ServedRun, Any]:
                [(run, _, _)] = await state.auto([text], fields["target"])
                return run, await requested_glossary(state, fields, False, run.direction)
        else:
            run = state.pick(fields["source"], fields["target"])
            route = fixed(run, await requested_glossary(state, fields, False, run.direction))
        data = await upload.read()
        translated = await translate_upload(state, data, filename, route, format, request=request,
                                            direction=None if fields["source"] == "auto" else run.direction)
        name = await run_in_threadpool(state.files.put, translated, filename, fields["target"])
        base = state.settings.public_url or str(request.base_url)
        return {"translatedFileUrl": f"{base.rstrip('/')}{prefix}/download_file/{name}"}

    @router.get("/download_file/{name}", responses={200: {"description": "the translated file"},
                                                    404: {"description": "unknown or expired"}})
    async def download_file(name: str, state: ServiceState = Depends(service_state)) -> Response:
        """A file that `/translate_file` translated, under the name it gave (public, as in LibreTranslate: the
        name is the secret)."""
        path = await run_in_threadpool(state.files.path, name)
        if path is None:
            raise ServiceError(404, "Invalid request: file not found (or expired)")
        download = name.split(".", 1)[1]
        format = by_extension(os.path.splitext(download)[1]) or FORMATS["txt"]
        media_type = format.media_type
        if "charset=" in media_type:                  # a text format: say what the file's bytes are
            media_type = await run_in_threadpool(lambda: download_type(format, download, Path(path).read_bytes()))
        return FileResponse(path, media_type=media_type, filename=download)

    return router


def native_router(sources: tuple[str, ...] = ("en",), targets: tuple[str, ...] = ("it",)) -> APIRouter:
    """The service's own document route: the translated file in the response body. `sources`, `targets`: the
    codes the runs serve, for the OpenAPI document."""
    router = APIRouter(tags=["translation"])
    schema = {"type": "object", "required": ["file"], "properties": {
        "file": {"type": "string", "format": "binary", "description": f"one of {', '.join(suffixes())}"},
        "overwrite": {"type": "string", "enum": ["true", "false"],
                      "description": "gettext: translate entries already translated too"},
        "glossary_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
        "source": {"type": "string", "enum": list(sources),
                   "description": "the source language (default: the only pair served, or the one into target)"},
        "target": {"type": "string", "enum": list(targets),
                   "description": "the target language (default: the only pair served, or the one from source)"}}}

    @router.post("/translate_document", dependencies=[Depends(rate_limited)],
                 responses={200: {"description": "the translated file, as an attachment",
                                  "content": {"application/octet-stream": {}}}, **ERRORS},
                 openapi_extra={"requestBody": {"required": True,
                                                "content": {"multipart/form-data": {"schema": schema}}}})
    async def translate_document(request: Request, state: ServiceState = Depends(service_state)) -> Response:
        """Translate a document (multipart `file`) with the run of its pair (`source`, `target`: optional where one
        pair is served); the answer is the file in its format, named `<name>.<target>.<ext>`."""
        from pipeline.service.glossary_store import resolved

        fields, upload = await read_upload(request, state.settings.max_file_bytes)
        run = state.pick(*pair_fields(fields))
        filename, format = checked_file(upload)
        overwrite = str(fields.get("overwrite", "false")).lower()
        if overwrite not in ("true", "false", "1", "0", ""):
            raise ServiceError(400, "Invalid request: overwrite must be true or false")
        glossary = await resolved(state.glossaries, fields.get("glossary_id") or None, None, run.direction)
        translated = await translate_upload(state, await upload.read(), filename, fixed(run, glossary), format,
                                            overwrite=overwrite in ("true", "1"), request=request,
                                            direction=run.direction)
        name = translated_name(filename, run.direction.target)
        return Response(translated, media_type=download_type(FORMATS[format], name, translated), headers={
            "Content-Disposition": f'attachment; filename="{name}"'})

    return router
