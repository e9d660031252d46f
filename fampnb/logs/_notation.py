"""The records reader: any line, or row of a structured file, -> ``{name: value text}`` fields.

Notations read (searched in the lower-cased line; nothing is evaluated): JSON objects (numbers or
quoted numbers, ``NaN``/``Infinity``), Python dict reprs, ``[key] value`` (loguru trainers),
``key=value``, ``key = value``, ``key: value``, ``key value``, ``key | value`` (Trax), a key with a
bracketed index (``train_batch_loss[ 6590 ]: nan``: the value is the key's; the index is not read as
a step) or a parenthesised or bracketed qualifier before ``:`` or ``=`` (litgpt's ``loss train
(curr): 1.657``, ``loss [jax]: 0.0037``),
with fields split by ``|`` ``,`` ``;`` `` - ``, ``...``, tabs or runs of spaces (progress-bar
postfixes of tqdm and Keras are such fields), a value possibly wrapped as ``tensor(...)`` or
followed by ``%`` (not by ``-`` or ``:`` and a digit: ``2021-10-28``, ``23:20`` are a date and a
time, not a value; nor by ``/`` and a digit: ``iter 0/88`` is a counter, read by the step rules;
nor by a group of three digits: ``iter:  25,377`` is a count with a thousands separator), or
a bracketed list of numbers (numpy's ``loss [9.21 9.20]``, ``loss: [0.3, 0.4]``, ``loss=[nan,
1.2]``, a one-element ``[nan]``: per-trainer or per-device values), read as one value: NaN when any
element is NaN, else +-inf when any element is infinite, else the mean of the elements (of those
shown, where numpy summarises a long array with ``...``; ``array_value``; numpy's wrap of a long
list onto the next lines is joined by ``fampnb.logs._wrap``); keys of up to three words (``lm
loss``, ``loss scale``), a trailing connective dropped (``loss is nan``, ``the loss became inf``).
CSV/TSV files and aligned tables are read by their header row (``header``/``row``); pretty-printed
JSON objects (HF's ``trainer_state.json``) one ``"key": value`` line at a time (``json_field``).
Which field plays which role is the vocabulary's business (``fampnb.logs._vocab``).
``structured_head(head)`` says whether a file's first bytes start such a structured file (or UTF-16
text)."""

from __future__ import annotations

import math
import re

from fampnb.logs._num import NUM, nonfinite
from fampnb.logs._read import utf16
from fampnb.logs._vocab import VALUE_ROLES, role, summary

__all__ = ["pairs", "header", "row", "fixed_row", "json_field", "number", "array_value", "CONNECTIVES",
           "ARRAY", "exact_zero", "structured_head", "lower", "table_part"]

#: a key: a word (a Chinese one too: ``训练次数``) and what may follow it; a value is not a key
_KEY = r"(?!(?:nan|inf|infinity)\b)[a-z_\u4e00-\u9fff][\w./\-]*#?"     # (``step#:``: dlib)
#: a bracketed list of numbers, separated by commas or whitespace (numpy pads with spaces)
#: (and numpy's summary of a long one, ``[0. 1. 2. ... 7. 8. 9.]``, ``[0, 1, ..., 9]``)
ARRAY = (r"\[\s*(?:" + NUM + r"(?:\s*,\s*|\s+)(?:\.\.\.(?:\s*,\s*|\s+))?)*" + NUM
         + r"\s*,?\s*\]")
#: a tuple of two or more numbers (``loss: (0.0451, 0.0313)``: a print of ``(train, valid)``), read
#: as a list is
TUPLE = r"\(\s*" + NUM + r"(?:\s*,\s*" + NUM + r")+\s*,?\s*\)"
_PAIR = re.compile(
    r"(?:(?<![\w.])|(?<=\.\.\.))(?:\[(?P<bkey>" + _KEY + r"(?: " + _KEY + r"){0,2})\]|"
    r"(?P<q>[\"']?)(?P<key>" + _KEY + r"(?: " + _KEY + r"){0,3})(?P=q)(?:\[\s*\d+\s*\])?)"
    r"(?:\s?(?:\((?:[a-z_]+ ?){1,4}\)|\[(?:[a-z_]+ ?){1,4}\])(?=\s*[:=]))?"
    # (``>>``: SME's ``COST >> 0.5846``; `` - ``: segmentation_models.pytorch's bar postfix
    # ``bce_dice_loss - -3.208e+03, iou - 1.163``; a tqdm bar's ``  3%|`` after its description
    # is no value)
    r"(?:\s*(?:[:=]|>>)\s*|\s+\|\s+|\s+-\s+|\s+)(?!\d{1,3}%\|)"
    r"(?:(?:tensor\()?(?P<vq>[\"']?)(?P<val>" + NUM + r")(?P=vq)"
    r"(?:\.{3}|%?(?!\w|\.[\w.]|[-:]\d|\s*/\s*\d|,\d{3}(?!\d)))|"
    r"(?P<arr>" + ARRAY + "|" + TUPLE + "))")
#: words between a name and its value that are not part of the name
CONNECTIVES = frozenset({"is", "was", "became", "becomes", "become", "now", "value", "reads",
                         "equals", "of", "at", "to", "="})
_NUM_RX = re.compile(NUM)


#: full-width punctuation as Chinese input methods type it (``Loss：1.98``), one character for one
_FULLWIDTH = str.maketrans("：，；＝（）", ":,;=()")


def lower(text: str) -> str:
    """The line as the readers search it: lower case, full-width punctuation as ASCII (the same
    length: a match's offsets are the line's)."""
    low = text.lower()
    return low.translate(_FULLWIDTH) if not low.isascii() else low


def number(text: str) -> float | None:
    """The number a cell holds (quotes, ``%`` and ``tensor(`` around it allowed), else None."""
    try:
        return float(text)          # (the common case: a plain number; ``nan``, ``inf`` too)
    except ValueError:
        pass
    t = text.strip().strip("'\"").strip()
    if t.startswith("tensor("):
        t = t[7:]
    m = _NUM_RX.match(t.lower())
    if m is None:
        return None
    rest = t[m.end():].strip()
    if rest and rest[0] not in "%,)":
        return None
    try:
        return float(m.group(0))
    except ValueError:           # ``nan.0`` (Lightning), ``nanxxx`` (a fill), ``nan.08``
        return nonfinite(m.group(0))


def array_value(text: str) -> str:
    """The value of a bracketed list of numbers (``[9.21 nan 9.20]``), as number text: ``nan``
    when any element is NaN, else ``inf``/``-inf`` when any element is infinite (the first one's
    sign), else the mean of the elements (``repr`` of the float).  A list of zeros keeps the
    spelling of its zeros (a rounded ``0.0000`` among them first: see ``exact_zero``)."""
    toks = _NUM_RX.findall(text.lower())
    vals = [x for t in toks if (x := number(t)) is not None]
    if not vals or any(math.isnan(x) for x in vals):
        return "nan"
    inf = next((x for x in vals if math.isinf(x)), None)
    if inf is not None:
        return "inf" if inf > 0 else "-inf"
    if not any(vals):
        return next((t for t in toks if not exact_zero(t)), toks[0])
    return repr(math.fsum(vals) / len(vals))


#: zeros as written: ``0``, ``0.``, ``0.0``, any exponent form, six or more zero decimals
_ZERO = re.compile(r"[-+]?(?:0(?:\.0?)?|0(?:\.0*)?e[-+]?\d+|0?\.0{6,})")


def exact_zero(text: str) -> bool:
    """Is the number text an exact zero as written (``0``, ``0.0``, ``0.0000e+00``, ``0e0``, or
    all-zero digits with at least six decimals, ``0.000000``)?  ``0.0000`` is not: four decimals
    can be a small positive loss rounded for printing."""
    return _ZERO.fullmatch(text.strip().strip("'\"").strip().lower()) is not None


#: names that are a role only on their own: the last word of a longer key is something else's
#: (``time cost 35.2``: a time, not a loss; ``Logit Scale: 100.0``: CLIP's temperature, not the
#: loss scale)
_ALONE = frozenset({"cost", "scale"})


def _name(key: str) -> str:
    """The metric name a matched key stands for: the whole key, or its last one or two words,
    whichever has a role (a trailing connective dropped first; the words after one inside the
    key, where they have a role)."""
    words = key.split(" ")
    while len(words) > 1 and words[-1] in CONNECTIVES:
        words.pop()
    for i in range(len(words) - 2, 0, -1):     # ``loss spike at step 10``: the step's 10
        if words[i] in CONNECTIVES:
            tail = " ".join(words[i + 1:])
            if role(tail) is not None:
                return tail
            break
    whole = " ".join(words)
    if len(words) == 1 or role(whole) is not None or summary(whole):
        return whole        # (``lowest loss``: the best so far, not a loss with a word before it)
    setting = not _SETTING.isdisjoint(words[:-1])
    for k in (" ".join(words[-2:]), words[-1]):
        if (r := role(k)) is not None and k not in _ALONE:
            # (``Total steps = 580``, ``Num Epochs = 5``: a run's setting, not its progress)
            return whole if setting and r in ("step", "epoch") else k
    return whole


#: words before a step or epoch word that make the name a setting of the run (Unsloth's banner
#: ``Total steps = 580``, HF's ``Gradient Accumulation steps = 4``), no count of its progress
_SETTING = frozenset({"num", "number", "total", "max", "maximum", "warmup", "accumulation"})


#: a field written value first among comma-separated fields (tinygrad's ``4088.39 ms AMD * 8,  0.69
#: loss, 0.000571 LR, 38.71 GB used``): the loss and the learning rate only
_VALUE_FIRST = re.compile(r"(?:^|,)\s*(" + NUM + r") (loss|lr)\s*(?=,|$)")


#: names listed, then their values listed (kGCN's federated trainer: ``val, round, loss, acc, auc
#: ===> 002, 0.88136, 0.54241, 0.55131,``; ``(loss, acc) = (0.52, 0.81)``): the values are the last
#: names' in order (a name before them without a value labels the record: ``val``, ``train``)
_LISTED = re.compile(r"(?<![\w.])\(?(" + _KEY + r"(?:\s*,\s*" + _KEY + r")+)\)?\s*(?:=+>|-+>|=)\s*"
                     r"\(?(" + NUM + r"(?:\s*,\s*" + NUM + r")+)\s*,?\s*\)?\s*(?:$|[,;|])")


def _listed(m: re.Match[str]) -> dict[str, str]:
    names = [_name(n.strip()) for n in m.group(1).split(",")]
    values = [v.strip() for v in m.group(2).split(",")]
    if not 0 <= len(names) - len(values) <= 1:
        return {}
    return dict(zip(names[len(names) - len(values):], values))


#: a value named with the step it was taken at (TensorFlow's tutorials and the KGE trainers:
#: ``Average loss at step 2000: 4.36``, ``Training average loss at batch 100: nan``; cuMF's ALS:
#: ``Train RMSE in iter 0: nan``; auto-round's ``loss iter 0: 0.184206 -> iter 174: 0.094373``;
#: the deeplearning.ai courses' ``Cost after iteration 1000: 0.6239``)
_AT_STEP = re.compile(r"(?<![\w.])(" + _KEY + r"(?: " + _KEY + r"){0,3}?) (?:(?:at|in|after) )?(step|batch"
                      r"|iteration|iter|epoch) (\d{1,12})\s*[:=]\s*(" + NUM + r")(?![\w.])")


#: two decimals split by ``/`` after a name (``PSNR/SSIM: 33.85/0.92``, a train/valid pair, a
#: dataset's ``33.8534/0.0000``): the first is the name's value; a counter (``iter 0/88``) has
#: whole numbers
_DECIMAL_PAIR = re.compile(r"(\d\.\d+(?:e[-+]?\d+)?)\s*/\s*[-+]?\d*\.\d+(?:e[-+]?\d+)?(?![\w.])")


#: a value glued to the next name and its colon (CatBoost's early console lines: ``61:     learn
#: 0.1211191019passed: 17.7 sec``, ``learn nanpassed: 17.5 sec``): they are two fields (a number
#: or ``nan``; not ``inf``, which begins words such as ``inference:``, nor ``nano...``)
_GLUED = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?(?:e[-+]?\d+)?|nan(?!o))(?=[a-z]{3,}:\s)")


def pairs(low: str) -> dict[str, str]:
    """``{name: value text}`` of the ``key <sep> number`` fields of a lower-cased line (the first
    value of each name; of two decimals split by ``/``, the first: ``_DECIMAL_PAIR``), of ``name
    at step N: number`` (``_AT_STEP``: the name's value, and N the step's), of names listed before
    their values (``_LISTED``), and of ``number loss`` fields between commas (``_VALUE_FIRST``)."""
    out: dict[str, str] = {}
    if ":" in low and _GLUED.search(low):
        low = _GLUED.sub(r"\g<0> ", low)
    if "/" in low and "." in low:
        low = _DECIMAL_PAIR.sub(r"\1", low)
    if (" at " in low or " in " in low or " after " in low or ": " in low) and (
            m := _AT_STEP.search(low)):
        out[_name(m.group(1))] = m.group(4)
        out[m.group(2)] = m.group(3)
        low = low[:m.start()] + low[m.end():]
    if "," in low and (m := _LISTED.search(low)):
        out.update(_listed(m))
        low = low[:m.start()] + low[m.end():]
    for m in _PAIR.finditer(low):
        name = _name(m.group("key") or m.group("bkey"))
        if name not in out:
            arr = m.group("arr")
            out[name] = m.group("val") if arr is None else array_value(arr)
    if "loss," in low or low.endswith("loss"):
        for m in _VALUE_FIRST.finditer(low):
            out.setdefault(m.group(2), m.group(1))
    return out


# ---- header rows (CSV/TSV, aligned tables) -----------------------------------------------------
_DELIMS = ("\t", ",", ";", "|")
#: a header row names columns: no number standing on its own, no ``key=value`` or ``key: value``
#: (a number inside a name stands with it: Ultralytics' ``metrics/mAP50-95(B)``)
_NOT_HEADER = re.compile(r"(?<![\w.@-])[-+]?\.?\d|=|:\s")
#: a column's name (``%``: a percentage column, spaCy v2's ``Tag %``; ``@``: a ranking metric's
#: cut-off, ``NanoNQ_dot_ndcg@10``; ``#`` alone: spaCy v3's step column, ``E    #    LOSS NER``)
_CELL = re.compile(r"^(?:#|[a-z_][\w./\- ()\[\]%@]*)$")
#: single-spaced names that read as a program's, not as prose: identifiers only, one of them
#: with an underscore (fastai's table flattened to text: ``epoch train_loss valid_loss accuracy time``)
_IDENT = r"[a-z_][a-z0-9_]*"
_CODE_NAMES = re.compile(r"^(?=.*_)" + _IDENT + r"(?: " + _IDENT + r")+$")
#: names that are all identifiers, however spaced (a single space between two of them parts two
#: columns where one of them has an underscore: no name with a space inside is written so)
_IDENTS = re.compile(r"^(?=.*_)" + _IDENT + r"(?:\s+" + _IDENT + r")+$")
#: a cell that holds no value (sentence-transformers' and the HF Trainer's tables: ``-``, ``No log``)
_NO_VALUE = frozenset({"-", "\u2013", "\u2014", "no log", "n/a", "none", "null"})
#: the gap between aligned columns: two or more spaces (a tab counts)
_WIDE = re.compile(r"\s{2,}|\t")
#: a cell holding a bracketed list of numbers (DeepXDE's per-term losses ``[2.92e+02, 4.68e+01]``)
_LIST_CELL = re.compile(r"^\[[-+.\deinfa, ]*\]$")


def _split(text: str, delim: str) -> list[str]:
    if delim == " ":
        return text.split()
    if delim == "  ":    # aligned columns whose names have a space inside (``Train loss``)
        return _WIDE.split(text.strip())
    cells = text.strip().strip("|").split(delim) if delim == "|" else text.split(delim)
    if len(cells) > 2 and not cells[-1].strip():
        cells.pop()     # a separator after the last cell (``0, 26.0, 158.2,``): no cell after it
    return [c.strip().strip("'\"").strip() for c in cells]


#: YOLO's epoch table (YOLOv3/v5/v7 ``train.py``: ``Epoch  gpu_mem  box  obj  cls  total  labels
#: img_size``) names its mean loss components bare: under a ``gpu_mem`` column they are losses
#: (``total``: their sum, the total loss)
_YOLO_LOSSES = {"box": "box_loss", "obj": "obj_loss", "cls": "cls_loss", "giou": "giou_loss",
                "seg": "seg_loss", "l1": "l1_loss", "total": "loss"}


def _yolo(cells: list[str]) -> list[str]:
    if "gpu_mem" not in cells:
        return cells
    return [_YOLO_LOSSES.get(c, c) for c in cells]


#: what a logger writes before a ``|`` table it prints (WeSpeaker's ``[ INFO : 2023-07-06
#: 07:55:30,898 ] - |     Epoch|     Batch| ...``): a time of day, then the table's first ``|``
_LOGGED = re.compile(r"^[^|]*\d\d:\d\d:\d\d[^|]*?(?=\|)")


def table_part(low: str) -> str:
    """A table line without the logger's prefix before its first ``|`` (``_LOGGED``)."""
    m = _LOGGED.match(low) if "|" in low else None
    return low[m.end():] if m else low


#: a column named for its split with the measure in parentheses (kbc's ``Train(loss)  Valid(MRR)``):
#: read as ``train_loss``, ``valid_mrr``
_PAREN_NAME = re.compile(r"^([a-z_][\w]*)\s*\(([a-z_][\w]*)\)$")


def header(low: str) -> tuple[str, list[str]] | None:
    """``(delimiter, names)`` when the lower-cased line is a header row: two or more names (no
    numbers), split by one delimiter (tab, comma, semicolon, ``|``, or runs of spaces), at least
    one of them a loss, loss scale or grad norm and another a step, epoch or a second metric.
    YOLO's bare loss columns are named as the losses they are (``_YOLO_LOSSES``).  A header
    behind a ``#`` (a comment: numpy's ``savetxt``, gnuplot data, Caffe's ``parse_log.sh``:
    ``#Iters Seconds TrainingLoss LearningRate``) may part its names by single spaces (an aligned
    one keeps its ``#`` as a column: spaCy's step, DeePMD's ``lcurve.out``), as may names that
    read as a program's (``_CODE_NAMES``)."""
    s = table_part(low).strip()
    commented = s[:1] == "#" and s[1:2] not in ("#", "!") and "  " not in s
    if commented:
        s = s[1:].strip()
    if len(s) > 2000 or not s or _NOT_HEADER.search(s):
        return None
    for delim in _DELIMS + ("  ", " "):
        spaces = delim in ("  ", " ")
        if not spaces and delim not in s:
            continue
        if spaces and ("  " not in s and not (delim == " " and (commented or _CODE_NAMES.match(s)))
                       or s.count(" ") > 200):
            continue            # (aligned columns: runs of spaces between the names)
        if delim == "  " and (" " not in _WIDE.sub("", s) or any(
                sum(role(w) is not None for w in c.split(" ")) > 1 for c in _WIDE.split(s))
                or (_IDENTS.match(s) and any(" " in c and "_" in c for c in _WIDE.split(s)))):
            continue            # (no name with a space inside, or single-spaced columns: pandas'
            #                     ``iter loss gnorm    scale``, a word with a role each; n2p2's
            #                     ``epoch RMSEpa_Etrain_pu  RMSEpa_Etest_pu``: identifiers)
        cells = _split(s, delim)
        if len(cells) < 2 or not all(cells) or not all(_CELL.match(c) for c in cells):
            continue
        cells = _yolo([_PAREN_NAME.sub(r"\1_\2", c) for c in cells])
        roles = [role(c) for c in cells]
        if any(r in VALUE_ROLES for r in roles) and \
                sum(r is not None for r in roles) >= 2:
            return delim, cells
    return None


_COUNTER = re.compile(r"^(\d+)/\d+$")


def row(low: str, delim: str, names: list[str]) -> dict[str, str] | None:
    """``{name: cell}`` of a data row under ``names``, else None: as many cells (an aligned row
    may go on with a progress bar after them, its last cell then ending in the bar's ``:``), and
    every cell under a named role a number, an ``N/M`` counter (``N``), a bracketed list of
    numbers (its mean), empty or holding no value (``-``, ``No log``), one of them a number at
    least."""
    cells = _split((table_part(low) if delim == "|" else low).strip(), delim)
    if delim == "  " and len(cells) < len(names) and len(low.split()) == len(names):
        cells = low.split()     # a value as wide as its column leaves one space before the next
    if len(cells) < len(names) or (len(cells) > len(names) and delim != " "):
        return None
    out: dict[str, str] = {}
    if len(cells) > len(names) and cells[len(names) - 1].endswith(":"):
        # the row is a progress bar's description (YOLOv6: ``0/99  0  0  0.5756: 100%|███|``):
        # tqdm puts ``: `` between it and the bar
        cells[len(names) - 1] = cells[len(names) - 1][:-1]
    for n, c in zip(names, cells):
        if role(n) is None or not c or c in _NO_VALUE:
            continue
        m = _COUNTER.match(c)
        if m:
            c = m.group(1)
        elif c[:1] == "[" and _LIST_CELL.match(c) and c != "[]":
            c = array_value(c)      # loss terms: their mean (NaN when one is), as ``pairs`` reads
        elif number(c) is None:
            return None
        out[n] = c
    return out if out else None


def fixed_row(low: str, header_low: str, names: list[str]) -> dict[str, str] | None:
    """``{name: cell}`` of an aligned row cut where the header's columns start, for a row with
    empty cells (Chainer's ``LogReport``: ``0    0.691012         0.633465 ...`` under ``epoch
    main/loss  validation/main/loss  main/accuracy ...``, before any validation ran), else None:
    each cut falls between two tokens, a cell is empty between two that are not (a row that
    only stops early is a cut line, not one with empty cells), every cell under a role is empty
    or a number, and two cells at least hold numbers (``row`` reads the cells that are not
    empty)."""
    starts, at = [], 0
    head = table_part(header_low)
    offset = len(header_low) - len(head)
    for n in names:
        i = head.find(n, at)
        if i < 0:
            return None
        starts.append(offset + i)
        at = i + len(n)
    if any(0 < i < len(low) and not (low[i - 1] == " " or low[i] == " ") for i in starts[1:]):
        return None     # a cut inside a token: the row is not aligned with the header
    bounds = starts[1:] + [max(len(low), starts[-1])]
    cells = [low[a:b].strip() for a, b in zip([0] + starts[1:], bounds)]
    filled = [k for k, c in enumerate(cells) if c]
    if sum(number(c) is not None for c in cells) < 2 or len(filled) == filled[-1] + 1:
        return None     # (no empty cell before the last filled one)
    text = "  ".join(c if c else "-" for c in cells)   # (``-``: a cell with no value)
    return row(text, "  ", names)


# ---- pretty-printed JSON objects: one ``"key": value,`` line each ------------------------------
_JSON_FIELD = re.compile(r"""^\s*(["'])([^"']{1,80})\1\s*:\s*(?:(?:device)?array\()?("?)("""
                         + NUM + r"""|null|true|false)\3(?:,\s*dtype=[\w.]+)?\)?\s*,?\s*$""")


def json_field(low: str) -> tuple[str, str] | None:
    """``(key, value)`` of a line that is one scalar field of a pretty-printed JSON object, or of
    a Python dict ``pprint`` wrote one field a line (``'loss': array(nan, dtype=float32),``: a
    numpy or JAX scalar's repr holds its value)."""
    m = _JSON_FIELD.match(low)
    return (m.group(2), m.group(4)) if m else None


def structured_head(head: bytes) -> bool:
    """Is a file whose first bytes are ``head`` structured (a header row, a pretty-printed JSON
    document) or UTF-16: read whole, since every row is a record there."""
    if utf16(head):
        return True
    lines = [x.strip() for x in head[:8192].split(b"\n") if x.strip()][:3]
    if not lines:
        return False
    if lines[0] in (b"{", b"[") or (lines[0][:1] in (b"{", b"[") and lines[0][-1:] in (b"{", b"[")):
        return True
    try:
        return header(lines[0].decode("utf-8", "replace").lower()) is not None
    except ValueError:
        return False
