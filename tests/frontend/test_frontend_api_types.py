"""frontend/api_types.py is what scripts/api_types.py writes from the API's OpenAPI schema
today, so the dashboard's types cannot drift from the API's bodies; and the script maps
the schema's request and response forms, nullability and enums as it says."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from scripts import api_types


def test_the_checked_in_types_are_generated_from_the_apis_schema_as_it_is():
    expected = api_types.render(api_types.openapi_schema())
    actual = api_types.TARGET.read_text()
    diff = "".join(
        list(
            difflib.unified_diff(
                actual.splitlines(keepends=True),
                expected.splitlines(keepends=True),
                "frontend/api_types.py (checked in)",
                "frontend/api_types.py (from the API's schema now)",
            )
        )[:60]
    )
    assert actual == expected, (
        "frontend/api_types.py differs from the API's OpenAPI schema; regenerate it with\n"
        f"    {api_types.COMMAND}\nthen fix what mypy reports in frontend.\n{diff}"
    )


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


SMALL_API: dict[str, Any] = {
    "paths": {
        "/things": {
            "post": {
                "requestBody": {"content": _json(_ref("ThingCreate"))},
                "responses": {
                    "201": {"content": _json(_ref("ThingRead"))},
                    "422": {"content": _json(_ref("Problem"))},
                },
            }
        }
    },
    "components": {
        "schemas": {
            "Colour": {"type": "string", "enum": ["red", "blue"]},
            "Part": {
                "type": "object",
                "description": "A part, sent and read back.",
                "properties": {
                    "name": {"type": "string"},
                    "weight": {"type": "number", "default": 1.0},
                },
                "required": ["name"],
            },
            "ThingCreate": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 20},
                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "size": {"type": "string", "enum": ["s", "m"], "default": "s"},
                    "parts": {"type": "array", "items": _ref("Part")},
                },
                "required": ["name", "parts"],
            },
            "ThingRead": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "description": "Given by the API."},
                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                    "colour": _ref("Colour"),
                    "parts": {"type": "array", "items": _ref("Part")},
                    "extra": {"type": "object", "additionalProperties": True},
                },
                "required": ["id", "colour", "parts", "extra"],
            },
            "Problem": {"type": "object", "properties": {"detail": {"type": "string"}}},
        }
    },
}


def test_responses_have_every_key_and_requests_leave_out_what_the_api_defaults():
    text = api_types.render(SMALL_API)
    assert 'Colour = Literal["red", "blue"]' in text
    assert 'ThingCreateSize = Literal["s", "m"]' in text  # an enum the schema leaves unnamed
    assert (
        "class ThingCreate(TypedDict):\n"
        "    name: str\n"
        "    note: NotRequired[str | None]\n"
        "    size: NotRequired[ThingCreateSize]\n"
        "    parts: list[PartInput]\n"
    ) in text
    assert (
        "class ThingRead(TypedDict):\n"
        "    # Given by the API.\n"
        "    id: int\n"
        "    note: str | None\n"
        "    colour: Colour\n"
        "    parts: list[Part]\n"
        "    extra: dict[str, Any]\n"
    ) in text
    # Used both ways: read back with every key; sent without what has a default.
    assert "class Part(TypedDict):\n" in text and "    weight: float\n" in text
    assert "class PartInput(TypedDict):\n" in text and "    weight: NotRequired[float]\n" in text
    assert "Problem" not in text  # an error body: no successful answer or request has it
    compile(text, "api_types.py", "exec")


def test_a_schema_construct_it_does_not_know_stops_the_script():
    strange = {**SMALL_API["components"]["schemas"]["Problem"]}
    strange["properties"] = {"detail": {"type": "array", "prefixItems": [{"type": "string"}]}}
    api = {
        "paths": {"/p": {"get": {"responses": {"200": {"content": _json(_ref("Problem"))}}}}},
        "components": {"schemas": {"Problem": strange}},
    }
    with pytest.raises(ValueError, match="prefixItems"):
        api_types.render(api)


def _object(*keys: str) -> dict[str, Any]:
    return {"type": "object", "properties": {key: {"type": "integer"} for key in keys}}


def test_a_body_that_begins_with_all_of_anothers_fields_is_written_as_its_subclass():
    """``Wide`` begins with all three of ``Base``'s fields: it declares only its own.
    ``Short`` shares two, fewer than ``BASE_MIN_FIELDS``, and ``Other`` the same names in
    another order: both stand alone."""
    bodies = {
        "Base": _object("a", "b", "c"),
        "Other": _object("b", "a", "c", "d"),
        "Short": _object("x", "y"),
        "Shorter": _object("x", "y", "z"),
        "Wide": _object("a", "b", "c", "d"),
    }
    api = {
        "paths": {
            f"/{name}": {"get": {"responses": {"200": {"content": _json(_ref(name))}}}}
            for name in bodies
        },
        "components": {"schemas": bodies},
    }
    text = api_types.render(api)
    assert "class Wide(Base):\n    d: int\n" in text
    assert "class Other(TypedDict):\n" in text
    assert "class Shorter(TypedDict):\n" in text  # Short, two fields, is no base
    compile(text, "api_types.py", "exec")
