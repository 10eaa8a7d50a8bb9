"""LibreTranslate's API over the same batcher: `POST /translate` (q, source, target, format,
alternatives, api_key), `POST /detect`, `GET /languages`, `GET /frontend/settings`.

Field names, status codes and error wording follow LibreTranslate's app.py. Every route also answers
under `/libretranslate/` (a client's base URL may point there). `POST /translate` is shared with the
service's own API: `Dispatch` hands a body or a query string naming any LibreTranslate field (`q`, `source`,
`target`, `format`, `alternatives`, `api_key`) but not ours (`text` without `q`: the service's own API takes
`source` and `target` too), and any multipart form, to `/libretranslate/translate`; every other request stays with
the service's own `{"text": ...}` route. (deep-translator sends its fields in the query
string with an empty body.)

Languages: `/languages` lists exactly the pairs the service's runs serve; `source` and `target` pick the run, and a pair
not served is a 400 `{"error": "de is not supported; served pairs: en -> it"}` (LibreTranslate's wording, then the
pairs). `source: "auto"` detects each text's language among the served ones and sends it to the run from that
language into `target`, reported as `detectedLanguage`; a text detected in a language with no run into `target` (an
Italian text, target it) is a 400 saying so. The OpenAPI document lists the served codes.
"""
from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, UploadFile
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.documents import open_document, suffixes, translate_documents
from pipeline.service.auth import key_matches
from pipeline.service.errors import ServiceError, error_responses
from pipeline.service.glossary_store import resolved
from pipeline.service.ratelimit import rate_limited
from pipeline.service.state import ServedRun, ServiceState, service_state
from pipeline.text import gate_text
from pipeline.glossary import Glossary
from pipeline.language import Direction, language_name

PREFIX = "/libretranslate"
DIGITS = re.compile(r"^[ \t\n\r]*([+-]?[0-9]{1,9})?[ \t\n\r]*$")      # a form's alternatives: an integer, or blank for 0
FIELDS = frozenset({"q", "source", "target", "format", "alternatives", "api_key"})
UNSERVED = ("invalid request; or a pair this service does not serve (GET /languages lists them): "
            "`{\"error\": \"<code> is not supported; served pairs: <source> -> <target>, ...\"}`; or, with source "
            "auto, a text detected in a language with no run into the target")


def errors(state: ServiceState) -> dict[int | str, dict[str, Any]]:
    """The error responses of the LibreTranslate routes, the 400's example naming the pairs `state` serves."""
    return error_responses([
        (400, UNSERVED, f"de is not supported; served pairs: {state.served}"),
        (403, "missing or wrong API key (with --api-key-env)", "Invalid API key"),
        (404, "no glossary with this glossary_id (our extension)",
         "no glossary with id 0123456789abcdef0123456789abcdef"),
        (413, "a body over 1 MB", "request body over 1,000,000 bytes"),
        (429, "over --req-limit requests a minute from this address", "Slowdown: 60 per 1 minute"),
        (503, "no translation within --timeout-s, or shutting down", "the service is shutting down")])


def language_entry(code: str) -> dict[str, str]:
    """{"code": "en", "name": "English"}: how LibreTranslate names a language."""
    return {"code": code, "name": language_name(code)}
STRINGS = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
LANGUAGE = {"type": "object", "required": ["confidence", "language"],
            "properties": {"confidence": {"type": "number"}, "language": {"type": "string"}}}
TRANSLATED = {200: {"description": "a string for a string q, a list for a list", "content": {"application/json": {
    "schema": {"type": "object", "required": ["translatedText"], "properties": {
        "translatedText": STRINGS,
        "alternatives": {"anyOf": [{"type": "array", "items": {"type": "string"}},
                                   {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}],
                         "description": "with alternatives > 0"},
        "detectedLanguage": {"oneOf": [LANGUAGE, {"type": "array", "items": LANGUAGE}],
                             "description": "with source auto"}}}}}}}
DETECTED_LIST = {200: {"description": "the served languages, most likely first", "content": {"application/json": {
    "schema": {"type": "array", "items": LANGUAGE}}}}}


def request_schema(form: bool, sources: tuple[str, ...] = ("en",),
                   targets: tuple[str, ...] = ("it",)) -> dict[str, Any]:
    """What `translate` reads, as the OpenAPI document states it: in a form every value is a string (the
    numbers are digits), while JSON's `q` may be a list and `alternatives` a number or digits. `sources`,
    `targets`: the codes the runs serve."""
    digits = {"type": "string", "pattern": DIGITS.pattern}
    return {"type": "object", "required": ["q", "source", "target"], "properties": {
        "q": ({"type": "string", "minLength": 1} if form else {"oneOf": [
            {"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]})
        | {"description": "text(s) to translate", "example": "Where is the station?"},
        "source": {"type": "string", "enum": [*sources, "auto"],
                   "description": "a served source language (GET /languages), or auto: detected among the served "
                                  "languages and reported as detectedLanguage"},
        "target": {"type": "string", "enum": list(targets),
                   "description": "a served target language; the pair (source, target) picks the run, and one not "
                                  "served is a 400"},
        "format": ({"type": "string", "enum": ["text", "html", ""]} if form else
                   {"enum": ["text", "html", "", None]}) | {"default": "text", "description": "empty or null: text"},
        "alternatives": (digits if form else {"anyOf": [{"type": "integer"}, digits, {"type": "null"}]})
        | {"default": 0, "description": "extra translations from the beam (0 or less: none)"},
        "api_key": {"type": "string", "description": "or the header 'Authorization: Bearer <key>'"},
        "glossary_id": {"type": "string", "pattern": "^[0-9a-f]{32}$",
                        "description": "extension: a stored glossary (POST /glossaries)"},
        "glossary": ({"type": "string", "description": "extension: the terms inline, as JSON text {source term: "
                                                       "target term}"}
                     if form else {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1,
                                   "description": "extension: the terms inline, {source term: target term}"})}}


def request_body(detect: bool = False, sources: tuple[str, ...] = ("en",),
                 targets: tuple[str, ...] = ("it",)) -> dict[str, Any]:
    """`openapi_extra` for a route reading JSON, urlencoded and multipart bodies (`detect` needs only q). As in
    LibreTranslate, a form's fields may also come in the query string (a form field wins), so the body is
    optional; a JSON body is read alone."""
    def schema(form: bool) -> dict[str, Any]:
        full = request_schema(form, sources, targets)
        if not detect:
            return full
        return {"type": "object", "required": ["q"],
                "properties": {name: full["properties"][name] for name in ("q", "api_key")}}
    return {"requestBody": {"required": False, "content": {
        "application/json": {"schema": schema(form=False)},
        **{media: {"schema": schema(form=True)}
           for media in ("application/x-www-form-urlencoded", "multipart/form-data")}}}}


def invalid(message: str) -> ServiceError:
    return ServiceError(400, message)


# -- one path, two APIs --------------------------------------------------------------------------------------
def body_api(content_type: str, body: bytes) -> str | None:
    """Which API a `POST /translate` body speaks (see the module docstring): "libretranslate", "native" (a JSON
    object with `text` and no `q`), or None when the body does not say."""
    media = content_type.split(";")[0].strip().lower()
    if media == "multipart/form-data":
        return "libretranslate"
    try:
        if media == "application/x-www-form-urlencoded":
            names = set(parse_qs(body.decode("latin-1"), keep_blank_values=True))     # the names are ASCII
        elif media == "application/json" or media.endswith("+json"):
            parsed = json.loads(body)
            names = set(parsed) if isinstance(parsed, dict) else set()
        else:
            return None
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep: the service's route answers it
        return None
    if "text" in names and "q" not in names:         # ours, naming its pair with `source` and `target`
        return "native"
    return "libretranslate" if names & FIELDS else None


def is_libretranslate_body(content_type: str, body: bytes) -> bool:
    """Whether a `POST /translate` body is a LibreTranslate request (see the module docstring)."""
    return body_api(content_type, body) == "libretranslate"


class Dispatch:
    """ASGI middleware: a LibreTranslate `POST /translate` goes on to `/libretranslate/translate`."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/translate":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":        # the client left
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        query = set(parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        speaks = body_api(Headers(scope=scope).get("content-type", ""), body)
        if speaks == "libretranslate" or (speaks is None and query & FIELDS):   # our body with a query is ours
            path = PREFIX + "/translate"
            scope = {**scope, "path": path, "raw_path": path.encode()}
        replay: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

        async def replayed() -> Message:
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)


# -- reading a request as LibreTranslate does ---------------------------------------------------------------
async def read_fields(request: Request) -> tuple[dict[str, Any], bool]:
    """(fields, is_json): a JSON object's fields, or the query string's and the form's (files ignored), the first
    of a name's values, the query string's first, as LibreTranslate (Flask's `request.values`) reads them."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        try:
            fields = json.loads(await request.body())
        except (ValueError, RecursionError):
            raise invalid("Invalid JSON format") from None
        if not isinstance(fields, dict):
            raise invalid("Invalid JSON format")
        return {name: gated(value) for name, value in fields.items()}, True
    fields: dict[str, Any] = {}
    for name, value in request.query_params.multi_items():
        fields.setdefault(name, value)
    if media in ("application/x-www-form-urlencoded", "multipart/form-data"):
        try:
            form = await request.form()
        except Exception as exc:          # noqa: BLE001 - a malformed form is the client's error
            raise invalid(f"Invalid request: cannot read the form ({exc})") from None
        for name, value in form.multi_items():
            if not isinstance(value, UploadFile):
                fields.setdefault(name, value)
    return {name: gated(value) for name, value in fields.items()}, False


def gated(value: Any) -> Any:
    """A field's value with every string in it through the gate (`text.gate_text`), so that no field (echoed
    in an error, compared with the key) carries a code point UTF-8 cannot encode; other values unchanged."""
    if isinstance(value, str):
        return gate_text(value)
    if isinstance(value, list):
        return [gate_text(item) if isinstance(item, str) else item for item in value]
    return value


def check_key(state: ServiceState, request: Request, fields: dict[str, Any]) -> None:
    """With --api-key-env, a 403 unless `api_key` (or `Authorization: Bearer <key>`) is the key."""
    given = fields.get("api_key")
    if given is not None and not isinstance(given, str):
        raise invalid("Invalid request: api_key must be a string")
    expected = state.settings.api_key
    if expected is None:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if not given and scheme.lower() == "bearer":
        given = token.strip()
    if not given:
        raise ServiceError(403, "Please contact the server operator to get an API key")
    if not isinstance(given, str) or not key_matches(given, expected):
        raise ServiceError(403, "Invalid API key")


def check_q(q: Any) -> list[str]:
    """`q` as a list of strings; anything but a string or a list of strings is a 400."""
    texts = [q] if isinstance(q, str) else q
    if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        raise invalid("Invalid request: q must be a string or a list of strings")
    return texts


def requested_texts(state: ServiceState, fields: dict[str, Any], is_json: bool) -> list[str]:
    """`q` as a list (gated by `read_fields`), after LibreTranslate's checks of q, source, target and the
    limits (400s)."""
    for name in ("q", "source", "target"):
        if not fields.get(name):
            raise invalid(f"Invalid request: missing {name} parameter")
    return limited_q(state, fields["q"], is_json)


def limited_q(state: ServiceState, q: Any, is_json: bool) -> list[str]:
    """`q` as a list (`check_q`), within `--max-sentences` texts of `--max-chars` characters each, as LibreTranslate
    checks its own limits (400s, for /translate and /detect alike)."""
    texts = check_q(q)
    if not is_json:                       # form bodies: CRLF line ends count as one character, as in LibreTranslate
        texts = ["\n".join(text.splitlines()) for text in texts]
    limits = state.settings
    if isinstance(q, list) and len(texts) > limits.max_sentences:
        raise invalid(f"Invalid request: request ({len(texts)}) exceeds text limit ({limits.max_sentences})")
    for text in texts:
        if len(text) > limits.max_chars:
            raise invalid(f"Invalid request: request ({len(text)}) exceeds text limit ({limits.max_chars})")
    return texts                          # gated by `read_fields`


def requested_alternatives(state: ServiceState, fields: dict[str, Any]) -> int:
    """`alternatives` as an int: an integer, or digits (as forms send it); anything else is a 400. (Whether the
    run's engine gives them: `check_alternatives`.)"""
    value = fields.get("alternatives")
    if value is None:
        value = 0
    elif isinstance(value, str) and DIGITS.fullmatch(value):
        value = int(value.strip(" \t\n\r") or 0)
    elif isinstance(value, float) and value.is_integer() and abs(value) < 1e9:     # JSON's 2.0 is an integer
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid("Invalid request: alternatives parameter is not a number")
    alternatives = max(0, value)
    if alternatives > state.settings.max_alternatives:
        raise invalid(f"Invalid request: alternatives parameter must be <= {state.settings.max_alternatives}")
    return alternatives


def check_alternatives(run: ServedRun, alternatives: int) -> None:
    """A 400 for alternatives from a run whose engine gives no n-best lists."""
    if alternatives and not run.has_n_best:
        raise invalid(f"Invalid request: alternatives are not supported by the {type(run.translator).__name__} "
                      "engine")


def check_languages(state: ServiceState, fields: dict[str, Any]) -> str:
    """The text format, after the source, target and format checks (400s: a source or target not served; with
    source auto, the target must be served, and each text's run is found by `ServiceState.auto`)."""
    source, target = fields["source"], fields["target"]
    if source == "auto":
        if target not in state.targets:
            raise state.unsupported(None, target)
    else:
        state.pick(source, target)
    text_format = fields.get("format")
    if text_format is None or text_format == "":
        text_format = "text"
    if text_format not in ("text", "html"):
        raise invalid(f"{text_format} format is not supported")
    return text_format


# -- translating ---------------------------------------------------------------------------------------------
async def requested_glossary(state: ServiceState, fields: dict[str, Any], is_json: bool,
                             direction: Direction = Direction()) -> Glossary | None:
    """Our extension fields, which plain clients never send: `glossary_id` (a stored glossary of `direction`) or
    `glossary` (the terms inline: a JSON object {source term: target term}, in a form as JSON text). A bad one, or a
    stored one of another pair, is a 400, an unknown id a 404."""
    glossary_id, inline = fields.get("glossary_id") or None, fields.get("glossary") or None
    if not is_json and isinstance(inline, str):
        try:
            inline = json.loads(inline)
        except (ValueError, RecursionError):
            raise invalid("Invalid request: glossary must be a JSON object {source term: target term}") from None
    try:
        return await resolved(state.glossaries, glossary_id, inline, direction)
    except ServiceError as exc:
        if exc.status == 404:
            raise
        raise invalid(f"Invalid request: {exc.message}") from None


def n_best_list(default_beam: int, alternatives: int) -> tuple[int, int]:
    """(beam, n) of the n-best list that gives `alternatives` besides the translation: a beam of at least n."""
    return max(default_beam, alternatives + 1), alternatives + 1


async def translate_texts(run: ServedRun, texts: list[str], alternatives: int,
                          glossary: Glossary | None = None,
                          request: Request | None = None) -> tuple[list[str], list[list[str]]]:
    """(translations, alternatives of each) from `run`: with alternatives, one beam search of beam >=
    alternatives + 1."""
    if not alternatives:
        return (await run.translate(texts, run.default_beam, glossary=glossary, request=request),
                [[] for _ in texts])
    ranked = await run.translate(texts, *n_best_list(run.default_beam, alternatives), glossary,
                                 request=request)
    return [hypotheses[0] for hypotheses in ranked], [hypotheses[1:] for hypotheses in ranked]


async def translate_html(run: ServedRun, documents: list[str], glossary: Glossary | None = None,
                         request: Request | None = None) -> list[str]:
    """Each document with its text nodes translated (the documents' door, format html): their pieces go to the
    batcher as a string request's do, in jobs of at most `max_batch` (so 64 pages of 1,000 characters hold the
    model for one batch at a time, every other request served between two jobs), no further job once `request`'s
    client has gone or the request's time is up."""
    try:                                  # parsing is CPU work: off the event loop
        parsed = await run_in_threadpool(lambda: [open_document(document.encode("utf-8"), "html", "html",
                                                                direction=run.direction) for document in documents])
    except ValueError as exc:
        raise invalid(f"Invalid request: {exc}") from None
    translate = run.blocking_translator(asyncio.get_running_loop(), glossary, job_size=run.settings.max_batch,
                                        request=request)
    translated = await run_in_threadpool(lambda: translate_documents(translate, parsed, direction=run.direction))
    return [document.decode("utf-8") for document in translated]


async def routed(state: ServiceState, fields: dict[str, Any],
                 texts: list[str]) -> tuple[dict[Direction, list[int]], list[dict[str, Any]] | None]:
    """Which run translates which texts: ({direction: indices of its texts}, detectedLanguage of each text or
    None). With a source, every text goes to the run of (source, target); with auto, each to the run from its
    detected language (`ServiceState.auto`)."""
    if fields["source"] != "auto":
        return {state.pick(fields["source"], fields["target"]).direction: list(range(len(texts)))}, None
    groups: dict[Direction, list[int]] = {}
    detected = []
    for index, (run, language, confidence) in enumerate(await state.auto(texts, fields["target"])):
        groups.setdefault(run.direction, []).append(index)
        detected.append({"confidence": confidence, "language": language})
    return groups, detected


def translate_router(state: ServiceState) -> APIRouter:
    """`POST /translate`, its OpenAPI document listing the codes `state`'s runs serve."""
    router = APIRouter(tags=["LibreTranslate"])

    @router.post("/translate", responses={**TRANSLATED, **errors(state)},
                 openapi_extra=request_body(sources=state.sources, targets=state.targets),
                 dependencies=[Depends(rate_limited)])
    async def translate(request: Request, state: ServiceState = Depends(service_state)) -> dict[str, Any]:
        """LibreTranslate's translate: `{"translatedText": ...}`, a string for a string and a list for a list,
        with `alternatives` (up to N, from the beam; none for html) and `detectedLanguage` (source `auto`). The
        pair (source, target) picks the run; a pair not served is a 400 naming the served pairs."""
        fields, is_json = await read_fields(request)
        check_key(state, request, fields)
        texts = requested_texts(state, fields, is_json)
        alternatives = requested_alternatives(state, fields)
        text_format = check_languages(state, fields)
        groups, detected = await routed(state, fields, texts)
        work = []
        for direction, indices in groups.items():          # every check before any work
            run = state.runs[direction]
            check_alternatives(run, alternatives)
            work.append((run, indices, await requested_glossary(state, fields, is_json, direction)))
        translated: list[str] = [""] * len(texts)
        others: list[list[str]] = [[] for _ in texts]
        for run, indices, glossary in work:
            part = [texts[index] for index in indices]
            if text_format == "html":
                outputs, alternates = await translate_html(run, part, glossary, request), [[] for _ in part]
            else:
                outputs, alternates = await translate_texts(run, part, alternatives, glossary, request)
            for index, output, alternate in zip(indices, outputs, alternates):
                translated[index], others[index] = output, alternate
        one = isinstance(fields["q"], str)
        result: dict[str, Any] = {"translatedText": translated[0] if one else translated}
        if detected is not None:
            result["detectedLanguage"] = detected[0] if one else detected
        if alternatives:
            result["alternatives"] = others[0] if one else others
        return result

    return router


def info_router(state: ServiceState) -> APIRouter:
    """`POST /detect`, `GET /languages` and `GET /frontend/settings`, for the languages `state`'s runs serve."""
    router = APIRouter(tags=["LibreTranslate"])
    served = ", ".join(f"{direction.source} -> {direction.target}" for direction in state.directions)

    @router.post("/detect", responses={**DETECTED_LIST, **errors(state)},
                 openapi_extra=request_body(detect=True, sources=state.sources, targets=state.targets),
                 dependencies=[Depends(rate_limited)])
    async def detect(request: Request, state: ServiceState = Depends(service_state)) -> list[dict[str, Any]]:
        """LibreTranslate's detect: the languages this service's runs read or write, most likely first, each with
        its confidence (0-100; low for a text in another language or with no letters). `pipeline.language`:
        lingua, compared with their neighbours too."""
        fields, is_json = await read_fields(request)
        check_key(state, request, fields)
        if not fields.get("q"):
            raise invalid("Invalid request: missing q parameter")
        text = " ".join(limited_q(state, fields["q"], is_json))
        [ranked] = await state.detect([gate_text(text)])
        return [{"confidence": confidence, "language": language} for language, confidence in ranked]

    @router.get("/languages", description=f"LibreTranslate's languages: every language the runs read or write, "
                                          f"each with the targets it is translated into (here {served}); public, as "
                                          "in LibreTranslate.")
    async def languages(state: ServiceState = Depends(service_state)) -> list[dict[str, Any]]:
        return [{**language_entry(code), "targets": [d.target for d in state.directions if d.source == code]}
                for code in state.languages]

    def code(side: str, codes: tuple[str, ...]) -> Any:
        return Query(None, description=f"the pair's {side} language (default: the first pair served)",
                     json_schema_extra={"enum": list(codes)})

    @router.get("/frontend/settings", responses={400: errors(state)[400]})
    async def frontend_settings(source: str | None = code("source", state.sources),
                                target: str | None = code("target", state.targets),
                                state: ServiceState = Depends(service_state)) -> dict[str, Any]:
        """LibreTranslate's settings for its web page and clients: limits, key, and the language pair in `language`
        (the one `source` and `target` name, else the first served; a pair not served is a 400). Our extension:
        `pairs`, every pair served."""
        for name, value in (("source", source), ("target", target)):
            if value == "":
                raise invalid(f"Invalid request: {name} must be a language code (GET /languages)")
        run = state.pick(source, target) if source is not None or target is not None else state.default
        keyed = state.settings.api_key is not None
        return {"charLimit": state.settings.max_chars, "frontendTimeout": int(state.settings.timeout_s * 1000),
                "apiKeys": keyed, "keyRequired": keyed, "suggestions": False, "filesTranslation": True,
                "supportedFilesFormat": list(suffixes()),
                "language": {"source": language_entry(run.direction.source),
                             "target": language_entry(run.direction.target)},
                "pairs": [{"source": language_entry(d.source), "target": language_entry(d.target)}
                          for d in state.directions]}

    return router
