"""fp8 scaling: one scale per tensor, per row, per block of 32 (model layer: numpy + ml_dtypes).

- ``current_scale(amax, fmt, margin)``: the per-tensor scale Transformer Engine computes
  (``fmt.max / amax / 2**margin`` in float32, with its edge cases), and the power-of-two variant;
- ``DelayedScaling(margin, amax_history_len, amax_compute_algo)``: TE's delayed recipe;
  ``.simulate(amax_per_step, tensor)`` -> ``DelayedTrace`` (the scale in force at each step, the
  amax history, what share of the tensor saturates or is lost at each step);
- ``mx_quantize(x, elem, block)``: OCP MX v1.0 block scaling (E8M0 scale per 32 values;
  MXFP8 e4m3/e5m2, MXFP4 e2m1) -> ``MXTensor``;
- ``Shares`` / ``shares(x, scaled, fmt)``: the exact share of values lost to zero, kept, saturated
  or NaN after a scheme, from ``Format.classify`` on the scaled values;
- ``demo_*`` and ``scheme_view``: notebook 07's demo gradients and activations (shipped data) under
  each scheme, for notebook 09 and its widget.
"""

from __future__ import annotations

from .delayed import DelayedScaling, DelayedTrace
from .demo import (
                   SCHEMES,
                   SchemeView,
                   demo_activations,
                   demo_amax_trace,
                   demo_gradients,
                   scheme_view,
                   with_spike,
)
from .mx import ELEMENTS, MXTensor, element_format, mx_quantize
from .shares import CATEGORIES, Shares, saturation_threshold, shares, zone_codes
from .tensorwise import current_scale, rowwise_scales, scale_tensor

__all__ = ["current_scale", "rowwise_scales", "scale_tensor", "DelayedScaling", "DelayedTrace",
           "mx_quantize", "MXTensor", "ELEMENTS", "element_format", "Shares", "shares",
           "zone_codes", "saturation_threshold", "CATEGORIES", "SCHEMES", "SchemeView",
           "scheme_view", "demo_gradients", "demo_activations", "demo_amax_trace", "with_spike"]
