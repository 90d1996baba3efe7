"""Whether the model endpoint can serve this review at all, learnt once for the whole review.

A review split into parts runs several loops at once. Until one request has been answered,
they ask one at a time: when nothing listens at the URL, or the URL is not an OpenAI API, the
first request finds out and every other loop stops with the same reason without sending one
(a closed port once cost 4 retries a part, a whole review's worth of backoff). Such an answer
comes within milliseconds, so the others wait for it only briefly (`FIRST_ANSWER_WAIT`): a
healthy model that takes seconds to reply must not hold every other part back that long.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

# How long the other loops wait for the first request's outcome before asking anyway. A closed
# port or a server that is no OpenAI API answers in milliseconds; a model's reply takes longer.
FIRST_ANSWER_WAIT = 1.0


class EndpointGate:
    """Shared by a review's loops (through their Connection). Until the endpoint has answered
    a request, one loop asks at a time and the others wait for its outcome; a failure that
    settles the matter is kept and raised in every loop at once, without a request."""

    def __init__(self, first_answer_wait: float = FIRST_ANSWER_WAIT) -> None:
        self._first_answer_wait = first_answer_wait
        self._changed = threading.Condition()
        self._answered = False
        self._asking = False
        self._failure: Exception | None = None

    def enter(self) -> bool:
        """Wait for this loop's turn; True when it asks before the endpoint has answered
        (then `leave` must follow). Raises the failure another loop met. A loop that has waited
        `first_answer_wait` for the first outcome asks anyway, as one more first request."""
        with self._changed:
            until = time.monotonic() + self._first_answer_wait
            while not self._answered and self._asking and self._failure is None:
                left = until - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            if self._failure is not None:
                raise self._failure
            if self._answered:
                return False
            self._asking = True
            return True

    def answered(self) -> None:
        """The endpoint answered over HTTP (with a reply or an error status): the others go."""
        with self._changed:
            if not self._answered:
                self._answered = True
                self._changed.notify_all()

    def fail(self, failure: Exception) -> None:
        """`failure` ends every loop: those waiting now and those that ask later."""
        with self._changed:
            if self._failure is None:
                self._failure = failure
            self._changed.notify_all()

    def leave(self) -> None:
        with self._changed:
            self._asking = False
            self._changed.notify_all()

    @property
    def has_answered(self) -> bool:
        return self._answered


def lasting_connection_failure(exc: BaseException, base_url: str) -> str | None:
    """Why a failure to connect will not go away within a review, or None when it may (a
    remote host refusing or timing out can be a restart or a network blip: retried)."""
    url = urlsplit(base_url)
    host = url.hostname or ""
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = cause.verify_message or "certificate verify failed"
            return f"its TLS certificate was not accepted ({reason}); check the URL's host"
        if isinstance(cause, socket.gaierror):
            if cause.errno == socket.EAI_AGAIN:  # "temporary failure in name resolution"
                return None
            return f"the host name '{host}' does not resolve; check the URL"
        if isinstance(cause, ConnectionRefusedError) and is_local_host(host):
            return (
                "nothing is listening there (connection refused); start the model server, or "
                "set OPENAI_BASE_URL to where it listens"
            )
    return None


def is_local_host(host: str) -> bool:
    """This machine: `localhost` or a loopback/unspecified address. A refused connection here
    is a server that is not running; it will not start while the review waits."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 10:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
