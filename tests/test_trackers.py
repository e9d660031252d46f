"""The doctor's small trackers (fampnb.diagnose._scale, _trackers), each on events of its own."""

from __future__ import annotations

import math

from fampnb.diagnose._accumulate import Accumulator
from fampnb.diagnose._limits import Thin, early
from fampnb.diagnose._scale import ScaleTracker
from fampnb.diagnose._trackers import GradTracker, LogTracker, NanTracker, PrecisionTracker, SkipTracker
from fampnb.logs import Event


def ev(line: int, kind: str, **kw) -> Event:
    return Event(line, kw.pop("step", line), kind, **kw)


# ---- scale ----------------------------------------------------------------------------------
def test_scale_tracker_groups_consecutive_backoffs_into_one_run_and_a_growth_closes_it():
    s = ScaleTracker()
    for i, (b, a) in enumerate([(65536.0, 32768.0), (32768.0, 16384.0), (16384.0, 8192.0)], 1):
        assert s.scaler(ev(i, "backoff", scale_before=b, scale_after=a), 0, None, None) is False
    assert s.run is not None and (s.run.n, s.run.levels, s.run.start_scale) == (3, 3, 65536.0)
    s.scaler(ev(4, "growth", scale_before=8192.0, scale_after=16384.0), 0, None, None)
    assert s.run is None and len(s.runs) == 1 and s.runs[0].growth_after
    assert (s.backoffs, s.growths, s.min_scale, s.final_scale) == (3, 1, 8192.0, 16384.0)


def test_scale_tracker_reads_printed_scales_as_drops_and_rises():
    s = ScaleTracker()
    for i, x in enumerate([1024.0, 1024.0, 512.0, 1024.0], 1):
        s.observe(ev(i, "loss", loss=1.0, scale_after=x), i, 1.0, None)
    assert (s.backoffs, s.growths, s.obs_values) == (1, 1, {512.0, 1024.0})
    assert s.runs[0].loss_before == 3 and s.runs[0].loss_ref == 1.0


def test_scale_tracker_counts_a_step_skipped_at_the_floor_as_a_skip_not_hysteresis():
    s = ScaleTracker()
    assert s.scaler(ev(1, "hysteresis", scale_before=1.0, scale_after=1.0), 0, None, None)
    assert (s.hyst, s.floor_attempts, s.floor_first is not None) == (0, 1, True)


def test_scale_tracker_record_says_what_followed_a_run():
    s = ScaleTracker()
    s.scaler(ev(1, "backoff", scale_before=8.0, scale_after=4.0), 0, None, None)
    s.record(False, 2.5, 1.0)
    s.record(True, math.nan, None)
    assert s.run is not None and (s.run.loss_after, s.run.loss_next, s.run.nan_after) == (1, 2.5, True)


# ---- NaN / loss records ---------------------------------------------------------------------
def test_nan_tracker_keeps_the_first_nan_and_whether_the_log_ends_on_one():
    n, log = NanTracker(), LogTracker()
    assert not n.record(ev(1, "loss", loss=3.0), False, log)
    assert n.record(ev(2, "nan", loss=math.nan), True, log)
    assert not n.record(ev(3, "nan", loss=math.nan), True, log)
    assert (n.first_nan.line_no, n.nans, n.finite, n.last_record_nan) == (2, 2, 1, True)
    assert n.first_nan_explicit_early     # the second record of the log, no step counter
    n.record(ev(4, "loss", loss=2.0), False, log)
    assert (n.finite_after_nan, n.last_record_nan, list(n.last_losses)) == (1, False, [3.0, 2.0])


def test_nan_tracker_a_first_nan_past_the_first_epoch_is_not_early():
    n = NanTracker()
    n.record(ev(1, "nan", loss=math.nan, epoch=3.0), True, LogTracker())
    assert not n.first_nan_explicit_early
    assert early(ev(1, "nan", loss=math.nan, epoch=1.0), None, 0)


def test_thin_keeps_a_bounded_series():
    t = Thin(cap=4)
    for i in range(1000):
        t.add((i,))
    assert len(t.points) < 8 and t.points[0] == (0,)


# ---- grads ----------------------------------------------------------------------------------
def test_grad_tracker_streak_of_nonfinite_grad_norms_with_finite_losses():
    g, log = GradTracker(), LogTracker()
    for i in range(1, 4):
        g.record(ev(i, "loss", loss=1.0, grad_norm=math.inf), False, False, i - 1, log)
    g.record(ev(4, "nan", loss=math.nan), True, True, 3, log)
    assert (g.gn_bad_finite_loss, len(g.streak_at_nan), g.first_bad_grad.line_no) == (3, 3, 1)
    assert g.trailing_gn_bad == 0


def test_grad_tracker_zero_loss_after_a_nonfinite_grad_norm_is_an_applied_update():
    g, log = GradTracker(), LogTracker()
    g.record(ev(1, "loss", loss=2.0, grad_norm=1.0), False, False, 0, log)
    g.record(ev(2, "loss", loss=1.5, grad_norm=math.nan), False, False, 1, log)
    g.record(ev(3, "loss", loss=0.0, grad_norm=math.nan), False, False, 2, log)
    assert g.applied is not None and g.applied.line_no == 3
    assert (g.applied_trained, g.applied_early, g.last_gn) == (True, False, 1.0)


# ---- skips ----------------------------------------------------------------------------------
def test_skip_tracker_counts_skips_by_rule_and_full_skip_intervals():
    s = SkipTracker()
    s.skip(ev(1, "skip", rule="lr-frozen"), 0.5)
    assert (s.count, s.after_floor, s.scaler_skip is not None) == (1, 1, True)
    for step in (100, 200, 300):
        s.counted_on_record(ev(step, "skip", step=step, explicit=True, count=step,
                               rule="ds-skipped-counter"))
    assert (s.full_skips, s.full_skips_late) == (2, 1)
    s.counted_on_record(ev(400, "skip", step=400, explicit=True, count=50,
                           rule="ds-skipped-counter"))
    assert s.full_skips == 0 and s.full_skip_ev is None


def test_skip_tracker_a_zero_counter_after_a_nan():
    s = SkipTracker()
    s.zero(after_nan=False)
    assert (s.counter_zero, s.zero_skips_after_nan) == (True, False)
    s.zero(after_nan=True)
    assert s.zero_skips_after_nan


# ---- precision, log -------------------------------------------------------------------------
def test_precision_tracker_stated_given_and_inferred():
    p = PrecisionTracker()
    assert p.close(None, None) is None
    skip = ev(1, "skip", rule="lr-frozen")
    assert p.close(None, skip) == "fp16" and p.ev is skip
    q = PrecisionTracker()
    q.feed(ev(1, "note", precision="bf16"))
    assert q.close(None, skip) == "bf16" and q.close("fp32", skip) == "fp32"


def test_log_tracker_roles_ranks_frameworks_and_steps():
    log = LogTracker()
    for e in (ev(1, "loss", loss=1.0, rank=0, framework="deepspeed"),
              ev(2, "nan", loss=math.nan, rank=1, step=40, explicit=True, framework="deepspeed"),
              ev(3, "backoff", scale_before=2.0, scale_after=1.0, framework="apex")):
        log.count(e)
        log.context(e, 0)
    assert log.roles == {"loss", "step", "loss scale"}
    assert log.rank_nan == {0: False, 1: True}
    assert log.fw == {"deepspeed": 2, "apex": 2} and (log.max_step, log.steps_seen) == (40, True)


def test_accumulator_routes_events_to_its_trackers():
    acc = Accumulator()
    for e in (ev(1, "note", rule="start"), ev(2, "loss", loss=1.0, scale_after=64.0),
              ev(3, "backoff", scale_before=64.0, scale_after=32.0),
              ev(4, "skip", rule="lr-frozen", grad_norm=math.inf),
              ev(5, "nan", loss=math.nan)):
        acc.feed(e)
    assert acc.close(None) == "fp16"
    assert (acc.log.n, acc.log.start_seen, acc.scale.backoffs, len(acc.scale.runs)) == (4, True, 1, 1)
    assert (acc.nan.finite, acc.nan.nans, acc.skip.count) == (1, 1, 1)
    assert acc.grad.first_bad_grad.line_no == 4 and acc.scale.runs[0].nan_after
