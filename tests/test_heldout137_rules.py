"""Rules from the first runs of heldout137-144 (each a message kind, a role or a notation, not a
line): a loss of exactly 0 beside one grad norm repeated to the last digit is no healthy run."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both


def _hf(losses: list[float], norms: list[float]) -> list[str]:
    return [f"{{'loss': {x}, 'grad_norm': {g!r}, 'learning_rate': {i * 1e-6}, 'epoch': {i / 100:.2f}}}"
            for i, (x, g) in enumerate(zip(losses, norms))]



def test_a_zero_loss_beside_one_grad_norm_repeated_is_no_healthy_run() -> None:
    """HF's ``'loss': 0.0`` after a normal first step, each beside ``'grad_norm':
    1.4142135381698608``: no two real gradients agree to the last digit, so the gradient is no
    gradient of the batches; two such records say it."""
    root2 = 1.4142135381698608
    d = _both(_hf([2.7584, 0.0, 0.0], [root2] * 3))
    assert d.verdict == "unknown", d.reason
    assert "the loss became exactly 0" in d.reason and repr(root2) in d.reason, d.reason
    d = _both(_hf([1.502, 0.0, 0.0, 0.0], [root2] * 4))
    assert d.verdict == "unknown" and "one value to the last digit" in d.reason, d.reason


def test_a_zero_loss_with_gradients_that_change_stays_healthy() -> None:
    """TRL's GRPO prints a policy loss of 0.0 on healthy steps, its grad norm changing from step
    to step: the gradients flow."""
    d = _both(_hf([0.0, 0.0, 0.0, 0.0], [0.3125, 0.2871, 0.4402, 0.3318]))
    assert d.verdict == "healthy", d.reason
    d = _both(_hf([1.9, 0.0, 0.0], [1.25, 0.94, 1.07]))
    assert d.verdict == "healthy", d.reason
