"""Scripted failures of the fake GitHub: outages, rate limits, any status a test asks for.

Bodies default to what GitHub sends for the status, so that the client's error handling sees
the real shapes: JSON with `message` for most, an HTML page for a 502 (which PyGithub wraps as
`{"data": "<html>..."}`), GitHub's own texts for rate limits.
"""

from __future__ import annotations

import fnmatch
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from reviewer.testing._gh_objects import (
    JSON_TYPE,
    RATE_LIMIT_DOC,
    JsonObject,
    error_body,
    json_answer,
)
from reviewer.testing._llm_wire import Answer

INTEGRATION = "Resource not accessible by integration"
_DEFAULT_MESSAGES = {
    500: "Server Error",
    503: "Service Unavailable",
    504: (
        "We couldn't respond to your request in time. Sorry about that. Please try resubmitting "
        "your request and contact us if the problem persists."
    ),
    401: "Bad credentials",
    403: INTEGRATION,
    404: "Not Found",
    422: "Unprocessable Entity",
}
_BAD_GATEWAY_HTML = (
    "<html><head><title>502 Bad Gateway</title></head><body><h1>Unicorn! &middot; GitHub</h1>"
    "<p>We had issues producing the response to your request.</p></body></html>"
)


@dataclass
class Injection:
    """A scripted answer for requests matching `method` and the glob `path` (prefix removed)."""

    method: str
    path: str
    status: int
    body: Any = None  # JSON value, str/bytes sent as they are, or None for GitHub's usual body
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    persist: bool = False  # serve (and store) normally first, then answer with this instead
    delay: float = 0.0
    used: int = 0
    make_body: Callable[[str], Any] | None = None  # from the request id (secondary limits)

    def matches(self, method: str, path: str) -> bool:
        method_ok = self.method == "*" or self.method.upper() == method
        return method_ok and fnmatch.fnmatchcase(path, self.path) and self.used < self.times

    def answer(self, request_id: str) -> Answer:
        headers = dict(self.headers)
        content_type = headers.pop("content-type", None)
        body = self.body
        if self.make_body is not None:
            body = self.make_body(request_id)
        elif body is None and self.status == 502:
            body, content_type = _BAD_GATEWAY_HTML, content_type or "text/html; charset=utf-8"
        elif body is None:
            body = error_body(
                self.status, _DEFAULT_MESSAGES.get(self.status) or _phrase(self.status)
            )
        if isinstance(body, (str, bytes)):
            data = body.encode("utf-8") if isinstance(body, str) else body
            return Answer(self.status, data, content_type or "text/plain; charset=utf-8", headers)
        answer = json_answer(self.status, body, headers)
        answer.content_type = content_type or JSON_TYPE
        return answer


class RateCounter:
    """The core rate limit every answer reports: each request uses one."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.reset_at = int(time.time()) + 3600
        self._used = 0
        self._lock = threading.Lock()

    def count(self) -> int:
        with self._lock:
            self._used += 1
            return self._used

    def state(self, used: int | None = None) -> JsonObject:
        if used is None:
            with self._lock:
                used = self._used
        return {
            "limit": self.limit,
            "used": min(used, self.limit),
            "remaining": max(self.limit - used, 0),
            "reset": self.reset_at,
            "resource": "core",
        }

    def headers(self, used: int, request_id: str) -> dict[str, str]:
        """The headers of every GitHub answer; an injected answer may override them."""
        headers = {f"x-ratelimit-{name}": str(value) for name, value in self.state(used).items()}
        return {
            "x-github-api-version-selected": "2022-11-28",
            "x-github-media-type": "github.v3; format=json",
            **headers,
            "x-github-request-id": request_id,
            "x-content-type-options": "nosniff",
        }


def rate_limit_injection(
    method: str,
    path: str,
    *,
    status: int,
    secondary: bool,
    retry_after: int | None,
    reset_in: int,
    times: int,
    limit: int,
    who: str,
) -> Injection:
    """GitHub's primary limit (remaining 0, wait for reset) or secondary limit (retry-after)."""
    headers: dict[str, str] = {}
    if secondary:
        headers["retry-after"] = str(60 if retry_after is None else retry_after)
    else:
        headers["x-ratelimit-remaining"] = "0"
        headers["x-ratelimit-used"] = str(limit)
        headers["x-ratelimit-reset"] = str(int(time.time()) + reset_in)
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)

    def make_body(request_id: str) -> JsonObject:
        if secondary:
            message = (
                "You have exceeded a secondary rate limit. Please wait a few minutes before you "
                "try again. If you reach out to GitHub Support for help, please include the "
                f"request ID {request_id}."
            )
            return error_body(status, message, f"{RATE_LIMIT_DOC}#about-secondary-rate-limits")
        message = f"API rate limit exceeded for {who}."
        return error_body(status, message, f"{RATE_LIMIT_DOC}#about-the-primary-rate-limits")

    return Injection(method, path, status, headers=headers, times=times, make_body=make_body)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
