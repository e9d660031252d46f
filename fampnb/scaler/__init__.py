"""Loss-scaler policies of the real frameworks, simulated step by step: the face of the package.

``policies`` holds each framework's configuration and update rule (``TorchGradScaler``,
``DeepSpeedScaler``, ``MegatronScaler``, ``FairseqScaler``, ``ApexScaler``, ``KerasScaler``,
``SeedHalving``, ``StaticScaler``; ``POLICIES`` maps a policy's name to its class); ``loops`` the
fast per-policy step loops; ``trace`` ``simulate() -> Trace``; ``render`` the log lines a framework
prints (``Trace.log_lines``, ``STYLES``); ``banner`` the config lines it prints before
training (``start_up_lines``).  numpy only; no torch.  Other packages import from here
(``from fampnb.scaler import Trace``), never from the modules.
"""

from __future__ import annotations

from .banner import start_up_lines
from .policies import (
    POLICIES,
    ApexScaler,
    DeepSpeedScaler,
    FairseqScaler,
    KerasScaler,
    MegatronScaler,
    Policy,
    SeedHalving,
    StaticScaler,
    TorchGradScaler,
)
from .trace import EVENTS, STYLES, Row, Trace, halvings, overflows, simulate

__all__ = ["Policy", "TorchGradScaler", "DeepSpeedScaler", "MegatronScaler", "FairseqScaler",
           "ApexScaler", "KerasScaler", "SeedHalving", "StaticScaler", "POLICIES", "EVENTS",
           "STYLES", "Row", "Trace", "simulate", "overflows", "halvings", "start_up_lines"]
