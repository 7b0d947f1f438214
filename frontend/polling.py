"""Server polls that never lose their own answers.

Dash drops a callback's answer when the same callback is asked again before that answer
arrives. A server callback fed straight by an ``Interval`` therefore shows nothing at all
once its answers take longer than the interval (a long poll, a large first window, or a
busy machine where a plain read takes over a second). A gated poll puts a store between
the two: a tick of the interval becomes a request (``<name>-tick`` goes up) only when the
previous request has been answered, which the server callback says by copying the tick
it served into ``<name>-answered``. A request unanswered for ``STALL_MS`` (a server
error) stops holding the gate, so one failure does not end the poll.

The server callback takes ``Input(tick_id(name), "data")`` and returns the tick it got
under ``Output(answered_id(name), "data")`` (``*gate(name)`` between its outputs and its
inputs declares both) on every path, including when nothing else
changed (``dash.no_update`` for its other outputs, never ``PreventUpdate``). Its other
inputs are best ``State``: Dash also holds back and drops the answers of a callback one of
whose inputs another callback is still computing, which starves the poll when that other
callback is slow too.
"""

from __future__ import annotations

from dash import Input, Output, State, clientside_callback, dcc
from dash.development.base_component import Component

STALL_MS = 10_000  # a request unanswered this long (a server error) no longer holds ticks


def tick_id(name: str) -> str:
    return f"{name}-tick"


def answered_id(name: str) -> str:
    return f"{name}-answered"


def interval_id(name: str) -> str:
    return f"{name}-interval"


def gate(name: str) -> tuple[Output, Input]:
    """A server callback's side of poll ``name``: the answered tick it returns (its last
    output) and the tick it serves (its first input)."""
    return Output(answered_id(name), "data"), Input(tick_id(name), "data")


def components(name: str, interval_ms: int) -> list[Component]:
    """The interval and the two stores of one gated poll, for a page's layout."""
    return [
        dcc.Store(id=tick_id(name), data=0),
        dcc.Store(id=answered_id(name), data=0),
        dcc.Interval(id=interval_id(name), interval=interval_ms),
    ]


_GATE = """
function(n, tick, answered) {
    const started = (window.headroomPolls = window.headroomPolls || {});
    const now = Date.now();
    const waiting = (tick || 0) !== (answered || 0);
    if (waiting && now - (started["NAME"] || 0) < STALL_MS) {
        return window.dash_clientside.no_update;
    }
    started["NAME"] = now;
    return (tick || 0) + 1;
}
"""


def register(name: str) -> None:
    """The clientside gate of poll ``name``: a tick asks the server only when the
    previous request was answered (or has stalled ``STALL_MS``)."""
    clientside_callback(
        _GATE.replace("NAME", name).replace("STALL_MS", str(STALL_MS)),
        Output(tick_id(name), "data"),
        Input(interval_id(name), "n_intervals"),
        State(tick_id(name), "data"),
        State(answered_id(name), "data"),
        prevent_initial_call=True,
    )
