from __future__ import annotations

from typing import Any

from backend.repository import NamedRepository
from backend.streams.models import DeclaredStream
from spark_runner.scenario.compose import DECLARED_FIELDS


class StreamRepository(NamedRepository[DeclaredStream]):
    model = DeclaredStream
    noun = "stream"

    def declarations(self) -> dict[str, dict[str, Any]]:
        """Every declared stream by name, as a scenario's stream carries it."""
        return {
            s.name: {field: getattr(s, field) for field in DECLARED_FIELDS} for s in self.list_all()
        }
