"""Schema-driven fuzzing of the HTTP API (schemathesis, from the service's own OpenAPI document): on every route,
native and LibreTranslate, positive and negative examples get no 5xx, and every response, errors included,
conforms to what the document declares (status code, content type and body schema).

The operations are walked explicitly (`APIOperation.as_strategy` under hypothesis) rather than through
schemathesis's pytest plugin, whose lazy fixtures rely on pytest internals that pytest 9 removed."""
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("fastapi")

from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import CHECKS  # noqa: E402

from pipeline.service import ServiceSettings, create_app  # noqa: E402

# per operation and generation mode: about a minute for the whole document on 2 CPU cores (FUZZ_EXAMPLES for more)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "15"))
DERANDOMIZE = bool(os.environ.get("CI"))        # CI replays one fixed set; elsewhere each run explores anew
CHECK_NAMES = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
               "response_schema_conformance", "response_headers_conformance", "negative_data_rejection")


@pytest.fixture
def app(tiny_engine_graph):
    """A fresh app per test: schemathesis shuts the app's lifespan (and so its batcher) down after each test."""
    app = create_app(tiny_engine_graph, ServiceSettings(max_wait_ms=1, timeout_s=60))
    app.state.service.batcher.start()         # idempotent: the app's lifespan may start it again
    yield app
    app.state.service.batcher.close()


def operations(app):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    return [result.ok() for result in schema.get_all_operations()]


def test_the_document_covers_every_route(app):
    labels = {operation.label for operation in operations(app)}
    assert {"POST /translate", "GET /health", "POST /libretranslate/translate", "POST /libretranslate/detect",
            "GET /libretranslate/languages", "GET /libretranslate/frontend/settings", "POST /glossaries",
            "GET /glossaries", "GET /glossaries/{glossary_id}", "DELETE /glossaries/{glossary_id}",
            "POST /translate_document", "POST /translate_file", "GET /download_file/{name}"} <= labels


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_no_route_answers_5xx_or_outside_its_declared_schema(app, mode):
    walked = operations(app)                  # loading the document registers the OpenAPI checks: first
    checks = [CHECKS.get_one(name) for name in CHECK_NAMES]
    failures = {}
    for operation in walked:
        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=DERANDOMIZE, suppress_health_check=list(HealthCheck))
        def check(case):
            case.call_and_validate(checks=checks)

        try:
            check()
        except Unsatisfiable:                 # negative mode: an operation that takes no input cannot be invalid
            if mode is GenerationMode.POSITIVE or operation.method.upper() != "GET":
                failures[operation.label] = "no example could be generated"
        except Exception as exc:              # noqa: BLE001 - gather every operation's failure, then report
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:3000]
    assert not failures, "\n\n".join(f"{label}:\n{failure}" for label, failure in failures.items())
