"""The FastAPI app: `create_app(translators, settings)` wires routers, errors, limits and the batchers.

Routes live in routers (`api.router`, `libretranslate`'s); a new API is one more router included here,
sharing the `ServiceState` (the runs served, one per direction, each translator behind its batcher) through
`service_state`. Routers whose OpenAPI document names the served languages are made per app.
"""
from __future__ import annotations

from contextlib import asynccontextmanager
from importlib import resources
import html
import json
from typing import Any, AsyncIterator, Sequence

from fastapi import APIRouter, Depends, FastAPI
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from pipeline.documents import sandbox, suffixes
from pipeline.service import api, files, glossaries, libretranslate
from pipeline.service.auth import BearerAuthMiddleware, bearer_auth
from pipeline.service.bodylimit import BodyLimitMiddleware
from pipeline.service.cors import CrossSiteGuard, JsonCORSMiddleware
from pipeline.service.errors import AsteriskForm, HeadAsGet, JsonErrorBodies, install_error_handlers
from pipeline.service.headlimit import HeadLimitMiddleware
from pipeline.service.settings import ServiceSettings
from pipeline.service.state import ServiceState, title
from pipeline.language import Direction, language_name


def page_html(directions: Sequence[Direction] = (Direction(),)) -> str:
    """The translation page shipped in the package (static/index.html), with the document formats and the pairs
    served filled in (a pair menu where there are several; the first pair's language names on the panes): no CDN,
    works offline."""
    page = resources.files("pipeline.service").joinpath("static", "index.html").read_text(encoding="utf-8")
    first = directions[0]
    pairs = [{"source": d.source, "target": d.target, "sourceName": language_name(d.source),
              "targetName": language_name(d.target)} for d in directions]
    options = "".join(f'<option value="{html.escape(d.code)}">{html.escape(d.label.replace(" -> ", " → "))}</option>'
                      for d in directions)
    filled = {"{{suffixes}}": ",".join(suffixes()), "{{suffix_list}}": " ".join(suffixes()),
              "{{title}}": html.escape(title(directions)), "{{pair_options}}": options,
              "{{pair_hidden}}": " hidden" if len(directions) == 1 else "",
              "{{source_name}}": html.escape(language_name(first.source)),
              "{{target_name}}": html.escape(language_name(first.target)),
              "{{pairs_json}}": json.dumps(pairs).replace("<", "\\u003c")}
    for placeholder, value in filled.items():
        page = page.replace(placeholder, value)
    return page


def page_router(directions: Sequence[Direction] = (Direction(),)) -> APIRouter:
    router = APIRouter()
    page_text = page_html(directions)

    @router.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(page_text)
    return router


def create_app(translator: Any, settings: ServiceSettings | None = None,
               model_info: dict[str, Any] | Sequence[dict[str, Any] | None] | None = None) -> FastAPI:
    """The service over `translator`: one translator, or a list of them, one per direction (`ServiceState`: two
    with the same direction are a ValueError); each run's batcher worker runs while the app runs. `model_info`: a
    dict for one translator, or one per translator.

    The page (`/`), the OpenAPI docs, `/languages` and `/frontend/settings` are public; every other API route needs
    the key when `settings.api_key` is set. Middleware, outermost first: CORS (with `settings.cors_origins`), the
    URL and header limits (414, 431), the body-size limit, the LibreTranslate dispatch of `POST /translate`, the key
    of our routes (401 before their body is read), `OPTIONS *` (`AsteriskForm`), `HEAD` as `GET` (`HeadAsGet`),
    JSON bodies for errors answered below the handlers (`JsonErrorBodies`). Translated files are swept while the app runs (`FileStore.start`).
    """
    settings = settings or ServiceSettings()
    state = ServiceState(translator, settings, model_info)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(state.files.start)    # leftovers swept now, expired files every min(60 s, ttl/4)
        if settings.document_processes:
            await run_in_threadpool(sandbox.start)    # documents' processes: their forkserver, readers imported
        state.start()
        try:
            yield
        finally:                                  # requests in flight have finished: stop the workers
            await run_in_threadpool(state.close)
            state.glossaries.close()
            await run_in_threadpool(state.files.close)

    # no redirect for a trailing slash: its Location would be built from the client's Host header (an open redirect)
    app = FastAPI(title=f"{title(state.directions)} translation", version="1", lifespan=lifespan,
                  redirect_slashes=False,
                  description="POST /translate with {\"text\": ...}, or LibreTranslate's {\"q\": ...}; "
                              f"GET / is a page for people. Pairs served: {state.served} (GET /languages).")
    app.state.service = state
    install_error_handlers(app, dict(api.FIELD_RULES))
    codes = {"sources": state.sources, "targets": state.targets}
    keyed = [api.router, glossaries.router(**codes), files.native_router(**codes)]   # Authorization: Bearer <key>
    app.add_middleware(JsonErrorBodies)
    app.add_middleware(HeadAsGet)
    app.add_middleware(AsteriskForm)
    if settings.api_key:
        app.add_middleware(BearerAuthMiddleware, api_key=settings.api_key,
                           routes=[route for router in keyed for route in router.routes])
    app.add_middleware(libretranslate.Dispatch)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes,
                       larger={path: settings.max_file_bytes for path in files.FILE_ROUTES})
    app.add_middleware(HeadLimitMiddleware, max_url_bytes=settings.max_url_bytes,
                       max_header_bytes=settings.max_header_bytes)
    if settings.cors_origins:
        app.add_middleware(JsonCORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST", "DELETE"], allow_headers=["Authorization", "Content-Type"],
                           max_age=86400)
    app.add_middleware(CrossSiteGuard, allowed_origins=settings.cors_origins, allowed_hosts=settings.allowed_hosts,
                       public_url=settings.public_url)
    auth = [Depends(bearer_auth(settings.api_key))] if settings.api_key else []      # and in the OpenAPI document
    app.include_router(page_router(state.directions))
    for router in keyed:
        app.include_router(router, dependencies=auth)
    app.include_router(libretranslate.translate_router(state), prefix=libretranslate.PREFIX)   # its own key check
    info = libretranslate.info_router(state)
    app.include_router(info, prefix=libretranslate.PREFIX)
    app.include_router(info, include_in_schema=False)                                  # the same at the root
    app.include_router(files.libretranslate_router(**codes))                           # its own key check
    app.include_router(files.libretranslate_router(libretranslate.PREFIX, **codes), prefix=libretranslate.PREFIX,
                       include_in_schema=False)
    return app
