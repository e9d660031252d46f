"""Expected texts for the browser tests: the same widget, built in the test process.

A browser step (a key on a slider handle, a value typed into a readout, a dropdown choice, text
typed into a box) changes a control in the notebook's kernel.  The test reads the value the kernel
ended up with (a handle's step is the browser's arithmetic), sets the same control of a *twin*
widget built here by the package, and checks that

- the kernel's text outputs equal the twin's (the notebook computes what the package computes for
  that setting), and
- the page shows exactly those texts, and still shows them a moment later (nothing arrives late).

Each test also checks the key numbers against ``fampnb.formats`` / ``fampnb.scaler`` directly.
Controls and texts are found by their ``fampnb-*`` CSS classes, in the page and in the kernel
(through ipywidgets' registry of live widgets), so no variable name of the notebook matters.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable
from typing import Any

from .labdriver import NotebookPage, html_to_text, normalize

#: pause after a change appears in the page, so that a browser-side echo (a slider snapping to
#: its step) reaches the kernel before its state is read
SETTLE_MS = 250


def fampnb_classes(widget: Any) -> tuple[str, ...]:
    return tuple(sorted(c for c in getattr(widget, "_dom_classes", ()) if c.startswith("fampnb-")))


def selector_of(widget: Any) -> str:
    """CSS selector of a widget from its own fampnb-* classes (as the page's DOM carries them)."""
    classes = fampnb_classes(widget)
    if not classes:
        raise AssertionError(f"{type(widget).__name__} has no fampnb-* CSS class")
    return "." + ".".join(classes)


#: one round trip: every live widget with a fampnb-* class -> [classes, value] (JSON)
_STATE_EXPR = (
    "__import__('json').dumps([[sorted(c for c in x._dom_classes if c.startswith('fampnb-')), "
    "getattr(x, 'value', None)] for x in list(__import__('ipywidgets').widgets.widget."
    "_instances.values()) if any(c.startswith('fampnb-') for c in getattr(x, '_dom_classes', "
    "()))], default=repr)"
)


class Twin:
    """``make_*(**kwargs)`` built in this process, mirroring widget number ``index`` of the page."""

    def __init__(self, nb: NotebookPage, factory: Callable[..., Any], index: int = 0,
                 **kwargs: Any) -> None:
        import ipywidgets as w

        self.nb = nb
        self.index = index
        self.name = getattr(factory, "__name__", "widget")
        self.ui, self.controls, self.artists = factory(**kwargs)
        self.texts = {k: a for k, a in self.artists.items()
                      if isinstance(a, w.HTML) and fampnb_classes(a)}
        if not self.texts:
            raise AssertionError(f"{self.name} returned no HTML text with a fampnb-* class")

    def _obj(self, key: str) -> Any:
        obj = self.controls.get(key, self.artists.get(key))
        if obj is None:
            raise KeyError(f"{self.name} has no control or artist {key!r}")
        return obj

    # -- page side --------------------------------------------------------------------------
    def loc(self, key: str) -> Any:
        """The page's element of control or text ``key`` (of widget instance ``index``)."""
        return self.nb.root.locator(selector_of(self._obj(key))).nth(self.index)

    def output(self) -> Any:
        """The output area that holds the whole widget (for screenshots)."""
        return self.nb.root.locator(
            f".jp-OutputArea-output:has({selector_of(self.ui)})").nth(self.index)

    def shown(self) -> dict[str, str]:
        return {k: normalize(self.loc(k).text_content()) for k in self.texts}

    def expected(self) -> dict[str, str]:
        return {k: html_to_text(self.nb.page, a.value) for k, a in self.texts.items()}

    def status_shown(self, key: str = "status_text") -> str:
        return normalize(self.loc(key).text_content())

    # -- kernel side ------------------------------------------------------------------------
    def kernel_state(self) -> dict[str, Any]:
        """Values of this widget's controls and texts in the notebook's kernel (one round trip)."""
        raw = json.loads(ast.literal_eval(self.nb.kernel_eval(_STATE_EXPR)))
        seen: dict[tuple[str, ...], list[Any]] = {}
        for classes, value in raw:
            seen.setdefault(tuple(classes), []).append(value)
        out = {}
        for key in (*self.controls, *self.texts):
            values = seen.get(fampnb_classes(self._obj(key)), [])
            if len(values) > self.index:
                out[key] = values[self.index]
        missing = [k for k in self.texts if k not in out]
        if missing:
            raise AssertionError(f"{self.name}: texts {missing} not found in the kernel")
        return out

    def kernel_value(self, key: str) -> Any:
        return self.kernel_state()[key]

    def sync_from_kernel(self) -> dict[str, Any]:
        """Set the twin's controls (in ``controls`` order) to the values the kernel has now."""
        state = self.kernel_state()
        for key, ctl in self.controls.items():
            if key in state and hasattr(ctl, "value") and state[key] is not None:
                self._set(key, state[key])
        return state

    def _set(self, key: str, value: Any) -> None:
        ctl = self.controls[key]
        if isinstance(ctl.value, tuple) and isinstance(value, list):
            value = tuple(value)
        if ctl.value != value:
            ctl.value = value

    # -- checks -----------------------------------------------------------------------------
    def check_kernel_matches(self, state: dict[str, Any] | None = None) -> dict[str, str]:
        """The kernel's texts equal the twin's (rendered the way the page renders them)."""
        state = self.kernel_state() if state is None else state
        want = self.expected()
        bad = []
        for key, text in want.items():
            got = html_to_text(self.nb.page, state[key])
            if got != text:
                bad.append(f"  {key}:\n    package: {text!r}\n    notebook: {got!r}")
        if bad:
            raise AssertionError(f"{self.nb.name}: the notebook's widget does not show what the "
                                 f"package computes for the same setting\n" + "\n".join(bad)
                                 + "\n" + self.diagnostics(state))
        return want

    def wait_matches(self, timeout_ms: int = 30_000, stable_ms: int = SETTLE_MS) -> dict[str, str]:
        """Wait until the page shows the twin's texts, and still shows them ``stable_ms`` later."""
        want = self.expected()
        try:
            for key, text in want.items():
                self.nb.wait_text(self.loc(key), text, timeout_ms)
            if stable_ms:
                self.nb.page.wait_for_timeout(stable_ms)
                now = self.shown()
                moved = {k: now[k] for k in want if now[k] != want[k]}
                if moved:
                    raise AssertionError(f"{self.nb.name}: texts changed again after matching: "
                                         f"{moved}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.diagnostics()}") from None
        return want

    def diagnostics(self, state: dict[str, Any] | None = None) -> str:
        """Controls as the kernel and the twin have them (for failure messages)."""
        try:
            state = self.kernel_state() if state is None else state
        except Exception as exc:  # noqa: BLE001 - diagnostics only
            return f"(kernel state unavailable: {exc})"
        lines = [f"  {key}: kernel {state.get(key)!r}, package twin {ctl.value!r}"
                 for key, ctl in self.controls.items() if hasattr(ctl, "value")]
        return "controls:\n" + "\n".join(lines)

    def step(self, key: str, action: Callable[[], None], *, via: Any = None,
             changes: tuple[str, ...] = (), must_change: bool = True) -> Any:
        """Do ``action`` in the browser; mirror control ``key`` from the kernel into the twin;
        check the kernel's texts against the twin's and the page against both.

        ``via``: the value the browser sent first, when it can send two (a value typed into a
        log slider's readout, then the slider's own grid value); the twin gets both, in order.
        ``changes``: text keys that must differ from before (default: at least one text must,
        unless ``must_change`` is False: a setting that does not alter the outcome).
        Returns the control's new value (as the kernel has it).
        """
        before = self.shown()
        before_value = self.kernel_value(key) if hasattr(self.controls[key], "value") else None
        action()
        self._wait_changed(key, before, before_value, changes)
        self.nb.page.wait_for_timeout(SETTLE_MS)
        state = self.kernel_state()
        if hasattr(self.controls[key], "value"):
            if via is not None:
                self._set(key, via)
            self._set(key, state[key])
        else:  # a Button: the click reached the kernel; click the twin's too
            self.controls[key].click()
        self.check_kernel_matches(state)
        after = self.wait_matches()
        for k in changes:
            assert after[k] != before[k], f"{k} did not change: {after[k]!r}"
        if must_change and not changes:
            assert after != before, f"no text changed after changing {key}"
        return state.get(key)

    def _wait_changed(self, key: str, before: dict[str, str], before_value: Any,
                      keys: tuple[str, ...], timeout_ms: int = 30_000) -> None:
        """Wait until a watched text changed in the page, or control ``key`` in the kernel."""
        page = self.nb.page
        watch = keys or tuple(before)
        waited = 0
        while True:
            now = self.shown()
            if any(now[k] != before[k] for k in watch):
                return
            if before_value is not None and _differs(before_value, self.kernel_value(key)):
                return
            if waited > timeout_ms:
                raise AssertionError(f"{self.nb.name}: nothing changed within {timeout_ms} ms "
                                     f"after acting on {key}; still {now}\n{self.diagnostics()}"
                                     f"\n{self.nb.problems_text()}")
            page.wait_for_timeout(150)
            waited += 150

    # -- browser actions on control ``key`` (pass them to ``step``) -------------------------
    def press(self, key: str, *keys: str) -> Callable[[], None]:
        """Keys on the slider's handle: ArrowRight/ArrowLeft one step, End/Home max/min."""
        return lambda: self.nb.slider_press(self.loc(key), *keys)

    def type_readout(self, key: str, text: str) -> Callable[[], None]:
        """Type an exact value into the slider's readout, then Enter."""
        return lambda: self.nb.slider_type(self.loc(key), text)

    def choose(self, key: str, label: str) -> Callable[[], None]:
        """Pick ``label`` in a Dropdown."""
        return lambda: self.nb.choose(self.loc(key), label)

    def toggle(self, key: str, label: str) -> Callable[[], None]:
        """Click the button ``label`` of a ToggleButtons control."""
        return lambda: self.nb.toggle(self.loc(key), label)

    def type_text(self, key: str, text: str) -> Callable[[], None]:
        """Replace the text of a Text/Textarea control (Enter commits a one-line box)."""
        return lambda: self.nb.type_text(self.loc(key), text)

    def check(self, key: str) -> Callable[[], None]:
        """Click a Checkbox control."""
        return lambda: self.loc(key).locator("input").click()

    def click(self, key: str) -> Callable[[], None]:
        """Click a Button control."""
        return lambda: self.loc(key).click()


def table_rows(locator: Any) -> list[list[str]]:
    """The cells' texts of every row of the first table inside ``locator``."""
    return locator.evaluate("""(el) => [...el.querySelectorAll('tr')].map(
        tr => [...tr.children].map(td => td.textContent.replace(/\\s+/g, ' ').trim()))""")


def check_display_shows_defaults(nb: NotebookPage, factory: Callable[..., Any],
                                 **kwargs: Any) -> None:
    """What the reader sees first is what the package computes for the notebook's arguments:
    the kernel's texts and the page's equal those of a fresh ``factory(**kwargs)`` (a slider
    that snapped its start value to its grid and sent it back must not have changed them)."""
    fresh = Twin(nb, factory, **kwargs)
    fresh.check_kernel_matches()
    fresh.wait_matches()


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        a = tuple(a)
    if isinstance(b, list):
        b = tuple(b)
    if isinstance(a, float) and isinstance(b, (int, float)):
        return not (a == b or (math.isnan(a) and math.isnan(b)))
    return a != b
