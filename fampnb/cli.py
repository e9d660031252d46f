"""``python -m fampnb seed | doctor FILE... [--json] | probe [--json]``.

This module only dispatches: each command's work lives in its own module (``seed.main``,
``report.doctor_main``, ``probe.main``), imported when the command runs.  Usage errors print one
line on stderr and exit 2, never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

USAGE = "usage: python -m fampnb {seed | doctor FILE... [--json] | probe [--json]} [--lang en|zh]"

#: command -> (module, function taking the remaining argv and returning an exit code)
COMMANDS: dict[str, tuple[str, str]] = {
    "seed": ("fampnb.seed", "main"),
    "doctor": ("fampnb.report", "doctor_main"),
    "probe": ("fampnb.probe", "main"),
}

HELP = f"""{USAGE}

  seed      print the source article's two experiments, reproduced exactly
  doctor    read training logs (.log, .txt, .gz) and say what kind of NaN it is, and which
            switch to turn first; --json prints one JSON object per file
  probe     check the fp16/bf16/fp8 models on this machine's hardware (torch; GPU if present)

  --lang en|zh  language of the texts (default: $FAMPNB_LANG, else en); --json keys stay English
"""


def _take_language(args: list[str]) -> tuple[list[str], str | None]:
    """``args`` without ``--lang X`` / ``--lang=X`` (anywhere), and that language (checked;
    ``ValueError`` names a wrong one), or None when not given."""
    from .i18n import parse_language

    rest, lang, i = [], None, 0
    while i < len(args):
        a = args[i]
        if a == "--lang" or a.startswith("--lang="):
            value = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            lang = parse_language(value)
            i += 1 if "=" in a else 2
            continue
        rest.append(a)
        i += 1
    return rest, lang


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        args, lang = _take_language(args)
    except ValueError as exc:
        print(f"fampnb: --lang: {exc}", file=sys.stderr)
        return 2
    if lang is None:
        return _dispatch(args)
    from .i18n import language

    with language(lang):
        return _dispatch(args)


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help", "help"):
        print(HELP, end="")
        return 0 if args else 2
    cmd, rest = args[0], args[1:]
    if cmd not in COMMANDS:
        print(f"fampnb: unknown command {cmd!r}; {USAGE}", file=sys.stderr)
        return 2
    if cmd == "seed" and rest:
        print(f"fampnb seed: takes no arguments, got {' '.join(rest)!r}", file=sys.stderr)
        return 2
    module, func = COMMANDS[cmd]
    run: Callable[..., int] = getattr(importlib.import_module(module), func)
    try:
        return int(run() if cmd == "seed" else run(rest) or 0)
    except KeyboardInterrupt:
        print("fampnb: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
