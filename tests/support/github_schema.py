"""Cut the part of GitHub's published GraphQL schema that the fake serves, and vendor it.

    python -m tests.support.github_schema SCHEMA.graphql [OUT.graphql]

SCHEMA is `schema.graphql` of the public repository `octokit/graphql-schema` (GitHub's full
published schema); OUT defaults to the fake's `reviewer/testing/github_schema_subset.graphql`. The
subset keeps GitHub's own definitions, word for word (descriptions, argument names and
defaults, nullability, deprecations): only the fields listed in `SELECTION` are kept on object
and interface types, interfaces and union members outside the subset are dropped, and every
enum, input object and scalar the kept fields use is copied whole. A type a kept field needs
but `SELECTION` lacks is an error, so the subset is always a valid schema by itself.

A query GitHub accepts may use a field outside the subset: the fake then rejects it as an
unknown field, and the field belongs in `SELECTION` (rerun this script).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from graphql import (
    DefinitionNode,
    DirectiveDefinitionNode,
    DocumentNode,
    EnumTypeDefinitionNode,
    FieldDefinitionNode,
    InputObjectTypeDefinitionNode,
    InterfaceTypeDefinitionNode,
    ListTypeNode,
    NamedTypeNode,
    NonNullTypeNode,
    ObjectTypeDefinitionNode,
    ScalarTypeDefinitionNode,
    TypeNode,
    UnionTypeDefinitionNode,
    build_ast_schema,
    parse,
    print_ast,
    validate_schema,
)

from reviewer.testing._gh_graphql import SUBSET_FILE

SOURCE = "octokit/graphql-schema schema.graphql"
BUILT_IN = {"String", "Int", "Float", "Boolean", "ID"}

# Object and interface types, and the fields of each that the fake serves.
SELECTION: dict[str, tuple[str, ...]] = {
    "Query": ("id", "node", "repository"),
    "Mutation": (
        "addPullRequestReviewThreadReply",
        "resolveReviewThread",
        "unresolveReviewThread",
    ),
    "Node": ("id",),
    "Actor": ("avatarUrl", "login", "resourcePath", "url"),
    "User": ("avatarUrl", "databaseId", "id", "login", "name", "resourcePath", "url"),
    "Bot": ("avatarUrl", "databaseId", "id", "login", "resourcePath", "url"),
    "Repository": ("databaseId", "id", "name", "nameWithOwner", "pullRequest", "url"),
    "PullRequest": (
        "baseRefOid",
        "databaseId",
        "headRefOid",
        "id",
        "number",
        "reviewThreads",
        "title",
        "url",
    ),
    "PullRequestReviewThreadConnection": ("edges", "nodes", "pageInfo", "totalCount"),
    "PullRequestReviewThreadEdge": ("cursor", "node"),
    "PullRequestReviewThread": (
        "comments",
        "diffSide",
        "id",
        "isCollapsed",
        "isOutdated",
        "isResolved",
        "line",
        "originalLine",
        "originalStartLine",
        "path",
        "pullRequest",
        "resolvedBy",
        "startDiffSide",
        "startLine",
        "subjectType",
        "viewerCanReply",
        "viewerCanResolve",
        "viewerCanUnresolve",
    ),
    "PullRequestReviewCommentConnection": ("edges", "nodes", "pageInfo", "totalCount"),
    "PullRequestReviewCommentEdge": ("cursor", "node"),
    "PullRequestReviewComment": (
        "author",
        "body",
        "createdAt",
        "databaseId",
        "diffHunk",
        "fullDatabaseId",
        "id",
        "lastEditedAt",
        "line",
        "originalLine",
        "originalStartLine",
        "outdated",
        "path",
        "pullRequest",
        "reactionGroups",
        "replyTo",
        "startLine",
        "subjectType",
        "updatedAt",
        "url",
        "viewerDidAuthor",
    ),
    "ReactionGroup": ("content", "createdAt", "reactors", "users", "viewerHasReacted"),
    "ReactorConnection": ("edges", "nodes", "pageInfo", "totalCount"),
    "ReactorEdge": ("cursor", "node", "reactedAt"),
    "ReactingUserConnection": ("edges", "nodes", "pageInfo", "totalCount"),
    "ReactingUserEdge": ("cursor", "node", "reactedAt"),
    "PageInfo": ("endCursor", "hasNextPage", "hasPreviousPage", "startCursor"),
    "ResolveReviewThreadPayload": ("clientMutationId", "thread"),
    "UnresolveReviewThreadPayload": ("clientMutationId", "thread"),
    "AddPullRequestReviewThreadReplyPayload": ("clientMutationId", "comment"),
}
UNIONS = ("Reactor",)  # kept with the members that are in the subset


def _named(node: TypeNode) -> str:
    while isinstance(node, (NonNullTypeNode, ListTypeNode)):
        node = node.type
    assert isinstance(node, NamedTypeNode)
    return node.name.value


def _field_types(field: FieldDefinitionNode) -> Iterable[str]:
    yield _named(field.type)
    for argument in field.arguments or ():
        yield _named(argument.type)


def subset(document: DocumentNode) -> DocumentNode:
    """The definitions of `document` the fake needs, trimmed to `SELECTION`."""
    by_name: dict[str, DefinitionNode] = {}
    for definition in document.definitions:
        name = getattr(definition, "name", None)
        if name is not None:
            by_name[name.value] = definition
    kept: dict[str, DefinitionNode] = {}
    wanted = list(SELECTION) + list(UNIONS)
    while wanted:
        name = wanted.pop()
        if name in kept or name in BUILT_IN:
            continue
        definition = by_name.get(name)
        if definition is None:
            raise SystemExit(f"{name}: not in the schema")
        if isinstance(definition, (ObjectTypeDefinitionNode, InterfaceTypeDefinitionNode)):
            if name not in SELECTION:
                raise SystemExit(f"{name}: needed by a kept field; add it to SELECTION")
            fields = {f.name.value: f for f in definition.fields or ()}
            missing = [f for f in SELECTION[name] if f not in fields]
            if missing:
                raise SystemExit(f"{name}: no field {', '.join(missing)} in the schema")
            chosen = tuple(fields[f] for f in SELECTION[name])
            kept[name] = definition.__class__(**{**_attrs(definition), "fields": chosen})
            for field in chosen:
                wanted.extend(_field_types(field))
        elif isinstance(definition, InputObjectTypeDefinitionNode):
            kept[name] = definition
            wanted.extend(_named(f.type) for f in definition.fields or ())
        elif isinstance(definition, (EnumTypeDefinitionNode, ScalarTypeDefinitionNode)):
            kept[name] = definition
        elif isinstance(definition, UnionTypeDefinitionNode):
            kept[name] = definition  # members outside SELECTION are dropped below
    for name, definition in list(kept.items()):
        if isinstance(definition, (ObjectTypeDefinitionNode, InterfaceTypeDefinitionNode)):
            interfaces = tuple(i for i in definition.interfaces or () if i.name.value in kept)
            kept[name] = definition.__class__(**{**_attrs(definition), "interfaces": interfaces})
        elif isinstance(definition, UnionTypeDefinitionNode):
            members = tuple(m for m in definition.types or () if m.name.value in kept)
            kept[name] = definition.__class__(**{**_attrs(definition), "types": members})
    directives = [d for d in document.definitions if isinstance(d, DirectiveDefinitionNode)]
    ordered = [kept[name] for name in sorted(kept)]
    return DocumentNode(definitions=tuple(directives + ordered))


def _attrs(node: DefinitionNode) -> dict[str, object]:
    return {key: getattr(node, key) for key in node.keys if key != "loc"}


def render(document: DocumentNode, commit: str = "") -> str:
    origin = f"{SOURCE} at {commit}" if commit else SOURCE
    header = (
        f"# A subset of GitHub's published GraphQL schema ({origin}), for the fake GitHub.\n"
        "# Generated by `python -m tests.support.github_schema`; do not edit by hand.\n\n"
    )
    text = header + print_ast(document) + "\n"
    errors = validate_schema(build_ast_schema(parse(text)))
    if errors:  # a subset that is not a schema by itself
        raise SystemExit("\n".join(error.message for error in errors))
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or len(args) > 3:
        print(
            "usage: python -m tests.support.github_schema SCHEMA.graphql "
            "[OUT.graphql] [COMMIT]",
            file=sys.stderr,
        )
        return 2
    source = Path(args[0])
    out = Path(args[1]) if len(args) > 1 else SUBSET_FILE
    commit = args[2] if len(args) > 2 else ""
    text = render(subset(parse(source.read_text(encoding="utf-8"))), commit)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({len(text)} characters)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
