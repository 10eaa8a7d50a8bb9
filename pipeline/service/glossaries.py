"""The glossary routes: `POST /glossaries` (JSON entries or a .tsv/.csv/.tbx file), `GET /glossaries`, and `GET` and
`DELETE /glossaries/{id}`, over the service's `GlossaryStore` (pipeline/service/glossary_store.py). Reading an
upload (up to `max_body_bytes`: 20,000 entries, a quarter of a second) and the store's SQLite work run in worker
threads, never on the event loop, which every other request waits on.

A glossary is uploaded for one served pair (`source`, `target`; by default the service's only one, and required
where it serves several): its entries are source -> target terms, a file is read for that direction, and only
requests in that direction may use it (`glossary_store.resolve`)."""
from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from pipeline.service.auth import UNAUTHORIZED_RESPONSE
from pipeline.service.errors import ServiceError, error_responses
from pipeline.service.glossary_store import ID, check_name, checked_glossary, entries_from_json, glossary_from_file
from pipeline.service.state import ServiceState, service_state
from pipeline.language import Direction

GlossaryId = Annotated[str, Path(pattern=f"^{ID.pattern}$", description="a glossary's id (POST /glossaries)")]
LanguageFilter = Annotated[str | None, Query(pattern="^[a-z]{2}$", description="only glossaries of this language "
                                                                                "(a code, GET /languages)")]


def direction(state: ServiceState, fields: Any) -> Direction:
    """The pair a glossary upload names (`source`, `target`), the only one served by default: a 422 for a value
    that is not a string, a 400 for a pair not served."""
    codes = {name: fields.get(name) or None for name in ("source", "target")}
    for name, code in codes.items():
        if code is not None and not isinstance(code, str):
            raise ServiceError(422, f"'{name}' must be a language code (GET /languages)")
    return state.pick(codes["source"], codes["target"]).direction


def router(sources: tuple[str, ...] = ("en",), targets: tuple[str, ...] = ("it",)):
    """`POST /glossaries`, `GET /glossaries`, `GET` and `DELETE /glossaries/{id}` (FastAPI imported here); `sources`
    and `targets`: the languages served, for the OpenAPI document."""
    router = APIRouter(tags=["glossaries"])
    errors = error_responses([
        (400, "the body is not JSON or not a form, or a pair this service does not serve (GET /languages)",
         "invalid JSON body"),
        UNAUTHORIZED_RESPONSE,
        (404, "no glossary with this id", "no glossary with id 0123456789abcdef0123456789abcdef"),
        (413, "too many entries, or a body over 1 MB", "20,001 entries; a glossary holds at most 20,000"),
        (415, "neither JSON nor a form, or a file that is not .tsv/.csv/.tbx", "glossary file 'a.xls': expected a "
                                                                               ".tsv, .csv or .tbx file"),
        (422, "a bad name, id, language or entry", "glossary entry 2: empty Italian side"),
        (409, "the service holds its most glossaries", "the service holds 1,000 glossaries; delete one first"),
        (503, "the glossary database is unavailable", "the glossary store is unavailable (OperationalError)")])
    summary_schema = {"type": "object", "required": ["id", "name", "case_sensitive", "entries", "created", "source",
                                                      "target"],
                      "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                                     "case_sensitive": {"type": "boolean"}, "entries": {"type": "integer"},
                                     "created": {"type": "string"},
                                     "source": {"type": "string", "description": "the language of its terms"},
                                     "target": {"type": "string", "description": "the language of their forms"}}}
    codes = {"source": {"type": "string", "enum": list(sources),
                        "description": "the source language of the pair it serves (default: the only pair served)"},
             "target": {"type": "string", "enum": list(targets),
                        "description": "the target language of the pair it serves (default: the only pair served)"}}
    entries_schema = {"oneOf": [{"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1},
                                {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 2,
                                                                           "maxItems": 2, "items": {"type": "string"}}}]}
    upload = {"requestBody": {"required": True, "content": {
        "application/json": {"schema": {"type": "object", "required": ["name", "entries"], "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 100}, "entries": entries_schema,
            "case_sensitive": {"type": "boolean", "default": False}, **codes}},
            "example": {"name": "house style", "entries": {"account": "conto", "Pipeline": "Pipeline"}}},
        "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
            "file": {"type": "string", "format": "binary", "description": ".tsv, .csv or .tbx"},
            "name": {"type": "string", "description": "default: the file's name"},
            "case_sensitive": {"type": "string", "enum": ["true", "false"], "default": "false"}, **codes}}}}}}

    @router.post("/glossaries", status_code=201, openapi_extra=upload, responses={
        201: {"description": "stored", "content": {"application/json": {"schema": summary_schema}}}, **errors})
    async def create(request: Request, state: ServiceState = Depends(service_state)) -> dict[str, Any]:
        """Store a glossary for one served pair: JSON `{"name", "entries", "case_sensitive", "source", "target"}`, or a
        form with a .tsv/.csv/.tbx `file` (read for that pair). `source` and `target` default to the only pair
        served; where the service serves several, give them (a 400 otherwise, naming the pairs). Translations in
        that pair then name it by its `id` (`glossary_id`); a request for another pair naming it is a 400."""
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media == "application/json":
            try:
                body = await run_in_threadpool(json.loads, await request.body())
            except (ValueError, RecursionError):
                raise ServiceError(400, "invalid JSON body") from None
            if not isinstance(body, dict):
                raise ServiceError(422, "the body must be a JSON object with 'name' and 'entries'")
            case_sensitive = body.get("case_sensitive", False)
            if not isinstance(case_sensitive, bool):
                raise ServiceError(422, "'case_sensitive' must be true or false")
            if "entries" not in body:
                raise ServiceError(422, "missing 'entries': an object {source term: target term} or [[source term, "
                                        "target term], ...]")
            name = check_name(body.get("name"))
            pair = direction(state, body)
            glossary = await run_in_threadpool(lambda: checked_glossary(entries_from_json(body["entries"]),
                                                                        case_sensitive, name, pair))
        elif media == "multipart/form-data":
            try:
                form = await request.form()
            except Exception as exc:          # noqa: BLE001 - a malformed form is the client's error
                raise ServiceError(400, f"cannot read the form ({exc})") from None
            if len(form.getlist("file")) > 1:       # which one was meant: not ours to guess
                raise ServiceError(400, "more than one 'file': send one glossary per request")
            upload_file = form.get("file")
            if not isinstance(upload_file, UploadFile):
                raise ServiceError(422, "missing 'file': a .tsv, .csv or .tbx glossary")
            flag = form.get("case_sensitive", "false")
            if flag not in ("true", "false"):
                raise ServiceError(422, "'case_sensitive' must be true or false")
            name = check_name(form.get("name") or upload_file.filename or "glossary")
            pair = direction(state, form)
            glossary = await run_in_threadpool(glossary_from_file, upload_file.filename or "", await upload_file.read(),
                                               flag == "true", pair)
        else:
            raise ServiceError(415, "send JSON ('Content-Type: application/json') or a multipart form with 'file'")
        return await run_in_threadpool(state.glossaries.add, name, glossary)

    @router.get("/glossaries", responses={200: {"description": "every stored glossary", "content": {
        "application/json": {"schema": {"type": "object", "required": ["glossaries"], "properties": {
            "glossaries": {"type": "array", "items": summary_schema}}}}}}, **errors})
    async def list_all(source: LanguageFilter = None, target: LanguageFilter = None,
                       state: ServiceState = Depends(service_state)) -> dict[str, Any]:
        """The stored glossaries, oldest first (without their entries); `source` and `target` keep those of one
        pair (or of one side), as a client picking a glossary for a request asks."""
        return {"glossaries": [summary for summary in await run_in_threadpool(state.glossaries.list)
                               if source in (None, summary["source"]) and target in (None, summary["target"])]}

    terms = {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "string"}}}
    full_schema = {**summary_schema, "required": [*summary_schema["required"], "terms"],
                   "properties": {**summary_schema["properties"], "terms": terms}}

    @router.get("/glossaries/{glossary_id}", responses={200: {"description": "the glossary and its terms", "content": {
        "application/json": {"schema": full_schema}}}, **errors})
    async def get_one(glossary_id: GlossaryId, state: ServiceState = Depends(service_state)) -> dict[str, Any]:
        """One glossary with its entries as `[source term, target term]` pairs (`terms`)."""
        return await run_in_threadpool(state.glossaries.get, glossary_id)

    @router.delete("/glossaries/{glossary_id}", responses={200: {"description": "deleted", "content": {
        "application/json": {"schema": {"type": "object", "required": ["deleted"],
                                        "properties": {"deleted": {"type": "string"}}}}}}, **errors})
    async def delete(glossary_id: GlossaryId, state: ServiceState = Depends(service_state)) -> dict[str, Any]:
        """Delete a glossary; translations naming it then get a 404."""
        await run_in_threadpool(state.glossaries.delete, glossary_id)
        return {"deleted": glossary_id}

    return router
