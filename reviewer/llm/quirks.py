"""What OpenAI-compatible servers do differently, as data: how each quirk is recognised in an
error, and what is done about it. The next server is one more row.

Every row was seen on a real server; the source of each text is cited beside it and in the
tests that imitate it (tests/test_llm_servers.py).
"""

from __future__ import annotations

import html.parser
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from reviewer.safety.model_json import read_json


class Action(Enum):
    # Change how requests are made, for the rest of the review, then ask again at once.
    ADAPT = "adapt"
    # The request was fine; the server failed it this time: ask again (a few times).
    RETRY = "retry"
    # The conversation is larger than the model's window: shorten it and ask again.
    CONTEXT = "context"
    # Nothing we can change fixes it: stop, saying what the user should do.
    STOP = "stop"


@dataclass(frozen=True)
class Quirk:
    name: str
    # Searched (case-insensitively) in the error's code and message text.
    pattern: re.Pattern[str]
    action: Action
    # For ADAPT: the ServerProfile flag set; for STOP: the advice; for others: a note.
    detail: str
    statuses: frozenset[int] = frozenset({400})
    # For STOP: what is wrong with the endpoint, after "the model endpoint at URL".
    problem: str = ""


def _q(
    name: str,
    pattern: str,
    action: Action,
    detail: str,
    statuses: tuple[int, ...] = (400,),
    problem: str = "",
) -> Quirk:
    return Quirk(name, re.compile(pattern, re.IGNORECASE | re.DOTALL), action, detail,
                 frozenset(statuses), problem)  # fmt: skip


_ANY_ERROR = (400, 404, 413, 422, 500)
_NO_TOOLS = "cannot call tools"
NOT_OPENAI = "does not look like an OpenAI-compatible endpoint"
_CHECK_URL = (
    "check OPENAI_BASE_URL: it is the base of the server's OpenAI API, often ending in /v1 "
    "(e.g. http://localhost:11434/v1)"
)

QUIRKS: tuple[Quirk, ...] = (
    # OpenAI o-series and gpt-5: "Unsupported parameter: 'max_tokens' is not supported with
    # this model. Use 'max_completion_tokens' instead." (code unsupported_parameter).
    _q("max_completion_tokens", r"max_tokens.*max_completion_tokens|max_tokens.*not supported",
       Action.ADAPT, "use_max_completion_tokens"),
    # Reasoning models: "Unsupported value: 'temperature' does not support 0.2 with this
    # model. Only the default (1) value is supported."
    _q("no_temperature", r"temperature.*(not supported|does not support|only the default)",
       Action.ADAPT, "drop_temperature"),
    # vLLM with Llama 3.x chat templates: "This model only supports single tool-calls at
    # once!" (a template exception, 400 or 500 by version).
    _q("one_call_per_message", r"only supports single tool-?calls", Action.ADAPT,
       "one_call_per_message", (400, 500)),
    # DashScope (Qwen) models: "This model only support stream mode, please enable the
    # stream parameter to access the model."
    _q("stream_only", r"only supports? stream mode|enable the stream parameter", Action.ADAPT,
       "stream", (400, 403)),
    # deepseek-reasoner (before thinking mode with tools): reasoning_content sent back in an
    # input message is refused.
    _q("no_reasoning_input", r"reasoning_content.*(input|not allowed|should not|not support)",
       Action.ADAPT, "strip_reasoning"),
    # Structured output refused: LM Studio takes only json_schema or text (a json_object is
    # a 400, protocols.md 4.7); OpenAI's older models: "Invalid parameter: 'response_format'
    # of type 'json_schema' is not supported with this model."
    _q("no_response_format", r"response_format", Action.ADAPT, "drop_response_format",
       (400, 422)),
    # Groq: "Failed to call a function. Please adjust your prompt. See 'failed_generation'
    # for more details." (code tool_use_failed): the model's output did not parse as a tool
    # call this time; a plain retry usually succeeds.
    _q("tool_use_failed", r"tool_use_failed|failed to call a function", Action.RETRY,
       "the server could not parse the model's tool call"),
    # Context windows, in each server's words.
    _q("context_overflow",
       r"context_length_exceeded|maximum context length|context length"
       r"|exceeds the available context size"  # llama.cpp server
       r"|prompt is too long"  # Anthropic's OpenAI-compatible endpoint
       r"|input token count.*exceed"  # Gemini
       r"|trying to keep the first \d+ tokens"  # LM Studio
       r"|longer than the maximum model length"  # vLLM
       r"|too large for model with \d+ maximum context"  # Mistral
       r"|must be <= \d+.*tokens|tokens \+ .?max_new_tokens.? must be"  # TGI
       r"|reduce the length of the messages"  # OpenAI, Groq
       r"|exceed_context_size_error|model_context_window_exceeded|exceeded model token limit"
       r"|maximum (?:prompt|model) length is|greater than the context length"
       r"|input is too long|prompt exceeds the length limit"
       r"|does not fit in context length",  # LM Studio 0.4.21+ (inside a 200 stream)
       Action.CONTEXT, "", _ANY_ERROR),
    # Tool calling is not switched on or not supported: nothing a retry can fix.
    _q("llama_cpp_no_jinja", r"tools param requires --jinja", Action.STOP,
       "start llama.cpp's server with --jinja (tool calling needs its chat templates)",
       _ANY_ERROR, _NO_TOOLS),
    _q("vllm_no_tool_parser", r"enable-auto-tool-choice|tool-call-parser", Action.STOP,
       "start vLLM with --enable-auto-tool-choice --tool-call-parser NAME for this model",
       _ANY_ERROR, _NO_TOOLS),
    _q("ollama_no_tools", r"does not support tools", Action.STOP,
       "this model cannot call tools: pick one with tool support (e.g. qwen2.5-coder, "
       "llama3.1) or another server", _ANY_ERROR, _NO_TOOLS),
    # tool_choice "required" refused (settings.tool_choice): DeepSeek's thinking mode, "Thinking
    # mode does not support this tool_choice" / "deepseek-reasoner does not support this
    # tool_choice" (deepseek-ai/DeepSeek-V3#1376); which servers take it:
    # reviewer/data/tool_choice.toml. After the rows above, which name
    # tool choice in advice that stops the review. Asked without it for the rest of the review.
    _q("no_tool_choice", r"tool_choice", Action.ADAPT, "drop_tool_choice", (400, 422)),
    # llama.cpp started with --embeddings: 501 not_supported_error "This server does not
    # support completions. Start it without `--embeddings`" (tools/server/server.cpp).
    _q("llama_cpp_embeddings_only", r"does not support completions", Action.STOP,
       "start llama.cpp's server without --embeddings", (501,), "serves embeddings only"),
    # Not an OpenAI API at all: a web server's error page (Express "Cannot POST /v1/chat/
    # completions", nginx "405 Not Allowed", Python's http.server "501 Unsupported method"),
    # or a 200 that is not a chat completion. Said at once, never retried: asking again
    # gets the same page. (server_message describes an HTML body as "an HTML page: ...".)
    _q("html_page", r"(?:^|\s)an HTML page:|not a chat completion", Action.STOP, _CHECK_URL,
       (200, 400, 404, 405, 415, 501), NOT_OPENAI),
    # 405 Method Not Allowed and 501 Not Implemented, whatever the body: the server does not
    # take a POST at this path.
    _q("no_post_here", r"", Action.STOP, _CHECK_URL, (405, 501), NOT_OPENAI),
)  # fmt: skip


def find_quirk(status: int | None, code: str | None, message: str) -> Quirk | None:
    """The first row that matches. Without a status (an error inside a 200), any row may
    match by its text, but not a row that is known by its status alone (an empty pattern)."""
    text = f"{code or ''} {message}"
    for quirk in QUIRKS:
        by_status = status in quirk.statuses if status is not None else bool(quirk.pattern.pattern)
        if by_status and quirk.pattern.search(text):
            return quirk
    return None


@dataclass
class ServerProfile:
    """What this review has learnt about the server; shared by every batch, so a quirk is
    met once per review. Flags only ever go from False to True (safe across threads)."""

    use_max_completion_tokens: bool = False
    drop_temperature: bool = False
    one_call_per_message: bool = False
    stream: bool = False
    strip_reasoning: bool = False
    drop_response_format: bool = False
    drop_tool_choice: bool = False
    learnt: list[str] = field(default_factory=list)

    def apply(self, flag: str) -> bool:
        """Set `flag`; False when it was already set (adapting again would not help)."""
        if getattr(self, flag):
            return False
        setattr(self, flag, True)
        self.learnt.append(flag)
        return True


ADAPT_NOTES = {
    "use_max_completion_tokens": "sending max_completion_tokens instead of max_tokens",
    "drop_temperature": "leaving temperature out (the model takes only its default)",
    "one_call_per_message": "sending one tool call per assistant message",
    "stream": "streaming replies (the model answers only in stream mode)",
    "strip_reasoning": "not sending the model's reasoning_content back",
    "drop_response_format": "asking for JSON in words only (no response_format)",
    "drop_tool_choice": "leaving tool_choice out (the model may answer in text)",
}


# --- what the server said ---------------------------------------------------------------------

_MAX_MESSAGE = 300


def server_message(body: Any, fallback: str = "") -> str:
    """The human text of an error body of any shape: OpenAI's `{"error": {"message"}}`, LM
    Studio's `{"error": "text"}`, Gemini's `[{"error": {...}}]`, a bare string, or the raw
    text when nothing else is found; one line, at most 300 characters. An HTML page (a web
    server's error page) is told by its words, "an HTML page: Error - Cannot POST /v1/...",
    never its markup."""
    found = _find_message(body, depth=0)
    text = found if found else fallback
    if isinstance(text, str) and looks_like_html(text):
        return html_excerpt(text)
    return " ".join(str(text).split())[:_MAX_MESSAGE]


_HTML_START = re.compile(r"\s*(?:<!--.*?-->\s*)?<(?:!doctype\s+html|html|head|body|title|h1)\b",
                         re.IGNORECASE | re.DOTALL)  # fmt: skip
_MAX_HTML_EXCERPT = 160
# A page's first characters are enough to say what it is.
_MAX_HTML_READ = 20_000


def looks_like_html(text: str) -> bool:
    return bool(_HTML_START.match(text[:2000]))


def html_excerpt(page: str) -> str:
    """A page's title and text, one line, short: what a person would read on it."""
    reader = _PageText()
    try:
        reader.feed(page[:_MAX_HTML_READ])
        reader.close()
    except Exception:  # html.parser is lenient; a broken page still says what it is
        pass
    title = " ".join(" ".join(reader.title).split())
    text = " ".join(" ".join(reader.text).split())
    words = text if not title or text.startswith(title) else f"{title} - {text}".rstrip(" -")
    if len(words) > _MAX_HTML_EXCERPT:
        words = words[: _MAX_HTML_EXCERPT - 1].rstrip() + "…"
    return f"an HTML page: {words}" if words else "an HTML page"


class _PageText(html.parser.HTMLParser):
    """The title and the visible text of a page (not its scripts, styles or head)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.text: list[str] = []
        self._skip: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head", "title"):
            self._skip.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._skip:
            while self._skip and self._skip.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)
        elif self._skip[-1] == "title":
            self.title.append(data)


def _find_message(value: Any, depth: int) -> str:
    if depth > 6:
        return ""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in "[{":
            try:
                # Bounded: the body can hold the model's own text (Groq's failed_generation).
                return _find_message(read_json(stripped), depth + 1) or stripped
            except ValueError:
                return stripped
        return stripped
    if isinstance(value, dict):
        for key in ("message", "error", "detail", "msg", "error_message", "title"):
            if key in value:
                found = _find_message(value[key], depth + 1)
                if found:
                    return found
        return ""
    if isinstance(value, list):
        for item in value[:5]:
            found = _find_message(item, depth + 1)
            if found:
                return found
    return ""


def error_code(body: Any) -> str | None:
    """The machine-readable code of an error body (`error.code`, `code`, `error.type`)."""
    items = body if isinstance(body, list) else [body]
    for item in items[:5]:
        if not isinstance(item, dict):
            continue
        inner = item.get("error", item)
        if isinstance(inner, dict):
            for key in ("code", "type", "status"):
                if isinstance(inner.get(key), str) and inner[key]:
                    return str(inner[key])
    return None
