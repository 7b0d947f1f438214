"""What the request bodies of every domain share."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict


def request_config(*examples: dict[str, Any]) -> ConfigDict:
    """A request body's model config: a field it does not declare is refused (422, so a
    misspelt field is not silently ignored), and the API's docs show ``examples``."""
    return ConfigDict(extra="forbid", json_schema_extra={"examples": list(examples)})
