"""Notebook housekeeping: Colab badge + setup cell from one URL, and deterministic execution.

    python tools/nbtool.py sync [NOTEBOOK...]      # (re)write the badge and setup cells
    python tools/nbtool.py execute NOTEBOOK...     # run in place, store outputs, strip widget state

The repository URL is written once, in ``[project.urls] Repository`` of pyproject.toml; ``sync``
regenerates every notebook's first two cells from it (found by the ``<!--NAVIGATION-->`` marker and
the ``colab-setup`` tag), so moving the repository is one edit plus ``make notebooks``.
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


def badge_source(nb_path: Path, url: str) -> str:
    slug = url.split("github.com/", 1)[1]
    colab = f"https://colab.research.google.com/github/{slug}/blob/main/notebooks/{nb_path.name}"
    return (f"{MARKER}\n[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
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


def main(argv: list[str]) -> int:
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
