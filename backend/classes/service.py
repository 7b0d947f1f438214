"""Query-class use cases. Services flush; the caller's unit of work commits."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from backend.classes.models import QueryClass
from backend.classes.repository import QueryClassRepository
from backend.classes.schemas import QueryClassCreate, QueryClassUpdate, control_of
from backend.errors import Conflict, NotFound
from backend.queries.repository import QueryRepository
from backend.tuning import service as tuning
from spark_runner.contract.control import ClassControl
from spark_runner.core.class_settings import SETTING_NAMES


def list_classes(session: Session) -> Sequence[QueryClass]:
    return QueryClassRepository(session).list_all()


def get_class(session: Session, class_id: int) -> QueryClass:
    query_class = QueryClassRepository(session).get(class_id)
    if query_class is None:
        raise NotFound(f"query class {class_id} does not exist")
    return query_class


def create_class(session: Session, data: QueryClassCreate) -> QueryClass:
    repo = QueryClassRepository(session)
    if repo.by_name(data.name) is not None:
        raise Conflict(f"name={data.name!r} is taken: class names must be unique")
    return repo.add(QueryClass(**data.model_dump()))


def update_class(
    session: Session, class_id: int, data: QueryClassUpdate, changed_by: str | None = None
) -> QueryClass:
    """Change a class; its live fields also reach every live job running it (a new,
    audited configuration version per job)."""
    repo = QueryClassRepository(session)
    query_class = get_class(session, class_id)
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
    tuning.propagate_class_change(session, stored_name, changes, changed_by)
    return query_class


def class_control(query_class: QueryClass) -> ClassControl:
    """The live-control view of a stored class."""
    return control_of({field: getattr(query_class, field) for field in SETTING_NAMES})


def delete_class(session: Session, class_id: int) -> None:
    """Delete a class and its queries; refused (409) while queries of other classes read
    one of its shared queries, which would go with it."""
    repo = QueryClassRepository(session)
    query_class = get_class(session, class_id)
    queries = QueryRepository(session)
    read = sorted(
        f"{reader.name!r} of class {get_class(session, reader.class_id).name!r} reads "
        f"shared query {shared.name!r}"
        for shared in queries.for_classes([class_id])
        for reader in queries.output_readers(shared)
        if reader.class_id != class_id
    )
    if read:
        raise Conflict(
            f"class {query_class.name!r} owns shared queries that other classes read "
            f"(query {'; query '.join(read)}); delete or change those queries first"
        )
    repo.delete(query_class)
