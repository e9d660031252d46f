"""The log reader (notebook 05): a pasted or uploaded training log -> verdict, advice, evidence, plot.

``read_log(data)`` is the pure part: text or bytes (gzip recognised by its magic bytes) -> the
``fampnb.logs`` events and the ``fampnb.diagnose`` diagnosis, or a clear message when there is
nothing to read (empty, binary, too large).  Nothing in a log is ever evaluated: the reader only
matches regular expressions and converts matched digits with ``float()``.

``make_log_reader()`` wires a ``Textarea`` (paste), a ``FileUpload`` and a sample picker to it and
to the timeline plot (``fampnb.plots.draw_timeline``).
"""

from __future__ import annotations

import gzip
import html
import io
import re
from dataclasses import dataclass, field
from typing import Any

from ..i18n import t

__all__ = ["MAX_BYTES", "LogReading", "read_log", "diagnosis_html", "make_log_reader"]

#: the largest upload / paste the widget reads (bytes, after gzip decompression)
MAX_BYTES = 50 * 1024 * 1024


@dataclass
class LogReading:
    """What ``read_log`` found: ``message`` is non-empty when there was nothing to diagnose."""

    lines: list[str] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    diagnosis: Any = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.diagnosis is not None and not self.message


#: characters a text log does not hold: undecodable bytes and control characters other than
#: tab, newline, carriage return, form feed and escape (colour codes)
_NOT_TEXT = re.compile("[\ufffd\x01-\x08\x0b\x0e-\x1a\x1c-\x1f]")


def _looks_binary(raw: bytes) -> bool:
    head = raw[:65536]
    if b"\x00" in head:
        return True
    text = head.decode("utf-8", errors="replace")
    if not text:
        return False
    return len(_NOT_TEXT.findall(text)) / len(text) > 0.05


def read_log(data: str | bytes | bytearray | memoryview | None,
             precision: str | None = None) -> LogReading:
    """Read a pasted/uploaded log.  Empty input, binary data (NUL bytes or > 5 % non-text
    characters), a broken gzip or more than ``MAX_BYTES`` give a ``LogReading`` whose ``message``
    says so (no exception).  ``precision`` ("fp16"/"bf16"/"fp32"), when the reader knows it, is
    passed to ``diagnose`` if it accepts it."""
    if data is None:
        return LogReading(message=t("widget.log.msg.none"))
    raw = data.encode("utf-8", errors="replace") if isinstance(data, str) else bytes(data)
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
                raw = fh.read(MAX_BYTES + 1)
        except (OSError, EOFError) as exc:
            return LogReading(message=t("widget.log.msg.gzip", error=exc))
    if len(raw) > MAX_BYTES:
        return LogReading(message=t("widget.log.msg.too_big", mib=MAX_BYTES // 2**20))
    if not raw.strip():
        return LogReading(message=t("widget.log.msg.empty"))
    if _looks_binary(raw):
        return LogReading(message=t("widget.log.msg.binary"))
    from .. import diagnose as doctor
    from .. import logs

    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    events = list(logs.parse(lines))
    kw: dict[str, Any] = {}
    if precision:
        import inspect

        if "precision" in inspect.signature(doctor.diagnose).parameters:
            kw["precision"] = precision
    d = doctor.diagnose(events, **kw)
    reading = LogReading(lines=lines, events=events, diagnosis=d)
    if not events:
        reading.message = t("widget.log.msg.no_records")
    return reading


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    return list(x)


def diagnosis_html(d: Any, max_evidence: int = 8) -> dict[str, str]:
    """HTML snippets of a ``Diagnosis``: ``verdict``, ``advice``, ``evidence`` (escaped)."""
    from ..localize import localize

    d = localize(d)   # reason, advice, caveats in the current language
    colour = {"healthy": "#2e7d32", "overflow": "#c62828", "data": "#6a1b9a",
              "no-scaler": "#ef6c00", "unknown": "#555555"}.get(str(d.verdict), "#333")
    fw = getattr(d, "framework", None)
    verdict = (f"<div style='font-size:16px'>{t('widget.log.verdict')}<b style='color:{colour}'>"
               f"{html.escape(str(d.verdict))}</b>"
               + (f" <span style='color:#666'>({html.escape(str(fw))})</span>" if fw else "")
               + f"</div><div>{html.escape(str(getattr(d, 'reason', '')))}</div>")
    adv = _as_list(getattr(d, "advice", None))
    cav = _as_list(getattr(d, "caveats", None))
    advice = ""
    if adv:
        advice += f"<b>{t('widget.log.advice')}</b><ol>" + "".join(
            f"<li>{html.escape(str(a))}</li>" for a in adv) + "</ol>"
    if cav:
        advice += f"<b>{t('widget.log.caveats')}</b><ul>" + "".join(
            f"<li>{html.escape(str(c))}</li>" for c in cav) + "</ul>"
    ev = _as_list(getattr(d, "evidence", None))
    rows = []
    for e in ev[:max_evidence]:
        ln = getattr(e, "line_no", None)
        kind = getattr(e, "kind", "")
        text = str(getattr(e, "text", e))
        text = text if len(text) <= 150 else "..." + text[-140:]  # the record ends a tqdm-glued line
        rows.append(t("widget.log.line", n=f"{ln:>5}", kind=f"{kind:<10}", text=text)
                    if ln is not None else str(text))
    more = t("widget.log.more", n=len(ev) - max_evidence) if len(ev) > max_evidence else ""
    evidence = (f"<b>{t('widget.log.evidence')}</b><pre style='font-size:11px;"
                "white-space:pre-wrap;background:#f7f7f7;padding:4px'>"
                + html.escape("\n".join(rows) + more) + "</pre>") if rows else ""
    return {"verdict": verdict, "advice": advice, "evidence": evidence}


def _upload_bytes(value: Any) -> tuple[str, bytes] | None:
    """(name, content) of the first uploaded file (ipywidgets 8 tuple of dicts, or 7's dict)."""
    if not value:
        return None
    items = list(value.values()) if isinstance(value, dict) else list(value)
    first = items[0]
    name = first.get("name", "") or first.get("metadata", {}).get("name", "upload")
    content = first.get("content", b"")
    return str(name), bytes(content)


NAME = "logreader"


def make_log_reader(text: str = "", sample: str | None = None
                    ) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The log reader -> ``(ui, controls, artists)``.

    controls: ``paste`` (Textarea), ``upload`` (FileUpload), ``sample`` (Dropdown of the shipped
    real excerpts), ``precision`` (Dropdown: unknown/fp16/bf16/fp32), ``read`` (Button).
    artists: ``verdict_text``, ``advice_text``, ``evidence_text``, ``source_text`` (HTML),
    ``timeline`` (the artists of ``draw_timeline``), ``status``, ``figure``, ``reading`` (the
    last ``LogReading``).  The paste box is read when it loses focus or on ``read``.
    """
    import ipywidgets as w

    from .. import logs
    from ..plots.timeline import draw_timeline, update_timeline
    from .base import LiveFigure, guard, status_line, tag

    names = list(logs.sample_logs())
    c: dict[str, Any] = {
        "paste": w.Textarea(value="", placeholder=t("widget.log.placeholder"), continuous_update=False,
                            layout=w.Layout(width="98%", height="140px")),
        "upload": w.FileUpload(accept=".log,.txt,.out,.gz,text/plain", multiple=False,
                               description=t("widget.log.upload")),
        "sample": w.Dropdown(options=[(t("widget.log.choose"), "")] + [(n, n) for n in names],
                             value="", description=t("widget.log.sample"),
                             layout=w.Layout(width="440px")),
        "precision": w.Dropdown(options=[(t("widget.log.precision_unknown"), ""), ("fp16", "fp16"),
                                         ("bf16", "bf16"), ("fp32", "fp32")], value="",
                                layout=w.Layout(width="200px")),
        "read": w.Button(description=t("widget.log.read"), button_style="primary"),
    }
    for key, ctl in c.items():
        tag(ctl, f"{NAME}-{key}")
    verdict_text = tag(w.HTML(), f"{NAME}-verdict-text")
    advice_text = tag(w.HTML(), f"{NAME}-advice-text")
    evidence_text = tag(w.HTML(), f"{NAME}-evidence-text")
    source_text = tag(w.HTML(), f"{NAME}-source-text")
    status = status_line(NAME)

    live = LiveFigure(figsize=(8.0, 3.0))
    timeline = draw_timeline(live.ax, None)
    artists: dict[str, Any] = {"verdict_text": verdict_text, "advice_text": advice_text,
                               "evidence_text": evidence_text, "source_text": source_text,
                               "timeline": timeline, "status": status, "figure": live,
                               "reading": None}

    def show(data: Any, source: str, new_frame: bool = True) -> None:
        """Read ``data`` and show it; ``new_frame``: a new log (lay the figure out at once), not
        the same log read with another precision hint."""
        r = read_log(data, c["precision"].value or None)
        artists["reading"], last[0] = r, (data, source)
        source_text.value = html.escape(source)
        if r.message and r.diagnosis is None:
            verdict_text.value = (f"<span style='color:#b00020'>&#9888; {html.escape(r.message)}"
                                  "</span>")
            advice_text.value = evidence_text.value = ""
            update_timeline(timeline, None)
            live.refresh(new_frame)
            return
        parts = diagnosis_html(r.diagnosis)
        note = (f"<div style='color:#b00020'>&#9888; {html.escape(r.message)}</div>"
                if r.message else "")
        verdict_text.value = note + parts["verdict"]
        advice_text.value = parts["advice"]
        evidence_text.value = parts["evidence"]
        update_timeline(timeline, r.diagnosis)
        live.refresh(new_frame)

    last: list[Any] = [None]

    def on_precision(_: Any = None) -> None:
        if last[0] is not None:
            show(*last[0], new_frame=False)

    def on_paste(_: Any = None) -> None:
        show(c["paste"].value, t("widget.log.src.pasted", n=len(c["paste"].value.splitlines())))

    def on_upload(change: Any) -> None:
        got = _upload_bytes(c["upload"].value)
        if got is None:
            return
        name, content = got
        show(content, t("widget.log.src.uploaded", name=name, n=len(content)))

    def on_sample(change: Any) -> None:
        name = c["sample"].value
        if not name:
            return
        c["paste"].unobserve(cb_paste, names="value")
        try:
            c["paste"].value = "\n".join(logs.read_sample(name))
        finally:
            c["paste"].observe(cb_paste, names="value")
        show(c["paste"].value, t("widget.log.src.sample", name=name))

    cb_paste, cb_upload, cb_sample = (guard(status, on_paste), guard(status, on_upload),
                                      guard(status, on_sample))
    c["paste"].observe(cb_paste, names="value")
    c["upload"].observe(cb_upload, names="value")
    c["sample"].observe(cb_sample, names="value")
    c["precision"].observe(guard(status, on_precision), names="value")
    c["read"].on_click(lambda _b: cb_paste())
    if sample:
        c["sample"].value = sample
    elif text:
        c["paste"].value = text
    else:
        verdict_text.value = t("widget.log.start")
        live.refresh()
    ui = tag(w.VBox([c["paste"], w.HBox([c["read"], c["upload"], c["precision"]]), c["sample"],
                     status, source_text, verdict_text, live.view, advice_text, evidence_text]),
             NAME)
    return ui, c, artists
