"""Exact, fast zone classification on the bit pattern (internal to ``fampnb.formats``).

For the IEEE-like input dtypes float16, bfloat16, float32 and float64, the zone a value lands in
after a cast depends only on its magnitude, and the cast is monotone in the magnitude, whose bit
pattern (sign bit cleared) orders like an unsigned integer.  So each zone boundary is one unsigned
threshold, found once per (input dtype, target dtype) by bisection with *real* scalar casts (so the
installed library's own rounding is what is mirrored: the float64 -> float32 -> bf16/fp8 double
rounding of ml_dtypes up to 0.6 as well as the single rounding of 0.7.0 and later), and
classification is a few integer comparisons per element, done in cache-sized chunks.  Other 1- and
2-byte input dtypes use a lookup table built from real casts of all their codes; anything else is
classified by casting everything (slow, exact).  Zone codes are the integers of ``Zone`` (defined
here, exported by ``fampnb.formats``): NAN 0, OVERFLOW 1, NORMAL 2, SUBNORMAL 3, UNDERFLOW 4,
ZERO 5; a code is ``5 - (number of thresholds <= |bits|)``.
"""

from __future__ import annotations

import enum
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np


class Zone(enum.IntEnum):
    """Where a value lands after the cast.  UNDERFLOW: non-zero input rounded to 0; ZERO: input 0.
    (Also exported by ``fampnb.formats``, whose name it carries.)"""

    NAN = 0
    OVERFLOW = 1
    NORMAL = 2
    SUBNORMAL = 3
    UNDERFLOW = 4
    ZERO = 5


NAN, OVERFLOW, NORMAL, SUBNORMAL, UNDERFLOW, ZERO = (int(z) for z in Zone)
CHUNK = 1 << 15  # elements per chunk (128 KiB of float32): chunk + scratch stay inside L2

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_FAST = tuple(np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64))


def cast(x: Any, dtype: Any) -> np.ndarray:
    """``np.asarray(x).astype(dtype)``, its over/underflow/invalid warnings silenced."""
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(dtype)


def classify_by_cast(a: np.ndarray, dst: Any, min_normal: float) -> np.ndarray:
    """Reference path: cast every element to ``dst`` and read the zone off the result (int8)."""
    if a.dtype.kind not in "biuf" and "float" not in a.dtype.name:  # objects, strings, complex
        a = cast(a, np.float64)
    try:
        stored = cast(a, dst)
    except (TypeError, ValueError):  # a source dtype the library cannot cast directly
        a = a.astype(np.float64)
        stored = cast(a, dst)
    r = np.abs(cast(stored, np.float64))
    with np.errstate(all="ignore"):
        out = np.full(a.shape, NORMAL, dtype=np.int8)
        out[r < min_normal] = SUBNORMAL
        out[r == 0] = UNDERFLOW
        out[a == 0] = ZERO
        out[~np.isfinite(r)] = OVERFLOW
        out[np.isnan(a)] = NAN
    return out


def _scalar_cast(src: np.dtype, code: int, dst: Any) -> float:
    one = np.array([code], UINT[src.itemsize]).view(src)
    return float(cast(cast(one, dst), np.float64)[0])


@cache
def thresholds(src: np.dtype, dst: np.dtype, min_normal: float) -> tuple[int, int, int, int, int]:
    """Unsigned magnitude thresholds (1, first non-zero, first normal, first overflow, first NaN).

    Each is the smallest bit pattern of a non-negative ``src`` value whose real cast to ``dst`` is
    respectively non-zero, at least ``min_normal`` (or not finite), not finite; found by bisection
    over the patterns 0 .. +inf (the cast of +inf satisfies all three).  NaN patterns are those
    above +inf.
    """
    inf_code = int(np.array([np.inf], src).view(UINT[src.itemsize])[0])

    def first(pred: Any) -> int:
        lo, hi = 0, inf_code
        while lo < hi:
            mid = (lo + hi) // 2
            if pred(_scalar_cast(src, mid, dst)):
                hi = mid
            else:
                lo = mid + 1
        return lo

    t_sub = first(lambda r: r != 0)
    t_norm = first(lambda r: not abs(r) < min_normal)
    t_over = first(lambda r: not np.isfinite(r))
    return 1, t_sub, t_norm, t_over, inf_code + 1


@cache
def lookup_table(src: np.dtype, dst: np.dtype, min_normal: float) -> np.ndarray:
    """Zone of every code of a 1- or 2-byte ``src`` dtype, classified by real casts (int8)."""
    codes = np.arange(1 << (8 * src.itemsize), dtype=UINT[src.itemsize]).view(src)
    table = classify_by_cast(codes, dst, min_normal)
    table.setflags(write=False)
    return table


def _by_thresholds(u: np.ndarray, ts: tuple[int, ...], out: np.ndarray) -> None:
    utype = u.dtype.type
    mask = utype(np.iinfo(utype).max >> 1)
    t0, rest = utype(ts[0]), [utype(t) for t in ts[1:]]
    five = np.int8(ZERO)
    n = u.size
    size = min(CHUNK, n)
    mag = np.empty(size, utype)
    hit = np.empty(size, np.bool_)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        k = stop - start
        m, h, o = mag[:k], hit[:k], out[start:stop]
        np.bitwise_and(u[start:stop], mask, out=m)
        np.greater_equal(m, t0, out=o.view(np.bool_))
        for t in rest:
            np.greater_equal(m, t, out=h)
            np.add(o, h.view(np.int8), out=o)
        np.subtract(five, o, out=o)


def _by_table(u: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    for start in range(0, u.size, CHUNK):
        stop = min(start + CHUNK, u.size)
        np.take(table, u[start:stop], out=out[start:stop])


def classify(x: Any, dst: Any, min_normal: float) -> np.ndarray:
    """Zone code (int8 array, shape of ``x``) of each element of ``x`` after the cast to ``dst``."""
    a = np.asarray(x)
    src, dst = a.dtype, np.dtype(dst)
    is_float = src.kind == "f" or src in _FAST or "float" in src.name
    if not is_float or a.size == 0 or (src not in _FAST and src.itemsize > 2):
        return classify_by_cast(a, dst, min_normal)
    shape = a.shape
    a = np.ascontiguousarray(a)  # (a copy only for non-contiguous input; note: 0-d becomes 1-d)
    u = a.reshape(-1).view(UINT[src.itemsize])
    out = np.empty(u.size, np.int8)
    if src in _FAST:
        _by_thresholds(u, thresholds(src, dst, float(min_normal)), out)
    else:
        _by_table(u, lookup_table(src, dst, float(min_normal)), out)
    return out.reshape(shape)


def bincount(codes: np.ndarray, length: int) -> np.ndarray:
    """``np.bincount`` of an int8 code array, in chunks (no full-size intp copy)."""
    flat = codes.reshape(-1).view(np.uint8)
    total = np.zeros(length, np.int64)
    step = CHUNK * 64
    for start in range(0, flat.size, step):
        total += np.bincount(flat[start:start + step], minlength=length)[:length]
    return total
