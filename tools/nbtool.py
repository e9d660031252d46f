"""Notebook housekeeping: Colab badge + setup cell from one URL, and deterministic execution.

    python tools/nbtool.py sync [NOTEBOOK...]      # (re)write the badge and setup cells
    python tools/nbtool.py execute NOTEBOOK...     # run in place, store outputs, strip widget state
    python tools/nbtool.py zh [NOTEBOOK...]        # build notebooks/zh/ from the English + translations
    python tools/nbtool.py zh-status [NOTEBOOK...] # list untranslated / stale cells, with the English
    python tools/nbtool.py zh-stamp NOTEBOOK ID... # record that cells ID... translate today's English

The repository URL is written once, in ``[project.urls] Repository`` of pyproject.toml; ``sync``
regenerates every notebook's first two cells from it (found by the ``<!--NAVIGATION-->`` marker and
the ``colab-setup`` tag), so moving the repository is one edit plus ``make notebooks``.

The Chinese edition ``notebooks/zh/NN-*.ipynb`` is generated, never edited: its code cells are the
English notebook's (same ids, same order), its set-up cell also calls
``fampnb.plots.lang.setup_notebook("zh")``, and each markdown cell comes from
``notebooks/zh/translations/NN-*.json`` (cell id -> the sha256 of the English source it translates
and the Chinese text).  An English markdown cell edited after its translation is *stale*: ``zh``
refuses to build until the translation is updated and stamped (``zh-status`` shows what to do).
Outputs of unchanged code cells are kept; ``execute`` fills in the rest.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
import tomllib

ROOT = Path(__file__).resolve().parent.parent
NB_DIR = ROOT / "notebooks"
MARKER = "<!--NAVIGATION-->"
SETUP_TAG = "colab-setup"


def repo_url() -> str:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return meta["urls"]["Repository"].rstrip("/")


def badge_source(nb_path: Path, url: str, folder: str = "notebooks",
                 alt: str = "Open In Colab") -> str:
    slug = url.split("github.com/", 1)[1]
    colab = f"https://colab.research.google.com/github/{slug}/blob/main/{folder}/{nb_path.name}"
    return (f"{MARKER}\n[![{alt}](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"({colab})")


def setup_source(url: str, gpu: bool) -> str:
    extra = "[torch]" if gpu else ""
    return (
        "# Colab only: install fampnb from the repository (does nothing in JupyterLab or elsewhere).\n"
        "# fampnb asks for nothing newer than Colab ships, so this upgrades none of Colab's packages\n"
        "# and needs no restart.\n"
        "import sys\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install -q "fampnb{extra} @ git+{url}"'
    )


def sync(path: Path) -> bool:
    """Ensure cell 0 is the badge and cell 1 the Colab setup cell; True if the file changed."""
    nb = nbformat.read(path, as_version=4)
    url = repo_url()
    gpu = nb.metadata.get("accelerator") == "GPU"
    badge = nbformat.v4.new_markdown_cell(badge_source(path, url))
    setup = nbformat.v4.new_code_cell(setup_source(url, gpu))
    setup.metadata["tags"] = [SETUP_TAG]
    cells = [c for c in nb.cells
             if not (c.cell_type == "markdown" and c.source.startswith(MARKER))
             and SETUP_TAG not in c.metadata.get("tags", [])]
    old = [(c.cell_type, c.source) for c in nb.cells]
    nb.cells = [badge, setup, *cells]
    if [(c.cell_type, c.source) for c in nb.cells] == old:
        return False
    badge["id"], setup["id"] = "colab-badge", "colab-setup"  # stable ids: no diff noise
    nbformat.write(nb, path)
    return True


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = ("Interactive widget: run this notebook in JupyterLab or Colab to use it "
               "(the static plot above shows its default state).")


def strip_widget_state(nb: nbformat.NotebookNode) -> None:
    """Drop ``metadata.widgets`` (GitHub refuses notebooks whose widget state lacks 'state'),
    replace each widget's long text repr by a one-line note, and drop execution timestamps."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            if WIDGET_MIME in out.get("data", {}):
                out["data"]["text/plain"] = WIDGET_NOTE


def execute(path: Path, timeout: int = 300) -> None:
    """Run ``path`` top to bottom with cwd ``notebooks/``; store outputs; strip widget state."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    strip_widget_state(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    raise SystemExit(f"{path.name}: a cell raised {out.get('ename')}")
    nbformat.write(nb, path)


# -- the Chinese edition ---------------------------------------------------------------------
ZH_DIR = NB_DIR / "zh"
TR_DIR = ZH_DIR / "translations"
ZH_SETUP = ('\n# 所有环境：包的文本（医生报告、控件、打印说明）改用中文；有中文字体时图中标签也用中文\n'
            'from fampnb.plots import lang\n'
            'lang.setup_notebook("zh")')


def source_hash(source: str) -> str:
    """sha256 (hex) of a cell's source, the stamp a translation carries."""
    import hashlib

    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def zh_badge_source(en_path: Path, url: str) -> str:
    return badge_source(en_path, url, "notebooks/zh", "在 Colab 中打开")


def zh_setup_source(url: str, gpu: bool) -> str:
    return setup_source(url, gpu) + ZH_SETUP


def translation_path(en_path: Path, tr_dir: Path = TR_DIR) -> Path:
    return tr_dir / f"{en_path.stem}.json"


def load_translation(path: Path) -> dict[str, dict]:
    """cell id -> {"en_sha256": ..., "zh": text or list of lines}; {} when there is no file."""
    import json

    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def zh_text(entry: dict) -> str:
    text = entry["zh"]
    return "".join(text) if isinstance(text, list) else text


def _is_generated(cell: nbformat.NotebookNode) -> bool:
    return ((cell.cell_type == "markdown" and cell.source.startswith(MARKER))
            or SETUP_TAG in cell.metadata.get("tags", []))


def translation_problems(en: nbformat.NotebookNode, cells: dict[str, dict]) -> list[str]:
    """One line per English markdown cell without a translation, or whose translation was made
    for another text (stale), and per translated id the English notebook no longer has."""
    problems, ids = [], set()
    for c in en.cells:
        ids.add(c.get("id"))
        if c.cell_type != "markdown" or _is_generated(c):
            continue
        entry = cells.get(c.get("id"))
        if entry is None or not zh_text(entry).strip():
            problems.append(f"cell {c.get('id')}: no translation")
        elif entry.get("en_sha256") != source_hash(c.source):
            problems.append(f"cell {c.get('id')}: stale (the English changed after the translation)")
    problems += [f"cell {i}: translated, but not in the English notebook" for i in cells
                 if i not in ids]
    return problems


def build_zh(en_path: Path, zh_path: Path, tr_path: Path) -> nbformat.NotebookNode:
    """The zh notebook for ``en_path``: English code cells, translated markdown, zh badge and set-up
    cell; outputs kept from ``zh_path`` for code cells whose source did not change.  Raises
    ``SystemExit`` listing the problems when a translation is missing or stale."""
    import copy

    en = nbformat.read(en_path, as_version=4)
    cells = load_translation(tr_path)
    problems = translation_problems(en, cells)
    if problems:
        raise SystemExit(f"{en_path.name}: " + "; ".join(problems)
                         + f" (see: python tools/nbtool.py zh-status {en_path.name})")
    old = {}
    if zh_path.exists():
        old = {c.get("id"): c for c in nbformat.read(zh_path, as_version=4).cells
               if c.cell_type == "code"}
    url, gpu = repo_url(), en.metadata.get("accelerator") == "GPU"
    out = []
    for c in en.cells:
        if c.cell_type == "markdown":
            src = (zh_badge_source(en_path, url) if c.source.startswith(MARKER)
                   else zh_text(cells[c.get("id")]))
            new = nbformat.v4.new_markdown_cell(src)
        else:
            new = copy.deepcopy(c)
            if SETUP_TAG in c.metadata.get("tags", []):
                new.source = zh_setup_source(url, gpu)
            prev = old.get(c.get("id"))
            if prev is not None and prev.source == new.source:
                new.outputs, new.execution_count = prev.outputs, prev.execution_count
            else:
                new.outputs, new.execution_count = [], None
        new["id"] = c.get("id")
        out.append(new)
    nb = copy.deepcopy(en)
    nb.cells = out
    nb.metadata["language_info"] = dict(en.metadata.get("language_info", {}))
    return nb


def zh_sync(en_path: Path, zh_dir: Path = ZH_DIR, tr_dir: Path = TR_DIR) -> bool:
    """(Re)write ``zh_dir/<name>``; True if the file changed."""
    zh_path = zh_dir / en_path.name
    nb = build_zh(en_path, zh_path, translation_path(en_path, tr_dir))
    text = nbformat.writes(nb)
    text += "" if text.endswith("\n") else "\n"
    if zh_path.exists() and zh_path.read_text(encoding="utf-8") == text:
        return False
    zh_dir.mkdir(parents=True, exist_ok=True)
    zh_path.write_text(text, encoding="utf-8")
    return True


def zh_status(en_path: Path, tr_dir: Path = TR_DIR) -> list[str]:
    """What a translator needs: each missing/stale cell's problem and today's English source."""
    en = nbformat.read(en_path, as_version=4)
    problems = translation_problems(en, load_translation(translation_path(en_path, tr_dir)))
    by_id = {c.get("id"): c for c in en.cells}
    lines = []
    for p in problems:
        cid = p.split(":", 1)[0].removeprefix("cell ")
        lines.append(f"== {en_path.name} {p}")
        if cid in by_id:
            lines.append(by_id[cid].source)
    return lines


def zh_stamp(en_path: Path, ids: list[str], tr_dir: Path = TR_DIR) -> None:
    """Record that the translations of ``ids`` match today's English cells (after editing them)."""
    import json

    path = translation_path(en_path, tr_dir)
    doc = json.loads(path.read_text(encoding="utf-8"))
    by_id = {c.get("id"): c for c in nbformat.read(en_path, as_version=4).cells}
    for cid in ids:
        if cid not in by_id or cid not in doc["cells"]:
            raise SystemExit(f"{en_path.name}: no cell {cid!r} in the notebook and its translation")
        doc["cells"][cid]["en_sha256"] = source_hash(by_id[cid].source)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("zh", "zh-status", "zh-stamp"):
        return zh_main(argv[0], argv[1:])
    if not argv or argv[0] not in ("sync", "execute"):
        print(__doc__.strip().splitlines()[2:4][0].strip(), file=sys.stderr)
        return 2
    cmd, names = argv[0], argv[1:]
    paths = [Path(n).resolve() for n in names] or sorted(NB_DIR.glob("[0-9][0-9]-*.ipynb"))
    for p in paths:
        if cmd == "sync":
            print(f"{p.name}: {'updated' if sync(p) else 'unchanged'}")
        else:
            t0 = time.perf_counter()
            execute(p)
            print(f"{p.name}: executed in {time.perf_counter() - t0:.1f} s")
    return 0


def _english(name: str) -> Path:
    """An English notebook from a name or path (``00-start-here.ipynb``, ``notebooks/zh/00-...``)."""
    path = NB_DIR / Path(name).name
    if not path.exists():
        raise SystemExit(f"no English notebook {path.name} in {NB_DIR.name}/")
    return path


def zh_main(cmd: str, names: list[str]) -> int:
    if cmd == "zh-stamp":
        if len(names) < 2:
            raise SystemExit("usage: python tools/nbtool.py zh-stamp NOTEBOOK CELL_ID...")
        zh_stamp(_english(names[0]), names[1:])
        return 0
    paths = [_english(n) for n in names] or sorted(NB_DIR.glob("[0-9][0-9]-*.ipynb"))
    if cmd == "zh-status":
        lines = [line for p in paths for line in zh_status(p)]
        print("\n".join(lines) if lines else "every markdown cell has a current translation")
        return 1 if lines else 0
    for p in paths:
        print(f"zh/{p.name}: {'updated' if zh_sync(p) else 'unchanged'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
