"""Which lines of a block the doctor's fast reader parses (``fampnb.logs._scan`` reads the blocks).

Long logs repeat a few line *templates* (the same line with other digits).  ``Picker.block`` maps
every digit of a block to ``0`` (``bytes.translate``), splits it and takes the set of templates,
all in C.  Each new template is classified once with the full rule test (``RARE``: nan/inf,
overflow, minimum, error, precision words, ...), so per block only these lines are picked:

- the lines of rare templates, and the line after those that start a record (DeepSpeed's verbose
  ``Reducing dynamic loss scale`` follows its ``Grad overflow`` line; traceback messages and
  warning sources follow their header);
- lines that end inside a scaler wording (wrapped at the terminal width, ``fampnb.logs._wrap``) and
  the line after each (the reader joins them), also across block and range boundaries;
- the first and last 64 KiB of the log (start-up and ending);
- the lines that print Caffe's softmax floor (``87.3365``, a loss the doctor reads as non-finite),
  in blocks with a template of its digits' shape (``00.0000``);
- every line where a printed loss scale changes (Megatron/Keras/user loops print one on every
  line; digits are invisible in templates, so the value is compared on those lines);
- Megatron lines with a non-zero skipped/nan counter or a missing loss field;
- the first and last DeepSpeed ``skipped=`` counter of each block (its sum telescopes), and the
  first after each rare line (``COUNTERS_AFTER``: whether the steps since the backoff went
  through; also across a block's end);
- the first ``FIRST_RECORDS`` loss records of the log, the ``AFTER`` loss records that follow
  each rare line (the rules count at most 3: the counts agree with a full parse; also across a
  block's end, within the range), and a sample of the others (the first line of each template,
  then one after every ``SAMPLE`` lines);
- a block with very many lines of one rare template (NaN on every line) keeps the first and last
  ``RARE_CAP`` of them;
- a picked line that holds one field on an indented line (``FIELD``: a block of them is one record,
  ``fampnb.logs._fields.field_row``) brings the whole block of such lines around it (at most
  ``MAX_FIELDS`` each way), so that its record is the one a full parse reads.

Nothing here parses: a picker runs in the doctor's worker processes too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import compress, count

from fampnb.logs import _ansi
from fampnb.logs._num import BARE_ROW, FIELD_KEY, SOFTMAX_FLOOR
from fampnb.logs._triggers import MESSAGE_WORDS
from fampnb.logs._vocab import LETTER_KEY, RECORD_WORDS
from fampnb.logs._wrap import wrap_head

__all__ = ["Picker", "Pick"]

EDGE = 64 << 10
SAMPLE = 2048         # one ordinary loss record in this many lines
MAX_TEMPLATES = 200_000
FIRST_RECORDS = 8     # the log's first loss records are all parsed (what "at the start" means)
AFTER = 4             # loss records parsed after each rare line (more than the rules count)
COUNTERS_AFTER = 1    # DeepSpeed skip counters parsed after each rare line
RARE_CAP = 128        # per rare template and block: the first and last this many lines

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
# (templates have every digit mapped to 0: ``bf16`` reads ``bf00`` there)
RARE = re.compile(
    rb"(?i)(?<![a-z])(?:nan|inf|infinity)x*(?![a-z])|\.#(?:qnan|snan|ind|inf)|returned nan|"
    rb"_loss_scale\s+to|"
    + b"|".join(re.escape(w.encode().translate(_DIGITS)) for w in MESSAGE_WORDS))
#: rare lines whose next line belongs to the same record (its scale, or the error message)
CONTEXT = re.compile(rb"(?i)grad overflow on iteration|traceback|error|exception|warning")
#: a record-like line: a word of the names of a record's values (``fampnb.logs._vocab``)
LOSSY = re.compile(rb"(?i)" + b"|".join(re.escape(w.encode()) for w in RECORD_WORDS)
                   + rb"|(?-i:" + LETTER_KEY.encode() + rb")"   # (losses named by capitals)
                   + rb"|" + BARE_ROW.encode())                  # (numbers under no name)
#: a printed scale (also a ``| loss_scale | 1024 |`` table row, ``lg_loss_scale`` included)
SCALE = re.compile(rb"(?i)(?:loss[ _]scale|grad[ _]scale|cur_scale|(?<![a-z_])scale)['\"]?\s*[:=|]?\s*"
                   rb"['\"]?([-+0-9.eE]+)")
#: a template of one field on an indented line (digits are ``0`` in templates)
FIELD = re.compile(rb"(?i)^[ \t]+(?:\|\s*>\s*)?" + FIELD_KEY.encode()
                   + rb"\s*:\s+[-+]?(?:nan|inf|[0.])\S*(?:\s+\([^()]*\))?\s*$")
MAX_FIELDS = 128      # lines of such a block picked each way from a picked one
#: Caffe's softmax loss at its floor (87.3365, 87.3366, 87.33654: ``SOFTMAX_FLOOR`` to four
#: decimals or more), looked for in the blocks that have a template of its digits' shape
FLOOR_VALUE = re.compile(re.escape(f"{SOFTMAX_FLOOR:.6f}"[:-3].encode()) + rb"[4-6]")
FLOOR_SHAPE = b"00.0000"
MEG_SCALE = b"| loss scale:"
MEG_WITH_LOSS = re.compile(rb"loss: [^|\n]*\|\s*loss scale:")
MEG_COUNTER = re.compile(rb"iterations:\s*0*[1-9]")
_R, _S, _L, _O = 3, 2, 1, 0   # template classes: rare, scale printed, loss-like, other

Pick = tuple[int, bytes]      # (line index from the start of the range, the raw line)


class Picker:
    """Chooses the lines of each block to parse (no parsing: safe to run in a worker)."""

    def __init__(self) -> None:
        self.cls: dict[bytes, int] = {}
        self.last_scale: bytes | None = None
        self.sampled: set[bytes] = set()
        self.counters: set[bytes] = set()
        self.megatron = False
        self.lines_done = 0          # complete lines before the current block
        self.first_left = FIRST_RECORDS
        self.heads: set[bytes] = set()   # templates that end inside a wording (wrapped records)
        self.coloured: set[bytes] = set()   # templates with terminal colour codes in them
        self.fields: set[bytes] = set()     # templates of one field on an indented line
        self.floors: set[bytes] = set()     # templates with a number shaped as the softmax floor
        self.pick_first = False      # the previous block ended with a wrapped record's head
        self.owed = (0, 0)           # loss records still to pick after a rare line near the end
                                     # of the previous block, and lines left in its window
        self.owed_counters = 0       # skip counters still to pick after such a line

    def _classify(self, templates: set[bytes]) -> None:
        cls = self.cls
        if len(cls) > MAX_TEMPLATES:
            cls.clear()
            self.counters.clear()
            self.heads.clear()
            self.coloured.clear()
            self.fields.clear()
            self.floors.clear()
        for t in templates.difference(cls):
            plain = t
            if _ansi.coloured(t):         # classified as the readers will read it: uncoloured
                plain = _ansi.strip(t)
                self.coloured.add(t)
            cls[t] = (_R if RARE.search(plain) else _S if SCALE.search(plain)
                      else _L if LOSSY.search(plain) else _O)
            if wrap_head(plain.rstrip(b"\r").decode("utf-8", "replace").lower()):
                self.heads.add(t)
            if plain[:1] in b" \t" and FIELD.match(plain.rstrip(b"\r")):
                self.fields.add(t)
            if b"skipped=" in t:
                self.counters.add(t)
            if FLOOR_SHAPE in t:
                self.floors.add(t)
            if MEG_SCALE in t:
                self.megatron = True

    def block(self, buf: bytes, end: int, head: bool, tail: bool,
              first: bool = False) -> list[Pick]:
        """The picked lines of ``buf[:end]`` (complete lines, except a very long line's piece;
        past ``end`` at most the start of the next line, never read here); ``first``: pick the
        first line (it may continue a wrapped record before the range)."""
        tb = buf.translate(_DIGITS)
        lines = tb.split(b"\n")
        complete = end < len(buf) or buf.endswith(b"\n")
        if complete:
            lines.pop()                   # the empty piece after the last newline, or the rest
        n = len(lines)
        if n == 0:
            return []
        templates = set(lines)
        self._classify(templates)
        cls = self.cls
        pick: set[int] = set()
        if self.pick_first or first:
            pick.add(0)
        self.pick_first = False
        wrapped = templates & self.heads
        if wrapped:
            for i in _indexes(lines, wrapped):
                pick.add(i)
                pick.add(i + 1)
            self.pick_first = lines[-1] in wrapped
        if head:
            self._edge(lines, range(n), pick)
        if tail:
            self._edge(lines, range(n - 1, -1, -1), pick)
        if self.first_left:           # the first loss records of the log, all of them
            for i, t in enumerate(lines):
                if cls[t] in (_L, _S):
                    pick.add(i)
                    self.first_left -= 1
                    if not self.first_left:
                        break
        owed, self.owed = self.owed, (0, 0)
        if owed[0]:
            self._records_from(lines, 0, owed[0], owed[1], pick)
        counters = templates & self.counters
        owed_counters, self.owed_counters = self.owed_counters, 0
        if owed_counters and counters:
            self._counters_from(lines, 0, owed_counters, counters, pick)
        rare = {t for t in templates if cls[t] == _R}
        if rare:
            hits = _indexes(lines, rare)
            if len(hits) > 2 * RARE_CAP:
                hits = self._cap(lines, hits)
            pick.update(hits)
            ctx = {t for t in rare if CONTEXT.search(t)}
            for i in hits:
                if lines[i] in ctx:
                    pick.add(i + 1)
                self._records_from(lines, i + 1, AFTER, 256, pick)
                if self.counters:
                    self._counters_from(lines, i + 1, COUNTERS_AFTER, counters, pick)
        if templates & self.floors:
            self._floored(buf, end, pick)
        for t in counters:                   # DeepSpeed ``skipped=``: first and last
            pick.add(lines.index(t))
            pick.add(_last_index(lines, t))
        if len(self.sampled) < 1000:
            for t in templates:
                if cls[t] in (_L, _S) and t not in self.sampled:
                    self.sampled.add(t)
                    pick.add(lines.index(t))
        k = (-self.lines_done) % SAMPLE
        while k < n:
            for j in range(k, min(n, k + 64)):   # the next loss-like line
                if cls[lines[j]] in (_L, _S):
                    pick.add(j)
                    break
            k += SAMPLE
        scale_t = {t for t in templates if cls[t] == _S}
        offs: list[int] = []
        meg = self.megatron and buf.find(MEG_SCALE, 0, end) >= 0
        if scale_t or meg:
            offs = self._offsets(lines)
            if scale_t:
                self._scale_changes(buf, lines, offs, scale_t, pick)
            if meg:
                self._megatron(buf, end, offs, pick)
        if templates & self.fields:
            self._whole_fields(lines, n, pick)
        out: list[Pick] = []
        at, off = 0, 0
        for i in sorted(pick):
            if not 0 <= i < n:
                continue
            if offs:
                off = offs[i]
            elif i > at:   # (joining the lines between is a C loop: faster than summing lengths)
                off += len(b"\n".join(lines[at:i])) + 1
                at = i
            out.append((self.lines_done + i, buf[off:off + len(lines[i])]))
        # a block that ends inside a very long line: its next piece keeps the line number
        self.lines_done += n if complete else n - 1
        return out

    def _whole_fields(self, lines: list[bytes], n: int, pick: set[int]) -> None:
        """Every line of a block of one-field lines that a picked line belongs to."""
        fields = self.fields
        for i in [i for i in pick if 0 <= i < n and lines[i] in fields]:
            j = i
            while j > 0 and i - j < MAX_FIELDS and lines[j - 1] in fields:
                j -= 1
                pick.add(j)
            k = i
            while k + 1 < n and k - i < MAX_FIELDS and lines[k + 1] in fields:
                k += 1
                pick.add(k)

    @staticmethod
    def _cap(lines: list[bytes], hits: list[int]) -> list[int]:
        """At most the first and last ``RARE_CAP`` lines of each rare template in a block (a
        log that is NaN on every line stays fast; first, last and streaks are kept)."""
        per: dict[bytes, list[int]] = {}
        for i in hits:
            per.setdefault(lines[i], []).append(i)
        out: list[int] = []
        for idx in per.values():
            out += idx if len(idx) <= 2 * RARE_CAP else idx[:RARE_CAP] + idx[-RARE_CAP:]
        return sorted(out)

    def _records_from(self, lines: list[bytes], start: int, left: int, window: int,
                      pick: set[int]) -> None:
        """The next ``left`` loss records among ``window`` lines from ``start`` (``AFTER`` after a
        rare line: whether training goes on after a backoff or a NaN is read from the same records
        as a full parse would count); a window that goes past the block goes on in the next."""
        cls = self.cls
        left = _pick_next(lines, start, left, window, lambda t: cls[t] in (_L, _S), pick)
        if left:
            self.owed = (left, start + window - len(lines))

    def _counters_from(self, lines: list[bytes], start: int, left: int, counters: set[bytes],
                       pick: set[int]) -> None:
        """The next ``left`` skip-counter lines among 256 from ``start``; the rest are owed to
        the next block when the block ends first."""
        left = _pick_next(lines, start, left, 256, counters.__contains__, pick)
        self.owed_counters = max(self.owed_counters, left)

    @staticmethod
    def _edge(lines: list[bytes], order: range, pick: set[int]) -> None:
        """The lines within ``EDGE`` bytes of the block's start (or end, for a reversed order)."""
        total = 0
        for i in order:
            pick.add(i)
            total += len(lines[i]) + 1
            if total >= EDGE:
                break

    @staticmethod
    def _offsets(lines: list[bytes]) -> list[int]:
        out, off = [], 0
        for t in lines:
            out.append(off)
            off += len(t) + 1
        return out

    def _scale_changes(self, buf: bytes, lines: list[bytes], offs: list[int],
                       scale_t: set[bytes], pick: set[int]) -> None:
        """Lines where the printed loss scale differs from the one printed before."""
        prev = self.last_scale
        for i, t in enumerate(lines):
            if t in scale_t:
                m = (SCALE.search(_ansi.strip(buf[offs[i]:offs[i] + len(t)])) if t in self.coloured
                     else SCALE.search(buf, offs[i], offs[i] + len(t)))
                if m and m.group(1) != prev:
                    pick.add(i)
                    prev = m.group(1)
        self.last_scale = prev

    @staticmethod
    def _floored(buf: bytes, end: int, pick: set[int]) -> None:
        """The lines that print Caffe's softmax floor (a loss the doctor reads as non-finite): the
        first and last ``RARE_CAP`` of the block, as for a rare template."""
        hits, line, at = [], 0, 0
        for m in FLOOR_VALUE.finditer(buf, 0, end):
            line += buf.count(b"\n", at, m.start())
            at = m.start()
            if not hits or hits[-1] != line:
                hits.append(line)
        pick.update(hits if len(hits) <= 2 * RARE_CAP else hits[:RARE_CAP] + hits[-RARE_CAP:])

    @staticmethod
    def _megatron(buf: bytes, end: int, offs: list[int], pick: set[int]) -> None:
        """Megatron lines with a non-zero counter, or (if any) lacking their loss field."""
        from bisect import bisect_right

        hits = [m.start() for m in MEG_COUNTER.finditer(buf, 0, end)]
        if buf.count(MEG_SCALE, 0, end) != len(MEG_WITH_LOSS.findall(buf, 0, end)):
            start = 0
            while (j := buf.find(MEG_SCALE, start, end)) >= 0:
                hits.append(j)
                start = j + 1
        pick.update(bisect_right(offs, h) - 1 for h in hits)


def _last_index(lines: list[bytes], t: bytes) -> int:
    """The index of the last line equal to ``t`` (which occurs): the last 256 lines are looked at
    in Python (a record printed every few lines is found at once), else a reversed copy is
    searched in C."""
    n = len(lines)
    for i in range(n - 1, max(-1, n - 257), -1):
        if lines[i] == t:
            return i
    return n - 1 - lines[::-1].index(t)


def _pick_next(lines: list[bytes], start: int, left: int, window: int,
               wanted: Callable[[bytes], bool], pick: set[int]) -> int:
    """Picks the next ``left`` lines whose template is ``wanted`` among ``window`` lines from
    ``start``; returns how many are still to pick where the window goes past the block (else 0)."""
    stop = start + window
    for j in range(start, min(len(lines), stop)):
        if wanted(lines[j]):
            pick.add(j)
            left -= 1
            if not left:
                return 0
    return left if stop > len(lines) else 0


def _indexes(lines: list[bytes], templates: set[bytes]) -> list[int]:
    """The indexes of the lines in ``templates``, in order, found in C: ``list.index`` per
    template for a few templates, one membership pass for many."""
    if len(templates) > 4:
        return list(compress(count(), map(templates.__contains__, lines)))
    out: list[int] = []
    for t in templates:
        i = -1
        try:
            while True:
                i = lines.index(t, i + 1)
                out.append(i)
        except ValueError:
            pass
    out.sort()
    return out
