"""The Chinese edition: the package's texts in both languages, and notebooks/zh/ generated from the
English notebooks plus notebooks/zh/translations/ (tools/nbtool.py zh).

A zh notebook's code is the English notebook's (only the set-up cell differs); every English
markdown cell has a translation stamped with the hash of the English text it translates, so an
English edit after the translation fails here until the translation is updated.
"""

from __future__ import annotations

import copy
import json
import string
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, load_tool
from fampnb import i18n, seed
from fampnb.messages import en as msg_en
from fampnb.messages import zh as msg_zh
from fampnb.plots import lang as plang

NB_DIR = ROOT / "notebooks"
CJK_RE = __import__("re").compile(r"[\u4e00-\u9fff]")
ENGLISH = sorted(NB_DIR.glob("[0-9][0-9]-*.ipynb"))
ids = [p.name for p in ENGLISH]


@pytest.fixture(scope="module")
def tool():
    return load_tool("nbtool")


@pytest.fixture(autouse=True)
def _english_by_default(monkeypatch):
    """Each test starts from the default (no choice made, no FAMPNB_LANG) and leaves it so."""
    monkeypatch.delenv("FAMPNB_LANG", raising=False)
    i18n.set_language(None)
    yield
    i18n.set_language(None)


# -- the catalogue ---------------------------------------------------------------------------
def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_key_in_both_languages():
    en, zh = set(msg_en.MESSAGES), set(msg_zh.MESSAGES)
    assert not en - zh, f"keys without a Chinese text: {sorted(en - zh)}"
    assert not zh - en, f"keys without an English text: {sorted(zh - en)}"


def test_both_languages_fill_the_same_fields():
    for key, text in msg_en.MESSAGES.items():
        assert _fields(text) == _fields(msg_zh.MESSAGES[key]), key


def test_chinese_texts_are_chinese_and_use_the_articles_terms():
    assert all(text.strip() for text in msg_zh.MESSAGES.values())
    assert "最大规格数" in i18n.t("seed.exp1.title", lang="zh", max="65504.0", min_normal="x")
    for text in msg_zh.MESSAGES.values():
        assert "subnormal" not in text.lower() or "次正规数" in text, text


# -- choosing the language -------------------------------------------------------------------
def test_default_is_english(monkeypatch):
    assert i18n.get_language() == "en"
    assert i18n.t("seed.col.scale") == "scale"


def test_env_and_explicit_choice(monkeypatch):
    monkeypatch.setenv("FAMPNB_LANG", "zh_CN.UTF-8")
    assert i18n.get_language() == "zh" and i18n.t("seed.col.scale") == "尺度"
    monkeypatch.setenv("FAMPNB_LANG", "klingon")      # an unknown setting: English
    assert i18n.get_language() == "en"
    assert i18n.set_language("ZH") == "zh" and i18n.t("seed.col.scale") == "尺度"
    with i18n.language("en"):
        assert i18n.t("seed.col.scale") == "scale"
    assert i18n.get_language() == "zh"                # restored after the block
    with pytest.raises(ValueError, match="one of en, zh, got 'fr'"):
        i18n.set_language("fr")


def test_context_manager_restores_after_an_exception():
    with pytest.raises(RuntimeError), i18n.language("zh"):
        raise RuntimeError
    assert i18n.get_language() == "en"


def test_seed_render_same_numbers_in_both_languages():
    en = seed.render()
    with i18n.language("zh"):
        zh = seed.render()
    assert "实验一" in zh and "最大规格数" in zh and "尺度" in zh and "Experiment" not in zh
    import re

    def rows(text: str) -> list[str]:   # the data rows: never translated
        return [line for line in text.splitlines() if re.match(r"^(?:[AB] |\s*\d+\s)", line)]

    assert len(rows(en)) == 2 + 8 and rows(en) == rows(zh)
    for text in ("8192", "65536,32768,16384,8192,4096,2048,1024,512", "65504.0",
                 "6.103515625e-05"):
        assert text in en and text in zh
    for verdict in ("OVERFLOW", "UNDERFLOW", "MATCH"):
        assert en.count(verdict) == zh.count(verdict)


@pytest.mark.parametrize("how", ["--lang zh", "--lang=zh", "env"])
def test_cli_language(run_cli, monkeypatch, how):
    if how == "env":
        monkeypatch.setenv("FAMPNB_LANG", "zh")
        r = run_cli("seed")
    else:
        r = run_cli("seed", *how.split())
    assert r.returncode == 0 and r.stderr == ""
    with i18n.language("zh"):
        assert r.stdout == seed.render()


def test_cli_bad_language_is_one_line(run_cli):
    r = run_cli("seed", "--lang", "fr")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "en, zh" in r.stderr and "Traceback" not in r.stderr


def test_cli_default_stays_english(run_cli, monkeypatch):
    monkeypatch.delenv("FAMPNB_LANG", raising=False)
    r = run_cli("seed")
    assert r.stdout == seed.render() and "Experiment 1" in r.stdout


# -- plot labels -----------------------------------------------------------------------------
def test_cjk_font_agrees_with_matplotlibs_font_manager():
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    found = plang.cjk_font()
    assert found is None or found in names
    if found is None:
        assert not names & set(plang.CJK_FAMILIES)


def test_plot_labels_fall_back_to_english_without_a_cjk_font(monkeypatch, capsys):
    key = next(k for k in msg_en.MESSAGES if k.startswith("seed."))
    monkeypatch.setattr(plang, "cjk_font", lambda: None)
    assert plang.setup_notebook("zh") is None and i18n.get_language() == "zh"
    assert capsys.readouterr().out.strip() == plang.FONT_HINT      # one line, how to install
    assert "\n" not in plang.FONT_HINT and "fonts-noto-cjk" in plang.FONT_HINT
    assert i18n.t(key) == msg_zh.MESSAGES[key]                     # texts are Chinese
    assert plang.pt(key) == msg_en.MESSAGES[key]                    # plot labels are not
    assert plang.plot_language() == "en"


def test_plot_labels_are_chinese_with_a_cjk_font(monkeypatch, capsys):
    import matplotlib

    key = next(k for k in msg_en.MESSAGES if k.startswith("seed."))
    monkeypatch.setattr(plang, "cjk_font", lambda: "Noto Sans CJK SC")
    monkeypatch.setitem(matplotlib.rcParams, "font.sans-serif", ["DejaVu Sans", "Arial"])
    monkeypatch.setitem(matplotlib.rcParams, "axes.unicode_minus", True)
    plang.setup_notebook("zh")
    assert capsys.readouterr().out == ""
    assert plang.pt(key) == msg_zh.MESSAGES[key]
    assert matplotlib.rcParams["font.sans-serif"] == ["DejaVu Sans", "Noto Sans CJK SC", "Arial"]
    with i18n.language("en"):
        assert plang.pt(key) == msg_en.MESSAGES[key]


# -- the zh notebooks ------------------------------------------------------------------------
def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", ENGLISH, ids=ids)
def test_every_english_markdown_cell_has_a_current_translation(tool, path):
    problems = tool.translation_problems(_read(path),
                                         tool.load_translation(tool.translation_path(path)))
    assert not problems, (f"{path.name}: " + "; ".join(problems)
                          + f" -- python tools/nbtool.py zh-status {path.name}")


@pytest.mark.parametrize("path", ENGLISH, ids=ids)
def test_zh_code_is_the_english_code(tool, path):
    zh_path = tool.ZH_DIR / path.name
    assert zh_path.exists(), f"notebooks/zh/{path.name} missing: python tools/nbtool.py zh"
    en, zh = _read(path), _read(zh_path)
    en_code = [(c.get("id"), c.source) for c in en.cells if c.cell_type == "code"]
    zh_code = [(c.get("id"), c.source) for c in zh.cells if c.cell_type == "code"]
    assert [i for i, _ in zh_code] == [i for i, _ in en_code], f"{path.name}: code cells differ"
    setup = [c.get("id") for c in en.cells if tool.SETUP_TAG in c.metadata.get("tags", [])]
    for (cid, a), (_, b) in zip(en_code, zh_code):
        if cid in setup:
            assert b == tool.zh_setup_source(tool.repo_url(), en.metadata.get("accelerator")
                                             == "GPU"), f"{path.name}: stale zh set-up cell"
            assert b.startswith(a) and 'setup_notebook("zh")' in b
        else:
            assert a == b, f"zh/{path.name} cell {cid}: code differs from the English notebook"


@pytest.mark.parametrize("path", ENGLISH, ids=ids)
def test_zh_notebook_is_what_the_tool_builds(tool, path):
    """The committed zh notebook is the build of today's English notebook and translation
    (markdown, badge, cell order; outputs aside): run tools/nbtool.py zh after any change."""
    zh_path = tool.ZH_DIR / path.name
    built = tool.build_zh(path, zh_path, tool.translation_path(path))
    stored = _read(zh_path)
    assert [(c.cell_type, c.get("id"), c.source) for c in stored.cells] == [
        (c.cell_type, c.get("id"), c.source) for c in built.cells], (
        f"zh/{path.name} is stale: python tools/nbtool.py zh {path.name}")
    badge = stored.cells[0].source
    assert f"/notebooks/zh/{path.name}" in badge


@pytest.mark.parametrize("path", ENGLISH, ids=ids)
def test_zh_markdown_is_chinese_and_keeps_the_english_code_spans(tool, path):
    """Each translation is Chinese text, and keeps every inline code span (API names, log lines,
    options) of the English cell as it is."""
    import re

    span = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)   # CommonMark code spans

    def spans(text: str) -> set[str]:
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)      # fenced blocks aside
        return {" ".join(m.group(2).split()) for m in span.finditer(text)}

    en = {c.get("id"): c.source for c in _read(path).cells if c.cell_type == "markdown"}
    cells = tool.load_translation(tool.translation_path(path))
    for cid, entry in cells.items():
        text = tool.zh_text(entry)
        assert re.search(r"[\u4e00-\u9fff]", text), f"{path.name} {cid}: no Chinese"
        missing = spans(en[cid]) - spans(text)
        assert not missing, f"{path.name} {cid}: code spans missing from the translation: {missing}"


def test_stale_translation_is_detected_and_refused(tool, tmp_path):
    """Editing an English markdown cell after its translation makes it stale: the problem is
    named, the build refuses, zh-status shows the new English, and zh-stamp clears it."""
    en_path = ENGLISH[0]
    en = _read(en_path)
    md = next(c for c in en.cells if c.cell_type == "markdown" and not c.source.startswith("<!--"))
    tr_dir, zh_dir = tmp_path / "tr", tmp_path / "zh"
    tr_dir.mkdir()
    (tr_dir / f"{en_path.stem}.json").write_text(
        tool.translation_path(en_path).read_text(encoding="utf-8"), encoding="utf-8")
    edited = copy.deepcopy(en)
    next(c for c in edited.cells if c.get("id") == md.get("id")).source += "\nA new sentence."
    src = tmp_path / en_path.name
    nbformat.write(edited, src)
    cells = tool.load_translation(tr_dir / f"{en_path.stem}.json")
    assert tool.translation_problems(edited, cells) == [
        f"cell {md.get('id')}: stale (the English changed after the translation)"]
    with pytest.raises(SystemExit, match="stale"):
        tool.build_zh(src, zh_dir / en_path.name, tr_dir / f"{en_path.stem}.json")
    status = tool.zh_status(src, tr_dir)
    assert "A new sentence." in "\n".join(status)
    del cells[md.get("id")]
    assert f"cell {md.get('id')}: no translation" in tool.translation_problems(edited, cells)
    tool.zh_stamp(src, [md.get("id")], tr_dir)      # after the translator updated the text
    assert tool.translation_problems(
        edited, tool.load_translation(tr_dir / f"{en_path.stem}.json")) == []


def test_changed_english_code_reaches_the_zh_notebook(tool, tmp_path):
    """A code cell is copied, never translated: the build takes the English code as it is today,
    and drops the stale output of a cell whose code changed."""
    en_path = ENGLISH[0]
    edited = _read(en_path)
    code = next(c for c in edited.cells if c.cell_type == "code"
                and tool.SETUP_TAG not in c.metadata.get("tags", []))
    code.source += "\nprint('changed')"
    src = tmp_path / en_path.name
    nbformat.write(edited, src)
    built = tool.build_zh(src, tool.ZH_DIR / en_path.name, tool.translation_path(en_path))
    cell = next(c for c in built.cells if c.get("id") == code.get("id"))
    assert cell.source == code.source and cell.outputs == []


@pytest.mark.parametrize("path", ENGLISH, ids=ids)
def test_zh_checked_outputs_are_stored(tool, path):
    zh = json.loads((tool.ZH_DIR / path.name).read_text(encoding="utf-8"))
    for c in zh["cells"]:
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] == "code" and src.lstrip().startswith("# NBVAL_CHECK_OUTPUT"):
            assert c.get("outputs"), (f"zh/{path.name}: a checked cell has no stored output "
                                      f"(python tools/nbtool.py execute notebooks/zh/{path.name})")
    assert "widgets" not in zh["metadata"]


# -- README.zh.md ----------------------------------------------------------------------------
def test_readme_links_the_chinese_readme_on_its_first_line():
    first = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[0]
    assert "](README.zh.md)" in first
    zh = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    assert zh.splitlines()[0].startswith("[English](README.md)")


def test_readme_zh_lists_every_zh_notebook_with_its_colab_badge(tool):
    zh = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    slug = tool.repo_url().split("github.com/", 1)[1]
    for path in ENGLISH:
        assert f"](notebooks/zh/{path.name})" in zh, f"README.zh.md does not list zh/{path.name}"
        colab = f"https://colab.research.google.com/github/{slug}/blob/main/notebooks/zh/{path.name}"
        assert colab in zh, f"README.zh.md: no Colab badge for zh/{path.name}"
    for command in ("make lab-zh", "make test", "python -m fampnb doctor --lang zh"):
        assert command in zh


def test_makefile_has_lab_zh():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "lab-zh:" in make and "notebooks/zh/" in make


def test_plots_draw_chinese_labels_only_with_a_cjk_font(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fampnb import formats
    from fampnb.plots import draw_format_ranges

    def xlabel(font: str | None, lang: str) -> tuple[str, list[str]]:
        monkeypatch.setattr(plang, "cjk_font", lambda: font)
        with i18n.language(lang):
            fig, ax = plt.subplots()
            draw_format_ranges(ax, [formats.FP16, formats.BF16])
            legend = [t.get_text() for t in ax.get_legend().get_texts()]
            label = ax.get_xlabel()
            plt.close(fig)
        return label, legend

    en = xlabel(None, "en")
    assert en == xlabel(None, "zh") == xlabel("Noto Sans CJK SC", "en")
    zh_label, zh_legend = xlabel("Noto Sans CJK SC", "zh")
    assert zh_label == msg_zh.MESSAGES["plot.value_log2_ticks"] and "次正规数" in zh_legend


def _checked_numbers(path: Path) -> dict[str, list[str]]:
    """Per checked cell id: the sorted numbers (two characters or more: 8192, 6.1e-05, 16 of
    fp16) in its stored text outputs; captions may differ by language, numbers may not."""
    import re

    num = re.compile(r"(?<![\w.])-?\d[\d.]*(?:e[+-]?\d+)?")
    out = {}
    for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] != "code" or not src.lstrip().startswith("# NBVAL_CHECK_OUTPUT"):
            continue
        text = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                       for o in c.get("outputs", []))
        text = re.sub(r"fp(\d+)|e(\d)m(\d)|float(\d+)|bf16", " ", text)   # names, not numbers
        out[c["id"]] = sorted(m for m in num.findall(text) if len(m.strip("-")) >= 2)
    return out


@pytest.mark.parametrize("path", ENGLISH, ids=ids)
def test_zh_checked_outputs_have_the_english_numbers(tool, path):
    en, zh = _checked_numbers(path), _checked_numbers(tool.ZH_DIR / path.name)
    assert en.keys() == zh.keys()
    for cid in en:
        assert en[cid] == zh[cid], f"zh/{path.name} cell {cid}: the numbers differ from English"


# -- the log doctor --------------------------------------------------------------------------
def test_doctor_texts_have_both_languages():
    from fampnb import localize
    from fampnb.messages import doctor_zh

    en = localize.doctor_texts()
    assert en.ADVICE.keys() == doctor_zh.ADVICE.keys()
    for verdict, items in en.ADVICE.items():
        assert len(items) == len(doctor_zh.ADVICE[verdict]), verdict   # the article's order
    assert en.CAVEATS.keys() == doctor_zh.CAVEATS.keys()
    assert en.FRAMEWORK_HINTS.keys() == doctor_zh.FRAMEWORK_HINTS.keys()
    for key, text in en.CAVEATS.items():
        assert _fields(text) == _fields(doctor_zh.CAVEATS[key]), key
    for e, z in doctor_zh.REASONS:
        assert _fields(e) == _fields(z), e


def _shipped_and_heldout_logs() -> list[Path]:
    return (sorted((ROOT / "fampnb" / "data" / "real-logs").glob("*.log"))
            + sorted((ROOT / "tests" / "data").rglob("*.log")))


def test_doctor_speaks_chinese_on_every_real_log():
    """Every reason, advice and caveat the doctor gives on the shipped and held-out real logs has
    its Chinese text (a new rule's text without one fails here)."""
    from fampnb import diagnose, localize, logs

    missing = {}
    for path in _shipped_and_heldout_logs():
        d = diagnose.diagnose(logs.parse(str(path)))
        for text in localize.untranslated(d, "zh"):
            missing.setdefault(text[:120], path.name)
    assert not missing, f"doctor texts without a Chinese translation: {missing}"


def test_localize_keeps_codes_and_numbers(tmp_path):
    from fampnb import diagnose, localize, logs

    path = str(ROOT / "fampnb/data/real-logs/apex_apex_834.log")
    d = diagnose.diagnose(logs.parse(path))
    assert localize.localize(d) is d                               # English: untouched
    with i18n.language("zh"):
        z = localize.localize(d)
        assert diagnose.diagnose(logs.parse(path)) == z            # diagnose() speaks it too
        assert localize.localize(z) == z                           # and twice is once
    assert z.verdict == d.verdict and z.evidence == d.evidence and z.backoffs == d.backoffs
    assert z.reason != d.reason and "尺度" in z.reason
    assert "65536" in z.reason and "0.5" in z.reason and "17" in z.reason   # numbers carried over
    assert [a != b for a, b in zip(z.advice, d.advice)] == [True] * len(d.advice)
    assert localize.translate("a text the doctor never wrote", "zh") == "a text the doctor never wrote"


def test_doctor_cli_in_chinese_and_json_unchanged(run_cli, monkeypatch):
    log = str(ROOT / "fampnb/data/real-logs/deepspeed_Chinese-LLaMA-Alpaca_534.log")
    en, zh = run_cli("doctor", log), run_cli("doctor", "--lang", "zh", log)
    assert en.returncode == zh.returncode == 0
    assert "verdict:" in en.stdout and "判定：" in zh.stdout and "先动的开关：" in zh.stdout
    assert "verdict:" not in zh.stdout and "reason:" not in zh.stdout
    monkeypatch.setenv("FAMPNB_LANG", "zh")
    assert run_cli("doctor", log).stdout == zh.stdout
    js_zh = json.loads(run_cli("doctor", "--json", log).stdout)
    monkeypatch.delenv("FAMPNB_LANG")
    js_en = json.loads(run_cli("doctor", "--json", log).stdout)
    assert js_en == json.loads(run_cli("doctor", "--json", "--lang", "en", log).stdout)
    assert js_zh.keys() == js_en.keys()                      # --json keys stay English
    same = {k for k in js_en if k not in ("reason", "advice", "caveats", "first_switch")}
    assert {k: js_zh[k] for k in same} == {k: js_en[k] for k in same}   # codes, numbers, lines
    assert js_zh["reason"] != js_en["reason"] and CJK_RE.search(js_zh["reason"])


@pytest.mark.parametrize("path", ENGLISH, ids=ids)
def test_zh_notebooks_pass_the_english_notebooks_file_checks(tool, path):
    """What a reader on GitHub or Colab gets from a stored zh notebook: no stored errors, no
    machine paths, checked cells with outputs, a clean kernelspec, no widget state."""
    import test_notebooks as tn

    zh_path = tool.ZH_DIR / path.name
    tn.test_no_stored_errors(zh_path)
    tn.test_no_absolute_or_parent_paths(zh_path)
    tn.test_has_checked_key_numbers_with_stored_outputs(zh_path)
    tn.test_kernelspec_and_no_widget_state(zh_path)
    tn.test_widget_cells_are_never_checked(zh_path)


# -- the late widgets (notebooks 08 and 09) speak the chosen language -------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_hazards_and_fp8_widgets_speak_the_chosen_language(lang):
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    from fampnb.widgets.fp8 import make_fp8_scaling
    from fampnb.widgets.hazards import make_hazards

    cat = (msg_zh if lang == "zh" else msg_en).MESSAGES
    with i18n.language(lang):
        _, hc, ha = make_hazards(scale=2.0 ** 9)  # exp overflows fp16 as written
        _, fc, fa = make_fp8_scaling(scheme="mx")
    assert hc["scale"].description == cat["widget.hazards.scale"]
    assert hc["fix"].description == cat["widget.hazards.fix"]
    how = cat["widget.hazards.how.plain"]
    assert ha["verdict_text"].value.startswith(f"<b>{cat['widget.hazards.out'].split('{how}')[0]}"
                                               .replace("{scale}", "512") + how)
    assert f"<th>{cat['widget.hazards.col.abs_max']}</th>" in ha["table_text"].value
    assert fc["scheme"].description == cat["widget.fp8.scheme"]
    assert fc["spike"].description == cat["widget.fp8.spike"]
    assert cat["widget.fp8.note.delayed_only"] in fa["status"].value
    assert f"<th>{cat['widget.fp8.col.lost']}</th>" in fa["table_text"].value
    if lang == "zh":
        assert CJK_RE.search(fa["status"].value) and CJK_RE.search(ha["verdict_text"].value)
