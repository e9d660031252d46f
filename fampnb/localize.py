"""The log doctor's texts in the chosen language: ``localize(diagnosis)``.

The doctor writes its reason, advice and caveats in English (``fampnb.diagnose``); when Chinese is
chosen (``fampnb.i18n``), ``localize`` returns a copy whose texts come from
``fampnb.messages.doctor_zh``: advice, caveats and framework hints by their keys (the same as the
doctor's), reasons by template (``{name}`` parts -- numbers, log excerpts, nested reasons -- are
carried over, themselves translated when they are a known text).  A text with no translation
stays English (``untranslated`` lists them; tests check the shipped logs have none).  Verdict
codes, evidence lines and ``to_dict()``/``--json`` never change.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from functools import cache
from typing import Any

from .i18n import get_language

__all__ = ["localize", "translate", "untranslated", "doctor_texts"]


def doctor_texts() -> Any:
    """The doctor's English text module (``ADVICE``, ``CAVEATS``, ``FRAMEWORK_HINTS``)."""
    return importlib.import_module("fampnb.diagnose._text")


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)
    out = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
    return re.compile(out + r"\Z", re.S)


@cache
def _tables(lang: str) -> tuple[dict[str, str], list[tuple[re.Pattern[str], str]]]:
    """(exact English text -> translation, [(English template pattern, translation template)])."""
    if lang == "en":
        return {}, []
    msgs = importlib.import_module(f"fampnb.messages.doctor_{lang}")
    en = doctor_texts()
    exact: dict[str, str] = {}
    templates: list[tuple[re.Pattern[str], str]] = []

    def add(english: str, translated: str) -> None:
        if "{" in english:
            templates.append((_pattern(english), translated))
        else:
            exact[english] = translated

    for verdict, items in en.ADVICE.items():
        for e, z in zip(items, msgs.ADVICE[verdict]):
            add(e, z)
    for key, text in en.CAVEATS.items():
        add(text, msgs.CAVEATS[key])
    for key, text in en.FRAMEWORK_HINTS.items():
        add(text, msgs.FRAMEWORK_HINTS[key])
    for e, z in msgs.REASONS:
        add(e, z)
    return exact, templates


def _whole(text: str, lang: str) -> str | None:
    """The translation of ``text`` as one known text or template, else None."""
    exact, templates = _tables(lang)
    if text in exact:
        return exact[text]
    for pat, out in templates:
        m = pat.match(text)
        if m:
            return out.format(**{k: translate(v, lang) for k, v in m.groupdict().items()})
    return None


def translate(text: str, lang: str | None = None) -> str:
    """``text`` (one of the doctor's texts) in ``lang`` (default: the current language); a text
    without a translation is returned as it is."""
    lang = lang or get_language()
    if lang == "en":
        return text
    whole = _whole(text, lang)
    if whole is not None:
        return whole
    if "; " in text:   # a composite reason: clause by clause
        return _SEP.get(lang, "; ").join(translate(p, lang) for p in text.split("; "))
    return text


_SEP = {"zh": "；"}


def untranslated(d: Any, lang: str = "zh") -> list[str]:
    """The reason/advice/caveat texts of ``d`` (clauses of a composite reason included) that have
    no translation in ``lang``."""
    out: list[str] = []
    for x in [d.reason, *list(d.advice or []), *list(d.caveats or [])]:
        if x and _whole(x, lang) is None:
            parts = x.split("; ") if "; " in x else [x]
            out += [p for p in parts if _whole(p, lang) is None]
    return out


def localize(d: Any) -> Any:
    """A copy of the diagnosis ``d`` with its reason, advice and caveats in the current language
    (``d`` itself when it is English)."""
    if get_language() == "en":
        return d
    return dataclasses.replace(d, reason=translate(d.reason),
                               advice=[translate(a) for a in d.advice or []],
                               caveats=[translate(c) for c in d.caveats or []])
