"""The number pattern the log rules read numbers with (``fampnb.logs._event`` re-exports it), and
the one printed value that stands for a non-finite loss (``SOFTMAX_FLOOR``).

A module of its own that imports nothing but ``math``: the doctor forks its reader processes once the picker
(``_logpick``, ``_logwrap``) is loaded, before the record types and their ``dataclasses``.
"""

import math

__all__ = ["NUM", "FIELD_KEY", "BARE_ROW", "SOFTMAX_FLOOR", "nonfinite"]

#: a number as logs print it: ints, floats, scientific, and the non-finite spellings ``nan``,
#: ``-nan``, ``nan.0`` (Lightning bars), ``inf``, ``-inf``, ``infinity``, ``nanxxx``/``infxxx``
#: (a format's fill character after a non-finite value: PaddleOCR prints ``{:x<6f}``; a finite
#: value there has six decimals, so only ``nan``/``inf`` get filled), ``nan.08`` (a status line
#: rewritten in place, ``print(..., end="\r")``: the shorter ``nan`` leaves the end of the longer
#: value it overwrote), ``0000nan`` (a zero-padded format pads a NaN as it pads a number: a
#: TensorFlow user's ``Step 80 (23.64%): loss = 0000nan``) and the Microsoft C runtime's
#: ``1.#QNAN``, ``-1.#IND``, ``1.#INF`` (with ``printf``'s zeros: ``1.#QNAN000``; CNTK, Caffe and
#: darknet on Windows) (searched lower-cased)
NUM = (r"[-+]?(?:0*nan(?:x+|[.\d]+)?|0*inf(?:inity)?(?:x+|[.\d]+)?|1\.#(?:qnan|snan|ind|inf)0*"
       r"|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)")

#: the name of a field that stands alone on an indented line (``fampnb.logs._fields.field_row``;
#: the fast reader picks whole blocks of such lines): up to four words (searched lower-cased)
FIELD_KEY = r"[a-z_][\w./\-]*(?: [a-z_][\w./\-]*){0,3}"

#: a row of a table whose header is not in the log (the window starts below it, or the trainer
#: prints none): a counter, then three or more numbers under no name, split by spaces, ``|`` or ``,``
#: (``9  3800  2.1011  0  9.88773e-05``, WeSpeaker's ``| 149| 1000| 0.01728| ...|``, DeepXDE's
#: ``2000  [nan]  [nan]  [nan]``: a cell may be a bracketed list; a user's CSV print without its
#: header, ``994,tensor(1.4541),0.374,0.423``: a cell may be a printed scalar tensor), a logger's
#: bracketed prefix before it and a duration in seconds (``431.44s``) after it allowed (searched
#: lower-cased; the rules read it, ``fampnb.logs._fields``, and the fast reader counts it a record
#: line)
_CELL = (r"(?:" + NUM + r"|tensor\(" + NUM + r"\)|\[\s*" + NUM + r"(?:\s*,\s*" + NUM
         + r")*\s*\])")
BARE_ROW = (r"^(?:\[[^\]\n]{0,80}\]\s*-?\s*)?\|?\s*(\d{1,9})((?:(?:\s*[|,]\s*|\s+)" + _CELL
            + r"){3,})(?:\s+\d+(?:\.\d+)?s)?\s*\|?\s*$")


#: -ln(FLT_MIN): Caffe's softmax loss clamps the true class's probability at float32's smallest
#: normal, 2^-126, so a probability of 0 (outputs gone to inf or NaN) prints a loss of 87.3365
#: (the doctor reads it as a non-finite loss; the fast reader picks the lines that print it)
SOFTMAX_FLOOR = 126 * math.log(2.0)


def nonfinite(text: str) -> float:
    """The value of a matched non-finite spelling with something around it (``nan.0``, ``nanxxx``,
    ``-inf.08``, ``0000nan``, ``1.#QNAN000``: see ``NUM``): NaN or an infinity of its sign."""
    t = text.lstrip("+-").lstrip("0")
    value = float("nan") if t.startswith(("nan", "1.#q", "1.#s", "1.#ind")) else float("inf")
    return -value if text.startswith("-") else value
