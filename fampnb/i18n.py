"""The language of the package's texts: English (the default) or Chinese.

``t(key, **fields)`` looks ``key`` up in the message catalogue of the current language
(``fampnb/messages/en.py``, ``zh.py``: adding a text never touches logic) and fills its ``{fields}``.
The current language is, in order: the last ``set_language(...)`` (a zh notebook's set-up cell
calls it), else the ``FAMPNB_LANG`` environment variable (``zh``, ``zh_CN.UTF-8``, ``en`` ...),
else English.  ``language("zh")`` is a context manager for one block (tests).  Machine-readable
output (``--json`` keys, verdict codes, log lines) never changes with the language.

Plot labels are Chinese only where matplotlib has a font with Chinese glyphs (``cjk_font()``,
checked with its font manager, imported inside the function; Colab and a bare Debian have none):
otherwise they stay English and ``setup_notebook("zh")`` prints one line saying how to install one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import cache, lru_cache

__all__ = ["LANGUAGES", "get_language", "set_language", "language", "t", "messages",
           "cjk_font", "plot_language", "pt", "setup_notebook", "FONT_HINT", "parse_language"]

LANGUAGES: tuple[str, ...] = ("en", "zh")
DEFAULT = "en"
ENV = "FAMPNB_LANG"

#: what set_language() chose; None: follow FAMPNB_LANG, else English
_chosen: str | None = None

#: families with Chinese glyphs that matplotlib may find (Noto/Source Han, WenQuanYi, Windows, macOS)
CJK_FAMILIES: tuple[str, ...] = (
    "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "Noto Sans SC", "Source Han Sans SC",
    "Source Han Sans CN", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback",
    "AR PL UMing CN", "AR PL UKai CN", "Microsoft YaHei", "SimHei", "SimSun", "PingFang SC",
    "Heiti SC", "Hiragino Sans GB", "Arial Unicode MS",
)

FONT_HINT = ("图中标签保持英文：matplotlib 找不到中文字体。安装一个即可显示中文标签："
             "`apt-get install -y fonts-noto-cjk`（Colab 上在单元格里加 `!`），"
             "然后删除 matplotlib 的字体缓存（`rm -rf ~/.cache/matplotlib`）并重启内核。")


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


@lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The name of a font family with Chinese glyphs that matplotlib can use, or None.

    Asks matplotlib's font manager (imported here; None without matplotlib) for the families it
    knows, and returns the first of ``CJK_FAMILIES`` among them, else any family whose name says CJK.
    """
    try:
        from matplotlib import font_manager
    except ImportError:
        return None
    names = {f.name for f in font_manager.fontManager.ttflist}
    for family in CJK_FAMILIES:
        if family in names:
            return family
    return next((n for n in sorted(names) if "CJK" in n or n.endswith((" SC", " CN"))), None)


def plot_language() -> str:
    """The language of plot labels: Chinese when it is chosen and a CJK font exists, else English."""
    lang = get_language()
    return lang if lang == "en" or cjk_font() is not None else "en"


def pt(key: str, /, **fields: object) -> str:
    """``t`` for a text drawn in a plot: English unless a CJK font can draw the Chinese one."""
    return t(key, lang=plot_language(), **fields)


def setup_notebook(lang: str) -> None:
    """What a notebook's set-up cell calls: ``set_language(lang)``; for Chinese, put the CJK font
    found by ``cjk_font()`` second in matplotlib's sans-serif list, or print ``FONT_HINT`` (one
    line) when there is none.  Returns nothing (a set-up cell shows no value)."""
    if set_language(lang) == "zh":
        family = cjk_font()
        if family is None:
            print(FONT_HINT)
        else:
            import matplotlib

            # after the first (Latin) family: matplotlib >= 3.6 falls back glyph by glyph
            sans = [f for f in matplotlib.rcParams["font.sans-serif"] if f != family]
            matplotlib.rcParams["font.sans-serif"] = [*sans[:1], family, *sans[1:]]
            matplotlib.rcParams["axes.unicode_minus"] = False  # CJK fonts often lack U+2212
