"""One operator turn: take a batch, pay for it, hand its outputs on.

A turn takes up to ``batch_size`` queued tuples and costs ``batch_overhead_s + n × cost``
(jittered), plus the hidden share and a dispatch, in wall time at the current speed. Its
outputs are whole tuples (selectivity by error diffusion); a query's last operator
records their response times (completion − arrival, spread evenly over a run of
arrivals), and every child queues them, through its class's admission where a lower
class's shedding point reads a higher class's segment.

This is the simulator's hot path: :func:`operator_turns` binds the run's arrays once and
returns the turn as a closure, whose names are local reads.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from spark_runner.control.run import HIST_BINS, HIST_BINS_PER_DECADE, HIST_MIN_EXP
from spark_runner.scenario.models import Engine
from spark_runner.sim.admission import Admission
from spark_runner.sim.topology import Topology

Turn = Callable[[int, int, float, float], tuple[float, float, float]]
"""``turn(node, class, now, speed)`` → (done, elapsed wall time, measured busy time)."""


def operator_turns(
    topo: Topology, admission: Admission, engine: Engine, rng: random.Random
) -> Turn:
    """The turn of a run (see the module docstring)."""
    work, counters = admission.work, admission.counters
    queues, qn, kq, carry = work.queues, work.qn, work.kq, work.carry
    p_busy, p_cls_busy, p_in, p_out = (
        counters.busy,
        counters.class_busy,
        counters.n_in,
        counters.n_out,
    )
    cost, sel, sink = topo.cost, topo.sel, topo.sink
    batch, ovh, dispatch = engine.batch_size, engine.batch_overhead_s, engine.dispatch_overhead_s
    hidden = 1.0 + engine.hidden_overhead_fraction
    jitter = engine.cost_jitter
    jitter_mu = -0.5 * jitter * jitter
    visible = engine.background_cost_visible
    gauss, exp, log10 = rng.gauss, math.exp, math.log10
    p_cnt, p_rt_sum, p_rt_max = counters.outputs, counters.rt_sum, counters.rt_max
    viol_sum, viol_max = admission.accounts.viol_sum, admission.accounts.viol_max
    p_viol = counters.viol_sum
    hist = [t.histogram for t in admission.accounts.totals]
    targets = topo.targets
    forward = _forwarder(topo, admission, engine.run_span_s)

    def turn(i: int, k: int, t: float, speed: float) -> tuple[float, float, float]:
        have = qn[i]
        n = batch if have > batch else have
        # take the n oldest: runs of a join's queue come from two inputs, so the extremes
        # of their arrivals are tracked
        q = queues[i]
        need: float = n
        head = q[0]
        first = last_t = head[1]
        while True:
            c = head[0]
            if head[1] < first:  # noqa: PLR1730 - hot loop, no call
                first = head[1]
            if c <= need:
                q.popleft()
                need -= c
                if head[2] > last_t:  # noqa: PLR1730 - hot loop, no call
                    last_t = head[2]
                if not need:
                    break
                head = q[0]
            else:
                split = head[1] + (head[2] - head[1]) * (need / c)
                head[0] = c - need
                head[1] = split
                if split > last_t:  # noqa: PLR1730 - hot loop, no call
                    last_t = split
                break
        qn[i] = have - n
        kq[k] -= n
        work_s = ovh + n * cost[i]
        if jitter:
            work_s *= exp(gauss(jitter_mu, jitter))
        elapsed = (work_s * hidden + dispatch) / speed
        done = t + elapsed
        measured = elapsed if visible else work_s
        p_busy[i] += measured
        p_cls_busy[k] += measured
        p_in[i] += n
        acc_out = carry[i] + n * sel[i]
        out = int(acc_out)
        carry[i] = acc_out - out
        if out:
            p_out[i] += out
            sk = sink[i]
            if sk >= 0:  # a query's outputs: response times, violations, histogram
                hi = done - first
                lo = done - last_t
                mean = 0.5 * (hi + lo)
                p_cnt[sk] += out
                p_rt_sum[sk] += out * mean
                if hi > p_rt_max[sk]:  # noqa: PLR1730 - hot loop, no call
                    p_rt_max[sk] = hi
                target = targets[sk]
                if hi > target:
                    if lo >= target:
                        late = out * (mean - target)
                    else:
                        late = out * (hi - target) ** 2 / (2 * (hi - lo))
                    viol_sum[sk] += late
                    p_viol[sk] += late
                    if hi - target > viol_max[sk]:  # noqa: PLR1730 - hot loop, no call
                        viol_max[sk] = hi - target
                b = int(HIST_BINS_PER_DECADE * (log10(mean) - HIST_MIN_EXP)) if mean > 1e-6 else 0
                hist[sk][b if b < HIST_BINS else HIST_BINS - 1] += out
            forward(i, out, first, last_t, done)
        return done, elapsed, measured

    return turn


def _forwarder(
    topo: Topology, admission: Admission, span: float
) -> Callable[[int, int, float, float, float], None]:
    """``forward(node, outputs, first, last, done)``: a turn's outputs into its children's
    queues; where a lower class sheds on the edge, through its admission, the tuples
    already too old for it shed stale first."""
    work, counters = admission.work, admission.counters
    queues, qn, kq = work.queues, work.qn, work.kq
    p_arrived, p_point, p_shed, p_stale = (
        counters.arrived,
        counters.point,
        counters.shed,
        counters.stale,
    )
    children, owner, dout_items = topo.children, topo.owner, topo.dout_items
    lost_out = admission.accounts.lost_out
    stale, admit_rate = admission.stale, admission.admit_rate
    admit, defer = admission.admit, admission.defer

    def forward(i: int, out: int, first: float, last_t: float, done: float) -> None:
        for j, sk2 in children[i]:
            run_first = first
            if sk2 >= 0:
                p_arrived[sk2] += out
                p_point[j] += out
                fresh = out
                rule = stale[sk2]
                if rule is not None and first < done - rule.after_s:
                    # stale first where a higher class's segment hands over tuples
                    # already too old for this class
                    run_first = done - rule.after_s
                    old = (
                        out
                        if last_t <= run_first
                        else int(out * (run_first - first) / (last_t - first))
                    )
                    if old:
                        fresh -= old
                        p_shed[sk2] += old
                        p_stale[sk2] += old
                        for kk, f in dout_items[j]:
                            lost_out[kk] += old * f
                if not fresh:
                    continue
                kept = admit(j, fresh, done) if admit_rate[j] >= 0.0 else fresh
                if fresh > kept:
                    defer(j, sk2, fresh - kept, run_first, last_t)
                if not kept:
                    continue
            else:
                kept = out
            qj = queues[j]
            if qj:
                tail = qj[-1]
                if last_t - tail[1] <= span and run_first >= tail[1]:
                    tail[0] += kept
                    if last_t > tail[2]:  # noqa: PLR1730 - hot loop, no call
                        tail[2] = last_t
                    qn[j] += kept
                    kq[owner[j]] += kept
                    continue
            qj.append([kept, run_first, last_t])
            qn[j] += kept
            kq[owner[j]] += kept

    return forward
