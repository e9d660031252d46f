"""A JupyterLab server and a Chromium page that drives a notebook, for the browser tests.

Practice that works with JupyterLab 4.6 + ipywidgets 8.1 + Debian's Chromium (see the project's
testing reference): fresh settings/workspace/runtime/config directories per run, the server in its
own process group, the kernel gated on the status bar text (not the toolbar indicator), Run All
through the app API, assertions on text widgets (never on canvas pixels).
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

#: Debian's Chromium; the tests never use a browser downloaded by ``playwright install``
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"]
HOW_TO_ENABLE = "Enable with: apt-get install -y chromium (Debian/Ubuntu), then: make test"

#: every wait in the tests; generous, a normal wait takes a few seconds
TIMEOUT_MS = 60_000
#: Python exceptions in kernel messages: error / execute_reply content ("ename"), or a
#: traceback printed to a stream; widget state (comm messages) may legitimately show log text
#: that contains the word Traceback, so comm messages are not searched for it
_WS_ERROR = re.compile(r'"ename"\s*:')
_WS_STREAM = re.compile(r'"msg_type"\s*:\s*"stream"')
_WS_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
_LOG_ERROR = re.compile(r"Traceback \(most recent call last\)")
_KERNEL_IDLE = re.compile(r"\(ipykernel\) \| Idle")


def chromium_path() -> str | None:
    """The Chromium executable to use, or None when it is not installed."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium")


def playwright_available() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LabServer:
    """JupyterLab on a free loopback port, serving a temporary copy of a notebook folder.

    Everything it writes (settings, workspaces, runtime files, autosaved notebooks) stays under
    ``workdir``; ``stop()`` ends only the process group this object started.
    """

    def __init__(self, notebooks: Path, workdir: Path, package_root: Path | None = None) -> None:
        self.source = Path(notebooks)
        #: kernels import the package from here (this checkout), whatever the venv has installed
        self.package_root = package_root
        self.workdir = Path(workdir)
        self.root = self.workdir / "notebooks"
        self.log_path = self.workdir / "jupyterlab.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    # -- life cycle -------------------------------------------------------------------------
    def start(self, attempts: int = 3) -> LabServer:
        shutil.copytree(self.source, self.root,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        settings = self.workdir / "app-settings"
        settings.mkdir(parents=True, exist_ok=True)
        # no "get notified about Jupyter news?" toast over the page, no update checks
        (settings / "overrides.json").write_text(json.dumps({
            "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                             "checkForUpdates": False},
        }))
        last = ""
        for _ in range(attempts):
            self.port = free_port()
            self._spawn()
            ok, last = self._wait_ready()
            if ok:
                return self
            self.stop()
        raise RuntimeError(f"JupyterLab did not start: {last}\n{self.log_tail()}")

    def _spawn(self) -> None:
        t = self.workdir
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "MPLBACKEND"))}
        env.update(JUPYTER_RUNTIME_DIR=str(t / "runtime"), JUPYTER_CONFIG_DIR=str(t / "config"),
                   JUPYTER_PLATFORM_DIRS="1", IPYTHONDIR=str(t / "ipython"),
                   PYDEVD_DISABLE_FILE_VALIDATION="1", PYTHONUNBUFFERED="1")
        if self.package_root is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(self.package_root), *filter(None, [os.environ.get("PYTHONPATH")])])
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={self.port}", "--ServerApp.port_retries=0", "--ServerApp.token=",
               "--ServerApp.password=", "--allow-root", f"--ServerApp.root_dir={self.root}",
               "--ServerApp.terminals_enabled=False",
               f"--LabApp.app_settings_dir={t / 'app-settings'}",
               f"--LabApp.workspaces_dir={t / 'workspaces'}",
               f"--LabApp.user_settings_dir={t / 'user-settings'}",
               "--LabApp.expose_app_in_browser=True"]
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._log = log
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def _wait_ready(self, timeout: float = 60.0) -> tuple[bool, str]:
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                return False, f"exited with code {self.proc.returncode}"
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2) as r:
                    if r.status == 200:
                        return True, ""
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.25)
        return False, f"no answer on /api/status after {timeout:.0f} s ({last})"

    def stop(self) -> None:
        """SIGTERM to the server's own process group (it shuts its kernels down cleanly);
        SIGKILL after 15 s.  Kernels run in sessions of their own, so any kernel of this server
        still alive afterwards (a child of the server process) is killed by its pid."""
        proc, self.proc = self.proc, None
        if proc is not None:
            kernels = _children(proc.pid)
            if proc.poll() is None:
                _killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    _killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=15)
            _killpg(proc.pid, signal.SIGKILL)  # anything left in the server's group
            for pid in kernels:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        log = getattr(self, "_log", None)
        if log is not None:
            log.close()

    # -- REST -------------------------------------------------------------------------------
    def _xsrf_opener(self) -> tuple[Any, str]:
        import http.cookiejar

        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(self.url("lab"), timeout=30) as r:
            r.read()
        xsrf = next((c.value for c in jar if c.name == "_xsrf"), "")
        return opener, xsrf

    def api(self, method: str, path: str, body: Any = None) -> Any:
        """Call the server's REST API (with the XSRF cookie + header non-GET calls need)."""
        opener, xsrf = self._xsrf_opener()
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url(path), data=data, method=method,
                                     headers={"X-XSRFToken": xsrf,
                                              "Content-Type": "application/json"})
        with opener.open(req, timeout=60) as r:
            text = r.read().decode()
        return json.loads(text) if text.strip() else None

    def start_kernels(self, names: list[str]) -> None:
        """Start each notebook's kernel now (a session per path), so that opening it later
        finds a kernel that is already up: the starts overlap with earlier tests."""
        for name in names:
            self.api("POST", "api/sessions", {"path": name, "name": name, "type": "notebook",
                                              "kernel": {"name": "python3"}})

    # -- helpers ----------------------------------------------------------------------------
    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset: int) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, chars: int = 4000) -> str:
        text = self.log_since(0)
        return text[-chars:]


_AWAITS = itertools.count()


def await_js(page: Any, fn: str, arg: Any = None, timeout_ms: int = TIMEOUT_MS) -> Any:
    """The value of the async JS function ``fn`` called with ``arg`` in the page, its promise held
    on ``window`` until it settles, then read by polling.  (An evaluate that awaits the promise
    itself leaves V8 only a weak handle on it: a promise that waits on JupyterLab for long can be
    collected, and playwright then fails with "Resulting promise was garbage collected".)  A
    rejection raises ``RuntimeError`` with its message."""
    key = f"__fampnbAwait{next(_AWAITS)}"
    page.evaluate(f"""([key, arg]) => {{
        const fn = {fn};
        window[key] = {{done: false}};
        window[key + 'Promise'] = Promise.resolve().then(() => fn(arg)).then(
            (value) => {{ window[key] = {{done: true, value: value}}; }},
            (err) => {{ window[key] = {{done: true, error: String(err)}}; }});
    }}""", [key, arg])
    page.wait_for_function("(key) => window[key].done", arg=key, timeout=timeout_ms)
    out = page.evaluate("""(key) => {
        const r = window[key];
        delete window[key]; delete window[key + 'Promise'];
        return r;
    }""", key)
    if "error" in out:
        raise RuntimeError(out["error"])
    return out.get("value")


def html_to_text(page: Any, markup: str) -> str:
    """What the browser shows for ``markup`` (rendered in a detached element), whitespace
    normalized."""
    text = page.evaluate("(m) => { const d = document.createElement('div'); d.innerHTML = m;"
                         " return d.textContent; }", markup)
    return normalize(text)


def normalize(text: str) -> str:
    return " ".join(html.unescape(text or "").split())


class LabPage:
    """One JupyterLab page (one browser context, a fresh workspace) in which notebooks are opened
    one after the other: the page's JavaScript is loaded once per session, not once per notebook.

    Collects uncaught page errors and Python exceptions seen on the kernel websockets; each
    ``NotebookPage`` looks at what arrived while it was open.
    """

    def __init__(self, browser: Any, server: LabServer) -> None:
        self.server = server
        self.context = browser.new_context(viewport={"width": 1280, "height": 1000},
                                           device_scale_factor=1)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page_errors: list[str] = []
        self.kernel_errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        self.page.on("websocket", self._on_websocket)

    def load(self) -> LabPage:
        self.page.goto(self.server.url("lab/workspaces/fampnb-tests"),
                       wait_until="domcontentloaded")
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands "
                                    "&& window.jupyterapp.shell && document.querySelector("
                                    "'#jp-main-statusbar')")
        self.page.wait_for_function("() => window.jupyterapp.restored !== undefined")
        # all the width for the notebook (no file browser beside it)
        await_js(self.page, "async () => { await window.jupyterapp.restored; "
                            "window.jupyterapp.shell.collapseLeft(); }")
        return self

    def _on_websocket(self, ws: Any) -> None:
        if "/api/kernels/" in ws.url:
            ws.on("framereceived", self._on_frame)

    def _on_frame(self, payload: Any) -> None:
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
        if _WS_ERROR.search(text) or (_WS_STREAM.search(text) and _WS_TRACEBACK.search(text)):
            self.kernel_errors.append(_summarize_frame(text))

    def close(self) -> None:
        self.context.close()


class NotebookPage:
    """One notebook opened in the shared ``LabPage``; locators are scoped to its panel.

    ``assert_clean()`` fails with the uncaught JS errors, kernel exceptions, tracebacks in outputs
    and server-log tracebacks that appeared since it was opened.
    """

    def __init__(self, lab: LabPage, name: str) -> None:
        self.lab = lab
        self.server = lab.server
        self.page = lab.page
        self.name = name
        self.panel_id = ""
        self.root = self.page.locator("#jp-main-dock-panel")  # narrowed by open()
        self._js_mark = len(lab.page_errors)
        self._ws_mark = len(lab.kernel_errors)
        self._log_offset = self.server.log_size()

    @property
    def page_errors(self) -> list[str]:
        return self.lab.page_errors[self._js_mark:]

    @property
    def kernel_errors(self) -> list[str]:
        return self.lab.kernel_errors[self._ws_mark:]

    # -- notebook actions -------------------------------------------------------------------
    def open(self) -> NotebookPage:
        """Open the notebook in the page, make it the current tab, wait until its kernel is idle."""
        from playwright.sync_api import expect

        self.panel_id = await_js(self.page, """async (path) => {
            const app = window.jupyterapp;
            const w = await app.commands.execute('docmanager:open',
                                                 {path: path, factory: 'Notebook'});
            await w.context.ready;
            await w.sessionContext.ready;
            app.shell.activateById(w.id);
            return w.id;
        }""", self.name)
        self.root = self.page.locator(f"[id='{self.panel_id}']")
        self.root.locator(".jp-Notebook .jp-Cell").first.wait_for()
        self.page.wait_for_function("""(id) => {
            const app = window.jupyterapp;
            const w = app.shell.currentWidget;
            if (!w || w.id !== id) { app.shell.activateById(id); return false; }
            const k = w.sessionContext.session && w.sessionContext.session.kernel;
            return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
        }""", arg=self.panel_id, timeout=TIMEOUT_MS)
        # the toolbar indicator says idle before a kernel exists; the status bar does not
        expect(self.page.locator("#jp-main-statusbar")).to_contain_text(_KERNEL_IDLE,
                                                                         timeout=TIMEOUT_MS)
        return self

    def run_all(self, timeout_ms: int = 120_000) -> None:
        """Clear stored outputs, Run All, and wait until every cell has run (app API promise)."""
        from playwright.sync_api import expect

        self._activate()
        self.command("notebook:clear-all-cell-outputs")
        self.page.evaluate("""() => {
            window.__fampnbRun = null;
            window.jupyterapp.commands.execute('notebook:run-all-cells').then(
                (ok) => { window.__fampnbRun = {ok: ok}; },
                (err) => { window.__fampnbRun = {ok: false, error: String(err)}; });
        }""")
        self.page.wait_for_function("() => window.__fampnbRun !== null", timeout=timeout_ms)
        result = self.page.evaluate("() => window.__fampnbRun")
        pending = self.root.locator(".jp-CodeCell .jp-InputPrompt", has_text="*")
        expect(pending).to_have_count(0, timeout=timeout_ms)
        expect(self.page.locator("#jp-main-statusbar")).to_contain_text(_KERNEL_IDLE,
                                                                         timeout=TIMEOUT_MS)
        if not result.get("ok"):
            raise AssertionError(f"Run All did not succeed in {self.name}: {result}\n"
                                 f"{self.problems_text()}")

    def _activate(self) -> None:
        self.page.wait_for_function("""(id) => {
            const app = window.jupyterapp;
            if (!app.shell.currentWidget || app.shell.currentWidget.id !== id)
                app.shell.activateById(id);
            return app.shell.currentWidget && app.shell.currentWidget.id === id;
        }""", arg=self.panel_id)

    def kernel_eval(self, expression: str) -> str:
        """``repr``-like text of a Python expression evaluated in this notebook's kernel.

        Sent as a silent ``user_expressions`` request: no execution count, no output, no history.
        """
        r = await_js(self.page, """async ([id, expr]) => {
            const app = window.jupyterapp;
            let panel = null;
            for (const w of app.shell.widgets('main')) { if (w.id === id) { panel = w; break; } }
            const kernel = panel.sessionContext.session.kernel;
            const fut = kernel.requestExecute({code: '', silent: true, store_history: false,
                                               user_expressions: {r: expr}});
            const reply = await fut.done;
            return reply.content.user_expressions.r;
        }""", [self.panel_id, expression])
        if r.get("status") != "ok":
            raise AssertionError(f"kernel could not evaluate {expression!r}: {r}")
        return r["data"]["text/plain"]

    def command(self, name: str, args: dict | None = None) -> Any:
        return self.page.evaluate("([n, a]) => window.jupyterapp.commands.execute(n, a || {})",
                                  [name, args])

    # -- widgets ----------------------------------------------------------------------------
    def shown_text(self, locator: Any) -> str:
        return normalize(locator.text_content())

    def wait_text(self, locator: Any, expected: str, timeout_ms: int = 30_000) -> None:
        """Wait until ``locator`` shows ``expected`` (whitespace normalized), else fail."""
        deadline = time.monotonic() + timeout_ms / 1000
        shown = ""
        while True:
            shown = self.shown_text(locator)
            if shown == expected:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: expected text\n  {expected!r}\n"
                                     f"but the page shows\n  {shown!r}\n{self.problems_text()}")
            self.page.wait_for_timeout(100)

    def slider_press(self, slider: Any, *keys: str) -> None:
        """Focus the slider's handle and press keys (ArrowRight = one step up, End = max...)."""
        handle = slider.locator(".noUi-handle").first
        handle.scroll_into_view_if_needed()
        handle.focus()
        for key in keys:
            handle.press(key)

    def slider_type(self, slider: Any, value: str) -> None:
        """Type an exact value into the slider's readout and commit it with Enter."""
        readout = slider.locator(".widget-readout").first
        readout.scroll_into_view_if_needed()
        readout.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.type(value)
        self.page.keyboard.press("Enter")

    def choose(self, dropdown: Any, label: str) -> None:
        dropdown.locator("select").select_option(label=label)

    def toggle(self, buttons: Any, label: str) -> None:
        """Click the button labelled ``label`` of a ToggleButtons control."""
        buttons.get_by_role("button", name=label, exact=True).click()

    def type_text(self, box: Any, value: str, submit: bool = True) -> None:
        field = box.locator("input, textarea").first
        field.fill(value)
        if submit and field.evaluate("e => e.tagName") == "INPUT":
            field.press("Enter")
        elif submit:  # a Textarea commits when it loses focus
            field.evaluate("e => e.blur()")

    # -- matplotlib backend and pictures ----------------------------------------------------
    def execute_silent(self, code: str, wait: bool = True) -> float:
        """Run ``code`` in this notebook's kernel as a silent request (no output, no execution
        count); returns the page time (``performance.now()``) at which it was sent.  ``wait``:
        wait for the reply and fail unless it is ok."""
        r = await_js(self.page, """async ([id, code, wait]) => {
            const app = window.jupyterapp;
            for (const w of app.shell.widgets('main')) {
                if (w.id !== id) continue;
                const t0 = performance.now();
                const fut = w.sessionContext.session.kernel.requestExecute(
                    {code: code, silent: true, store_history: false});
                return [t0, wait ? (await fut.done).content.status : 'ok'];
            }
            return [0, 'no such panel'];
        }""", [self.panel_id, code, wait])
        if r[1] != "ok":
            raise AssertionError(f"{self.name}: the kernel did not run {code!r}: {r[1]}")
        return float(r[0])

    def use_ipympl(self) -> None:
        """Switch this notebook's kernel to ipympl (``%matplotlib widget``), e.g. before
        ``run_all``: every ``LiveFigure`` made afterwards is an ipympl canvas."""
        self.execute_silent("%matplotlib widget")

    def watch_pictures(self, locator: Any) -> None:
        """From now on, record (``performance.now()``, in the page) every new picture inside
        ``locator``'s element and every key press.  A new picture is an ``<img>`` that has
        loaded (the inline backend's PNG in an ``Output``) or a ``drawImage`` onto a canvas
        (ipympl copying a frame it received onto its visible canvas); a key press is a keydown
        or a ``<select>``'s change.  Times come back from
        ``picture_times()`` / ``key_times()``; a second call watches another element."""
        locator.wait_for()
        locator.evaluate(_WATCH_PICTURES_JS)

    def picture_times(self) -> list[float]:
        return list(self.page.evaluate("() => window.__fampnbPix.pics"))

    def key_times(self) -> list[float]:
        return list(self.page.evaluate("() => window.__fampnbPix.keys"))

    def page_now(self) -> float:
        return float(self.page.evaluate("() => performance.now()"))

    def wait_picture_after(self, t0: float, timeout_ms: int = 30_000) -> float | None:
        """The time of the first picture recorded after ``t0`` (page clock), waiting up to
        ``timeout_ms``; None when none came."""
        try:
            handle = self.page.wait_for_function(
                "(t0) => { const p = window.__fampnbPix.pics.find(t => t > t0);"
                " return p === undefined ? false : p; }", arg=t0, timeout=timeout_ms,
                polling=20)
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: no picture came
            return None
        return float(handle.json_value())

    def wait_pictures_quiet(self, quiet_ms: int = 400, timeout_ms: int = 30_000) -> None:
        """Wait until no new picture arrived for ``quiet_ms`` (the last change has landed)."""
        self.page.wait_for_function(
            "(q) => { const p = window.__fampnbPix.pics; const last = p.length ? p[p.length - 1]"
            " : window.__fampnbPix.since; return performance.now() - last > q; }",
            arg=quiet_ms, timeout=timeout_ms, polling=50)

    def canvas_data_url(self, locator: Any) -> str:
        """The pixels of the first visible ``<canvas>`` inside ``locator`` (an ipympl figure) as
        a PNG data URL: two calls give different strings when the picture changed.  '' while no
        visible canvas has been painted yet (none laid out, or every pixel still transparent)."""
        return str(locator.evaluate("""(el) => {
            const c = [...el.querySelectorAll('canvas')].find(c => c.width > 0 && c.height > 0
                && c.offsetParent !== null);
            if (!c) return '';
            const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) return c.toDataURL('image/png');
            return '';
        }"""))

    # -- checks -----------------------------------------------------------------------------
    def output_tracebacks(self) -> list[str]:
        """Texts of output areas that show a Python traceback or a widget that failed to render.

        Widget views are not searched as text (a log viewer may show a log's own traceback);
        outputs nested in them (an ``Output`` widget's stderr) are."""
        return self.page.evaluate(r"""(id) => {
            const tb = /Traceback \(most recent call last\)/;
            const broken = /Error displaying widget|Error rendering|Failed to (load|render) model/;
            const out = [];
            const root = document.getElementById(id) || document;
            for (const el of root.querySelectorAll('.jp-OutputArea-output')) {
                const t = el.textContent || '';
                const mime = el.getAttribute('data-mime-type') || '';
                const widget = mime === 'application/vnd.jupyter.widget-view+json' ||
                    el.matches('.jupyter-widgets, .jupyter-widgets *') ||
                    el.querySelector('.jupyter-widgets') !== null;
                if (mime === 'application/vnd.jupyter.error' ||
                    (mime === 'application/vnd.jupyter.stderr' && /Error|Traceback/.test(t)) ||
                    (!widget && (tb.test(t) || broken.test(t))) ||
                    (widget && /^\s*(Error displaying widget|Error rendering)/.test(t)))
                    out.push(t.slice(0, 800));
            }
            return out;
        }""", self.panel_id)

    def problems(self) -> dict[str, list[str]]:
        log = self.server.log_since(self._log_offset)
        return {
            "uncaught JavaScript errors": list(self.page_errors),
            "Python exceptions on the kernel channel": list(self.kernel_errors),
            "tracebacks in output areas": [] if self.page.is_closed() else self.output_tracebacks(),
            "tracebacks in the server/kernel log": _log_tracebacks(log),
            "figures shown as text instead of an image": self.text_figures()
            if not self.page.is_closed() else [],
        }

    def text_figures(self) -> list[str]:
        """Outputs that show a matplotlib Figure's repr (no image formatter was active)."""
        return self.page.evaluate(r"""(id) => [...(document.getElementById(id) || document)
            .querySelectorAll('.jp-OutputArea-output[data-mime-type="text/plain"]')]
            .map(e => e.textContent || '').filter(t => /^<Figure size \d+x\d+/m.test(t))
            .map(t => t.slice(0, 200))""", self.panel_id)

    def problems_text(self) -> str:
        try:
            found = self.problems()
        except Exception as exc:  # noqa: BLE001 - diagnostics only
            return f"(could not collect problems: {exc})"
        lines = [f"{k}:\n    " + "\n    ".join(v) for k, v in found.items() if v]
        return "\n".join(lines)

    def assert_clean(self) -> None:
        """No uncaught JS error, and no Python traceback anywhere (outputs, kernel, log)."""
        found = self.problems()
        if any(found.values()):
            raise AssertionError(f"{self.name}: problems found\n{self.problems_text()}")

    def screenshot(self, locator: Any, path: Path, max_height: int = 1100) -> None:
        """PNG of ``locator`` (a widget's output area) in a tall viewport, at most ``max_height``
        pixels from its top.  ``page.screenshot(clip=...)``: JupyterLab scrolls inside its own
        panel, and ``locator.screenshot`` times out on an ipympl canvas."""
        path.parent.mkdir(parents=True, exist_ok=True)
        size = self.page.viewport_size
        self.page.set_viewport_size({"width": 1280, "height": max_height + 300})
        try:
            locator.evaluate("e => e.scrollIntoView({block: 'start'})")
            self.page.wait_for_timeout(500)  # let the figure's PNG and the layout settle
            box = locator.bounding_box()
            assert box, f"{self.name}: nothing to screenshot"
            clip = {"x": box["x"], "y": max(box["y"], 0), "width": box["width"],
                    "height": min(box["height"], max_height)}
            self.page.screenshot(path=str(path), clip=clip, animations="disabled")
        finally:
            self.page.set_viewport_size(size)

    def close(self) -> None:
        """Shut the notebook's kernel down (frees a core for the next one) and close its tab
        without a "save changes?" dialog (the served copy is temporary anyway)."""
        if self.page.is_closed() or not self.panel_id:
            return
        try:
            await_js(self.page, """async (id) => {
                const app = window.jupyterapp;
                for (const w of app.shell.widgets('main')) {
                    if (w.id !== id) continue;
                    try { await w.sessionContext.shutdown(); } catch (e) {}
                    w.context.model.dirty = false;
                    w.dispose();
                }
            }""", self.panel_id)
        except Exception:  # noqa: BLE001 - best effort; the server's teardown stops the rest
            pass


#: page-side recorder of ``NotebookPage.watch_pictures`` (installed once per page; ``el`` is
#: the element watched now)
_WATCH_PICTURES_JS = r"""(el) => {
    const w = window;
    if (!w.__fampnbPix) {
        const st = w.__fampnbPix = {el: null, pics: [], keys: [], since: 0, observer: null};
        const draw = CanvasRenderingContext2D.prototype.drawImage;
        CanvasRenderingContext2D.prototype.drawImage = function (...args) {
            const r = draw.apply(this, args);
            const c = this.canvas;
            if (st.el && c && c.isConnected && st.el.contains(c)) st.pics.push(performance.now());
            return r;
        };
        for (const type of ['keydown', 'change'])  // a key, or a dropdown choice
            document.addEventListener(type, (e) => {
                if (type === 'keydown' || e.target.tagName === 'SELECT') st.keys.push(performance.now());
            }, true);
    }
    const st = w.__fampnbPix;
    if (st.observer) st.observer.disconnect();
    st.el = el; st.pics = []; st.keys = []; st.since = performance.now();
    const seen = (img) => {
        const done = () => { if (st.el === el) st.pics.push(performance.now()); };
        if (img.complete && img.naturalWidth) done();
        else img.addEventListener('load', done, {once: true});
    };
    st.observer = new MutationObserver((muts) => {
        for (const m of muts) {
            if (m.type === 'attributes') {  // a new src: its picture is there once it has loaded
                if (m.target.nodeName === 'IMG') m.target.addEventListener('load', () => {
                    if (st.el === el) st.pics.push(performance.now()); }, {once: true});
                continue;
            }
            for (const n of m.addedNodes) {
                if (n.nodeName === 'IMG') seen(n);
                else if (n.querySelectorAll) n.querySelectorAll('img').forEach(seen);
            }
        }
    });
    // a new <img> (an output re-shown), or a new src on one (an Image widget's new value)
    st.observer.observe(el, {childList: true, subtree: true, attributes: true, attributeFilter: ['src']});
}"""


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _children(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (Linux /proc; empty elsewhere)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _summarize_frame(text: str) -> str:
    m = re.search(r'"ename"\s*:\s*"([^"]*)"\s*,\s*"evalue"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
    if m:
        return f"{m.group(1)}: {m.group(2)[:300]}"
    i = text.find("Traceback")
    return re.sub(r"\x1b\[[0-9;]*m", "", text[max(0, i): i + 600]) if i >= 0 else text[:300]


def _log_tracebacks(log: str) -> list[str]:
    out = []
    for m in _LOG_ERROR.finditer(log):
        out.append(log[max(0, m.start() - 200): m.start() + 800])
    return out
