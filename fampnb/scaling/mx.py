"""OCP Microscaling (MX v1.0) block scaling: 32 values share one E8M0 power of two.

The spec's conversion (section 6.3), for a block of values V_i:
``shared_exp = floor(log2(max|V_i|)) - emax_elem``, ``X = 2**shared_exp``, ``P_i = V_i / X``
quantized to the element format with normal numbers clamped to its max (``emax_elem`` is the
exponent of the element's largest normal: 8 for e4m3, 15 for e5m2, 2 for e2m1).  ``X`` is stored as
E8M0 (a biased exponent byte; 0xFF is NaN).  The math is float32, as in the spec and torchao (a
float64 input is rounded once to float32 first, so ml_dtypes 0.6 and 0.7 agree).

The corner cases follow torchao's reference ``to_mx`` (FLOOR mode), which reads ``floor(log2)`` off
the float32 exponent bits: a block of zeros (or of values so small that ``shared_exp`` would be
below -127) gets exponent -127; a block holding inf (no NaN) gets ``128 - emax_elem`` (inf's
exponent field) and its inf is clipped to ±max; a block holding NaN gets the NaN scale, its
elements are ``V_i * 0`` (torchao divides by the inf that 0xFF reads as) and dequantize to NaN.
One difference from torchao, where it departs from the spec: at exponent -127 torchao divides by
float32's smallest normal, 2**-126, instead of X = 2**-127 (its dequantize then multiplies by
2**-127: such a block comes back at half its size); here ``P_i = V_i / 2**-127`` as the spec says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np

from ..formats import FP4_E2M1, FP8_E4M3, FP8_E5M2, Format, get

__all__ = ["ELEMENTS", "MXTensor", "mx_quantize", "element_format", "emax", "cast_codes",
           "cast_table", "block_scaled"]

#: element names accepted by ``mx_quantize`` and their formats
ELEMENTS: dict[str, Format] = {"fp8_e4m3": FP8_E4M3, "fp8_e5m2": FP8_E5M2, "fp4_e2m1": FP4_E2M1}
NAN_EXPONENT = 128  # unbiased value of E8M0's NaN code 0xFF
_CHUNK = 1 << 12  # blocks per chunk (128K values of float32 for 32-blocks): stays in L2


def element_format(elem: str | Format) -> Format:
    """The element ``Format`` of ``elem`` ("fp8_e4m3", "fp8_e5m2", "fp4_e2m1" or an alias)."""
    f = get(elem)
    if f not in ELEMENTS.values():
        raise ValueError(f"elem must be one of {sorted(ELEMENTS)}, got {elem!r}")
    return f


def emax(fmt: Format) -> int:
    """Exponent of the element format's largest normal (floor(log2(max)))."""
    return math.frexp(fmt.max)[1] - 1


@dataclass(frozen=True)
class MXTensor:
    """An MX-quantized tensor.  ``scale_exponents``: int16, one unbiased exponent per block
    (shape ``x.shape[:-1] + (nblocks,)``; ``NAN_EXPONENT`` = 128 marks the NaN scale);
    ``elements``: the element values (an ml_dtypes array of ``x``'s shape); ``block``: values per
    block along the last axis (the last block of a row is shorter when the length is not a
    multiple: the same as zero padding, which leaves the block max unchanged)."""

    scale_exponents: np.ndarray
    elements: np.ndarray
    elem: str
    block: int

    @property
    def scales(self) -> np.ndarray:
        """The scales as E8M0 (``ml_dtypes.float8_e8m0fnu``; biased by 127, 0xFF is NaN)."""
        return (self.scale_exponents + 127).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)

    def dequantize(self) -> np.ndarray:
        """``elements * 2**exponent`` as float32 (NaN throughout a block with the NaN scale; an inf
        block's clipped ±max times ``2**(128 - emax)`` overflows float32: it comes back ±inf)."""
        e = np.repeat(self.scale_exponents, self.block, axis=-1)[..., :self.elements.shape[-1]]
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.ldexp(self.elements.astype(np.float32), e.astype(np.int32))
        out[e == NAN_EXPONENT] = np.nan
        return out


def _as_f32(x: Any) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "fiu" and "float" not in a.dtype.name:
        raise ValueError(f"x must be a real numeric array, got dtype {a.dtype}")
    if a.ndim == 0:
        a = a.reshape(1)
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(a, np.float32)


def mx_quantize(x: Any, elem: str = "fp8_e4m3", block: int = 32) -> MXTensor:
    """MX-quantize ``x`` along its last axis in blocks of ``block`` values (default 32, the spec's).

    Chunked: extra memory is the int16 exponents, the 1-byte elements and a few cache-sized
    scratch buffers (plus a padded copy when the last axis is not a multiple of ``block``).
    ValueError for an unknown ``elem`` or a block size < 1.
    """
    fmt = element_format(elem)
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    block = int(block)
    a = _as_f32(x)
    n = a.shape[-1]
    nb = -(-n // block)
    if n % block:
        padded = np.zeros(a.shape[:-1] + (nb * block,), np.float32)
        padded[..., :n] = a
        blocks = padded.reshape(-1, block)
    else:
        blocks = a.reshape(-1, block)
    exps = np.empty(blocks.shape[0], np.int16)
    elements = np.empty(blocks.shape, fmt.dtype)
    with np.errstate(invalid="ignore"):  # inf * 0 in a NaN-scale block is NaN, as in torchao
        _quantize_chunks(blocks, fmt, exps, elements)
    exps = exps.reshape(a.shape[:-1] + (nb,))
    elements = elements.reshape(a.shape[:-1] + (nb * block,))[..., :n]
    if n % block:
        elements = np.ascontiguousarray(elements)
    name = next(k for k, v in ELEMENTS.items() if v is fmt)
    return MXTensor(scale_exponents=exps, elements=elements, elem=name, block=block)


@cache
def cast_table(fmt: Format) -> np.ndarray:
    """The element code (uint8) of every float32 class ``sign | exponent | 5 leading mantissa
    bits | sticky`` (2**15 classes), from the real ml_dtypes cast of one member of each.

    Exact for every float32: round-to-nearest-even to the element's at most 4 significant bits
    (fewer for its subnormals) depends on the sign, the exponent, the bits down to the guard bit,
    which lie among the 5 leading ones for every element exponent that does not round to 0, and
    on whether any bit below is set (the sticky bit).  Values below the element's range round to
    ±0 by exponent alone; NaN and inf keep their classes.  ``cast_codes`` looks codes up here
    (one gather per value; the real cast costs an order of magnitude more).
    """
    c = np.arange(1 << 15, dtype=np.uint32)
    rep = ((c >> np.uint32(1)) << np.uint32(18)) | (c & np.uint32(1))
    return rep.view(np.float32).astype(fmt.dtype).view(np.uint8)


def cast_codes(values: np.ndarray, fmt: Format, scratch: np.ndarray | None = None) -> np.ndarray:
    """The codes (uint8) of ``values`` (float32) cast to ``fmt``, by ``cast_table``: equal to
    ``values.astype(fmt.dtype).view(np.uint8)`` for every float32 (NaN codes included)."""
    u = np.ascontiguousarray(values, np.float32).view(np.uint32)
    idx = np.right_shift(u, np.uint32(17), out=scratch)
    np.bitwise_and(idx, np.uint32(~1 & 0x7FFF), out=idx)
    sticky = np.bitwise_and(u, np.uint32(0x3FFFF))
    np.minimum(sticky, np.uint32(1), out=sticky)
    np.bitwise_or(idx, sticky, out=idx)
    return cast_table(fmt)[idx]


def _quantize_chunks(blocks: np.ndarray, fmt: Format, exps: np.ndarray,
                     elements: np.ndarray) -> None:
    """Fill ``exps`` and ``elements`` from ``blocks`` (float32, one block a row), chunk by chunk:
    the block max is read on the bit pattern (sign cleared: integer order is magnitude order, and
    NaN sorts above inf), its exponent field gives floor(log2); P = V * 2**-e (exact: the same as
    V / 2**e), clipped to ±max, cast (by ``cast_codes``)."""
    bits = blocks.view(np.uint32)
    top = np.float32(fmt.max)
    shift = np.int16(127 + emax(fmt))
    one = np.ones(_CHUNK, np.float32)
    buf = np.empty((_CHUNK, blocks.shape[1]), np.float32)
    mag = np.empty((_CHUNK, blocks.shape[1]), np.uint32)
    idx = np.empty((_CHUNK, blocks.shape[1]), np.uint32)
    codes = elements.view(np.uint8)
    for i in range(0, blocks.shape[0], _CHUNK):
        j = min(i + _CHUNK, blocks.shape[0])
        k = j - i
        m = np.bitwise_and(bits[i:j], np.uint32(0x7FFFFFFF), out=mag[:k]).max(axis=1)
        e = (m >> np.uint32(23)).astype(np.int16) - shift
        np.maximum(e, np.int16(-127), out=e)
        nan = m > np.uint32(0x7F800000)
        e[nan] = NAN_EXPONENT
        exps[i:j] = e
        factor = np.ldexp(one[:k], -np.minimum(e, np.int16(127)).astype(np.int32))
        factor[nan] = 0
        out = np.multiply(blocks[i:j], factor[:, None], out=buf[:k])
        np.minimum(out, top, out=out)
        np.maximum(out, -top, out=out)
        codes[i:j] = cast_codes(out, fmt, idx[:k])


def block_scaled(x: Any, q: MXTensor) -> tuple[np.ndarray, np.ndarray]:
    """``(V_i / X, nan_mask)`` for the blocks of ``q`` (made from ``x``): the float32 values
    before the element cast and clip (what ``shares`` classifies), and where the scale is NaN."""
    a = _as_f32(x)
    e = np.repeat(q.scale_exponents, q.block, axis=-1)[..., :a.shape[-1]]
    if e.shape != a.shape:
        raise ValueError(f"x has shape {a.shape}, the MXTensor {q.elements.shape}")
    nan = e == NAN_EXPONENT
    with np.errstate(invalid="ignore"):
        scaled = np.ldexp(a, -np.where(nan, 0, e).astype(np.int32))
        scaled[nan] *= 0
    return scaled, nan
