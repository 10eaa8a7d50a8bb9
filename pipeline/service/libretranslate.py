"""LibreTranslate's API over the same batcher: `POST /translate` (q, source, target, format,
alternatives, api_key), `POST /detect`, `GET /languages`, `GET /frontend/settings`.

Field names, status codes and error wording follow LibreTranslate's app.py. Every route also answers
under `/libretranslate/` (a client's base URL may point there). `POST /translate` is shared with the
service's own API: `Dispatch` hands a body or a query string naming any LibreTranslate field (`q`, `source`,
`target`, `format`, `alternatives`, `api_key`), and any multipart form, to `/libretranslate/translate`; every
other request stays with the service's own `{"text": ...}` route. (deep-translator sends its fields in the query
string with an empty body.)
"""
from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, UploadFile
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.documents import open_document, suffixes, translate_documents
from pipeline.service.auth import key_matches
from pipeline.service.errors import ServiceError, error_responses
from pipeline.service.glossary_store import resolve
from pipeline.service.ratelimit import rate_limited
from pipeline.service.state import ServiceState, service_state
from pipeline.text import gate_text
from pipeline.glossary import Glossary

PREFIX = "/libretranslate"
DIGITS = re.compile(r"^[ \t\n\r]*([+-]?[0-9]{1,9})?[ \t\n\r]*$")      # a form's alternatives: an integer, or blank for 0
FIELDS = frozenset({"q", "source", "target", "format", "alternatives", "api_key"})
SOURCE, TARGET = {"code": "en", "name": "English"}, {"code": "it", "name": "Italian"}

ERRORS = error_responses([
    (400, "invalid request", "Invalid request: missing q parameter"),
    (403, "missing or wrong API key (with --api-key-env)", "Invalid API key"),
    (404, "no glossary with this glossary_id (our extension)", "no glossary with id 0123456789abcdef0123456789abcdef"),
    (413, "a body over 1 MB", "request body over 1,000,000 bytes"),
    (429, "over --req-limit requests a minute from this address", "Slowdown: 60 per 1 minute"),
    (503, "no translation within --timeout-s, or shutting down", "the service is shutting down")])
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


def request_schema(form: bool) -> dict[str, Any]:
    """What `translate` reads, as the OpenAPI document states it: in a form every value is a string (the
    numbers are digits), while JSON's `q` may be a list and `alternatives` a number or digits."""
    digits = {"type": "string", "pattern": DIGITS.pattern}
    return {"type": "object", "required": ["q", "source", "target"], "properties": {
        "q": ({"type": "string", "minLength": 1} if form else {"oneOf": [
            {"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]})
        | {"description": "text(s) to translate", "example": "Where is the station?"},
        "source": {"type": "string", "enum": ["en", "auto"], "description": "auto is reported as en"},
        "target": {"type": "string", "enum": ["it"]},
        "format": ({"type": "string", "enum": ["text", "html", ""]} if form else
                   {"enum": ["text", "html", "", None]}) | {"default": "text", "description": "empty or null: text"},
        "alternatives": (digits if form else {"anyOf": [{"type": "integer"}, digits, {"type": "null"}]})
        | {"default": 0, "description": "extra translations from the beam (0 or less: none)"},
        "api_key": {"type": "string", "description": "or the header 'Authorization: Bearer <key>'"},
        "glossary_id": {"type": "string", "pattern": "^[0-9a-f]{32}$",
                        "description": "extension: a stored glossary (POST /glossaries)"},
        "glossary": ({"type": "string", "description": "extension: the terms inline, as JSON text {english: italian}"}
                     if form else {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1,
                                   "description": "extension: the terms inline, {english: italian}"})}}


def request_body(detect: bool = False) -> dict[str, Any]:
    """`openapi_extra` for a route reading JSON, urlencoded and multipart bodies (`detect` needs only q). As in
    LibreTranslate, a form's fields may also come in the query string (a form field wins), so the body is
    optional; a JSON body is read alone."""
    def schema(form: bool) -> dict[str, Any]:
        full = request_schema(form)
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
def is_libretranslate_body(content_type: str, body: bytes) -> bool:
    """Whether a `POST /translate` body is a LibreTranslate request (see the module docstring)."""
    media = content_type.split(";")[0].strip().lower()
    if media == "multipart/form-data":
        return True
    try:
        if media == "application/x-www-form-urlencoded":
            names = set(parse_qs(body.decode("latin-1"), keep_blank_values=True))     # the names are ASCII
        elif media == "application/json" or media.endswith("+json"):
            parsed = json.loads(body)
            names = set(parsed) if isinstance(parsed, dict) else set()
        else:
            return False
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep: the service's route answers it
        return False
    return bool(names & FIELDS)


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
        if is_libretranslate_body(Headers(scope=scope).get("content-type", ""), body) or query & FIELDS:
            path = PREFIX + "/translate"
            scope = {**scope, "path": path, "raw_path": path.encode()}
        replay: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

        async def replayed() -> Message:
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)


# -- reading a request as LibreTranslate does ---------------------------------------------------------------
async def read_fields(request: Request) -> tuple[dict[str, Any], bool]:
    """(fields, is_json): a JSON object's fields, or the query string's and the form's (files ignored)."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        try:
            fields = json.loads(await request.body())
        except (ValueError, RecursionError):
            raise invalid("Invalid JSON format") from None
        if not isinstance(fields, dict):
            raise invalid("Invalid JSON format")
        return {name: gated(value) for name, value in fields.items()}, True
    fields = dict(request.query_params)
    if media in ("application/x-www-form-urlencoded", "multipart/form-data"):
        try:
            form = await request.form()
        except Exception as exc:          # noqa: BLE001 - a malformed form is the client's error
            raise invalid(f"Invalid request: cannot read the form ({exc})") from None
        fields.update((name, value) for name, value in form.items() if not isinstance(value, UploadFile))
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
    q = fields["q"]
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
    """`alternatives` as an int: an integer, or digits (as forms send it); anything else is a 400."""
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
    if alternatives and not state.has_n_best:
        raise invalid(f"Invalid request: alternatives are not supported by the {type(state.translator).__name__} "
                      "engine")
    return alternatives


def check_languages(fields: dict[str, Any]) -> str:
    """The text format, after the source, target and format checks (400s)."""
    if fields["source"] not in ("en", "auto"):
        raise invalid(f"{fields['source']} is not supported")
    if fields["target"] != TARGET["code"]:
        raise invalid(f"{fields['target']} is not supported")
    text_format = fields.get("format")
    if text_format is None or text_format == "":
        text_format = "text"
    if text_format not in ("text", "html"):
        raise invalid(f"{text_format} format is not supported")
    return text_format


# -- translating ---------------------------------------------------------------------------------------------
def requested_glossary(state: ServiceState, fields: dict[str, Any], is_json: bool) -> Glossary | None:
    """Our extension fields, which plain clients never send: `glossary_id` (a stored glossary) or `glossary` (the
    terms inline: a JSON object {english: italian}, in a form as JSON text). A bad one is a 400, an unknown id a 404."""
    glossary_id, inline = fields.get("glossary_id") or None, fields.get("glossary") or None
    if not is_json and isinstance(inline, str):
        try:
            inline = json.loads(inline)
        except (ValueError, RecursionError):
            raise invalid("Invalid request: glossary must be a JSON object {english: italian}") from None
    try:
        return resolve(state.glossaries, glossary_id, inline)
    except ServiceError as exc:
        if exc.status == 404:
            raise
        raise invalid(f"Invalid request: {exc.message}") from None


async def translate_texts(state: ServiceState, texts: list[str], alternatives: int,
                          glossary: Glossary | None = None,
                          request: Request | None = None) -> tuple[list[str], list[list[str]]]:
    """(translations, alternatives of each): with alternatives, one beam search of beam >= alternatives + 1."""
    if not alternatives:
        return (await state.translate(texts, state.default_beam, glossary=glossary, request=request),
                [[] for _ in texts])
    ranked = await state.translate(texts, max(state.default_beam, alternatives + 1), alternatives + 1, glossary,
                                   request=request)
    return [hypotheses[0] for hypotheses in ranked], [hypotheses[1:] for hypotheses in ranked]


async def translate_html(state: ServiceState, documents: list[str], glossary: Glossary | None = None) -> list[str]:
    """Each document with its text nodes translated (the documents' door, format html), all nodes of all
    documents in one batcher job."""
    try:                                  # parsing is CPU work: off the event loop
        parsed = await run_in_threadpool(lambda: [open_document(document.encode("utf-8"), "html", "html")
                                                  for document in documents])
    except ValueError as exc:
        raise invalid(f"Invalid request: {exc}") from None
    translate = state.blocking_translator(asyncio.get_running_loop(), glossary)
    translated = await run_in_threadpool(translate_documents, translate, parsed)
    return [document.decode("utf-8") for document in translated]


translate_router = APIRouter(tags=["LibreTranslate"])
info_router = APIRouter(tags=["LibreTranslate"])


@translate_router.post("/translate", responses={**TRANSLATED, **ERRORS}, openapi_extra=request_body(),
                       dependencies=[Depends(rate_limited)])
async def translate(request: Request, state: ServiceState = Depends(service_state)) -> dict[str, Any]:
    """LibreTranslate's translate: `{"translatedText": ...}`, a string for a string and a list for a list,
    with `alternatives` (up to N, from the beam; none for html) and `detectedLanguage` (source `auto`)."""
    fields, is_json = await read_fields(request)
    check_key(state, request, fields)
    texts = requested_texts(state, fields, is_json)
    alternatives = requested_alternatives(state, fields)
    text_format = check_languages(fields)
    glossary = requested_glossary(state, fields, is_json)
    if text_format == "html":
        translated, others = await translate_html(state, texts, glossary), [[] for _ in texts]
    else:
        translated, others = await translate_texts(state, texts, alternatives, glossary, request)
    one = isinstance(fields["q"], str)
    result: dict[str, Any] = {"translatedText": translated[0] if one else translated}
    if fields["source"] == "auto":                  # detected for real; the model still reads each text as English
        detected = [{"confidence": ranked[0][1], "language": ranked[0][0]} for ranked in await state.detect(texts)]
        result["detectedLanguage"] = detected[0] if one else detected
    if alternatives:
        result["alternatives"] = others[0] if one else others
    return result


@info_router.post("/detect", responses={**DETECTED_LIST, **ERRORS}, openapi_extra=request_body(detect=True),
                    dependencies=[Depends(rate_limited)])
async def detect(request: Request, state: ServiceState = Depends(service_state)) -> list[dict[str, Any]]:
    """LibreTranslate's detect: the languages this service serves, most likely first, each with its confidence
    (0-100; low for a text in another language or with no letters). `pipeline.language`: lingua, compared with
    English's and Italian's neighbours too."""
    fields, _ = await read_fields(request)
    check_key(state, request, fields)
    if not fields.get("q"):
        raise invalid("Invalid request: missing q parameter")
    check_q(fields["q"])
    text = fields["q"] if isinstance(fields["q"], str) else " ".join(map(str, fields["q"]))
    [ranked] = await state.detect([gate_text(text)])
    return [{"confidence": confidence, "language": language} for language, confidence in ranked]


@info_router.get("/languages")
async def languages() -> list[dict[str, Any]]:
    """LibreTranslate's languages: English, translated into Italian (public, as in LibreTranslate)."""
    return [{**SOURCE, "targets": [TARGET["code"]]}, {**TARGET, "targets": []}]


@info_router.get("/frontend/settings")
async def frontend_settings(state: ServiceState = Depends(service_state)) -> dict[str, Any]:
    """LibreTranslate's settings for its web page and clients: limits, key, the language pair."""
    keyed = state.settings.api_key is not None
    return {"charLimit": state.settings.max_chars, "frontendTimeout": int(state.settings.timeout_s * 1000),
            "apiKeys": keyed, "keyRequired": keyed, "suggestions": False, "filesTranslation": True,
            "supportedFilesFormat": list(suffixes()), "language": {"source": SOURCE, "target": TARGET}}
