"""The FastAPI app: `create_app(translator, settings)` wires routers, errors, limits and the batcher.

Routes live in routers (`api.router`, `libretranslate`'s); a new API is one more router included here,
sharing the `ServiceState` (translator + batcher) through `service_state`.
"""
from __future__ import annotations

from contextlib import asynccontextmanager
from importlib import resources
from typing import Any, AsyncIterator

from fastapi import APIRouter, Depends, FastAPI
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from pipeline.documents import suffixes
from pipeline.service import api, files, glossaries, libretranslate
from pipeline.service.auth import bearer_auth
from pipeline.service.bodylimit import BodyLimitMiddleware
from pipeline.service.cors import JsonCORSMiddleware
from pipeline.service.errors import install_error_handlers
from pipeline.service.headlimit import HeadLimitMiddleware
from pipeline.service.settings import ServiceSettings
from pipeline.service.state import ServiceState


def page_html() -> str:
    """The translation page shipped in the package (static/index.html), with the document formats filled in:
    no CDN, works offline."""
    page = resources.files("pipeline.service").joinpath("static", "index.html").read_text(encoding="utf-8")
    return page.replace("{{suffixes}}", ",".join(suffixes())).replace("{{suffix_list}}", " ".join(suffixes()))


def page_router() -> APIRouter:
    router = APIRouter()
    html = page_html()

    @router.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(html)
    return router


def create_app(translator: Any, settings: ServiceSettings | None = None,
               model_info: dict[str, Any] | None = None) -> FastAPI:
    """The service over `translator` (see `ServiceState`); the batcher's worker runs while the app runs.

    The page (`/`), the OpenAPI docs, `/languages` and `/frontend/settings` are public; every other API
    route needs the key when `settings.api_key` is set. Middleware, outermost first: CORS (with
    `settings.cors_origins`), the URL and header limits (414, 431), the body-size limit, the LibreTranslate
    dispatch of `POST /translate`. Translated files are swept while the app runs (`FileStore.start`).
    """
    settings = settings or ServiceSettings()
    state = ServiceState(translator, settings, model_info)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(state.files.start)    # leftovers swept now, expired files every min(60 s, ttl/4)
        state.batcher.start()
        try:
            yield
        finally:                                  # requests in flight have finished: stop the worker
            await run_in_threadpool(state.batcher.close)
            state.glossaries.close()
            await run_in_threadpool(state.files.close)

    app = FastAPI(title="English → Italian translation", version="1", lifespan=lifespan,
                  description="POST /translate with {\"text\": ...}, or LibreTranslate's {\"q\": ...}; "
                              "GET / is a page for people.")
    app.state.service = state
    install_error_handlers(app, dict(api.FIELD_RULES))
    app.add_middleware(libretranslate.Dispatch)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes,
                       larger={path: settings.max_file_bytes for path in files.FILE_ROUTES})
    app.add_middleware(HeadLimitMiddleware, max_url_bytes=settings.max_url_bytes,
                       max_header_bytes=settings.max_header_bytes)
    if settings.cors_origins:
        app.add_middleware(JsonCORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST"], allow_headers=["Authorization", "Content-Type"],
                           max_age=86400)
    auth = [Depends(bearer_auth(settings.api_key))] if settings.api_key else []
    app.include_router(page_router())
    app.include_router(api.router, dependencies=auth)
    app.include_router(glossaries.router(), dependencies=auth)
    app.include_router(files.native_router(), dependencies=auth)
    app.include_router(libretranslate.translate_router, prefix=libretranslate.PREFIX)   # its own key check
    app.include_router(libretranslate.info_router, prefix=libretranslate.PREFIX)
    app.include_router(libretranslate.info_router, include_in_schema=False)            # the same at the root
    app.include_router(files.libretranslate_router())                                   # its own key check
    app.include_router(files.libretranslate_router(libretranslate.PREFIX), prefix=libretranslate.PREFIX,
                       include_in_schema=False)
    return app
