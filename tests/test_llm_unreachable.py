"""Endpoints that cannot answer a review: nothing listens at the URL, or what answers is not
an OpenAI API (a web server's error page). Retrying changes neither, so the review stops at
once with one line that says what to do, and the other parts of a split review do not each
ask again.

Real servers on 127.0.0.1 (Python's http.server, which answers a POST it has no handler for
with its own 501 HTML page), the real `openai` client, the real CLI over a real repository.
"""

from __future__ import annotations

import http.server
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.llm import ChatModel, Connection, EndpointError, ModelError
from reviewer.llm.endpoint import EndpointGate, is_local_host, lasting_connection_failure
from reviewer.settings.config import Settings
from reviewer.testing import FakeLLM, reply
from tests.conftest import GitRepo

MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "review"}]

# Express's default 404 page (finalhandler): what a Node web app answers at a wrong path.
EXPRESS_404 = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n'
    "</head>\n<body>\n<pre>Cannot POST /v1/chat/completions</pre>\n</body>\n</html>\n"
)
# nginx's built-in error pages (ngx_http_special_response.c), e.g. a static site at the URL.
NGINX_405 = (
    "<html>\r\n<head><title>405 Not Allowed</title></head>\r\n<body>\r\n<center><h1>405 Not "
    "Allowed</h1></center>\r\n<hr><center>nginx/1.27.0</center>\r\n</body>\r\n</html>\r\n"
)
NGINX_502 = NGINX_405.replace("405 Not Allowed", "502 Bad Gateway")
# A site's home page answering every path with 200 (a single-page app).
HOME_PAGE = (
    "<!doctype html><html><head><title>Acme</title><script>var x = '<b>';</script>"
    "<style>body { color: red }</style></head><body><h1>Welcome to Acme</h1>"
    + "<p>Lorem ipsum dolor sit amet.</p>" * 400
    + "</body></html>"
)


class PlainServer:
    """http.server on 127.0.0.1 counting the POSTs it sees. With no `pages` it has no POST
    handler at all and answers as the standard library does (501, an HTML page); else it
    answers each POST with the next (status, content type, body), the last one repeating."""

    def __init__(self, pages: list[tuple[int, str, str]] | None = None) -> None:
        self.posts = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def send_error(self, code: int, message: str | None = None, *a: Any) -> None:
                if self.command == "POST":
                    outer.posts += 1
                super().send_error(code, message, *a)

        if pages is not None:

            def do_post(handler: http.server.BaseHTTPRequestHandler) -> None:
                length = int(handler.headers.get("Content-Length") or 0)
                handler.rfile.read(length)
                status, kind, body = pages[min(outer.posts, len(pages) - 1)]
                outer.posts += 1
                data = body.encode()
                handler.send_response(status)
                handler.send_header("Content-Type", kind)
                handler.send_header("Content-Length", str(len(data)))
                handler.end_headers()
                handler.wfile.write(data)

            Handler.do_POST = do_post  # type: ignore[attr-defined]
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> PlainServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port just bound and released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def chat(base_url: str, retries: list[str] | None = None, **settings: Any) -> ChatModel:
    values = {"model": "m", "api_key": "k", "base_url": base_url, "max_retries": 4}
    return ChatModel(
        Settings(**{**values, **settings}),
        sleep=lambda seconds: None,
        on_retry=(lambda reason, delay: retries.append(reason)) if retries is not None else None,
    )


def ask(model: ChatModel) -> Any:
    return model.complete(MESSAGES, [], time.monotonic() + 60)


@pytest.fixture
def split_repo(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitRepo]:
    """A change a 16,000-token window reviews in several parts, four at a time."""
    repo.write("seed.txt", "seed\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for d in range(4):
        for n in range(3):
            lines = "".join(f"v{n}_{i} = compute({i}, 'p{d}')\n" for i in range(120))
            repo.write(f"pkg{d}/mod{n}.py", lines)
    repo.commit("big change")
    for name, value in {
        "NO_PROXY": "127.0.0.1,localhost",
        "OPENAI_API_KEY": "k",
        "REVIEWER_MODEL": "m",
        "REVIEWER_CONTEXT_WINDOW": "16000",
        "REVIEWER_CONCURRENCY": "4",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("REVIEWER_MAX_RETRIES", raising=False)  # the default: 4
    yield repo


def review(repo: GitRepo, tmp_path: Path) -> tuple[int, dict[str, Any], list[float]]:
    """The exit code, the JSON report, and every wait for a retry the review scheduled (told
    by count, not by the clock: a review that stops at once schedules none)."""
    out = tmp_path / "r.json"
    waits: list[float] = []
    real = ChatModel._retry_delay

    def recording(self: ChatModel, *args: Any, **kwargs: Any) -> float | None:
        delay = real(self, *args, **kwargs)
        if delay is not None:
            waits.append(delay)
        return delay

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ChatModel, "_retry_delay", recording)
        code = main(["review", "--repo", str(repo.root), "--base", "main", "--quiet",
                     "--format", f"json={out}"])  # fmt: skip
    return code, json.loads(out.read_text()), waits


def the_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err  # --quiet: the one line of the error, nothing else
    return lines[0]


# --- nothing listens ----------------------------------------------------------------------------


def test_a_closed_local_port_stops_the_whole_review_at_once(
    split_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Before: each of the 4 parts retried 4 times with backoff (18 s here, a minute for 13
    # parts), and every part after them again.
    url = closed_port_url()
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    code, report, waits = review(split_repo, tmp_path)
    line = the_error(capsys.readouterr().err)
    assert code == 2 and report["status"] == "incomplete"
    assert waits == []  # not retried (it was 4 retries with backoff, each part)
    assert f"cannot reach the model endpoint at {url}: nothing is listening there" in line
    assert "start the model server, or set OPENAI_BASE_URL" in line
    assert report["usage"]["requests"] == 0
    assert report["summary"].startswith("None of the ") and "\n" not in report["summary"]
    # Every part stopped for the one reason, said once in the review's reason.
    assert line.count("nothing is listening") == 1 and re.search(r": all \d+ parts: ", line)


def test_a_closed_local_port_is_not_retried() -> None:
    retries: list[str] = []
    model = chat(closed_port_url(), retries)
    with pytest.raises(EndpointError) as caught:
        ask(model)
    assert retries == []
    with pytest.raises(EndpointError) as again:  # the next loop does not ask again
        ask(model)
    assert str(again.value) == str(caught.value)


def test_which_connection_failures_last() -> None:
    refused = ConnectionRefusedError(111, "Connection refused")
    for host, url in (
        ("127.0.0.1", "http://127.0.0.1:9/v1"),
        ("localhost", "http://localhost:9/v1"),
        ("::1", "http://[::1]:9/v1"),
        ("0.0.0.0", "http://0.0.0.0:9/v1"),
        ("api.localhost", "http://api.localhost:9/v1"),
    ):
        assert is_local_host(host), host
        assert "nothing is listening" in (lasting_connection_failure(refused, url) or ""), url
    # A remote host that refuses may be restarting: retried.
    assert not is_local_host("10.1.2.3") and not is_local_host("api.example.com")
    assert lasting_connection_failure(refused, "https://api.example.com/v1") is None
    # A name that does not resolve will not resolve on the next try; a resolver that could
    # not answer this time ("temporary failure") may.
    unknown = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    assert "does not resolve" in (lasting_connection_failure(unknown, "http://nope.invalid") or "")
    temporary = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    assert lasting_connection_failure(temporary, "http://api.example.com") is None


# --- not an OpenAI API --------------------------------------------------------------------------


def test_a_web_server_answering_501_stops_the_review_after_one_request(
    split_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Before: 501 counted as a server error, retried 4 times by each part, and each retry's
    # log line held the whole HTML page.
    with PlainServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, report, waits = review(split_repo, tmp_path)
        posts = server.posts
    line = the_error(capsys.readouterr().err)
    assert code == 2 and report["status"] == "incomplete"
    assert posts == 1  # one request for the whole review, not one (or five) per part
    assert waits == []
    assert "does not look like an OpenAI-compatible endpoint" in line
    assert f"at {server.base_url}" in line and "(it answered 501: an HTML page:" in line
    assert "Unsupported method ('POST')" in line and "check OPENAI_BASE_URL" in line
    assert "<" not in line and len(line) < 600
    # A file's reason quotes the review's, cut visibly when long (the review's has it all).
    reasons = {f["reason"] for f in report["files"]}
    assert len(reasons) == 1 and reasons.pop().endswith("…")


@pytest.mark.parametrize(
    ("page", "words"),
    [
        ((404, "text/html; charset=utf-8", EXPRESS_404), "404: an HTML page: Error - Cannot POST"),
        ((405, "text/html", NGINX_405), "405: an HTML page: 405 Not Allowed nginx/1.27.0"),
        ((405, "text/plain", "405: Method Not Allowed"), "405: 405: Method Not Allowed"),
        ((200, "text/html", HOME_PAGE), "200: an HTML page: Acme - Welcome to Acme Lorem"),
        ((200, "application/json", '{"status": "ok"}'), "200: not a chat completion"),
    ],
)
def test_an_answer_that_is_not_openais_is_said_at_once(
    page: tuple[int, str, str], words: str
) -> None:
    retries: list[str] = []
    with PlainServer([page]) as server:
        with pytest.raises(EndpointError) as caught:
            ask(chat(server.base_url, retries))
        assert server.posts == 1 and retries == []
    message = str(caught.value)
    assert "does not look like an OpenAI-compatible endpoint" in message
    assert f"(it answered {words}" in message
    assert "<" not in message and "var x" not in message and len(message) < 500


def test_a_gateway_error_page_is_retried_and_logged_as_its_words() -> None:
    # A proxy in front of a model server that is restarting: 502 is transient.
    completion = json.dumps(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "hi"},
                 "finish_reason": "stop"}
            ],
        }
    )  # fmt: skip
    retries: list[str] = []
    pages = [(502, "text/html", NGINX_502), (200, "application/json", completion)]
    with PlainServer(pages) as server:
        assert ask(chat(server.base_url, retries)).content == "hi"
        assert server.posts == 2
    assert retries == ["502 an HTML page: 502 Bad Gateway nginx/1.27.0"]


def test_llama_cpp_in_embeddings_mode_says_how_to_start_it() -> None:
    # llama.cpp's server started with --embeddings answers a chat request with 501
    # not_supported_error (tools/server/server.cpp, format_error_response).
    body = {
        "error": {
            "code": 501,
            "message": "This server does not support completions. Start it without `--embeddings`",
            "type": "not_supported_error",
        }
    }
    with PlainServer([(501, "application/json", json.dumps(body))]) as server:
        with pytest.raises(ModelError) as caught:
            ask(chat(server.base_url))
        assert server.posts == 1
    assert "serves embeddings only" in str(caught.value)
    assert "start llama.cpp's server without --embeddings" in str(caught.value)


def test_the_parts_wait_for_the_first_answer_then_ask_together() -> None:
    # The gate costs a healthy review only its first reply: after it, the parts run at once.
    # Told by counts, not the clock: the first answers alone; each of the three others is
    # answered only once all three are in flight together (a barrier; its timeout guards
    # against a hang: were they asked one by one, it would break and fail the request).
    in_flight, peak, arrived = 0, 0, 0
    lock = threading.Lock()
    together = threading.Barrier(3)

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        nonlocal in_flight, peak, arrived
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
            arrived += 1
            first = arrived == 1
        if not first:
            together.wait(timeout=60)
        with lock:
            in_flight -= 1
        return reply("ok")

    with FakeLLM([slow], on_exhausted="repeat_last") as llm:
        settings = chat(llm.base_url).settings
        connection = Connection(settings)  # one per review, shared by its loops
        models = [ChatModel(settings, connection=connection) for _ in range(4)]
        threads = [threading.Thread(target=ask, args=(m,)) for m in models]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(llm.bodies) == 4
    assert peak == 3  # the first alone, then the three others together


def test_a_slow_first_reply_holds_the_other_parts_back_only_briefly() -> None:
    # A failing endpoint answers in milliseconds; a model thinking for seconds must not keep
    # every other part of a review waiting that long (the gate's wait is FIRST_ANSWER_WAIT).
    # Told by order and counts, not the clock: the first reply is held until the other three
    # requests have arrived, and each of them first waited at the gate, then asked anyway.
    first_arrived, others_arrived = threading.Event(), threading.Event()
    arrivals: list[str] = []
    lock = threading.Lock()

    def thinking(request: dict[str, Any]) -> dict[str, Any]:
        with lock:
            arrivals.append("first" if not arrivals else "other")
            first = arrivals[-1] == "first"
            first_arrived.set()
            if arrivals.count("other") == 3:
                others_arrived.set()
        if first:  # a safety bound only: the others normally come long before it
            came = others_arrived.wait(60)
            with lock:
                arrivals.append("first replies, others came" if came else "first replies alone")
        return reply("ok")

    entered: list[tuple[bool, bool]] = []

    class RecordingGate(EndpointGate):
        def enter(self) -> bool:
            someone_asking = self._asking
            asks_first = super().enter()
            with lock:
                entered.append((someone_asking, asks_first))
            return asks_first

    with FakeLLM([thinking], on_exhausted="repeat_last") as llm:
        settings = chat(llm.base_url).settings
        connection = Connection(settings)
        connection.gate = RecordingGate(first_answer_wait=0.3)
        models = [ChatModel(settings, connection=connection) for _ in range(4)]
        threads = [threading.Thread(target=ask, args=(m,)) for m in models]
        threads[0].start()
        assert first_arrived.wait(60)  # the others start once the first request is under way
        for thread in threads[1:]:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(llm.bodies) == 4
    # The others asked while the first reply was still being written (not after it) ...
    assert arrivals == ["first", "other", "other", "other", "first replies, others came"]
    # ... and each had found the first request under way at the gate and waited for it.
    assert sorted(entered) == [(False, True), (True, False), (True, False), (True, False)]
