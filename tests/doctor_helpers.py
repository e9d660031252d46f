"""Helpers the doctor's rule tests share (not a test module: pytest collects ``test_*.py`` only)."""

from __future__ import annotations

import io

from fampnb import logs
from fampnb.diagnose import Diagnosis, diagnose


def diagnose_both(lines: list[str]) -> Diagnosis:
    """The diagnosis of ``lines`` by the full reader, checked against the fast reader's."""
    d = diagnose(logs.parse(lines))
    fast = diagnose(logs.scan(io.BytesIO("\n".join(lines).encode() + b"\n")))
    assert fast.to_dict() == d.to_dict()
    return d
