"""The doctor's answer (``Diagnosis``): built by ``fampnb.diagnose.diagnose``, read by the report,
the plots and the widgets; constructible with keyword arguments of its fields (every field but
``verdict`` and ``reason`` has a default)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fampnb.logs import Event, jsonable

__all__ = ["Diagnosis", "VERDICTS", "PRECISIONS"]

VERDICTS = ("healthy", "overflow", "data", "no-scaler", "unknown")
PRECISIONS = ("fp16", "bf16", "fp32")


@dataclass
class Diagnosis:
    """The doctor's answer for one log.

    ``verdict`` is one of ``VERDICTS``; ``reason`` one sentence; ``evidence`` the events (with line
    numbers) that decided it; ``first_nan_step``/``first_nan_line`` the first non-finite loss (or
    grad norm) record, ``None`` if none; ``backoffs`` the number of backoff records; ``min_scale``
    / ``final_scale`` the smallest and last loss scale seen (``None`` if the log shows none), with
    ``min_scale_log2`` / ``final_scale_log2`` their base-2 logarithms where the log prints the
    scale as one (a scale below the float range reads 0.0 but keeps its size there);
    ``advice`` ordered, first switch first; ``caveats`` where the chain can mislead.  For plots:
    ``trajectory`` ``(step, line_no, scale)``, ``losses`` ``(step, loss)`` (thinned to at most a
    few thousand points), ``backoff_marks`` ``(step, line_no, scale_after)`` and ``nan_marks``
    ``(step, line_no)``.  ``check`` names the check of the chain that decided
    (``fampnb.diagnose._checks.CHECKS``).
    """

    verdict: str
    reason: str
    evidence: list[Event] = field(default_factory=list)
    first_nan_step: int | None = None
    first_nan_line: int | None = None
    backoffs: int = 0
    min_scale: float | None = None
    final_scale: float | None = None
    min_scale_log2: float | None = None
    final_scale_log2: float | None = None
    framework: str = "unknown"
    advice: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    certainty: str = "likely"
    precision: str | None = None
    hysteresis: int = 0
    growths: int = 0
    skips: int = 0
    events_read: int = 0
    trajectory: list[tuple[int, int, float]] = field(default_factory=list)
    losses: list[tuple[int, float]] = field(default_factory=list)
    backoff_marks: list[tuple[int, int, float]] = field(default_factory=list)
    nan_marks: list[tuple[int, int]] = field(default_factory=list)
    check: str = ""

    @property
    def first_switch(self) -> str:
        """The first item of ``advice`` (the switch to turn first)."""
        return self.advice[0] if self.advice else ""

    def to_dict(self) -> dict[str, object]:
        """JSON-safe: NaN/inf as the strings ``"nan" "inf" "-inf"``; events as dicts."""
        out: dict[str, object] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "evidence":
                value = [e.to_dict() for e in value]
            elif isinstance(value, list):
                value = [[jsonable(x) for x in v] if isinstance(v, tuple) else jsonable(v)
                         for v in value]
            else:
                value = jsonable(value)
            out[name] = value
        out["first_switch"] = self.first_switch
        return out
