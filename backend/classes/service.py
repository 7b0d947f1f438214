"""Query-class use cases. Services flush; the caller's unit of work commits.

The queries of a class and the live jobs running it are built on classes (they import
this domain, never the other way): what a deletion or a change must respect or reach
there comes in as ``ClassHooks`` (``backend.hooks``, handed to the routes by
``backend.main``)."""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy.orm import Session

from backend.classes.models import QueryClass
from backend.classes.repository import QueryClassRepository
from backend.classes.schemas import QueryClassCreate, QueryClassUpdate, control_of
from backend.errors import Conflict
from spark_runner.contract.control import ClassControl
from spark_runner.core.class_settings import SETTING_NAMES


class ClassHooks(Protocol):
    def check_class_delete(self, session: Session, query_class: QueryClass) -> None:
        """Refuse (409) a deletion that would take away what queries of other classes
        read (the class's queries go with it)."""

    def class_changed(
        self, session: Session, stored_name: str, changes: dict[str, Any], changed_by: str | None
    ) -> None:
        """A stored change of the class named ``stored_name``: its live fields reach
        every live job running it (a new, audited configuration version per job)."""


def create_class(session: Session, data: QueryClassCreate) -> QueryClass:
    repo = QueryClassRepository(session)
    if repo.by_name(data.name) is not None:
        raise Conflict(f"name={data.name!r} is taken: class names must be unique")
    return repo.add(QueryClass(**data.model_dump()))


def update_class(
    session: Session,
    class_id: int,
    data: QueryClassUpdate,
    hooks: ClassHooks,
    changed_by: str | None = None,
) -> QueryClass:
    """Change a class; its live fields also reach every live job running it."""
    repo = QueryClassRepository(session)
    query_class = repo.require(class_id)
    changes = data.model_dump(exclude_unset=True, exclude_none=True)
    merged = {field: changes.get(field, getattr(query_class, field)) for field in SETTING_NAMES}
    control_of(merged).spec(changes.get("name", query_class.name))
    new_name = changes.get("name")
    if new_name is not None and new_name != query_class.name:
        other = repo.by_name(new_name)
        if other is not None:
            raise Conflict(f"name={new_name!r} is taken: class names must be unique")
    stored_name = query_class.name
    for field, value in changes.items():
        setattr(query_class, field, value)
    session.flush()
    hooks.class_changed(session, stored_name, changes, changed_by)
    return query_class


def class_control(query_class: QueryClass) -> ClassControl:
    """The live-control view of a stored class."""
    return control_of({field: getattr(query_class, field) for field in SETTING_NAMES})


def delete_class(session: Session, class_id: int, hooks: ClassHooks) -> None:
    """Delete a class and its queries, unless ``hooks`` refuse it."""
    repo = QueryClassRepository(session)
    query_class = repo.require(class_id)
    hooks.check_class_delete(session, query_class)
    repo.delete(query_class)
