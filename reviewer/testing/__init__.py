"""Test helpers shipped with reviewer, for its own tests and for users' tests of their setup.

`reviewer.testing.fake_llm` is a scripted OpenAI-compatible server (standard library only);
its names are re-exported here. This package does not import `fake_llm` itself, so that
`python -m reviewer.testing.fake_llm` runs the module fresh (no runpy double-import warning).
"""

from reviewer.testing._gh_inject import Injection
from reviewer.testing._gh_server import FakeGitHub, GitHubRequest
from reviewer.testing._llm_script import ScriptError, Step, load_script
from reviewer.testing._llm_server import FakeLLM, RecordedRequest
from reviewer.testing._llm_steps import (
    bad_gateway,
    context_length_exceeded,
    delay,
    error,
    expect,
    insufficient_quota,
    invalid_api_key,
    model_not_found,
    rate_limit_exceeded,
    raw,
    reply,
    server_error,
    service_unavailable,
    tool_call,
)

__all__ = [
    "FakeGitHub",
    "FakeLLM",
    "GitHubRequest",
    "Injection",
    "RecordedRequest",
    "ScriptError",
    "Step",
    "bad_gateway",
    "context_length_exceeded",
    "delay",
    "error",
    "expect",
    "insufficient_quota",
    "invalid_api_key",
    "load_script",
    "model_not_found",
    "rate_limit_exceeded",
    "raw",
    "reply",
    "server_error",
    "service_unavailable",
    "tool_call",
]
