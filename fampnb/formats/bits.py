"""``Format.decompose``: one value seen bit by bit (internal to ``fampnb.formats``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .zones import UINT, Zone, cast

if TYPE_CHECKING:
    from .format import Format


@dataclass(frozen=True)
class Bits:
    """One value seen through a format (see ``Format.decompose``); floats are float64.

    ``code`` is the stored bit pattern; ``exponent_bits``/``mantissa_bits`` its fields as "0"/"1"
    strings; ``exponent`` the unbiased exponent (field - bias, ``1 - bias`` for subnormals/zero).
    """

    format_name: str
    value: float
    stored: float
    code: int
    sign: int
    exponent_bits: str
    mantissa_bits: str
    exponent: int
    is_subnormal: bool
    zone: Zone
    next_down: float
    next_up: float
    ulp: float
    rel_error: float

    @property
    def bit_string(self) -> str:
        """Sign, exponent and mantissa fields separated by spaces, e.g. "0 01111 0000000000"."""
        return f"{self.sign} {self.exponent_bits} {self.mantissa_bits}"

    @property
    def hex(self) -> str:
        """The code in hexadecimal, zero-padded to the format's width (e.g. "0x3c00")."""
        width = (len(self.exponent_bits) + len(self.mantissa_bits) + 1 + 3) // 4
        return f"0x{self.code:0{width}x}"


def _neighbours(fmt: Format, code: int, stored: float) -> tuple[float, float]:
    """Values of the codes next to ``code`` (down, up); stepping past ±max gives what the format
    holds there (±inf, or NaN without inf); ±inf stays put in its own direction; NaN gives NaN."""
    if math.isnan(stored):
        return math.nan, math.nan
    sign_bit = 1 << (fmt.bits - 1)
    mag = code & (sign_bit - 1)

    def away(c: int) -> float:  # next larger magnitude, same sign
        return stored if math.isinf(stored) else fmt.decode((c & sign_bit) | (mag + 1))

    def toward(c: int) -> float:  # next smaller magnitude; through zero to the other sign
        return fmt.decode(c ^ sign_bit | 1) if mag == 0 else fmt.decode((c & sign_bit) | (mag - 1))

    return (toward(code), away(code)) if code < sign_bit else (away(code), toward(code))


def decompose(fmt: Format, value: float) -> Bits:
    """``Format.decompose`` (documented there); ``value`` already a float."""
    stored_arr = cast(np.array([value], np.float64), fmt.dtype)
    stored = float(cast(stored_arr, np.float64)[0])
    code = int(stored_arr.view(UINT[fmt.bits // 8])[0])
    man_bits, exp_bits = fmt.mantissa_bits, fmt.exponent_bits
    field_e = (code >> man_bits) & ((1 << exp_bits) - 1)
    field_m = code & ((1 << man_bits) - 1)
    min_exp = math.frexp(fmt.min_normal)[1] - 1  # min_normal = 2**min_exp
    exponent = min_exp if field_e == 0 else field_e - (1 - min_exp)
    next_down, next_up = _neighbours(fmt, code, stored)
    if math.isnan(stored):
        ulp = rel = math.nan
    else:
        ulp = 2.0 ** (exponent - man_bits) if math.isfinite(stored) else math.nan
        if math.isnan(value):
            rel = math.nan
        elif value == 0 or stored == value:
            rel = 0.0
        elif math.isinf(stored) or math.isinf(value):
            rel = math.inf
        else:
            from fractions import Fraction  # imported on first use: keeps the import light

            rel = float(abs(Fraction(stored) - Fraction(value)) / abs(Fraction(value)))
    return Bits(
        format_name=fmt.name, value=value, stored=stored, code=code, sign=code >> (fmt.bits - 1),
        exponent_bits=format(field_e, f"0{exp_bits}b"),
        mantissa_bits=format(field_m, f"0{man_bits}b"),
        exponent=exponent, is_subnormal=field_e == 0 and field_m != 0,
        zone=Zone(int(fmt.classify(np.float64(value)))), next_down=next_down, next_up=next_up,
        ulp=ulp, rel_error=rel,
    )
