"""The service's own API: `POST /translate` and `GET /health`.

A request names its pair with `source` and `target` (language codes, GET /languages); either may be left out where
the other tells, and both where the service serves one pair. A pair not served, or several pairs and nothing to
choose, is a 400 naming the served pairs."""
from __future__ import annotations

import time
from typing import Annotated, Any, Union

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from pipeline.options import OPTIONS
from pipeline.service.auth import UNAUTHORIZED_RESPONSE
from pipeline.service.errors import error_responses
from pipeline.service.glossary_store import resolved
from pipeline.service.ratelimit import rate_limited
from pipeline.service.settings import MAX_BEAM
from pipeline.service.state import ServiceState, service_state

router = APIRouter(tags=["translation"])
BEAM = OPTIONS["beam"]                   # the decoding options this route takes, as declared once

# What each request field accepts: the one line a client gets for any wrong value of it.
FIELD_RULES = {"text": "must be a string or a non-empty list of strings",
               "beam": f"must be an integer {BEAM.range_text(MAX_BEAM)}",
               "glossary_id": "must be a glossary id (POST /glossaries)",
               "glossary": "must be an object {source term: target term}",
               "source": "must be a language code (GET /languages)",
               "target": "must be a language code (GET /languages)"}

ERRORS = error_responses([
    (400, "the body is not JSON, or a pair this service does not serve (GET /languages), or no pair named where "
          "the service serves several", "de is not supported; served pairs: en -> it, it -> en"),
    UNAUTHORIZED_RESPONSE,
    (413, "too many sentences, a sentence too long, or a body over 1 MB", "request body over 1,000,000 bytes"),
    (404, "no glossary with this glossary_id", "no glossary with id 0123456789abcdef0123456789abcdef"),
    (415, "the body is not sent as application/json", "send a JSON body with 'Content-Type: application/json'"),
    (422, "a field is missing or has the wrong type or value", "missing 'text': it must be a string or a "
                                                                "non-empty list of strings"),
    (429, "over --req-limit requests a minute from this address", "Slowdown: 60 per 1 minute"),
    (503, "no translation within --timeout-s, or shutting down", "the service is shutting down")])


class TranslateRequest(BaseModel):
    model_config = ConfigDict(strict=True, json_schema_extra={
        "examples": [{"text": "Where is the station?"}, {"text": ["I love you.", "It's raining."], "beam": 4}]})

    text: Union[StrictStr, Annotated[list[StrictStr], Field(min_length=1)]] = Field(
        description="one text in the source language (a sentence or a paragraph), or a list of them")
    beam: StrictInt | None = Field(None, ge=BEAM.minimum, le=MAX_BEAM, description=BEAM.help.split(";")[0]
                                   + "; default: --beam, else the run's decode.beam_size")
    glossary_id: StrictStr | None = Field(None, description="a stored glossary (POST /glossaries) whose terms the "
                                          "translations must use")
    glossary: dict[StrictStr, StrictStr] | None = Field(None, description="or the terms inline: {source term: target "
                                                                          "term}")
    source: StrictStr | None = Field(None, description="the source language's code (GET /languages); default: the "
                                     "only pair served, or the pair whose target is `target`")
    target: StrictStr | None = Field(None, description="the target language's code; default: the only pair served, "
                                     "or the pair whose source is `source`")


class TranslateResponse(BaseModel):
    translations: list[str] = Field(description="one translation (in the target language) per input text, in order")
    beam: int
    milliseconds: float = Field(description="time spent in the service, queueing and batching included")


@router.post("/translate", response_model=TranslateResponse, responses=ERRORS,
             dependencies=[Depends(rate_limited)])
async def translate(body: TranslateRequest, request: Request,
                    state: ServiceState = Depends(service_state)) -> TranslateResponse:
    """Translate texts from the source language into the target language, with the run serving that pair;
    concurrent requests share decoding batches."""
    started = time.perf_counter()
    run = state.pick(body.source, body.target)
    sentences = state.admit([body.text] if isinstance(body.text, str) else body.text)
    glossary = await resolved(state.glossaries, body.glossary_id, body.glossary, run.direction)
    beam = body.beam or run.default_beam
    translations = await run.translate(sentences, beam, glossary=glossary, request=request)
    return TranslateResponse(translations=translations, beam=beam,
                             milliseconds=round((time.perf_counter() - started) * 1000.0, 1))


@router.get("/health", responses={401: ERRORS[401]})
async def health(state: ServiceState = Depends(service_state)) -> dict[str, Any]:
    """The model, its config name, the Keras backend, the limits and batching counters (the first run's; every
    run's under `runs`, with its `direction`)."""
    return state.health()
