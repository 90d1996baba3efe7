"""The model endpoint (the only importer of `openai`): requests, retries, replies, and the
quirks of OpenAI-compatible servers, kept as data in quirks.py."""

from reviewer.llm.client import DEFAULT_BASE_URL, ChatModel, Connection, check_base_url
from reviewer.llm.failures import ContextLengthError, EndpointError, ModelError, ReplyTimedOut
from reviewer.llm.quirks import QUIRKS, ServerProfile, server_message
from reviewer.llm.replies import Reply, ToolCall

__all__ = [
    "DEFAULT_BASE_URL",
    "QUIRKS",
    "ChatModel",
    "Connection",
    "ContextLengthError",
    "EndpointError",
    "ModelError",
    "Reply",
    "ReplyTimedOut",
    "ServerProfile",
    "ToolCall",
    "check_base_url",
    "server_message",
]
