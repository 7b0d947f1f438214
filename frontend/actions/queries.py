"""Classes page, continuous queries: list, edit, save and delete a class's queries.

The spec text is what is saved: it is parsed here (YAML) and sent as written, and the
API judges it with the scenario format's rules. Its 422 answer names the path of each
broken rule in the spec; ``frontend.query_errors`` places each message under the spec
and next to the form control that shows that path. The form is re-filled from the spec
that was submitted, so the rows the messages point at are the rows of that spec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import httpx
from dash import html
from dash.development.base_component import Component

from frontend.api import ApiClient, ApiError, ContinuousQuery, detail_text, error_text
from frontend.components import (
    data_table,
    deleted,
    edit_delete_buttons,
    error_alert,
    format_timestamp,
    loaded_table,
    no_rows_yet,
    success_alert,
)
from frontend.query_errors import QueryFeedback, error_items, place
from frontend.query_spec import (
    QueryForm,
    SpecError,
    blank_form,
    form_yaml,
    parse_spec,
    query_form,
    spec_yaml,
)

DELETE_BUTTON_TYPE = "query-delete"
EDIT_BUTTON_TYPE = "query-edit"
NEW_TITLE = "New query"


class Editing(TypedDict):
    """The stored query the editor shows (absent: a new query)."""

    class_id: int
    query_id: int
    name: str


@dataclass(frozen=True)
class EditorView:
    """What the editor shows after an action: the form, the spec text, which query it
    edits, placed messages and an alert. ``saved`` is the query the API stored, if any;
    ``keep_form``: leave the form as it is (the spec could not be shown in it)."""

    form: QueryForm
    spec_text: str
    editing: Editing | None = None
    feedback: QueryFeedback = field(default_factory=QueryFeedback)
    alert: Component | None = None
    saved: ContinuousQuery | None = None
    keep_form: bool = False

    @property
    def title(self) -> str:
        return editor_title(self.editing)


def editor_title(editing: Editing | None) -> str:
    if editing is None:
        return NEW_TITLE
    return f"Editing query {editing['name']} (#{editing['query_id']})"


def as_editing(value: Any) -> Editing | None:
    """The editor's store value, if it names a stored query."""
    if not isinstance(value, Mapping):
        return None
    class_id, query_id, name = value.get("class_id"), value.get("query_id"), value.get("name")
    if isinstance(class_id, int) and isinstance(query_id, int) and isinstance(name, str):
        return {"class_id": class_id, "query_id": query_id, "name": name}
    return None


def new_query() -> EditorView:
    form = blank_form()
    return EditorView(form=form, spec_text=form_yaml(form))


def with_form(form: QueryForm, editing: Editing | None) -> EditorView:
    """The editor showing ``form`` (after a row was added or removed)."""
    return EditorView(form=form, spec_text=form_yaml(form), editing=editing)


def apply_spec(text: str | None, current: QueryForm, editing: Editing | None) -> EditorView:
    """Fill the form from the spec text; a spec the form cannot show leaves the form as
    it is and says why under the spec."""
    try:
        form = query_form(parse_spec(text))
    except SpecError as err:
        return EditorView(
            form=current,
            spec_text=text or "",
            editing=editing,
            feedback=QueryFeedback(spec=(str(err),)),
            keep_form=True,
        )
    return EditorView(form=form, spec_text=form_yaml(form), editing=editing)


def load_for_edit(api: ApiClient, class_id: int, query_id: int) -> EditorView | Component:
    """The editor showing stored query ``query_id``, or an error alert."""
    try:
        query = api.get_query(class_id, query_id)
    except ApiError as err:
        return error_alert(f"Could not read query #{query_id}: {error_text(err)}")
    form = query_form(stored_spec(query))
    editing: Editing = {"class_id": class_id, "query_id": query_id, "name": query["name"]}
    return EditorView(form=form, spec_text=form_yaml(form), editing=editing)


def stored_spec(query: ContinuousQuery) -> dict[str, Any]:
    """The spec of a stored query (what ``POST`` took), without id and timestamps."""
    return {
        "name": query["name"],
        "source": query["source"],
        "shared": bool(query.get("shared", False)),
        "operators": list(query["operators"]),
    }


def save_query(
    api: ApiClient, class_id: int | None, editing: Editing | None, text: str | None
) -> EditorView:
    """Send the spec text to the API: a new query of ``class_id``, or a replacement of
    ``editing`` when it is a query of that class. A spec that is not a YAML mapping is
    refused here, without a request; everything else is the API's to judge."""
    current = editing if editing is not None and editing["class_id"] == class_id else None
    try:
        spec = parse_spec(text)
        form = query_form(spec)
    except SpecError as err:
        return EditorView(
            form=blank_form(),
            spec_text=text or "",
            editing=editing,
            feedback=QueryFeedback(spec=(str(err),)),
            keep_form=True,
        )
    if class_id is None:
        return EditorView(
            form=form,
            spec_text=text or "",
            editing=editing,
            alert=error_alert("Choose the class the query belongs to."),
            keep_form=True,
        )
    try:
        if current is None:
            saved = api.create_query(class_id, spec)
        else:
            saved = api.replace_query(class_id, current["query_id"], spec)
    except ApiError as err:
        return _refused(err, form, text or "", editing)
    saved_form = query_form(stored_spec(saved))
    verb = "Created" if current is None else "Saved"
    return EditorView(
        form=saved_form,
        spec_text=form_yaml(saved_form),
        editing={"class_id": class_id, "query_id": saved["id"], "name": saved["name"]},
        alert=success_alert(f"{verb} query {saved['name']} (#{saved['id']})."),
        saved=saved,
    )


def _refused(err: ApiError, form: QueryForm, text: str, editing: Editing | None) -> EditorView:
    kinds = [row.kind for row in form.operators]
    if err.status_code == httpx.codes.UNPROCESSABLE_ENTITY:
        feedback = place(error_items(err.detail), kinds)
        return EditorView(form=form, spec_text=text, editing=editing, feedback=feedback)
    if err.status_code == httpx.codes.CONFLICT:
        feedback = place([("name", detail_text(err.detail))], kinds)
        return EditorView(form=form, spec_text=text, editing=editing, feedback=feedback)
    return EditorView(
        form=form,
        spec_text=text,
        editing=editing,
        alert=error_alert(f"Could not save the query: {error_text(err)}"),
    )


def delete_query(api: ApiClient, class_id: int, query_id: int) -> Component:
    return deleted(f"query #{query_id}", lambda: api.delete_query(class_id, query_id))


# --- the class choice and the table ------------------------------------------------------


def class_choices(api: ApiClient) -> tuple[list[dict[str, str]], Component | None]:
    """Dropdown options of the classes (value: the id as text), or an alert."""
    try:
        classes = api.list_classes()
    except ApiError as err:
        return [], error_alert(f"Classes could not be loaded: {err.message}")
    return [{"label": c["name"], "value": str(c["id"])} for c in classes], None


def chosen_class(options: Sequence[Mapping[str, str]], current: str | None) -> str | None:
    """Keep the chosen class while it exists; else the first one (``None``: no class)."""
    values = [option["value"] for option in options]
    if current in values:
        return current
    return values[0] if values else None


def as_class_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def load_queries_table(
    api: ApiClient, class_id: int | None, *, can_change: bool
) -> tuple[Component, Component | None]:
    """``(table, alert)``: the class's queries, or a placeholder and an error alert."""
    if class_id is None:
        return html.P("No class yet: queries belong to a class.", className="text-muted"), None
    return loaded_table(
        lambda: api.list_queries(class_id),
        lambda queries: render_queries_table(queries, can_change=can_change),
        "Queries",
    )


def operators_summary(operators: Sequence[Any]) -> str:
    """``filter → window_aggregate``: the operators' kinds in order."""
    kinds = [str(op.get("kind", "?")) if isinstance(op, Mapping) else "?" for op in operators]
    return " → ".join(kinds) or "—"


def render_queries_table(queries: Sequence[ContinuousQuery], *, can_change: bool) -> Component:
    if not queries:
        return no_rows_yet(
            "No continuous queries in this class yet (a job runs one generated filter for it).",
            can_change,
            "Write one below.",
            "An operator can add them.",
        )
    heads = ("ID", "Name", "Source", "Shared", "Operators", "Spec", "Updated (UTC)", "")
    rows = [_query_row(query, can_change=can_change) for query in queries]
    return data_table(heads, rows, "queries-table-grid")


def _query_row(query: ContinuousQuery, *, can_change: bool) -> Component:
    buttons = (
        edit_delete_buttons(EDIT_BUTTON_TYPE, DELETE_BUTTON_TYPE, query["id"])
        if can_change
        else None
    )
    return html.Tr(
        [
            html.Td(str(query["id"])),
            html.Td(query["name"]),
            html.Td(query["source"]),
            html.Td("yes" if query.get("shared") else "no"),
            html.Td(operators_summary(query["operators"])),
            html.Td(
                html.Details(
                    [
                        html.Summary("YAML"),
                        html.Pre(spec_yaml(stored_spec(query)), className="small mb-0"),
                    ],
                    id=f"query-spec-{query['id']}",
                )
            ),
            html.Td(format_timestamp(query["updated_at"])),
            html.Td(buttons, className="text-nowrap"),
        ],
        id=f"query-row-{query['id']}",
    )
