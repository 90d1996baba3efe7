"""What a failed model request means: transient or for good, this request's or the whole
endpoint's, and the one line that tells the user what happened and what to do.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import openai

from reviewer.errors import ReviewerError
from reviewer.llm.endpoint import lasting_connection_failure
from reviewer.llm.quirks import Action, Quirk, error_code, looks_like_html, server_message
from reviewer.settings.config import Settings
from reviewer.wording import plural

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class ModelError(ReviewerError):
    """The model endpoint failed in a way retrying will not fix."""


class ContextLengthError(ModelError):
    """The request was larger than the model's context window."""


class EndpointError(ModelError):
    """The endpoint cannot serve any request of this review (nothing listens, no such host,
    not an OpenAI-compatible API, a refused key): every loop stops with this reason."""


class ReplyTimedOut(ModelError):
    """The server took the request, but the reply did not come within request_timeout: a
    reply still being written (a small model running away on a CPU). Asking the same again
    would run away again; the loop asks for a shorter answer instead
    (reviewer/loop/steering.py)."""


def timed_out_mid_reply(exc: Exception) -> bool:
    """A read timeout (the server had the request), not a connection that never opened."""
    # By name: the HTTP library under the openai client is not ours to import.
    return isinstance(exc, openai.APITimeoutError) and type(exc.__cause__).__name__ != (
        "ConnectTimeout"
    )


class NotAnAnswer(Exception):
    """A 200 that is not a chat completion (a web page, another API's JSON)."""

    status_code = 200

    def __init__(self, body: Any) -> None:
        text = body if isinstance(body, str) else str(body)
        message = server_message(text) if looks_like_html(text) else ""
        super().__init__(message or f"not a chat completion: {' '.join(text.split())[:200]}")


class ErrorInBody(Exception):
    """A 200 answer that holds an error and no reply (OpenRouter does this)."""

    def __init__(self, body: Any) -> None:
        super().__init__(server_message(body, "an error without a message"))
        self.body = body
        inner = body.get("error") if isinstance(body, dict) else None
        code = inner.get("code") if isinstance(inner, dict) else None
        self.status_code = code if isinstance(code, int) and 400 <= code <= 599 else 502


def permanent_error(exc: Exception, quirk: Quirk | None, settings: Settings) -> ModelError:
    """One line for a failure retrying will not fix: what happened and what to do."""
    base_url = settings.base_url or DEFAULT_BASE_URL
    where = f"at {base_url}"
    model = settings.model
    status, _code, message = facts(exc)
    if quirk is not None and quirk.action is Action.CONTEXT:
        return ContextLengthError(
            f"the request exceeded the model's context window: {message}; "
            "lower context_window to match the model"
        )
    if quirk is not None and quirk.action is Action.STOP:
        return ModelError(f"the model endpoint {where} {quirk.problem} (it answered "
                          f"{status}: {message}); {quirk.detail}")  # fmt: skip
    if quirk is not None:
        return ModelError(f"the model endpoint {where} answered {status}: {message}")
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(
            f"the model {where} did not answer within {settings.request_timeout:.0f} s; "
            "raise request_timeout or check the server"
        )
    lasting = lasting_connection_failure(exc, base_url)
    if lasting:
        return ModelError(f"cannot reach the model endpoint {where}: {lasting}")
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(
            f"cannot reach the model endpoint {where}: {_cause(exc)}; check OPENAI_BASE_URL "
            "and that the server is running"
        )
    if isinstance(exc, openai.AuthenticationError):
        return ModelError(
            f"the endpoint {where} rejected the API key (401: {message}); check OPENAI_API_KEY"
        )
    if isinstance(exc, openai.PermissionDeniedError):
        return ModelError(f"the endpoint {where} refused access (403): {message}")
    if isinstance(exc, openai.NotFoundError):
        return ModelError(_not_found(where, base_url, model, message))
    if status and _code == "insufficient_quota":
        return ModelError(f"the account {where} has no quota left: {message}")
    if status:
        return ModelError(
            f"the model endpoint {where} answered {status} "
            f"after {plural(settings.max_retries, 'retry', 'retries')}: {message}"
            if is_transient(exc)
            else f"the model endpoint {where} rejected the request ({status}): {message}"
        )
    return ModelError(f"the model endpoint {where} failed: {describe(exc)}")


def _not_found(where: str, base_url: str, model: str | None, message: str) -> str:
    """A 404, said with its likely cause, read from the URL's shape: a URL without its API
    path (`Invalid URL (POST /chat/completions)` from OpenAI: Chanzhaoyu/chatgpt-web#737,
    OpenHands/OpenHands#485), a URL that already names the endpoint (`POST
    /v1/chat/completions/chat/completions`: harry0703/MoneyPrinterTurbo#57), an Azure
    deployment URL without its api-version; else the model."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    base = base_url.rstrip("/")
    answered = f"the endpoint {where} answered 404 ({message})"
    if "/openai/deployments/" in path and "api-version" not in parts.query:
        return (
            f"{answered}: an Azure deployment URL needs ?api-version=...; or use the v1 API: "
            f"{parts.scheme}://{parts.netloc}/openai/v1 with the deployment name as the model"
        )
    if path.endswith("/chat/completions"):
        return (
            f"{answered}: the base URL names the endpoint itself, and the client adds "
            f"/chat/completions to it; set OPENAI_BASE_URL to "
            f"{base.removesuffix('/chat/completions')}"
        )
    if not path.endswith(("/v1", "/openai", "/v1beta/openai")) and "/v" not in path:
        return (
            f"{answered}: the base URL may lack its API path: most servers want {base}/v1 "
            "(set OPENAI_BASE_URL to it); else set --model or REVIEWER_MODEL to a model this "
            "server serves"
        )
    return (
        f"the endpoint {where} answered 404 for model '{model}' ({message}); "
        "set --model or REVIEWER_MODEL to a model this server serves"
    )


def whole_review(
    exc: Exception, quirk: Any, error: ModelError, answered: bool, base_url: str
) -> bool:
    """Whether a failure is the endpoint's, not this request's: every loop would meet it.
    A request the server refused for what it holds (its size, its content) is this loop's;
    before the endpoint has answered once, anything else is the endpoint's; after, only
    what waiting cannot change (a closed port, a server that is not an OpenAI API, the key,
    the model, the quota), not a transient failure that outlived its retries."""
    if isinstance(error, ContextLengthError):
        return False
    status, _code, _message = facts(exc)
    if quirk is not None and quirk.action is Action.STOP:
        return True
    if status in (400, 413, 422):
        return False
    if lasting_connection_failure(exc, base_url):
        return True
    return not answered or not is_transient(exc)


def facts(exc: Exception) -> tuple[int | None, str | None, str]:
    """(status, code, the server's own message) of any failure."""
    if isinstance(exc, ErrorInBody):
        return exc.status_code, error_code(exc.body), str(exc)
    if isinstance(exc, NotAnAnswer):
        return exc.status_code, None, str(exc)
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        if body is None:
            try:
                body = exc.response.text
            except Exception:  # a streamed response may not be readable any more
                body = None
        code = getattr(exc, "code", None) or error_code(body)
        return exc.status_code, str(code) if code else None, server_message(body, str(exc))
    return None, None, _cause(exc)


def is_transient(exc: Exception) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    status, code, _message = facts(exc)
    if status is None or code == "insufficient_quota":
        return False
    # 501 Not Implemented does not change by asking again.
    return status in (408, 409, 429) or (status >= 500 and status != 501)


def _cause(exc: Exception) -> str:
    cause = exc.__cause__ or exc.__context__
    return " ".join(str(cause or exc).split())[:200] or type(exc).__name__


def describe(exc: Exception) -> str:
    status, _code, message = facts(exc)
    return f"{status} {message}" if status else f"{type(exc).__name__}: {_cause(exc)}"
