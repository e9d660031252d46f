"""``fampnb.probe.watch``: find the first inf/NaN tensor in a model, and say what to change there.

``with watch(model, fmt="fp16", scaler=None, every=1) as w:`` registers, on every module of
``named_modules()``, a forward pre-hook (its inputs), a forward hook (its outputs, and a tensor
hook on each output for the gradient that flows back into it) and, on every parameter, a gradient
hook.  Each hook queues ``t.aminmax()`` (min and max over all elements in one pass; ``|t|``'s max
is the larger of ``max`` and ``-min``; NaN propagates, inf stays inf; no ``|t|`` tensor is made),
as 0-d tensors on the tensor's device, and notes where they came from on the host; nothing is
read back.  ``w.step()``, called once after each training step, stacks the step's reductions
(with the loss and the scaler's scale) into one tensor and reads it with **one host sync**, then
keeps only what it needs: the first non-finite record of the step (an ``Origin``), each module's
largest finite abs max, and the step's summary.  ``every=k`` watches steps 1, 1+k, 1+2k... (the
hooks are registered for those steps only: the others run with none).  A tensor measured once
in a forward pass (the previous module's output as this one's input, a child's output returned
by its parent) is not measured again unless an in-place op changed it.  Works on CPU and CUDA,
with a model cast to fp16/bf16 or run under autocast.  Hooks are removed on exit, also when the
block raises.

The verdict (``w.diagnose()``) uses the doctor's vocabulary (``fampnb.diagnose``); the coupling
to it is ``diagnosis`` in ``fampnb.probe.verdict``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..formats import Format, get

__all__ = ["watch", "Watch", "Origin", "Near", "StepSummary", "PHASES", "TENSORS", "KINDS"]

PHASES = ("forward", "backward")
TENSORS = ("input", "output", "grad")
KINDS = ("inf", "nan")
_FWD, _BWD = 0, 1
_IN, _OUT, _GRAD = 0, 1, 2


@dataclass(frozen=True)
class Origin:
    """Where a non-finite value was first seen: ``step`` (from 1), ``module`` (dotted name from
    ``named_modules()``, ``""`` for the model itself), ``phase`` (``"forward"``/``"backward"``),
    ``tensor`` (``"input"``, ``"output"`` or ``"grad"``), ``kind`` (``"inf"``/``"nan"``),
    ``abs_max`` (the tensor's abs max: inf or NaN), ``param`` (the parameter's name for a
    parameter gradient, else ``""``) and ``before`` (the largest finite abs max seen earlier in
    the same pass of that step: what the module was given, against the format's max)."""

    step: int
    module: str
    phase: str
    tensor: str
    kind: str
    abs_max: float
    param: str = ""
    before: float = 0.0

    def where(self) -> str:
        """``'attn' output (forward)``; the model's own input: ``the model input (forward)``."""
        who = "the model" if self.module == "" else repr(self.module)
        what = f"{self.param} grad" if self.param else self.tensor
        return f"{who} {what} ({self.phase})"


@dataclass(frozen=True)
class Near:
    """A module tensor whose largest finite abs max came within ``factor`` of the format's max
    (``ratio = abs_max / max``; above 1 it would not fit the format at all)."""

    module: str
    phase: str
    tensor: str
    abs_max: float
    ratio: float
    step: int


@dataclass(frozen=True)
class StepSummary:
    """One ``w.step()``: whether it was watched, the first non-finite record (or None), the scale
    in force during the step and the one after it (None without a scaler), and the loss."""

    step: int
    watched: bool
    origin: Origin | None
    scale: float | None
    next_scale: float | None
    loss: float | None
    forward_bad: bool = False
    backward_bad: bool = False


@dataclass
class _Pending:
    vals: list[Any] = field(default_factory=list)
    meta: list[tuple[int, int, int, str]] = field(default_factory=list)
    seen: dict[int, tuple[Any, int]] = field(default_factory=dict)
    outs: set[int] = field(default_factory=set)


def _same(entry: tuple[Any, int] | None, t: Any) -> bool:
    """Whether ``entry`` (a tensor measured earlier in this forward, and its version counter) is
    ``t``, unchanged since (an in-place op bumps the counter: then it is measured again)."""
    return entry is not None and entry[0] is t and entry[1] == t._version


def _floats(obj: Any, torch: Any) -> list[Any]:
    """The floating tensors of a hook argument (a tensor, a tuple/list, a dict), one level deep."""
    if isinstance(obj, torch.Tensor):
        return [obj] if obj.is_floating_point() and obj.numel() else []
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (tuple, list)) else ()
    return [t for t in items if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()]


class Watch:
    """The object ``watch()`` returns; see the module docstring.  After (or during) the block:
    ``first`` (the first ``Origin`` or None), ``origins`` (the first per step with one),
    ``near``, ``steps`` (``StepSummary`` per step), ``diagnose()``, ``log_lines()``."""

    def __init__(self, model: Any, fmt: str | Format = "fp16", scaler: Any = None,
                 every: int = 1, near: float = 16.0) -> None:
        try:
            import torch
        except ImportError as exc:  # pragma: no cover - exercised only without torch
            raise ModuleNotFoundError("fampnb.probe.watch needs torch: "
                                      "pip install torch (CPU wheel is enough)") from exc
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"watch needs a torch.nn.Module, got {type(model).__name__}")
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an integer >= 1, got {every!r}")
        if not (isinstance(near, (int, float)) and math.isfinite(near) and near >= 1):
            raise ValueError(f"near must be a finite factor >= 1, got {near!r}")
        self._torch = torch
        self.model = model
        self.fmt = get(fmt)
        self.scaler = scaler
        self.every = every
        self.factor = float(near)
        self.names = [n for n, _ in model.named_modules()]
        self.first: Origin | None = None
        self.origins: list[Origin] = []
        self.steps: list[StepSummary] = []
        self._peak: dict[tuple[int, int, int], tuple[float, int]] = {}
        self._handles: list[Any] = []
        self._hooked: list[Any] = []
        self._pending = _Pending()
        self._step = 1
        self._on = False
        self._open = False
        self._scale: float | None = None
        self._ograds: list[Any] = []
        self._plan: list[tuple[Any, Any, Any, list[tuple[Any, Any]]]] = []

    # -- context ---------------------------------------------------------------------------
    def __enter__(self) -> Watch:
        mods = list(self.model.named_modules())
        self._ograds = [self._ograd(i) for i in range(len(mods))]  # made once, not per forward
        # the hooks of each module, made once: with every=k they are registered again every k
        # steps, and walking the modules and making the closures each time cost a third of that
        self._plan = [(mod, self._pre(i), self._post(i, i == 0),
                       [(p, self._pgrad(i, pname)) for pname, p in mod.named_parameters(recurse=False)])
                      for i, (_, mod) in enumerate(mods)]
        if self.scaler is not None:
            self._scale = float(self.scaler.get_scale())
        self._open = True
        self._on = self._watched(self._step)
        if self._on:
            self._attach()
        return self

    def _attach(self) -> None:
        """Register the hooks (for a watched step; an unwatched one runs with none at all)."""
        for mod, pre, post, params in self._plan:
            self._handles.append(mod.register_forward_pre_hook(pre, with_kwargs=True))
            self._handles.append(mod.register_forward_hook(post))
            for p, hook in params:
                if p.requires_grad:
                    if p._backward_hooks is None:
                        self._hooked.append(p)   # no hooks before ours: none after
                    self._handles.append(p.register_hook(hook))

    def _detach(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        # a removed tensor hook leaves an empty hook dict behind, which autograd still calls into
        # on every backward (about 1-2% of a step of the demo model): give back what was there
        for p in self._hooked:
            if p._backward_hooks is not None and not p._backward_hooks:
                p._backward_hooks = None
        self._hooked.clear()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Remove every hook (``__exit__`` does this, also when the block raised)."""
        self._detach()
        self._open = self._on = False
        self._pending = _Pending()

    @property
    def hooks(self) -> int:
        """How many hooks are registered now (0 after the block, and during an unwatched step)."""
        return len(self._handles)

    def _watched(self, step: int) -> bool:
        return (step - 1) % self.every == 0

    # -- hooks -----------------------------------------------------------------------------
    def _record(self, t: Any, idx: int, phase: int, kind: int, param: str = "") -> None:
        p = self._pending
        lo, hi = t.detach().aminmax()  # |t|'s max is max(max, -min): one pass, no |t| tensor
        p.vals += (hi, lo)
        p.meta.append((idx, phase, kind, param))

    def _pre(self, idx: int) -> Any:
        def hook(mod: Any, args: Any, kwargs: Any) -> None:
            if not self._on:
                return
            seen = self._pending.seen
            ts = _floats(args, self._torch)
            for t in ts + _floats(kwargs, self._torch) if kwargs else ts:
                if not _same(seen.get(id(t)), t):
                    seen[id(t)] = (t, t._version)
                    self._record(t, idx, _FWD, _IN)
        return hook

    def _post(self, idx: int, root: bool) -> Any:
        def hook(mod: Any, args: Any, out: Any) -> None:
            if not self._on:
                return
            seen = self._pending.seen
            for t in _floats(out, self._torch):
                if _same(seen.get(id(t)), t) and id(t) in self._pending.outs:
                    continue  # a child's output passed through unchanged: measured already
                seen[id(t)] = (t, t._version)
                self._pending.outs.add(id(t))
                self._record(t, idx, _FWD, _OUT)
                if t.requires_grad:
                    t.register_hook(self._ograds[idx])
            if root:  # the forward pass is over: free the references
                seen.clear()
                self._pending.outs.clear()
        return hook

    def _ograd(self, idx: int) -> Any:
        def hook(g: Any) -> None:
            if self._on and g is not None and g.is_floating_point() and g.numel():
                self._record(g, idx, _BWD, _GRAD)
        return hook

    def _pgrad(self, idx: int, pname: str) -> Any:
        def hook(g: Any) -> None:
            if self._on and g is not None and g.numel():
                self._record(g, idx, _BWD, _GRAD, pname)
        return hook

    # -- the step --------------------------------------------------------------------------
    def step(self, loss: Any = None) -> StepSummary:
        """End the current training step: read its reductions (one host sync) and move on.
        ``loss`` (a tensor or a number, optional) is kept for ``log_lines``."""
        torch = self._torch
        n, watched, p = self._step, self._on, self._pending
        is_t = isinstance(loss, torch.Tensor)
        scale_t = getattr(self.scaler, "_scale", None) if self.scaler is not None else None
        if not isinstance(scale_t, torch.Tensor):
            scale_t = None
        row: list[float] = []
        if p.vals or scale_t is not None:
            extra = [loss.detach().reshape(())] if is_t else []
            if scale_t is not None:
                extra.append(scale_t.reshape(()))
            row = _gather(torch, p.vals, extra).cpu().tolist()  # the one host sync of a step
        elif is_t:  # an unwatched step: one call (after a training step, each torch call
            row = [_scalar(loss)]  # costs tens of microseconds: six of them were 2-3% of it)
        pairs, rest = row[:len(p.vals)], row[len(p.vals):]
        vals = [_abs_max(hi, lo) for hi, lo in zip(pairs[0::2], pairs[1::2])]
        loss_v = rest.pop(0) if is_t else (
            float(loss) if isinstance(loss, (int, float)) else None)
        next_scale = None
        if self.scaler is not None:
            next_scale = rest.pop(0) if scale_t is not None else float(self.scaler.get_scale())
        origin, fbad, bbad = self._scan(n, vals, p.meta)
        summary = StepSummary(n, watched, origin, self._scale, next_scale, loss_v, fbad, bbad)
        self.steps.append(summary)
        if origin is not None:
            self.origins.append(origin)
            if self.first is None:
                self.first = origin
        self._scale = next_scale
        if p.vals or p.meta or p.seen:
            self._pending = _Pending()
        self._step = n + 1
        self._on = self._open and self._watched(self._step)
        if self._on and not self._handles:
            self._attach()
        elif not self._on and self._handles:
            self._detach()
        return summary

    def _scan(self, n: int, vals: list[float], meta: list[tuple[int, int, int, str]]
              ) -> tuple[Origin | None, bool, bool]:
        origin: Origin | None = None
        bad = [False, False]
        before = [0.0, 0.0]
        for v, (idx, phase, kind, param) in zip(vals, meta):
            if math.isfinite(v):
                before[phase] = max(before[phase], v)
                key = (idx, phase, kind)
                if v > self._peak.get(key, (-1.0, 0))[0]:
                    self._peak[key] = (v, n)
                continue
            bad[phase] = True
            if origin is None:
                origin = Origin(n, self.names[idx], PHASES[phase], TENSORS[kind],
                                "nan" if math.isnan(v) else "inf", v, param, before[phase])
        return origin, bad[0], bad[1]

    # -- results ---------------------------------------------------------------------------
    @property
    def near(self) -> list[Near]:
        """Module tensors whose largest finite abs max came within the factor ``near`` (default
        16) of the format's max, largest ratio first."""
        lim = self.fmt.max / self.factor
        rows = [Near(self.names[i], PHASES[ph], TENSORS[k], v, v / self.fmt.max, s)
                for (i, ph, k), (v, s) in self._peak.items() if v >= lim]
        return sorted(rows, key=lambda r: (-r.ratio, r.module, r.phase, r.tensor))

    def log_lines(self) -> list[str]:
        """What the watch saw, as lines ``fampnb.logs.parse`` reads: per step ``step N: loss X,
        loss scale S`` (the parts known), the scaler's changes as the article's ``Loss scaling:
        A -> B (overflow|growth)`` lines, and the first non-finite tensor of a step as a note."""
        out: list[str] = []
        for s in self.steps:
            scale, nxt = s.scale, s.next_scale
            changed = scale is not None and nxt is not None and nxt != scale
            if scale is not None and nxt is not None and changed:
                why = "overflow" if nxt < scale else "growth"
                out.append(f"Loss scaling: {_num(scale)} -> {_num(nxt)} ({why})")
            show = nxt is not None and not changed  # a change is said once
            parts = [f"step {s.step}:"]
            if s.loss is not None:
                parts.append(f"loss {s.loss:.4f}" + ("," if show else ""))
            if nxt is not None and show:
                parts.append(f"loss scale {_num(nxt)}")
            if len(parts) > 1:
                out.append(" ".join(parts))
            if s.origin is not None:
                o = s.origin
                out.append(f"watch: step {o.step}: first {o.kind} in {o.where()}")
        return out

    def diagnose(self) -> Any:
        """The doctor's ``Diagnosis`` for what the watch saw, with ``where`` (the ``Origin``
        that decided it) and ``near``; see ``fampnb.probe.verdict``."""
        from .verdict import diagnosis

        return diagnosis(self)


def _abs_max(hi: float, lo: float) -> float:
    """The largest |x| of a tensor from its max ``hi`` and min ``lo``; NaN when there is one (both
    reductions propagate NaN), inf when an element is +-inf."""
    if math.isnan(hi) or math.isnan(lo):
        return math.nan
    return max(hi, -lo)


def _scalar(t: Any) -> float:
    """A one-element tensor's value (``item()``: one host read); the error ``reshape(())`` gives
    a tensor of several elements on a watched step, for the same mistake on any other."""
    if t.numel() != 1:
        raise RuntimeError(f"shape '[]' is invalid for input of size {t.numel()}")
    return float(t.item())


def _gather(torch: Any, vals: list[Any], extra: list[Any]) -> Any:
    """One float32 vector of the 0-d tensors ``vals + extra``, on the first one's device: one
    ``stack`` per dtype run (a model has one or two), no host copy."""
    dev = (vals or extra)[0].device
    parts: list[Any] = []
    run: list[Any] = []
    for v in vals + extra:
        if run and (v.dtype != run[0].dtype or v.device != run[0].device):
            parts.append(torch.stack(run).to(dev, torch.float32))
            run = []
        run.append(v)
    parts.append(torch.stack(run).to(dev, torch.float32))
    return parts[0] if len(parts) == 1 else torch.cat(parts)


def _num(x: float) -> str:
    return str(int(x)) if math.isfinite(x) and x == int(x) and abs(x) < 2 ** 63 else repr(x)


def watch(model: Any, fmt: str | Format = "fp16", scaler: Any = None, every: int = 1,
          near: float = 16.0) -> Watch:
    """Watch ``model`` for the first non-finite tensor (use as a context manager; call
    ``w.step()`` after each training step).  ``fmt`` is the format whose range ``near`` and the
    verdict judge against; ``scaler`` a ``torch.amp.GradScaler`` (or anything with
    ``get_scale()``) whose scale history is read each step; ``every=k`` watches every k-th step
    from step 1; ``near`` the factor below the format's max that counts as close.  TypeError /
    ValueError with one line for a bad argument."""
    return Watch(model, fmt=fmt, scaler=scaler, every=every, near=near)
