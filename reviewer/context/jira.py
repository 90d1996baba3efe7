"""Jira's REST API, read-only: one issue's summary, status and description.

    GET {jira_url}/rest/api/3/issue/KEY?fields=summary,status,description   (Jira Cloud)
    GET {jira_url}/rest/api/2/issue/KEY?fields=summary,status,description   (Data Center)

Authentication (REVIEWER_JIRA_TOKEN or JIRA_API_TOKEN; REVIEWER_JIRA_EMAIL or JIRA_EMAIL):
- with an email, Basic base64(email:token): an Atlassian account's API token on Jira Cloud
  (developer.atlassian.com/cloud/jira/platform/basic-auth-for-rest-apis/); Cloud's v3 API
  returns the description as Atlassian Document Format, made text by `adf.py`;
- without, `Authorization: Bearer token`: a personal access token of Jira Data Center
  (confluence.atlassian.com/enterprise/using-personal-access-tokens-1026032365.html), whose
  API is v2 (the description is wiki markup text, read as it is).

Plain HTTP through `requests` (already installed with PyGithub and python-gitlab): redirects
are never followed (a token goes to jira_url only), the answer is read up to MAX_ANSWER_BYTES,
one attempt with a timeout (a ticket is context, never worth holding a review up). Errors are
`JiraError`, one line each; Jira answers them as `{"errorMessages": [...], "errors": {}}`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests

from reviewer.context.adf import adf_text
from reviewer.errors import ReviewerError

TOKEN_VARIABLES = ("REVIEWER_JIRA_TOKEN", "JIRA_API_TOKEN")
EMAIL_VARIABLES = ("REVIEWER_JIRA_EMAIL", "JIRA_EMAIL")
FIELDS = "summary,status,description"
# An issue with these three fields is a few KB; a description of a megabyte is still read.
MAX_ANSWER_BYTES = 4_000_000
TIMEOUT = (5.0, 15.0)  # connect, read (seconds)
_MESSAGE_CHARS = 200


class JiraError(ReviewerError):
    """Jira could not give the issue. `whole_tracker`: the failure is Jira's (unreachable,
    the token refused, a server error), so no other issue of the run is asked."""

    def __init__(self, message: str, *, whole_tracker: bool = False) -> None:
        super().__init__(message)
        self.whole_tracker = whole_tracker


@dataclass(frozen=True)
class JiraIssue:
    key: str
    title: str
    status: str
    text: str
    url: str


def jira_reader(
    jira_url: str | None, environ: Mapping[str, str]
) -> tuple[Callable[[str], JiraIssue] | None, str]:
    """A function reading one issue by key, or None and why Jira cannot be read."""
    if jira_url is None:
        return None, "jira_url is not set (the address of your Jira, in the settings)"
    token = next((environ[name] for name in TOKEN_VARIABLES if environ.get(name)), None)
    if token is None:
        return None, "no Jira token: set REVIEWER_JIRA_TOKEN (or JIRA_API_TOKEN)"
    email = next((environ[name] for name in EMAIL_VARIABLES if environ.get(name)), None)
    client = JiraClient(jira_url, token.strip(), email.strip() if email else None)
    return client.issue, ""


class JiraClient:
    def __init__(self, url: str, token: str, email: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.cloud = email is not None
        self.session = requests.Session()
        if email is not None:
            self.session.auth = (email, token)  # Basic base64(email:token)
        else:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self.session.headers["Accept"] = "application/json"

    def issue(self, key: str) -> JiraIssue:
        version = 3 if self.cloud else 2
        address = f"{self.url}/rest/api/{version}/issue/{quote(key, safe='')}"
        data = self._get(address, key)
        fields = data.get("fields") if isinstance(data.get("fields"), dict) else {}
        assert isinstance(fields, dict)
        description = fields.get("description")
        text = adf_text(description) if isinstance(description, dict) else str(description or "")
        status = fields.get("status")
        return JiraIssue(
            key=str(data.get("key") or key),
            title=str(fields.get("summary") or ""),
            status=str(status.get("name") or "") if isinstance(status, dict) else "",
            text=text,
            url=f"{self.url}/browse/{quote(str(data.get('key') or key), safe='-')}",
        )

    def _get(self, address: str, key: str) -> dict[str, Any]:
        try:
            with self.session.get(
                address,
                params={"fields": FIELDS},
                timeout=TIMEOUT,
                allow_redirects=False,
                stream=True,
            ) as answer:
                body = answer.raw.read(MAX_ANSWER_BYTES + 1, decode_content=True)
                status, headers = answer.status_code, answer.headers
        except requests.Timeout:
            raise JiraError(
                f"Jira did not answer within {TIMEOUT[1]:g} s", whole_tracker=True
            ) from None
        except requests.RequestException as exc:
            raise JiraError(
                f"cannot reach Jira at {self.url}: {type(exc).__name__}", whole_tracker=True
            ) from None
        if 300 <= status < 400:
            where = headers.get("location", "")[:120]
            raise JiraError(
                f"Jira answered {status}, a redirect to {where or 'elsewhere'}: not followed (the "
                "token goes to jira_url only; set jira_url to the address Jira names)",
                whole_tracker=True,
            )
        if len(body) > MAX_ANSWER_BYTES:
            raise JiraError(f"Jira's answer for {key} is over {MAX_ANSWER_BYTES:,} bytes")
        data = _json(body)
        if status == 200 and isinstance(data, dict):
            return data
        message = _message(data, body)
        if status == 401:
            raise JiraError(
                f"Jira refused the token (401{message}): check REVIEWER_JIRA_TOKEN, and "
                "REVIEWER_JIRA_EMAIL for Jira Cloud (without it the token is sent as a Data "
                "Center personal access token)",
                whole_tracker=True,
            )
        if status == 404:
            raise JiraError(f"Jira has no issue {key} this token may see (404{message})")
        if status == 200:
            raise JiraError(f"Jira's answer for {key} is not a JSON issue (is jira_url Jira's?)")
        raise JiraError(
            f"Jira failed ({status}{message})", whole_tracker=status >= 500 or status == 403
        )


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _message(data: Any, body: bytes) -> str:
    """Jira's own words of an error (`errorMessages`, `errors`, `message`), for the log."""
    words: list[str] = []
    if isinstance(data, dict):
        messages = data.get("errorMessages")
        if isinstance(messages, list):
            words += [str(m) for m in messages]
        errors = data.get("errors")
        if isinstance(errors, dict):
            words += [f"{k}: {v}" for k, v in errors.items()]
        if isinstance(data.get("message"), str):
            words.append(data["message"])
    elif body and not body.lstrip().startswith(b"<"):
        words.append(body[:_MESSAGE_CHARS].decode("utf-8", "replace"))
    text = " ".join(" ".join(words).split())[:_MESSAGE_CHARS]
    return f": {text}" if text else ""
