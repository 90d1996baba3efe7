"""Signed markers: the only text the bot reads back from the forge.

A marker is one line, `<!-- reviewer:PAYLOAD sig=TAG -->`, where TAG is an HMAC-SHA256 of the
payload under a key derived from a secret the pull request's author does not have
(`REVIEWER_STATE_KEY`, else the model's API key), bound to `owner/name#number`. A comment
the bot did not write, or a marker copied from another pull request, does not verify.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

_PREFIX = "<!-- reviewer:"
_SUFFIX = " -->"
_TAG_HEX = 32


@dataclass(frozen=True)
class Signer:
    key: bytes
    scope: str  # "owner/name#number"

    @classmethod
    def from_secret(cls, secret: str, scope: str) -> Signer:
        return cls(hashlib.sha256(b"reviewer-marker\0" + secret.encode("utf-8")).digest(), scope)

    def tag(self, payload: str) -> str:
        mac = hmac.new(self.key, f"{self.scope}\n{payload}".encode(), hashlib.sha256)
        return mac.hexdigest()[:_TAG_HEX]

    def marker(self, payload: str) -> str:
        """The marker line for `payload` (one line, holding no `<`, `>` or `-->`)."""
        if "\n" in payload or "<" in payload or ">" in payload:
            raise ValueError("a marker's payload is one line without < or >")
        return f"{_PREFIX}{payload} sig={self.tag(payload)}{_SUFFIX}"

    def read(self, line: str) -> str | None:
        """The payload of a marker line that verifies, else None."""
        line = line.strip()
        if not (line.startswith(_PREFIX) and line.endswith(_SUFFIX)):
            return None
        payload, sep, tag = line[len(_PREFIX) : -len(_SUFFIX)].rpartition(" sig=")
        if not sep or not hmac.compare_digest(tag, self.tag(payload)):
            return None
        return payload
