"""GitHub's GraphQL API in the fake: `POST /graphql` (`/api/graphql` on GitHub Enterprise
Server, whose REST API is under `/api/v3`), run by graphql-core over a subset of GitHub's
published schema (`github_schema_subset.graphql`, cut in a checkout by
`python -m tests.support.github_schema`).

A query GitHub would refuse is refused: graphql-core validates it against GitHub's own type
definitions, and the refusal is worded as GitHub's graphql-ruby words it (`Field 'x' doesn't
exist on type 'Y'`, extensions.code `undefinedField`; poingstudios/godot-admob-plugin#493).
Errors come with HTTP 200: `{"data": ..., "errors": [{"type", "path", "locations",
"message"}]}` (research file, "GitHub review threads (GraphQL)"; nodejs/node-core-utils#120 for
NOT_FOUND, letta-ai/letta-code#2201 for FORBIDDEN).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    Node,
    OperationDefinitionNode,
    build_schema,
    execute,
    parse,
    validate,
)

import reviewer.testing._gh_graphql_types as types
from reviewer.testing._gh_objects import (
    GRAPHQL_DOC,
    JsonObject,
    error_body,
    json_answer,
)
from reviewer.testing._gh_store import PullRequestStore
from reviewer.testing._gh_threads import ThreadBook
from reviewer.testing._llm_wire import Answer

DOC = GRAPHQL_DOC
# The vendored subset the fake serves (shipped in the wheel beside this module).
SUBSET_FILE = Path(__file__).with_name("github_schema_subset.graphql")
Q = "['\"]"  # graphql-core quotes names with ' or " depending on its version


@lru_cache(maxsize=1)
def github_schema() -> GraphQLSchema:
    schema = build_schema(SUBSET_FILE.read_text(encoding="utf-8"))
    query, mutation = schema.query_type, schema.mutation_type
    assert query is not None and mutation is not None
    query.fields["repository"].resolve = _repository
    query.fields["node"].resolve = lambda root, info, id: types.node(info.context, id)
    query.fields["id"].resolve = lambda root, info: "MDU6UXVlcnk="  # GitHub's: base64 "05:Query"
    mutation.fields["resolveReviewThread"].resolve = _resolve
    mutation.fields["unresolveReviewThread"].resolve = _unresolve
    mutation.fields["addPullRequestReviewThreadReply"].resolve = _reply
    return schema


# -- resolvers of the root fields ----------------------------------------------------------


def _repository(root: Any, info: Any, owner: str, name: str, followRenames: bool = True) -> Any:
    viewer: types.Viewer = info.context
    site = viewer.store.site
    if owner.lower() != site.owner.lower() or name.lower() != site.name.lower():
        raise types.github_error(
            "NOT_FOUND", f"Could not resolve to a Repository with the name '{owner}/{name}'."
        )
    return types.repository(viewer)


def _thread_for_change(viewer: types.Viewer, thread_id: str, allowed: bool) -> Any:
    if not allowed:
        raise types.forbidden(viewer)
    store = viewer.store
    found = store.threads.by_node_id(store.visible_comments(), thread_id)
    if found is None:
        raise types.node_not_found(thread_id)
    return found


def _resolve(root: Any, info: Any, input: dict[str, Any]) -> JsonObject:
    viewer: types.Viewer = info.context
    found = _thread_for_change(viewer, input["threadId"], viewer.can_resolve)
    ThreadBook.resolve(found, viewer.login)
    return {
        "clientMutationId": input.get("clientMutationId"),
        "thread": types.thread(viewer, found),
    }


def _unresolve(root: Any, info: Any, input: dict[str, Any]) -> JsonObject:
    viewer: types.Viewer = info.context
    found = _thread_for_change(viewer, input["threadId"], viewer.can_resolve)
    ThreadBook.unresolve(found)
    return {
        "clientMutationId": input.get("clientMutationId"),
        "thread": types.thread(viewer, found),
    }


def _reply(root: Any, info: Any, input: dict[str, Any]) -> JsonObject:
    viewer: types.Viewer = info.context
    found = _thread_for_change(viewer, input["pullRequestReviewThreadId"], viewer.can_reply)
    body = input["body"]
    if not body.strip():
        raise types.github_error("UNPROCESSABLE", "Body can't be blank")
    reply = viewer.store.add_reply(found.root, body, viewer.login)
    return {
        "clientMutationId": input.get("clientMutationId"),
        "comment": types.comment(viewer, reply),
    }


# -- the endpoint --------------------------------------------------------------------------


def answer(store: PullRequestStore, body: Any, viewer_login: str, read_only: bool) -> Answer:
    """The answer to one `POST /graphql`."""
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        message = "A query attribute must be specified and must be a string."
        return json_answer(400, error_body(400, message, DOC))
    variables = body.get("variables") or {}
    try:
        document = parse(body["query"])
    except GraphQLError as error:
        return json_answer(200, {"errors": [_shape(error)]})
    schema = github_schema()
    invalid = validate(schema, document)
    if invalid:
        return json_answer(200, {"errors": [_ruby_wording(e, document) for e in invalid]})
    viewer = types.Viewer(store, viewer_login, read_only)
    with store.lock:
        result = execute(
            schema,
            document,
            variable_values=variables,
            operation_name=body.get("operationName"),
            context_value=viewer,
        )
    data: JsonObject = {"data": result.data}
    if result.errors:
        data["errors"] = [_shape(e) for e in result.errors]
    return json_answer(200, data)


def _shape(error: GraphQLError) -> JsonObject:
    extensions = dict(error.extensions or {})
    shaped: JsonObject = {}
    kind = extensions.pop("type", None)
    if kind is not None:
        shaped["type"] = kind
    if error.path:
        shaped["path"] = list(error.path)
    if extensions:
        shaped["extensions"] = extensions
    if error.locations:
        shaped["locations"] = [{"line": loc.line, "column": loc.column} for loc in error.locations]
    shaped["message"] = error.message
    return shaped


_UNDEFINED = re.compile(rf"^Cannot query field {Q}(\w+){Q} on type {Q}(\w+){Q}\.")
_MISSING = re.compile(  # graphql-core 3.2, then 3.3
    rf"^(?:Field {Q}(\w+){Q} argument {Q}(\w+){Q}|Argument {Q}\w+\.(\w+)\((\w+):\){Q}) "
    "of type .* is required"
)
_UNKNOWN_ARG = re.compile(rf"^Unknown argument {Q}(\w+){Q} on field {Q}\w+\.(\w+){Q}\.")


def _ruby_wording(error: GraphQLError, document: DocumentNode) -> JsonObject:
    """A validation error as GitHub (graphql-ruby) words it, where the wording is known."""
    shaped = _shape(error)
    node = error.nodes[0] if error.nodes else None
    path = _path_to(document, node) if node is not None else None
    if path:
        shaped = {"path": path, **shaped}
    if match := _UNDEFINED.match(error.message):
        field, type_name = match.groups()
        shaped["extensions"] = {"code": "undefinedField", "typeName": type_name, "fieldName": field}
        shaped["message"] = f"Field '{field}' doesn't exist on type '{type_name}'"
    elif match := _MISSING.match(error.message):
        field, argument = match[1] or match[3], match[2] or match[4]
        shaped["extensions"] = {
            "code": "missingRequiredArguments",
            "className": "Field",
            "name": field,
            "arguments": argument,
        }
        shaped["message"] = f"Field '{field}' is missing required arguments: {argument}"
    elif match := _UNKNOWN_ARG.match(error.message):
        argument, field = match.groups()
        shaped["extensions"] = {
            "code": "argumentNotAccepted",
            "name": field,
            "typeName": "Field",
            "argumentName": argument,
        }
        shaped["message"] = f"Field '{field}' doesn't accept argument '{argument}'"
    # Keep GitHub's key order: path, extensions, locations, message.
    order = ("type", "path", "extensions", "locations", "message")
    return {key: shaped[key] for key in order if key in shaped}


def _path_to(document: DocumentNode, target: Node) -> list[str] | None:
    """graphql-ruby's path to a node: the operation ("query", "query Name"), then fields."""

    def walk(node: Node, path: list[str]) -> list[str] | None:
        if node is target:
            return path
        selection_set = getattr(node, "selection_set", None)
        for child in selection_set.selections if selection_set else ():
            if isinstance(child, FieldNode):
                step = [child.alias.value if child.alias else child.name.value]
            elif isinstance(child, InlineFragmentNode) and child.type_condition:
                step = [f"... on {child.type_condition.name.value}"]
            else:
                step = []
            found = walk(child, path + step) if child is not target else path + step
            if found is not None:
                return found
        return None

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            label = definition.operation.value
            if definition.name:
                label = f"{label} {definition.name.value}"
        elif isinstance(definition, FragmentDefinitionNode):
            label = f"fragment {definition.name.value}"
        else:
            continue
        found = walk(definition, [label])
        if found is not None:
            return found
    return None
