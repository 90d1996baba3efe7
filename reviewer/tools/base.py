"""How a tool is declared: one pydantic model gives the schema, the validation and the docs.

A tool is a subclass of `Tool` with a `name`, a docstring (the description the model reads),
one field per parameter (with aliases weaker models use), and a `run` method. The registry in
`reviewer.tools` turns the class into the OpenAI `tools` entry and runs it safely.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from reviewer.workspace import Workspace

# Aliases seen from weaker models, accepted so one odd spelling does not cost a turn.
PATH_ALIASES = ("path", "file_path", "filepath", "filename", "file")
START_ALIASES = ("startLine", "start_line", "start", "line_start", "from_line")
END_ALIASES = ("endLine", "end_line", "end", "line_end", "to_line")


def param(description: str, *aliases: str, default: Any = ..., **constraints: Any) -> Any:
    """A tool parameter; the first alias must be the field name (what the model is shown)."""
    alias = AliasChoices(*aliases) if aliases else None
    return Field(default, description=description, validation_alias=alias, **constraints)


class Tool(BaseModel):
    """Base class of the tools; see the module docstring."""

    # defer_build: a tool's validator is built the first time it is used, so a process that
    # runs one tool (`reviewer tool ...`) builds one, not seven.
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)

    name: ClassVar[str]

    def run(self, workspace: Workspace) -> str:
        raise NotImplementedError

    @classmethod
    def description(cls) -> str:
        return " ".join((cls.__doc__ or "").split())

    @classmethod
    def accepted_keys(cls) -> set[str]:
        keys: set[str] = set()
        for field_name, info in cls.model_fields.items():
            keys.add(field_name)
            if isinstance(info.validation_alias, AliasChoices):
                keys.update(str(choice) for choice in info.validation_alias.choices)
        return keys

    @classmethod
    def parameters_schema(cls) -> dict[str, Any]:
        """The JSON schema of the arguments, trimmed of what only confuses a model."""
        schema = cls.model_json_schema()
        properties = {}
        for key, prop in schema.get("properties", {}).items():
            prop = {k: v for k, v in prop.items() if k != "title"}
            options = prop.pop("anyOf", None)
            if options:  # Optional[X] -> X, not required
                prop.update(next(o for o in options if o.get("type") != "null"))
            if prop.get("default", 0) is None:
                del prop["default"]
            properties[key] = prop
        return {
            "type": "object",
            "properties": properties,
            "required": schema.get("required", []),
        }

    @classmethod
    def openai_schema(cls) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": cls.name,
                "description": cls.description(),
                "parameters": cls.parameters_schema(),
            },
        }

    @classmethod
    def signature(cls) -> str:
        return schema_signature(cls.name, cls.parameters_schema())


def schema_signature(name: str, parameters: dict[str, Any]) -> str:
    """`name(path: string, count?: integer)` from a JSON schema of an object: `?` marks a
    parameter that may be left out."""
    required = set(parameters.get("required", ()))
    parts = [
        f"{key}{'' if key in required else '?'}: {prop.get('type', 'any')}"
        for key, prop in parameters.get("properties", {}).items()
    ]
    return f"{name}({', '.join(parts)})"
