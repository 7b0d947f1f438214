"""Write ``frontend/api_types.py``: a ``TypedDict`` for every JSON body of the API, made
from the OpenAPI schema of ``backend.main``'s app.

Run ``.venv/bin/python scripts/api_types.py`` after changing a body of the API (a
pydantic model of ``backend``): the dashboard's types follow it, and mypy then shows
every place in ``frontend`` the change reaches. ``tests/frontend/test_frontend_api_types.py``
renders the module in memory and fails while the checked-in file differs.

What the schema says becomes Python like this:

* a body the API answers with (reached from a 2xx response) has every key: the API
  writes every field, ``null`` where the field is nullable (``X | None``);
* a body the API takes (reached only from a request body) marks ``NotRequired`` what
  the API defaults when it is left out;
* a body used both ways is written in its response form under its own name and, when
  the request form differs, again as ``<Name>Input`` for the bodies that send it;
* an enum becomes a ``Literal`` alias: under its own name when the schema names it,
  else ``<Body><Field>`` (``JobCreate.source`` → ``JobCreateSource``);
* a body whose fields begin with all the fields of one written before it (at least
  ``BASE_MIN_FIELDS``, the same names, types and comments, in order) is written as its
  subclass and declares only its own fields: the schema flattens the API's pydantic
  subclasses (``QueryClassUpdate(ClassChange)``), this puts them back.

Building the app reads no database: ``app.openapi()`` only walks its routes.
"""

from __future__ import annotations

import json
import keyword
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "frontend" / "api_types.py"
COMMAND = ".venv/bin/python scripts/api_types.py"
WIDTH = 100
REF_PREFIX = "#/components/schemas/"
BASE_MIN_FIELDS = 3
"""Fewer shared fields than this make no base class (an ``id`` and a ``name`` are no kind)."""
SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
# Keys that only constrain a value (lengths, bounds, patterns) or document it: they say
# nothing about its Python type.
IGNORED = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "maxProperties",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "discriminator",
    }
)
# Keys that say what a value is: each has its case in ``_type``.
STRUCTURAL = frozenset(
    {"$ref", "anyOf", "oneOf", "allOf", "enum", "const", "type", "items", "additionalProperties"}
)
HEADER = f'''"""The JSON bodies of the headroom API as ``TypedDict``s. GENERATED: do not edit.

Written from the OpenAPI schema of ``backend.main``'s app by

    {COMMAND}

(that script says how the schema maps to these types); run it again after changing a
body of the API. ``frontend.api`` re-exports them under the dashboard's names.
"""

from __future__ import annotations
'''


def openapi_schema() -> dict[str, Any]:
    """The API's OpenAPI document, from an app built on an in-memory SQLite URL (no
    connection is opened: the schema comes from the routes alone)."""
    from backend.main import create_app
    from backend.settings import Settings

    with tempfile.TemporaryDirectory() as data_dir:
        settings = Settings(data_dir=Path(data_dir), database_url="sqlite://")
        app = create_app(settings, dispatcher=_NoDispatcher())
        try:
            return app.openapi()
        finally:
            app.state.engine.dispose()


class _NoDispatcher:
    """Stands in for the Celery dispatcher, which building the schema never calls."""

    def launch(self, job_id: int) -> None:
        raise NotImplementedError

    def stop(self, job_id: int) -> None:
        raise NotImplementedError


@dataclass
class _Module:
    """What the rendering collects: Literal aliases by name, bodies in order, imports."""

    schemas: Mapping[str, Any]
    inputs: frozenset[str]
    outputs: frozenset[str]
    aliases: dict[str, str] = field(default_factory=dict)
    imports: set[str] = field(default_factory=set)
    written: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The fields of each ``TypedDict`` written so far (a field's comment and line), by
    class name."""

    def base(self, fields: Sequence[str]) -> str | None:
        """The ``TypedDict`` written so far with the most fields, at least
        ``BASE_MIN_FIELDS``, whose fields ``fields`` begins with: a body that extends
        another (``QueryClassUpdate`` is ``ClassChange`` and a name) is written as its
        subclass, each field once."""
        bases = [
            (len(own), name)
            for name, own in self.written.items()
            if len(own) >= BASE_MIN_FIELDS and tuple(fields[: len(own)]) == own
        ]
        return max(bases)[1] if bases else None

    def ref_name(self, ref: str, *, request: bool) -> str:
        name = ref.removeprefix(REF_PREFIX)
        return f"{name}Input" if request and name in self.split else name

    @property
    def split(self) -> frozenset[str]:
        """Bodies used both ways whose request form differs (some key is optional)."""
        return frozenset(
            name
            for name in self.inputs & self.outputs
            if set(self.schemas[name].get("properties", {}))
            != set(self.schemas[name].get("required", []))
        )


def render(schema: Mapping[str, Any]) -> str:
    """The module's text for an OpenAPI document, formatted as ``ruff format`` does."""
    schemas: Mapping[str, Any] = schema["components"]["schemas"]
    inputs, outputs = _directions(schema)
    module = _Module(schemas, inputs, outputs)
    bodies: list[str] = []
    for name in sorted(inputs | outputs):
        body = schemas[name]
        if "enum" in body:
            module.aliases[name] = _literal(body["enum"])
            module.imports.add("Literal")
            continue
        if name in outputs:
            bodies.append(_typed_dict(module, name, body, request=False))
        if name in inputs - outputs or name in module.split:
            suffix = "Input" if name in outputs else ""
            bodies.append(_typed_dict(module, name, body, request=True, suffix=suffix))
    imports = sorted(module.imports, key=str.lower)
    parts = [HEADER, f"from typing import {', '.join(imports)}\n" if imports else ""]
    parts.append("".join(f"{name} = {value}\n" for name, value in sorted(module.aliases.items())))
    parts += bodies
    return _formatted("\n\n".join(part.rstrip("\n") for part in parts if part) + "\n")


def _directions(schema: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """``(inputs, outputs)``: the named bodies reachable from a request body, and from a
    successful response."""
    inputs: set[str] = set()
    outputs: set[str] = set()
    for operations in schema["paths"].values():
        for operation in operations.values():
            request = operation.get("requestBody", {}).get("content", {})
            for content in request.values():
                inputs |= _reachable(schema, content.get("schema"))
            for status, response in operation.get("responses", {}).items():
                if status.startswith("2"):
                    for content in response.get("content", {}).values():
                        outputs |= _reachable(schema, content.get("schema"))
    return frozenset(inputs), frozenset(outputs)


def _reachable(schema: Mapping[str, Any], node: Any) -> set[str]:
    found: set[str] = set()
    pending = list(_refs(node))
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending += _refs(schema["components"]["schemas"][name])
    return found


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "$ref":
                yield str(value).removeprefix(REF_PREFIX)
            elif key not in ("examples", "default", "discriminator"):
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _typed_dict(
    module: _Module, name: str, body: Mapping[str, Any], *, request: bool, suffix: str = ""
) -> str:
    """One ``TypedDict`` for body ``name`` (its class named ``name + suffix``): the
    body's description as its docstring, a field's description as a comment above it."""
    if body.get("type") != "object":
        raise ValueError(f"{name}: a body that is not an object ({body.get('type')!r})")
    fields = _fields(module, name, body, request=request)
    base = module.base(fields)
    module.written[name + suffix] = tuple(fields)
    if base is None:
        module.imports.add("TypedDict")
    lines = [f"class {name}{suffix}({base or 'TypedDict'}):"]
    description = body.get("description")
    lines += _docstring(description) if description else []
    if body.get("additionalProperties") is True:
        lines += ["    # Besides these keys, the API may send others (the schema allows any).", ""]
    lines += fields[len(module.written[base]) if base else 0 :]
    if len(lines) == 1:
        lines.append("    pass")
    return "\n".join(lines) + "\n"


def _fields(module: _Module, name: str, body: Mapping[str, Any], *, request: bool) -> list[str]:
    """Each field of body ``name``: its description as a comment above its line."""
    required = set(body.get("required", []))
    fields = []
    for key, prop in body.get("properties", {}).items():
        if not key.isidentifier() or keyword.iskeyword(key):
            raise ValueError(f"{name}.{key}: not a name a TypedDict class can declare")
        python = _type(module, prop, request=request, owner=name, key=key)
        if request and key not in required:
            python = f"NotRequired[{python}]"
            module.imports.add("NotRequired")
        comment = _comment(prop["description"]) if prop.get("description") else []
        fields.append("\n".join([*comment, f"    {key}: {python}"]))
    return fields


def _type(module: _Module, node: Mapping[str, Any], *, request: bool, owner: str, key: str) -> str:
    """The Python type of one schema node (``owner.key`` names an enum it declares)."""
    unknown = set(node) - IGNORED - STRUCTURAL
    if unknown:
        raise ValueError(f"{owner}.{key}: schema keys this script does not know: {unknown}")

    def inner(child: Mapping[str, Any]) -> str:
        return _type(module, child, request=request, owner=owner, key=key)

    if "$ref" in node:
        return module.ref_name(node["$ref"], request=request)
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in node:
            if combinator == "allOf" and len(node[combinator]) != 1:
                raise ValueError(f"{owner}.{key}: allOf of several schemas")
            return _union(inner(child) for child in node[combinator])
    if "enum" in node:
        alias = owner + "".join(part.capitalize() for part in key.split("_"))
        value = _literal(node["enum"])
        if module.aliases.setdefault(alias, value) != value:
            raise ValueError(f"{alias}: two enums would take this name")
        module.imports.add("Literal")
        return alias
    if "const" in node:
        module.imports.add("Literal")
        return _literal([node["const"]])
    kind = node.get("type")
    if kind is None:
        module.imports.add("Any")
        return "Any"
    if kind == "array":
        return f"list[{inner(node['items']) if 'items' in node else _any(module)}]"
    if kind == "object":
        extra = node.get("additionalProperties", True)
        return f"dict[str, {inner(extra) if isinstance(extra, Mapping) else _any(module)}]"
    if kind in SCALARS:
        return SCALARS[kind]
    raise ValueError(f"{owner}.{key}: type {kind!r}")


def _any(module: _Module) -> str:
    module.imports.add("Any")
    return "Any"


def _union(members: Iterable[str]) -> str:
    """``A | B | None``: each member once, ``None`` last."""
    unique = list(dict.fromkeys(members))
    ordered = [m for m in unique if m != "None"] + (["None"] if "None" in unique else [])
    return " | ".join(ordered)


def _literal(values: Iterable[Any]) -> str:
    return f"Literal[{', '.join(json.dumps(v) for v in values)}]"


def _docstring(text: str) -> list[str]:
    paragraphs = _paragraphs(text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"'), 4)
    if len(paragraphs) == 1 and len(paragraphs[0]) == 1 and len(paragraphs[0][0]) <= 88:
        return [f'    """{paragraphs[0][0]}"""', ""]
    lines = [f'    """{paragraphs[0][0]}', *(f"    {line}" for line in paragraphs[0][1:])]
    for paragraph in paragraphs[1:]:
        lines += ["", *(f"    {line}" for line in paragraph)]
    return [*lines, '    """', ""]


def _comment(text: str) -> list[str]:
    return [f"    # {line}" for paragraph in _paragraphs(text, 6) for line in paragraph]


def _paragraphs(text: str, indent: int) -> list[list[str]]:
    """``text`` as paragraphs of lines that fit ``WIDTH`` after ``indent`` and quotes."""
    blocks = [block for block in re.split(r"\n\s*\n", text.strip()) if block.strip()]
    return [
        textwrap.wrap(" ".join(block.split()), WIDTH - indent - 3, break_on_hyphens=False)
        for block in blocks
    ]


def _formatted(source: str) -> str:
    """``source`` as ``ruff format`` writes it (with this repository's settings)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"ruff format refused the generated module: {done.stderr}")
    return done.stdout


def main() -> None:
    """Rewrite ``frontend/api_types.py`` from the API's schema."""
    text = render(openapi_schema())
    changed = not TARGET.exists() or TARGET.read_text() != text
    TARGET.write_text(text)
    sys.stdout.write(f"{TARGET.relative_to(ROOT)}: {'rewritten' if changed else 'up to date'}\n")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
