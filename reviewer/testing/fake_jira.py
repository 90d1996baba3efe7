"""A fake Jira (REST API v2 and v3, "Get issue" only), to test what reviewer reads of tickets.

    from reviewer.testing.fake_jira import FakeJira

    with FakeJira(kind="cloud", email="dev@acme.test", token="jira-token") as jira:
        jira.add_issue("PAY-42", "Refunds", "A refund never exceeds the charge.")
        # REVIEWER_JIRA_URL=jira.url REVIEWER_JIRA_TOKEN=jira-token REVIEWER_JIRA_EMAIL=...
        assert jira.requests[0].path == "/rest/api/3/issue/PAY-42"

Each behaviour is Jira's, with its source:
- `GET /rest/api/{2,3}/issue/{issueIdOrKey}` ("Get issue", developer.atlassian.com/cloud/
  jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-get): 200 with
  `id`, `key`, `self`, `fields`; the `fields` query parameter (comma-separated) limits the
  fields returned; the key is matched ignoring case, as Jira resolves keys.
- Jira Cloud (`kind="cloud"`) serves v2 and v3; v3 returns `description` as Atlassian
  Document Format (a `doc` node, developer.atlassian.com/cloud/jira/platform/apis/document/
  structure/), v2 as a string. Jira Data Center (`kind="datacenter"`) has API v2 only (its
  REST reference, developer.atlassian.com/server/jira/platform/rest/, is /rest/api/2; the
  description is wiki markup, ADF being Cloud's), so v3 answers 404.
- Authentication: Cloud takes Basic base64(email:API token) (developer.atlassian.com/cloud/
  jira/platform/basic-auth-for-rest-apis/); Data Center a personal access token as
  `Authorization: Bearer` (confluence.atlassian.com/enterprise/using-personal-access-tokens-
  1026032365.html). Credentials that are wrong or missing: 401 "Returned if the
  authentication credentials are incorrect or missing" (the Get issue reference), with
  Jira's error collection `{"errorMessages": ["Client must be authenticated to access this
  resource."], "errors": {}}`.
- An unknown key: 404 "Returned if the issue is not found or the user does not have
  permission to view it", `{"errorMessages": ["Issue does not exist or you do not have
  permission to see it."], "errors": {}}`.
- Any other method or path: 404 with the same error collection shape.

Beyond Jira: `inject(status, body=None, times=1, delay=0, headers=None)` answers the next
requests so (a 500, a slow answer for a timeout, a redirect), `down()` closes the port (a Jira
that is not there). Assertions: `.requests` (method, path, query, headers, status).

As a program: `python -m reviewer.testing.fake_jira [--kind cloud|datacenter] [--email E]
[--token T] [--issues FILE] [--port N]` prints its URL and serves until interrupted; FILE is
JSON `{"PAY-42": {"summary": ..., "description": ..., "status": ...}}` (a description is text,
or an ADF document for v3).
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from reviewer.testing._llm_http import LoopbackFake, LoopbackServer, Plan
from reviewer.testing._llm_wire import Answer, json_answer

__all__ = ["FakeJira", "JiraRequest", "main"]
HOST = "127.0.0.1"
NOT_AUTHENTICATED = "Client must be authenticated to access this resource."
NO_ISSUE = "Issue does not exist or you do not have permission to see it."
_ISSUE_PATH = re.compile(r"/rest/api/(?P<version>[23])/issue/(?P<key>[^/]+)")
Kind = Literal["cloud", "datacenter"]


@dataclass(frozen=True)
class JiraRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int


@dataclass
class _Issue:
    id: int
    key: str
    summary: str
    description: str | dict[str, Any] | None
    status: str


@dataclass
class _Injection:
    status: int
    body: Any
    times: int
    delay: float
    headers: dict[str, str] = field(default_factory=dict)


def error_collection(*messages: str) -> dict[str, Any]:
    """Jira's error body: `{"errorMessages": [...], "errors": {}}`."""
    return {"errorMessages": list(messages), "errors": {}}


def adf_document(text: str) -> dict[str, Any]:
    """`text` as an ADF document: a paragraph per block, a hard break per line."""
    content = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        inline: list[dict[str, Any]] = []
        for index, line in enumerate(lines):
            if index:
                inline.append({"type": "hardBreak"})
            if line:
                inline.append({"type": "text", "text": line})
        content.append({"type": "paragraph", "content": inline})
    return {"type": "doc", "version": 1, "content": content}


class FakeJira(LoopbackFake):
    def __init__(
        self,
        *,
        kind: Kind = "cloud",
        email: str = "dev@acme.test",
        token: str = "jira-token",
        port: int = 0,
    ) -> None:
        self.kind = kind
        self.email = email
        self.token = token
        self._lock = threading.Lock()
        self._issues: dict[str, _Issue] = {}
        self._requests: list[JiraRequest] = []
        self._injections: list[_Injection] = []
        self._closing = threading.Event()
        self._server = LoopbackServer(
            HOST, port, answer=self._plan, closing=self._closing, done=threading.Event()
        )
        self.port: int = self._server.server_address[1]
        self._thread = self._server.serve_in_background(f"fake-jira-{self.port}")

    @property
    def url(self) -> str:
        """What to set as jira_url."""
        return f"http://{HOST}:{self.port}"

    @property
    def requests(self) -> list[JiraRequest]:
        with self._lock:
            return list(self._requests)

    def add_issue(
        self,
        key: str,
        summary: str,
        description: str | dict[str, Any] | None,
        status: str = "To Do",
    ) -> None:
        """An issue; `description` is text, or an ADF document (v2 then answers its text)."""
        with self._lock:
            number = 10_000 + len(self._issues) + 1
            self._issues[key.upper()] = _Issue(number, key.upper(), summary, description, status)

    def inject(
        self,
        status: int,
        body: Any = None,
        *,
        times: int = 1,
        delay: float = 0.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next `times` requests are answered `status` (body: Jira's error collection
        when None), after `delay` seconds."""
        with self._lock:
            self._injections.append(_Injection(status, body, times, delay, dict(headers or {})))

    def down(self) -> None:
        """Jira is gone: the port no longer answers (a refused connection)."""
        self.close()

    def _plan(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Plan:
        split = urlsplit(target)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        delay = 0.0
        injected = self._take_injection()
        if injected is not None:
            delay = injected.delay
            body = error_collection(f"injected {injected.status}") if injected.body is None else (
                injected.body
            )  # fmt: skip
            answer = json_answer(injected.status, body, injected.headers)
        else:
            answer = self._answer(method, split.path, query, headers)
        with self._lock:
            self._requests.append(JiraRequest(method, split.path, query, headers, answer.status))
        return Plan(answer, delay=delay)

    def _take_injection(self) -> _Injection | None:
        with self._lock:
            for injection in self._injections:
                if injection.times > 0:
                    injection.times -= 1
                    return injection
        return None

    def _answer(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> Answer:
        if not self._authenticated(headers.get("authorization", "")):
            return json_answer(401, error_collection(NOT_AUTHENTICATED))
        match = _ISSUE_PATH.fullmatch(path)
        if method != "GET" or match is None:
            return json_answer(404, error_collection("null for uri: " + path))
        version = int(match["version"])
        if version == 3 and self.kind == "datacenter":
            return json_answer(404, error_collection("null for uri: " + path))
        with self._lock:
            issue = self._issues.get(unquote(match["key"]).upper())
        if issue is None:
            return json_answer(404, error_collection(NO_ISSUE))
        return json_answer(200, self._issue_json(issue, version, query.get("fields")))

    def _authenticated(self, authorization: str) -> bool:
        scheme, _, credentials = authorization.partition(" ")
        if self.kind == "datacenter":
            return scheme.lower() == "bearer" and credentials.strip() == self.token
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return False
        return decoded == f"{self.email}:{self.token}"

    def _issue_json(self, issue: _Issue, version: int, fields: str | None) -> dict[str, Any]:
        description: Any = issue.description
        if version == 3 and isinstance(description, str):
            description = adf_document(description)
        elif version == 2 and isinstance(description, dict):
            description = _texts(description)  # v2 gives text (wiki markup)
        every = {
            "summary": issue.summary,
            "status": {"name": issue.status, "id": "3", "self": f"{self.url}/rest/api/2/status/3"},
            "description": description,
            "issuetype": {"name": "Story"},
        }
        wanted = [name.strip() for name in fields.split(",")] if fields else list(every)
        return {
            "expand": "renderedFields,names,schema,operations,editmeta,changelog",
            "id": str(issue.id),
            "key": issue.key,
            "self": f"{self.url}/rest/api/{version}/issue/{issue.id}",
            "fields": {name: every[name] for name in wanted if name in every},
        }


def _texts(node: Any) -> str:
    """The text nodes of an ADF tree, joined (the fake's own reading, not the program's)."""
    if isinstance(node, dict):
        if node.get("type") == "text":
            return str(node.get("text", ""))
        parts = [_texts(child) for child in node.get("content") or []]
        lines = node.get("type") in ("doc", "bulletList", "orderedList")
        return ("\n" if lines else "").join(parts)
    return ""


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m reviewer.testing.fake_jira",
        description="Serve Jira issues (Get issue, REST v2 and v3) as a fake Jira.",
    )
    parser.add_argument("--kind", choices=["cloud", "datacenter"], default="cloud")
    parser.add_argument("--email", default="dev@acme.test", help="Cloud: the account's email")
    parser.add_argument("--token", default="jira-token", help="the API token (or PAT)")
    parser.add_argument("--issues", type=Path, help='JSON: {"KEY": {"summary", "description", '
                        '"status"}}')  # fmt: skip
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else list(argv))
    issues: dict[str, Any] = {}
    if args.issues is not None:
        try:
            issues = json.loads(args.issues.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"fake_jira: cannot read {args.issues}: {exc}", file=sys.stderr)
            return 2
    fake = FakeJira(kind=args.kind, email=args.email, token=args.token, port=args.port)
    for key, issue in issues.items():
        fake.add_issue(key, issue.get("summary", ""), issue.get("description"),
                       issue.get("status", "To Do"))  # fmt: skip
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
    with fake:
        print(fake.url, flush=True)
        try:
            while not stop.wait(0.1):
                pass
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
