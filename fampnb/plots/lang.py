"""Plot labels in the chosen language, where matplotlib can draw it (the view side of ``fampnb.i18n``).

Plot labels are Chinese only where matplotlib has a font with Chinese glyphs (``cjk_font()``, checked
with its font manager; Colab and a bare Debian have none): otherwise they stay English, and
``setup_notebook("zh")`` (a zh notebook's set-up cell calls it) prints one line saying how to
install a font.  The texts themselves live in ``fampnb.i18n``'s catalogues.
"""

from __future__ import annotations

from functools import lru_cache

from ..i18n import get_language, set_language, t

__all__ = ["CJK_FAMILIES", "FONT_HINT", "cjk_font", "plot_language", "pt", "setup_notebook"]

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
