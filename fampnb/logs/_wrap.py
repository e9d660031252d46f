"""Records wrapped at the terminal width: a line that ends inside a known scaler wording.

A log copied from a terminal can split one record over two physical lines, even mid-word
(``... Attempted loss sc`` / ``ale: 4096.0, reducing to 2048.0``).  ``wrap_head(low)`` says whether a
(lower-cased) line *ends inside* one of the wordings below: it carries the wording's anchor and then
a proper prefix of the rest, stopping before the final number (a line that ends in a number is
taken as it is: ``reducing to 20`` + ``48`` cannot be told from a complete record).  ``join(head,
nxt)`` returns the two lines joined (directly, or with one space where the wrap ate it) when the
joined text completes a wording *across* the break, else ``None``; the reader then parses both
lines on their own, as if nothing had been tried.  Wordings: ``reference/loss-scalers.md`` §3.
The break may come at any word of a wording after its anchor, and the next line may start with the
padding of a console's message column (Python's ``rich`` logging handler indents the continuation of
a long message up to the column where the message starts): the wordings match any run of
whitespace, so ``WARNING: found`` / ``<29 spaces>inf during ShardedOptimV2 step`` joins as one
(the padding kept in the joined text).

numpy wraps a long array too: ``loss [9.21 9.20 ... 9.21`` / `` 9.21 ]`` (``open_array``: the line
ends inside a ``[`` of numbers after a key; the continuation lines hold numbers only, the last one
closes the ``]``).  ``join`` then returns the lines joined with one space, and the reader holds a
joined text that is still open for the next line (``MAX_JOINED`` characters at most).

A record wrapped right after a key (``... step:  1  loss:`` / ``7.98820  grad_norm: ...``, a narrow
terminal or a paste re-wrapped by hand): ``open_key`` (the key a loss, loss scale or grad norm),
joined with one space when the next line starts with a number.
"""

from __future__ import annotations

import re
from functools import cache

from fampnb.logs._num import NUM
from fampnb.logs._vocab import VALUE_ROLES, role

__all__ = ["wrap_head", "join", "open_array", "open_key", "WORDINGS", "MAX_JOINED"]

#: (anchor, rest): ``#`` is a number, a space any run of whitespace; lower case.  Each anchor
#: carries a word of the reader's prefilter (``loss``, ``overflow``): a head must reach the rules
WORDINGS: tuple[tuple[str, str], ...] = (
    # DeepSpeed (fp16 loss_scaler / ZeRO stage_1_and_2 / 2022 ZeRO-2 wording)
    ("overflow!", " rank # skipping step. attempted loss scale: #, reducing to #"),
    ("overflow!", " rank # skipping step. attempted loss scale: #, but hysteresis is #"),
    ("overflow!", " skipping step. attempted loss scale: #, reducing to #"),
    ("attempted loss", " scale: #, reducing to #"),
    ("attempted loss", " scale: #, but hysteresis is #"),
    ("current loss", " scale already at minimum"),
    ("reducing dynamic loss", " scale from # to #"),
    ("increasing dynamic loss", " scale from # to #"),
    # apex amp
    ("gradient overflow.", " skipping step, loss scaler # reducing loss scale to #"),
    ("gradient overflow.", " skipping step, reducing loss scale to #"),
    ("gradient overflow,", " skipping step, loss scaler # reducing loss scale to #"),
    # fairseq
    ("overflow detected,", " setting loss scale to: #"),
    ("overflow detected,", " ignoring gradient, setting loss scale to: #"),
    ("minimum loss", " scale reached (#)"),
    # the article's wording
    ("loss scaling:", " # -> #"),
    # ColossalAI (legacy ShardedOptimizerV2 warning, low-level ZeRO / Gemini / offload optimizers,
    # DynamicGradScaler): the anchor is the first word, where the rich console may break the line
    ("found", " inf during shardedoptimv2 step"),
    ("found overflow.", " skip step"),
    ("overflow", " occurs, the loss scale is adjusted to #"),
    ("no overflow", " for consecutive # steps, the loss scale is adjusted to #"),
)


def _tokens(rest: str) -> list[str]:
    out: list[str] = []
    for ch in rest:
        if ch == "#":
            out.append(f"(?:{NUM})")
        elif ch == " ":
            if not out or out[-1] != r"\s+":
                out.append(r"\s+")
        else:
            out.append(re.escape(ch))
    return out


def _prefix_rx(rest: str) -> re.Pattern[str]:
    """Any proper prefix of ``rest`` (possibly empty) that stops before its final number."""
    toks = _tokens(rest)
    if rest.endswith("#"):
        toks = toks[:-1]            # the line must end before the last number
    else:
        toks = toks[:-1]            # a proper prefix: at least the last character is missing
    rx = ""
    for t in reversed(toks):
        rx = f"(?:{t}{rx})?"
    return re.compile(rx + r"\s*")


def _full_rx(anchor: str, rest: str) -> re.Pattern[str]:
    return re.compile(re.escape(anchor) + "".join(_tokens(rest)))


@cache
def _patterns() -> tuple[dict[str, tuple[re.Pattern[str], ...]], re.Pattern[str],
                         tuple[re.Pattern[str], ...]]:
    """Compiled on first use (compiling costs more than a small log's reading): anchor -> its
    wordings' full patterns, the anchor search, and every full pattern."""
    full: dict[str, tuple[re.Pattern[str], ...]] = {}
    for a, r in WORDINGS:
        full[a] = full.get(a, ()) + (_full_rx(a, r),)
    anchor = re.compile("|".join(re.escape(a) for a in full))
    return full, anchor, tuple(_full_rx(a, r) for a, r in WORDINGS)


@cache
def _prefixes(anchor: str) -> tuple[re.Pattern[str], ...]:
    """The prefix patterns of ``anchor``'s wordings (slow to compile: only for a line that
    carries the anchor without completing any of its wordings)."""
    return tuple(_prefix_rx(r) for a, r in WORDINGS if a == anchor)


#: a head's anchor lies within this many characters of the line's end (one search, then the rest)
TAIL = 256
#: the characters a head can end with: those of the wordings, and of the numbers in them
_LAST = frozenset("".join(a + r for a, r in WORDINGS).replace("#", "") + "0123456789.e+-naifty")


def wrap_head(low: str) -> bool:
    """Does the lower-cased line end inside one of ``WORDINGS`` (anchor complete, rest cut), or
    inside a wrapped array (``open_array``, or a continuation line of numbers only), or right
    after a loss, scale or grad-norm key (``open_key``)?"""
    return (_wording_head(low) or open_array(low) or _CONT.fullmatch(low) is not None
            or open_key(low))


#: a line that ends with a key and its colon, the value on the next line (a record wrapped by hand
#: or by a narrow terminal: ``... step:  1  loss:`` / ``7.98820  grad_norm:  3.7762 ...``)
_OPEN_KEY = re.compile(r"(?<![\w.])((?:[a-z_][\w./\-]* )?[a-z_][\w./\-]*)\s*[:=]\s*$")
_LEAD_NUM = re.compile(r"\s*[-+]?(?:" + NUM + ")(?![\\w.])")


def open_key(low: str) -> bool:
    """Does the lower-cased line end right after a key whose value the next line holds (the key
    a loss, loss scale or grad norm: ``lm loss:``, ``loss:``)?"""
    if low.rstrip()[-1:] not in (":", "="):
        return False
    m = _OPEN_KEY.search(low, max(0, len(low) - 64))
    if m is None:
        return False
    words = m.group(1).split(" ")
    return any(role(k) in VALUE_ROLES for k in (" ".join(words), words[-1]))


#: numpy's wrapped arrays: the open ``[`` of numbers to the line's end, the key before it, a
#: continuation line (indented, numbers only) and the closing line (numbers, then ``]``)
_SEP = r"(?:\s*,\s*|\s+)(?:\.\.\.(?:\s*,\s*|\s+))?"     # (numpy's ``...`` summary)
_OPEN = re.compile(r"\[\s*(?:(?:" + NUM + ")" + _SEP + r")*(?:" + NUM + r")?\s*,?\s*")
_KEYED = re.compile(r"(?<![\w.])[a-z_][\w./\-]*(?:\s*[:=]\s*|\s+)$")
_CONT = re.compile(r"\s+(?:(?:" + NUM + ")" + _SEP + r")*(?:" + NUM + r")\s*,?\s*")
_CLOSE = re.compile(r"\s*(?:(?:" + NUM + ")" + _SEP + r")*(?:" + NUM + r")\s*,?\s*\]")
#: the longest joined array the reader holds for a further line (numpy prints about 75 characters
#: a line and summarises arrays of more than 1000 elements: a real wrapped array is far shorter)
MAX_JOINED = 4096


def open_array(low: str) -> bool:
    """Does the lower-cased line end inside a bracketed list of numbers given as a key's value
    (``loss [9.21 9.20``, ``loss: [0.3,``)?"""
    i = low.rfind("[")
    if i < 0 or "]" in low[i:] or _OPEN.fullmatch(low, i) is None:
        return False
    return _KEYED.search(low, max(0, i - 64), i) is not None


def _wording_head(low: str) -> bool:
    last = low.rstrip()[-1:]
    if not last or last not in _LAST:
        return False                # ``}``, ``]``, ``|``...: no wording ends a head with these
    start = max(0, len(low) - TAIL)
    heads, anchors, _ = _patterns()
    if anchors.search(low, start) is None:
        return False
    for anchor, full in heads.items():
        i = low.rfind(anchor, start)
        if i < 0 or any(rx.match(low, i) for rx in full):
            continue                # absent, or a complete record: nothing is cut there
        i += len(anchor)
        for rx in _prefixes(anchor):
            if rx.fullmatch(low, i):
                return True
    return False


def join(head: str, nxt: str) -> str | None:
    """``head`` and ``nxt`` as one line when together they complete a wording across the break,
    or continue (close) an array that ``head`` leaves open (joined with one space)."""
    if open_array(head.lower()):
        low = nxt.lower()
        if _CLOSE.match(low) or _CONT.fullmatch(low):
            return head.rstrip() + " " + nxt.strip()
        return None
    if open_key(head.lower()):
        return head.rstrip() + " " + nxt.strip() if _LEAD_NUM.match(nxt.lower()) else None
    for sep in ("", " "):
        if sep and (head[-1:].isspace() or nxt[:1].isspace()):
            continue
        text = head + sep + nxt
        low = text.lower()
        cut = len((head + sep).lower())
        for rx in _patterns()[2]:
            for m in rx.finditer(low):
                if m.start() < cut < m.end():
                    return text
    return None
