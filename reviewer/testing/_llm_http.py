"""HTTP plumbing of the fake LLM: a threaded loopback server that sends planned answers.

It knows nothing of scripts: a callback turns each request into a `Plan` (an answer, a
delay, whether it ends the script) and the handler sends it, as JSON or as an SSE stream.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from reviewer.testing._llm_wire import Answer


@dataclass
class Plan:
    """How to answer one request: what, after how long, and whether the script then ends."""

    answer: Answer
    delay: float = 0.0
    ends_script: bool = False


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True  # a delayed answer must never keep the interpreter alive

    def __init__(
        self,
        host: str,
        port: int,
        *,
        answer: Callable[[str, str, dict[str, str], bytes], Plan],
        closing: threading.Event,
        done: threading.Event,
    ) -> None:
        self.answer = answer
        self.closing = closing
        self.done = done
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    def serve_in_background(self, name: str) -> threading.Thread:
        """Serve from a daemon thread, started here; the fakes' one way to run."""
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
        )
        thread.start()
        return thread

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn), which can stall for
        # seconds on machines without working reverse DNS; the name is never needed here.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """End idle keep-alive connections so their threads end with the server."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
    # Headers and body leave in separate writes; with Nagle's algorithm on, the client's
    # delayed ACK would add ~40 ms to every answer.
    disable_nagle_algorithm = True
    server: LoopbackServer

    def do_GET(self) -> None:
        length = self.headers.get("Content-Length", "0")
        raw = self.rfile.read(int(length)) if length.isdigit() else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        plan = self.server.answer(self.command, self.path, headers, raw)
        if plan.delay and self.server.closing.wait(plan.delay):
            self.close_connection = True
            return
        try:
            self._send(plan.answer)
        except OSError:  # the client gave up (a timeout test): nothing left to tell it
            self.close_connection = True
            return
        if plan.ends_script:
            self.server.done.set()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _send(self, answer: Answer) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.events is None:
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
            return
        # Server-sent events need no length up front: chunked, as real servers send them.
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in [*(f"data: {json.dumps(e)}\n\n" for e in answer.events), "data: [DONE]\n\n"]:
            data = event.encode("utf-8")
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `.requests`, and stderr stays for the code under test."""


class LoopbackFake:
    """What every fake server shares: closing once, and use as a context manager. Subclasses
    set `_server` (a LoopbackServer), `_thread` (from serve_in_background) and `_closing`."""

    _server: LoopbackServer
    _thread: threading.Thread
    _closing: threading.Event

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()  # wakes delayed answers: they are dropped
        self._server.shutdown()
        self._server.server_close()
        self._server.drop_connections()
        self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
