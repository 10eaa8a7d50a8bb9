"""Requests a minute per client address (`--req-limit`), counted in a moving window by `limits`."""
from __future__ import annotations

import math
import time

from fastapi import Request

from pipeline.extras import require
from pipeline.service.errors import ServiceError


class RateLimit:
    """At most `per_minute` requests from one client address in any 60 s; past it, LibreTranslate's 429.

    In memory, per process: a restart forgets the counts.
    """

    def __init__(self, per_minute: int):
        if per_minute < 1:
            raise ValueError(f"per_minute must be >= 1, got {per_minute}")
        limits = require("limits", "serve")
        self.item = limits.RateLimitItemPerMinute(per_minute)
        self.limiter = limits.strategies.MovingWindowRateLimiter(limits.storage.MemoryStorage())

    def hit(self, client: str) -> None:
        """Count one request from `client`, or raise a 429 (with Retry-After) when it is over the limit."""
        if not self.limiter.hit(self.item, client):
            reset = self.limiter.get_window_stats(self.item, client).reset_time
            raise ServiceError(429, f"Slowdown: {self.item}",              # "Slowdown: 60 per 1 minute"
                               {"Retry-After": str(max(1, math.ceil(reset - time.time())))})


async def rate_limited(request: Request) -> None:
    """Route dependency: count the request against the app's `--req-limit`, if it has one."""
    limit: RateLimit | None = request.app.state.service.rate_limit
    if limit is not None:
        limit.hit(request.client.host if request.client else "unknown")
