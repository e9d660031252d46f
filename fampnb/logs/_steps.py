"""Which step a line names: the step/iteration counters of the line rules (``N/M`` counters,
``iteration N``, ``step=N``, Megatron, mmengine, timm), with the epoch arithmetic some need."""

from __future__ import annotations

import re

from fampnb.logs._event import _c

__all__ = ["step_of", "EPOCH", "ZH_EPOCH", "LEAD_EPOCH", "YOLO_EPOCH"]

# ---- steps ---------------------------------------------------------------------------------
#: a count, possibly in groups of three digits (BasicSR prints ``iter: 107,200``); not the
#: first number of a list (``step 3,14`` is 3)
_THOUSANDS = r"\d{1,3}(?:,\d{3})+(?![\d.])|\d+"
_NAMED, _GROUP1 = 1, 2   # epoch handling of a step rule (0: none), see _STEP_RULES
_STEP_RULES: tuple[tuple[str, re.Pattern[str], int, int, int], ...] = (
    # (word that must occur, pattern, step group, total group (0: none), epoch: _NAMED adds
    #  (epoch-1)*total when an "epoch N" >= 2 is named in the line; _GROUP1: the pattern's
    #  group 1 is a 0-based epoch, epoch*total is added)
    ("iteration", _c(r"\biteration\s+(\d+)\s*/\s*(\d+)"), 1, 2, 0),        # Megatron
    ("step=", _c(r"\bstep=(\d+),\s*skipped="), 1, 0, 0),                   # DeepSpeed
    ("num_updates", _c(r"\bnum_updates[= ](\d+)"), 1, 0, 0),               # fairseq
    ("global", _c(r"\bglobal[ _]step['\"]?\s*[:=]?\s*(\d+)"), 1, 0, 0),          # insightface
    ("iter", _c(r"\biter(?:ation)?s?\s*[:=]?\s*\[?\s*(\d+)\s*/\s*(\d+)"), 1, 2, _NAMED),  # iter [1/9]
    ("][", _c(r"\]\[\s*(\d+)\s*/\s*(\d+)\s*\]"), 1, 2, _NAMED),            # mmengine
    ("](", _c(r"\]\(\s*(\d+)\s*/\s*(\d+)\s*\)"), 1, 2, _NAMED),            # Epoch:[1/3](300/5544)
    ("train:", _c(r"\btrain:\s*(\d+)\s*\[\s*(\d+)\s*/\s*(\d+)"), 2, 3, _GROUP1),  # timm train.py
    ("step", _c(r"\bstep['\"]?\s*[:=#]?\s*\[?\s*(" + _THOUSANDS + r")(?:\s*/\s*(\d+))?"), 1, 2, 0),
    ("iter", _c(r"\biter(?:ation)?\s*[:=]?\s*(" + _THOUSANDS + ")"), 1, 0, 0),   # BasicSR: 107,200
    ("batch", _c(r"\bbatch\s*[:=]?\s*\[?\s*(\d+)\s*/\s*(\d+)"), 1, 2, _NAMED),  # Batch 706/56191
    # the batches since the last print (MXNet's ``Speedometer`` with ``auto_reset``: ``Epoch[0]
    # Batch [500-600]  Speed: 30231.16 samples/sec  accuracy=0.944219``): the last of them
    ("batch", _c(r"\bbatch\s*\[\s*\d+\s*-\s*(\d+)\s*\]"), 1, 0, 0),
    # a bracketed counter after the line's start (torchvision's MetricLogger, DETR, DeiT, MAE:
    # ``Epoch: [0]  [  0/155]  eta: ...``; ``[38/300000] lr: ...``), not an epoch's own
    ("[", _c(r"\[\s*(\d+)\s*/\s*(\d+)\s*\]"), 1, 2, _NAMED),
    # tqdm " 378/2724 [00:01<", Keras "  3/226 [====>....." (a bar of = > . after the counter),
    # Keras 3 " 32/100 ━━━━━━" (its bar of box-drawing lines; its colour codes are gone by now)
    ("/", _c(r"(?:^|[|\s])(\d+)/(\d+)\s*(?:\[(?:\d|[=>.]{3})|\u2501)"), 1, 2, 0),
)
EPOCH = _c(r"\bepoch\s*[:(]?\s*(?:train\)\s*)?\[?\s*(\d+)")
#: the epoch in Chinese: ``第 3 轮`` ("round 3": ``-------第 1 轮训练开始------``)
ZH_EPOCH = _c(r"第\s*(\d{1,6})\s*轮")
#: the epoch column that starts a YOLO training row (YOLOv5 ``16/999  7.38G  0.0343 ...``, 0-based;
#: Ultralytics ``1/100  3.21G  1.234 ...``): ``epoch/epochs`` then the GPU memory
YOLO_EPOCH = _c(r"\s*(\d{1,6})/\d{1,6}\s+\d+(?:\.\d+)?g\s")
#: two bare counters before a record's first named field, ``print(epoch, i, "Loss=%.3f" % loss)``:
#: ``333 154 Loss=nan Time=0.040``; the first is the epoch (the second counts within it)
LEAD_EPOCH = _c(r"\s*(\d{1,6})\s+\d{1,9}\s+(?=[a-z_][\w./-]*\s*[:=]\s*[-+]?(?:\.?\d|nan|inf))")


def _search_at(rx: re.Pattern[str], text: str, word: str) -> re.Match[str] | None:
    """``rx.search(text)`` for a pattern whose every match starts with ``word`` (after a
    zero-width ``\\b``): tried only where ``word`` occurs (a failed search over a long line
    costs more than a few ``find`` calls)."""
    i = text.find(word)
    while i >= 0:
        m = rx.match(text, i)
        if m:
            return m
        i = text.find(word, i + 1)
    return None


def _search_count(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``rx.search(text)`` for the ``N/M [`` rule, tried at each ``/`` (the match starts at the
    separator before the digits, or at the start of the line)."""
    i = text.find("/")
    while i >= 0:
        j = i
        while j and text[j - 1].isdecimal():
            j -= 1
        if j < i:
            m = rx.match(text, j - 1 if j else 0)
            if m:
                return m
        i = text.find("/", i + 1)
    return None


def _bracket(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first ``[N/M]`` counter of ``text`` that is not an epoch's (``Epoch [3/100]``,
    ``epoch: [3/100]``)."""
    i = text.find("[")
    while i >= 0:
        m = rx.match(text, i)
        if m and not text[:i].rstrip(" :=").endswith(("epoch", "epochs")):
            return m
        i = text.find("[", i + 1)
    return None


#: a bare counter in brackets that opens the line, before the record's fields (XGBoost's and
#: LightGBM's boosting round: ``[44]\ttrain-logloss:-nan\tvalid-logloss:0.332``): the step,
#: where no other counter is named
LEAD_COUNTER = _c(r"\[\s*(\d{1,12})\s*\]\s+(?=[a-z_])")
#: a bare counter and a colon that open the line, then a tab (or the spaces a tab became) before
#: the record's fields (CatBoost's iteration: ``34:<tab>learn: 0.9508429<tab>test: 0.8235312``;
#: not Slurm's ``0: `` rank label, one space)
LEAD_COLON = _c(r"(\d{1,12}):(?:\t|\s{2,})(?=[a-z_])")


def step_of(text: str) -> tuple[int | None, int | None, bool]:
    """``(step, total, named)`` the (lower-cased) line names, else ``(None, None, False)``;
    ``named``: by a word (``step``, ``iter``, ``global_step``), not a bare ``N/M`` counter."""
    for word, rx, g_step, g_total, epoch in _STEP_RULES:
        if word not in text or (word == "[" and "/" not in text):
            continue
        m = (_search_count(rx, text) if word == "/" else _bracket(rx, text) if word == "["
             else _search_at(rx, text, word))
        if m:
            step = int(m.group(g_step).replace(",", "")[:12])
            total = int(m.group(g_total)[:12]) if g_total and m.group(g_total) else None
            if epoch == _GROUP1 and total:
                step += int(m.group(1)[:6]) * total
            elif epoch == _NAMED and total:
                ep = EPOCH.search(text)
                if ep and int(ep.group(1)[:6]) >= 2:
                    step += (int(ep.group(1)[:6]) - 1) * total
            return step, total, word != "/"
    if text[:1] == "[":
        m = LEAD_COUNTER.match(text)
        if m:
            return int(m.group(1)), None, False
    elif text[:1].isdigit():
        m = LEAD_COLON.match(text)
        if m:
            return int(m.group(1)), None, False
    return None, None, False


