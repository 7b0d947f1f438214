"""The live page's control-action log against the real API: what the job posted, newest
first, in the same words as the CLI, with each verdict once it is in."""

from __future__ import annotations

from typing import Any

from frontend.actions.action_log import SHOWN, load_actions, render_actions
from frontend.api import ApiClient
from tests.frontend.frontend_real_api import CREATED, RealApi
from tests.frontend.frontend_tree import text

AT = CREATED.timestamp() + 60


def resize(**extra: Any) -> dict[str, Any]:
    return {
        "seq": 0,
        "at_s": AT,
        "kind": "scale_out",
        "usage": 1.31,
        "threshold": 0.95,
        "held_s": 10.0,
        "executors_before": 1,
        "executors_after": 3,
        "shed_before": 0.2,
        "shed_after": 0.05,
        **extra,
    }


SHED = {
    "seq": 1,
    "at_s": AT + 4,
    "kind": "shed_more",
    "class_name": "clicks",
    "usage": 1.4,
    "manager_state": "overloaded",
    "executors_before": 3,
    "executors_after": 3,
    "shed_before": 0.0,
    "shed_after": 0.3,
}
VERDICT = {
    "outcome": "improved",
    "periods": 5,
    "violation_before_s": 1.25,
    "violation_after_s": 0.0,
    "loss_before": 0.2,
    "loss_after": 0.01,
}


def test_the_log_shows_each_action_with_its_trigger_effect_and_verdict(
    api: ApiClient, real_api: RealApi
) -> None:
    real_api.add_class("fraud", 6.0, 1.5)
    real_api.add_class("clicks", 1.0, 3.0)
    job_id = int(real_api.add_job(["fraud", "clicks"], status="running")["id"])
    log, alert = load_actions(api, job_id)
    assert alert is None and "No control action yet" in text(render_actions(log))

    real_api.post_actions(job_id, [resize(), SHED])
    real_api.post_actions(job_id, [resize(verdict=VERDICT)])  # judged some periods later
    log, alert = load_actions(api, job_id)
    assert alert is None and log is not None
    shown = text(render_actions(log))
    newest, oldest = shown.index("shed more clicks"), shown.index("scale out")
    assert newest < oldest  # newest first
    assert "overloaded, u 1.40" in shown and "shed 0% -> 30%" in shown and "pending" in shown
    assert "u 1.31 past τ 0.95 for 10 s" in shown
    assert "executors 1 -> 3, shed 20% -> 5%" in shown
    assert "improved" in shown and "violation 1.25 -> 0.00 s, loss 20% -> 1%" in shown
    assert [r.query for r in real_api.requests_to("GET", f"/jobs/{job_id}/actions")][-1] == {
        "limit": [str(SHOWN)]
    }


def test_a_job_that_is_gone_shows_no_log_and_no_alarm(api: ApiClient) -> None:
    assert load_actions(api, 999_999) == (None, None)
    assert load_actions(api, None) == (None, None)
