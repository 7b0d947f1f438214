"""What every table's repository does alike: read a row by id (or 404), list them, add
and delete one. A domain's repository names its model and the noun of its 404 message,
and adds the reads of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy import inspect, select
from sqlalchemy.orm import Session

from backend.db import Base
from backend.errors import NotFound

RowT = TypeVar("RowT", bound=Base)


class Repository(Generic[RowT]):
    model: type[RowT]
    noun: str
    """What a row is called in ``<noun> <id> does not exist``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, row_id: int, *, for_update: bool = False) -> RowT | None:
        """The row, or None; ``for_update`` locks it (PostgreSQL) until the commit."""
        if for_update:
            stmt = select(self.model).where(self._column("id") == row_id).with_for_update()
            return self.session.scalars(stmt).first()
        return self.session.get(self.model, row_id)

    def require(self, row_id: int, *, for_update: bool = False) -> RowT:
        """The row, or ``NotFound`` (404) naming it."""
        row = self.get(row_id, for_update=for_update)
        if row is None:
            raise NotFound(f"{self.noun} {row_id} does not exist")
        return row

    def list_all(self) -> Sequence[RowT]:
        return self.session.scalars(select(self.model).order_by(self._column("id"))).all()

    def add(self, row: RowT) -> RowT:
        self.session.add(row)
        self.session.flush()
        return row

    def delete(self, row: RowT) -> None:
        self.session.delete(row)
        self.session.flush()

    def _column(self, name: str) -> Any:
        return inspect(self.model).columns[name]


class NamedRepository(Repository[RowT]):
    """The repository of a table whose rows have a unique ``name``."""

    def by_name(self, name: str) -> RowT | None:
        return self.session.scalars(select(self.model).where(self._column("name") == name)).first()
