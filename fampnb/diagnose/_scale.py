"""The scale tracker: the loss scale's trajectory, its runs of backoffs, growths, hysteresis and
the floor (``ScaleTracker``); a run of consecutive backoffs is a ``Run``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fampnb.diagnose._limits import FLOOR, TARGET_ONLY, Thin, pow2
from fampnb.logs import Event

__all__ = ["Run", "ScaleTracker"]


@dataclass
class Run:
    """Consecutive backoffs (no growth and at most two finite loss records between them)."""

    first: Event
    last: Event
    start_scale: float | None
    end_scale: float | None
    loss_before: int
    n: int = 1
    levels: int = 1
    duplicates: int = 0
    loss_after: int = 0
    quiet_after: int = 0                # skip counters after it that show steps going through
    #                                     (DeepSpeed's ``step=N, skipped=K``: ``Accumulator``)
    growth_after: bool = False
    nan_after: bool = False
    events: list[Event] = field(default_factory=list)
    loss_ref: float | None = None       # the last finite loss / grad norm before the run
    gn_ref: float | None = None
    loss_next: float | None = None      # the first finite loss / grad norm after it
    gn_next: float | None = None
    start_log2: float | None = None     # base-2 logs of the scales, where the log prints them so
    end_log2: float | None = None


class ScaleTracker:
    """Backoff, hysteresis and growth records and printed scales (``observe``); loss records
    (``record``) count towards the open run.  Runs are capped at 200 (the middle ones dropped)."""

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.run: Run | None = None
        self.backoffs = self.hyst = self.growths = 0
        self.floor_hits = 0
        self.floor_attempts = 0           # overflow records with the scale already at the floor
        self.floor_first: Event | None = None
        self.floor_last: Event | None = None
        self.final_scale: float | None = None
        self.final_log2: float | None = None
        self.min_scale: float | None = None
        self.min_log2: float | None = None     # the printed log2 of min_scale, if any
        self.min_key = math.inf
        self.obs_scale: float | None = None
        self.obs_same = 0                 # observations in a row at ``obs_scale``
        self.obs_values: set[float] = set()
        self.first_obs: Event | None = None
        self.fairseq_avg = False
        self.traj, self.bmarks = Thin(), Thin(1024)

    def _set_scale(self, scale: float, ev: Event, log2: float | None = None) -> None:
        self.final_scale, self.final_log2 = scale, log2
        # (compared by log2 where the log prints one: scales below the float range all read 0.0)
        key = log2 if log2 is not None else math.log2(scale) if scale > 0 else -math.inf
        if self.min_scale is None or key < self.min_key:
            self.min_scale, self.min_log2, self.min_key = scale, log2, key
        self.traj.add((ev.step, ev.line_no, scale))

    def scaler(self, ev: Event, finite: int, loss_ref: float | None, gn_ref: float | None,
               synthetic: bool = False) -> bool:
        """A backoff, hysteresis or growth record (``finite``: finite loss records so far,
        ``loss_ref``/``gn_ref``: the last finite loss and grad norm).  True when it is a step
        skipped at the floor (``reducing to 1`` from 1), which counts as a skip."""
        after, before = ev.scale_after, ev.scale_before
        r0, known = self.run, self.final_scale
        grew = known is not None and (
            (after is not None and after >= known) if ev.rule in TARGET_ONLY
            else (before is not None and before > known))
        if ev.kind == "backoff" and r0 is not None and (r0.loss_after or r0.quiet_after) and grew:
            # a backoff that starts above the last known scale, training records in between: the
            # scale grew back meanwhile, silently (apex/fairseq print only the new, halved value:
            # "reducing to X" at or above the last scale means it had doubled at least once)
            r0.growth_after = True
            self.floor_hits = 0             # it left the floor: not "sitting there"
            self.close()
        prev_log2 = self.final_log2 if before is not None and before == known else None
        if before is not None and math.isfinite(before) and before != self.final_scale:
            self._set_scale(before, ev)        # the scale in force before this record
        if after is not None and math.isfinite(after):
            self._set_scale(after, ev, ev.scale_log2)
        if ev.kind == "growth":
            self.growths += 1
            self.floor_hits = self.floor_attempts = 0
            if self.run is not None:
                self.run.growth_after = True
                self.close()
            return False
        if after is not None and after <= FLOOR:
            self.floor_hits += 1
        if (not synthetic and ev.rule not in TARGET_ONLY and before is not None
                and before <= FLOOR and (self.floor_last is None or ev.step != self.floor_last.step
                                         or not ev.explicit)):
            # an overflow with the scale already at (or below) the floor: DeepSpeed's
            # ``Attempted loss scale: 1, reducing to 1`` (``0``: int() of a scale below 1)
            self.floor_attempts += 1
            self.floor_first = self.floor_first or ev
            self.floor_last = ev
            if ev.kind == "hysteresis":   # ``reducing to 1`` from 1: a step skipped at the
                return True               # floor, not a hysteresis credit spent
        if ev.kind == "hysteresis":
            self.hyst += 1
            return False
        self.backoffs += 1
        self.bmarks.add((ev.step, ev.line_no, after if after is not None else math.nan))
        r = self.run
        if r is not None and not r.growth_after and r.loss_after <= 2 and not (
                ev.explicit and r.last.explicit and ev.step - r.last.step > 50):
            r.n += 1
            prev = r.end_scale
            if after is not None and prev is not None and after < prev:
                r.levels += max(1, round(math.log2(prev / after))) if after > 0 else 1
            elif after is not None and prev is not None and (after > 0 or prev > 0):
                r.duplicates += 1
            r.last, r.end_scale, r.loss_after, r.end_log2 = ev, after, 0, ev.scale_log2
            if len(r.events) < 40:
                r.events.append(ev)
            return False
        self.close()
        start = before if before is not None else (after * 2 if after is not None else None)
        lg = ev.scale_log2
        self.run = Run(first=ev, last=ev, start_scale=start, end_scale=after,
                       loss_before=finite, events=[ev], loss_ref=loss_ref, gn_ref=gn_ref,
                       end_log2=lg,
                       start_log2=prev_log2 if prev_log2 is not None and (
                           lg is None or prev_log2 >= lg) else (lg + 1 if lg is not None else None))
        return False

    def close(self) -> None:
        """The open run ends."""
        if self.run is not None:
            if len(self.runs) >= 200:
                del self.runs[100]
            self.runs.append(self.run)
            self.run = None

    def observe(self, ev: Event, finite: int, loss_ref: float | None,
                gn_ref: float | None) -> None:
        """A printed scale on a record: a drop is a backoff, a rise a growth."""
        scale = ev.scale_after
        assert scale is not None
        if ev.framework == "fairseq" and not (pow2(scale) and (
                self.obs_scale is None or pow2(self.obs_scale))):
            self.fairseq_avg = True     # an interval average: plotted, not read as a backoff
            self.traj.add((ev.step, ev.line_no, scale))
            return
        self.obs_values.add(scale) if len(self.obs_values) < 64 else None
        self.first_obs = self.first_obs or ev
        prev = self.obs_scale
        self.obs_scale = scale
        self.obs_same = self.obs_same + 1 if prev == scale else 1
        if prev is not None and scale != prev and scale == self.final_scale:
            prev = scale    # (the scale a scaler message already set, printed now: no new change)
        if prev is not None and scale < prev:
            self.scaler(Event(ev.line_no, ev.step, "backoff", prev, scale, framework=ev.framework,
                              text=ev.text, rule="scale-drop", explicit=ev.explicit,
                              total=ev.total), finite, loss_ref, gn_ref, synthetic=True)
        elif prev is not None and scale > prev:
            self.scaler(Event(ev.line_no, ev.step, "growth", prev, scale, framework=ev.framework,
                              text=ev.text, rule="scale-rise", explicit=ev.explicit),
                        finite, loss_ref, gn_ref)
        else:
            self._set_scale(scale, ev, ev.scale_log2)

    def quiet(self) -> None:
        """A skip counter shows that steps went through since the open run, if any."""
        if self.run is not None:
            self.run.quiet_after += 1

    def record(self, bad: bool, loss: float | None, gn: float | None) -> None:
        """A loss record (``bad``: non-finite): after a run, it says what followed the run."""
        r = self.run
        if r is None:
            return
        if bad:
            r.nan_after = True
        elif loss is not None:
            if r.loss_after == 0:
                r.loss_next, r.gn_next = loss, gn
            r.loss_after += 1
