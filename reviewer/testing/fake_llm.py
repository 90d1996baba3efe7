"""A scripted fake OpenAI-compatible LLM server, for testing prompts, config and agent loops.

    from reviewer.testing.fake_llm import FakeLLM, reply, tool_call, rate_limit_exceeded

    with FakeLLM([
        reply(tool_calls=[tool_call("read_file", {"path": "app.py"})]),
        rate_limit_exceeded(retry_after_ms=1),
        reply("All good.", expect={"tool_result_for": "call_1"}),
    ]) as llm:
        client = openai.OpenAI(base_url=llm.base_url, api_key="test")
        ...
        llm.assert_no_failures()

Each chat request consumes the next step. A step is a JSON object:

- a reply: `content` (string or null), `tool_calls` (list of `{"name", "arguments", "id"?}`;
  dict arguments are JSON-encoded, string arguments are sent as they are; an omitted id
  becomes `call_<n>`, `"id": null` is sent as null), `finish_reason` (default `tool_calls`
  or `stop`), `usage` (default estimated at ~4 characters a token; null sends null; a given
  object is sent as it is, e.g. with `prompt_tokens_details: {"cached_tokens": N}`),
  `omit_tool_call_ids`, `stream_tool_calls` (`fragments` like OpenAI, `whole` like Ollama);
- an error: `{"error": PRESET, ...parameters}` with PRESET one of `rate_limit_exceeded`
  (`retry_after`, `retry_after_ms`, `limit`), `insufficient_quota`, `server_error`
  (`status`), `bad_gateway` (`html`), `service_unavailable`, `invalid_api_key`,
  `model_not_found` (`model`), `context_length_exceeded` (`max_tokens`, `prompt_tokens`);
  or `{"status": 418, "error": {"message", "type", "param", "code"}}`;
- a raw answer: `{"status": 200, "body": <string or JSON>, "content_type": ...}`;
- (Python only) a function of the request body returning a step.

A script for `reviewer review` ends each conversation with a reply that calls `submit_review`:
`{"tool_calls": [{"name": "submit_review", "arguments": {"summary": "...", "findings": [...]}}]}`,
each finding with `path`, `line`, `severity`, `title`, `body` and optionally `end_line`,
`side`, `category`, `suggestion` (`reviewer tools` lists them, `reviewer tools --json` prints
the schemas the model is sent; docs/tools.md's "The answer: submit_review" says what each is).

Any step may add `delay` (seconds before answering), `headers` (extra response headers) and
`expect`, checks on the request: `model`, `tools` (true, false or a list of names),
`tool_choice`, `stream`, `last_role`, `message_count`, `tool_result_for` (call id(s)
answered by the trailing tool messages), `contains` / `last_contains` (substrings of all
messages / of the last one). A failed check answers 400 and is recorded in `.failures`.

The API is served under `/v1` only (`base_url`), as OpenAI serves it: a client given the
server's root (`url`, a base URL without `/v1`, the most common mistake) gets OpenAI's 404,
`Invalid URL (POST /chat/completions)`, for every request.

Requests are checked as OpenAI checks them: `Authorization: Bearer` present (401), a JSON
body (400), `model` and `messages` present, every tool call answered by a tool message
right after it and no tool message without its call (400, with OpenAI's texts).
Streaming is supported (SSE chunks as in OpenAI's API, `stream_options.include_usage`).

Run as a program: `python -m reviewer.testing.fake_llm script.json [--port N]` prints the
base URL (`http://127.0.0.1:N/v1`) on one line and serves until interrupted, or with
`--exit-when-done` until every step has been answered; the exit code is 1 when failures were
recorded.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

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
    "FakeLLM",
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
    "main",
    "model_not_found",
    "rate_limit_exceeded",
    "raw",
    "reply",
    "server_error",
    "service_unavailable",
    "tool_call",
]


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m reviewer.testing.fake_llm",
        description="Serve a scripted fake OpenAI-compatible LLM on 127.0.0.1.",
    )
    parser.add_argument("script", type=Path, help="JSON file: a list of steps")
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    parser.add_argument("--model", default="fake-model", help="the model /v1/models lists")
    parser.add_argument("--api-key", default=None, help="refuse any other key with a 401")
    parser.add_argument(
        "--repeat-last", action="store_true", help="replay the last step once all are used"
    )
    parser.add_argument(
        "--exit-when-done", action="store_true", help="exit once every step has been answered"
    )
    parser.add_argument(
        "--background",
        action="store_true",
        help="return once the server listens, leaving it running; print its process id "
        "(for `kill`)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = _arguments(arguments)
    if args.background:
        return _serve_in_background([a for a in arguments if a != "--background"])
    try:
        steps = load_script(args.script)
    except (OSError, ScriptError) as exc:
        print(f"fake_llm: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (what a test harness sends) ends the server cleanly, failures reported.
        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
    try:
        server = FakeLLM(
            steps,
            model=args.model,
            api_key=args.api_key,
            on_exhausted="repeat_last" if args.repeat_last else "error",
            port=args.port,
        )
    except OSError as exc:
        print(
            f"fake_llm: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; "
            "choose another --port (0 picks a free one)",
            file=sys.stderr,
        )
        return 2
    with server as llm:
        print(llm.base_url, flush=True)
        try:
            while not stop.wait(0.1):
                if args.exit_when_done and llm.done:
                    break
        except KeyboardInterrupt:
            pass
    for failure in llm.failures:
        print(f"fake_llm: {failure}", file=sys.stderr)
    return 1 if llm.failures else 0


def _serve_in_background(arguments: list[str]) -> int:
    """Start the server as a process of its own and return once it listens: a script that goes
    on to call it never races its start (a refused connection on this machine is not retried
    by reviewer). The server's URL line is its signal that it listens."""
    server = subprocess.Popen(
        [sys.executable, "-m", "reviewer.testing.fake_llm", *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    listening = server.stdout.readline()
    server.stdout.close()  # the server prints nothing more on stdout
    if not listening:
        return server.wait()  # it could not start, and said why on stderr
    print(listening.strip(), file=sys.stderr, flush=True)
    print(server.pid, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
