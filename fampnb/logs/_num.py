"""The number pattern the log rules read numbers with (``fampnb.logs._event`` re-exports it).

A module of its own that imports nothing: the doctor forks its reader processes once the picker
(``_logpick``, ``_logwrap``) is loaded, before the record types and their ``dataclasses``.
"""

__all__ = ["NUM"]

#: a number as logs print it: ints, floats, scientific, and the non-finite spellings ``nan``,
#: ``-nan``, ``nan.0`` (Lightning bars), ``inf``, ``-inf``, ``infinity``, and ``nanxxx``/``infxxx``
#: (a format's fill character after a non-finite value: PaddleOCR prints ``{:x<6f}``; a finite
#: value there has six decimals, so only ``nan``/``inf`` get filled) (searched lower-cased)
NUM = (r"[-+]?(?:nan(?:\.0+|x+)?|inf(?:inity)?(?:\.0+|x+)?|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
       r"|\.\d+(?:[eE][-+]?\d+)?)")
