"""TensorBoard event files (``events.out.tfevents.*``), an optional extra: ``pip install tensorboard``.

``is_event_file(head)`` recognises the format by content, whatever the file is called: a TFRecord
whose first record is the ``brain.Event:N`` file-version event.  ``records(path)`` reads the
scalars with the tensorboard package's own event reader and yields, per step, ``(step, {tag:
value text})``: the tags go through the key vocabulary like any other record's names
(``train/loss``, ``loss_scale``, ``grad_norm``).  Without the package, ``MissingExtra`` says how to
install it (one line; the CLI prints it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

__all__ = ["is_event_file", "records", "MissingExtra", "HINT"]

HINT = "TensorBoard event file: reading it needs the optional extra, pip install tensorboard"


class MissingExtra(OSError):
    """The tensorboard package is not installed (``str()`` is the one-line hint)."""


def is_event_file(head: bytes) -> bool:
    """Do a file's first bytes start a TFRecord whose first event names the event-file version?"""
    return len(head) >= 16 and b"brain.Event:" in head[12:64]


def _value(v: object) -> float | None:
    """The scalar of a summary value: ``simple_value`` (TF1/tensorboardX) or a 0-d tensor (TF2)."""
    kind = v.WhichOneof("value") if hasattr(v, "WhichOneof") else None  # type: ignore[attr-defined]
    if kind == "simple_value":
        return float(v.simple_value)  # type: ignore[attr-defined]
    if kind == "tensor":
        t = v.tensor  # type: ignore[attr-defined]
        if t.float_val:
            return float(t.float_val[0])
        if t.double_val:
            return float(t.double_val[0])
        if t.tensor_content and t.dtype == 1 and len(t.tensor_content) == 4:   # DT_FLOAT
            import struct

            return float(struct.unpack("<f", t.tensor_content)[0])
    return None


def records(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(step, {tag: value text})`` for each step of the event file's scalars, in file order
    (the tags of one step written together are one record)."""
    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    except ImportError as exc:
        raise MissingExtra(HINT) from exc
    step: int | None = None
    fields: dict[str, str] = {}
    for event in EventFileLoader(os.fspath(path)).Load():
        if not event.HasField("summary"):
            continue
        if step is not None and event.step != step and fields:
            yield step, fields
            fields = {}
        step = int(event.step)
        for v in event.summary.value:
            x = _value(v)
            if x is not None:
                fields[v.tag.lower()] = repr(x)
    if step is not None and fields:
        yield step, fields
