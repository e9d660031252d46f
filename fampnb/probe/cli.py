"""``python -m fampnb probe [--json]``: run the probes, print the report (internal to ``fampnb.probe``)."""

from __future__ import annotations

import json
import sys

from .amp import amp_decay
from .casts import cast_checks
from .device import device_report, jsonable, report_lines

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """``python -m fampnb probe [--json]``: exit 0 (also without torch), 2 on usage errors."""
    args = list(sys.argv[1:] if argv is None else argv)
    bad = [a for a in args if a != "--json"]
    if bad:
        print(f"fampnb probe: unknown argument {bad[0]!r}; usage: python -m fampnb probe [--json]",
              file=sys.stderr)
        return 2
    device, casts, amp = device_report(), cast_checks(), amp_decay()
    if "--json" in args:
        print(json.dumps(jsonable({"device": device, "cast_checks": casts, "amp_decay": amp})))
    else:
        print("\n".join(report_lines(device, casts, amp)))
    return 0
