"""Live configuration: applying a new version to the running control plane (no Spark).

A new version is applied as the difference to the one in force, through the core's own
live-update calls — ``DilosController.update`` (policy, CRC, redistribution on/off),
``replace_manager`` (another manager kind, or parameters removed) and ``update_class``
(priority, delay target, thresholds, reserve, lending cap, catching up at start, manager
parameters) — each validating before it changes anything. In ``common`` mode the
per-class managers do not exist: only ``recommend_only`` applies (the change is still
acknowledged, and the log says what was ignored).
"""

from __future__ import annotations

from typing import Any

from spark_runner.contract.control import JOB_FIELDS, LiveConfig
from spark_runner.control.plane import CommonControl, ControlPlane, PerClassControl
from spark_runner.core.class_settings import MANAGER_SETTINGS, SETTING_NAMES
from spark_runner.core.errors import ParameterError

DILOS_FIELDS = tuple(k for k in JOB_FIELDS if k != "recommend_only")
"""The job settings ``DilosController.update`` takes."""
SPEC_FIELDS = tuple(n for n in SETTING_NAMES if n not in MANAGER_SETTINGS)
"""The class settings ``update_class`` takes (the manager's are replaced or pushed apart)."""


def apply_live_config(control: ControlPlane, old: LiveConfig, new: LiveConfig) -> list[str]:
    """Apply ``new`` where it differs from ``old``; returns what changed (for the log).

    Raises ``ParameterError`` (nothing applied) when ``new`` breaks a rule or names a
    class the run does not have.
    """
    new.validate_rules()
    unknown = sorted(set(new.classes) - set(old.classes))
    if unknown:
        raise ParameterError("classes", unknown, f"not classes of this run: {sorted(old.classes)}")
    changes: list[str] = []
    if new.recommend_only != old.recommend_only:
        changes.append(f"recommend_only={new.recommend_only}")
    if isinstance(control, CommonControl):
        ignored = [k for k in DILOS_FIELDS if getattr(new, k) != getattr(old, k)]
        ignored += [n for n, c in new.classes.items() if c != old.classes[n]]
        if ignored:
            changes.append(f"ignored in common mode: {', '.join(ignored)}")
        return changes
    assert isinstance(control, PerClassControl)
    ctl = control.controller
    job = {k: getattr(new, k) for k in DILOS_FIELDS if getattr(new, k) != getattr(old, k)}
    # validate everything first: the controller must not be left half-changed
    ctl_params = dict(job)
    if job:
        from spark_runner.core.params import build_params

        build_params(type(ctl.params), ctl_params, base=ctl.params)
    for name, c in new.classes.items():
        c.spec(name)
    if job:
        ctl.update(**job)
        changes.extend(f"{k}={v}" for k, v in job.items())
    for name, c in new.classes.items():
        o = old.classes[name]
        if c == o:
            continue
        if c.manager != o.manager or set(o.manager_params) - set(c.manager_params):
            ctl.replace_manager(name, c.manager, dict(c.manager_params))
            changes.append(f"{name}.manager={c.manager}")
            params: dict[str, Any] = {}
        else:
            params = {k: v for k, v in c.manager_params.items() if o.manager_params.get(k) != v}
        spec = {k: getattr(c, k) for k in SPEC_FIELDS if getattr(c, k) != getattr(o, k)}
        if spec or params:
            ctl.update_class(name, **spec, **params)
            changes.extend(f"{name}.{k}={v}" for k, v in {**spec, **params}.items())
    return changes
