"""The language of the package's texts: English (the default) or Chinese.

``t(key, **fields)`` looks ``key`` up in the message catalogue of the current language
(``fampnb/messages/en.py``, ``zh.py``: adding a text never touches logic) and fills its ``{fields}``.
The current language is, in order: the last ``set_language(...)`` (a zh notebook's set-up cell
calls it), else the ``FAMPNB_LANG`` environment variable (``zh``, ``zh_CN.UTF-8``, ``en`` ...),
else English.  ``language("zh")`` is a context manager for one block (tests).  Machine-readable
output (``--json`` keys, verdict codes, log lines) never changes with the language.

Plot labels are the view's business (``fampnb.plots.lang``): Chinese only where matplotlib has a
font with Chinese glyphs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import cache

__all__ = ["LANGUAGES", "get_language", "set_language", "language", "t", "messages", "parse_language"]

LANGUAGES: tuple[str, ...] = ("en", "zh")
DEFAULT = "en"
ENV = "FAMPNB_LANG"

#: what set_language() chose; None: follow FAMPNB_LANG, else English
_chosen: str | None = None

def parse_language(value: str) -> str:
    """``"zh"``, ``"zh_CN.UTF-8"``, ``"zh-Hans"``, ``"ZH"`` -> ``"zh"``; ``"en_US"`` -> ``"en"``;
    anything else raises ``ValueError`` naming the value and the choices."""
    code = value.strip().replace("-", "_").split(".")[0].split("_")[0].lower()
    if code not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, got {value!r}")
    return code


def get_language() -> str:
    """The current language: ``set_language``'s choice, else ``FAMPNB_LANG``, else ``"en"``.
    An unknown ``FAMPNB_LANG`` value means English (it is an environment setting, not an error)."""
    if _chosen is not None:
        return _chosen
    env = os.environ.get(ENV, "").strip()
    if env:
        try:
            return parse_language(env)
        except ValueError:
            return DEFAULT
    return DEFAULT


def set_language(lang: str | None) -> str:
    """Choose the language of the package's texts (``"en"`` or ``"zh"``); ``None`` goes back to
    ``FAMPNB_LANG`` / English.  Returns the language now in force."""
    global _chosen
    _chosen = None if lang is None else parse_language(lang)
    return get_language()


@contextlib.contextmanager
def language(lang: str | None) -> Iterator[str]:
    """``with language("zh"): ...``: the texts inside the block are Chinese; the previous choice
    comes back afterwards (also on an exception)."""
    global _chosen
    before = _chosen
    try:
        yield set_language(lang)
    finally:
        _chosen = before


@cache
def messages(lang: str) -> dict[str, str]:
    """The catalogue of ``lang`` (key -> text with ``{fields}``)."""
    import importlib

    return dict(importlib.import_module(f"fampnb.messages.{parse_language(lang)}").MESSAGES)


def t(key: str, /, lang: str | None = None, **fields: object) -> str:
    """The text of ``key`` in ``lang`` (default: the current language), ``{fields}`` filled in.
    A key missing from the catalogue is a programming error: ``KeyError`` (a test checks that
    both catalogues have every key)."""
    text = messages(lang or get_language())[key]
    return text.format(**fields) if fields else text
