"""The probe's device summary: bf16 native or emulated, TF32 from the compute capability, and the
legacy TF32 flags read behind a guard, checked on mocked device descriptions of a T4 (sm_75), an
A100 (sm_80) and an H100 (sm_90), and on the real torch of this machine."""

from __future__ import annotations

import subprocess
import sys
import warnings
from types import SimpleNamespace

import pytest

from conftest import ROOT
from fampnb import probe
from fampnb.probe import capability as pd


class _Matmul:
    """``torch.backends.cuda.matmul`` as current torch behaves: reading ``allow_tf32`` warns, and
    raises once the newer ``fp32_precision`` setting was used (``mixed``)."""

    def __init__(self, allow: bool, precision: str | None, mixed: bool) -> None:
        self._allow, self._mixed = allow, mixed
        if precision is not None:
            self.fp32_precision = precision

    @property
    def allow_tf32(self) -> bool:
        if self._mixed:
            raise RuntimeError("you have used mix of the legacy and new APIs to set the TF32 status")
        warnings.warn("Please use the new API settings to control TF32 behavior", UserWarning)
        return self._allow


def fake_torch(native: bool, emulated: bool = True, *, old: bool = False, mixed: bool = False):
    """A stand-in for the torch module with what ``fampnb.probe.capability`` reads."""
    if old:  # torch before the including_emulation argument
        def is_bf16_supported():
            return emulated
    else:
        def is_bf16_supported(including_emulation: bool = True):
            return emulated if including_emulation else native
    conv = SimpleNamespace(fp32_precision="tf32") if not old else SimpleNamespace()
    return SimpleNamespace(
        cuda=SimpleNamespace(is_bf16_supported=is_bf16_supported),
        backends=SimpleNamespace(
            cuda=SimpleNamespace(matmul=_Matmul(False, None if old else "none", mixed)),
            cudnn=SimpleNamespace(allow_tf32=True, conv=conv)))


def mocked_report(name: str, cc: str, torch: object) -> dict:
    """What ``device_report`` builds on CUDA, from a mocked device description."""
    rep = {"device": f"cuda:0 {name}", "available": True, "torch": "2.11.0+cu126", "cuda": "12.6",
           "measurement": probe.measurement_label(f"cuda:0 {name}"), "compute_capability": cc,
           "float32_matmul_precision": "highest", "fp16_reduced_precision_reduction": True,
           **pd.tf32_settings(torch), **pd.bf16_facts(torch, 0, cc)}
    return rep


DEVICES = [  # name, compute capability, native bf16, TF32 tensor cores
    ("Tesla T4", "7.5", False, False),
    ("NVIDIA A100-SXM4-40GB", "8.0", True, True),
    ("NVIDIA H100 80GB HBM3", "9.0", True, True),
]


@pytest.mark.parametrize("name, cc, native, tf32", DEVICES, ids=["sm_75", "sm_80", "sm_90"])
@pytest.mark.parametrize("old", [False, True], ids=["torch-2.11", "torch-before-emulation-arg"])
def test_bf16_and_tf32_lines_follow_the_compute_capability(name, cc, native, tf32, old):
    torch = fake_torch(native, emulated=True, old=old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the legacy read's warning never reaches the reader
        rep = mocked_report(name, cc, torch)
    assert (rep["bf16_supported"], rep["bf16_emulated"]) == (native, True)
    assert pd.tf32_hardware(cc) is tf32
    lines = pd.device_lines(rep)
    text = "\n".join(lines)
    assert lines[0] == f"device: cuda:0 {name}   [GPU measurement on cuda:0 {name}]"
    sm = "sm_" + cc.replace(".", "")
    assert f"compute capability {cc} ({sm})" in text
    bf16_line = next(line for line in lines if line.strip().startswith("bf16:"))
    tf32_line = next(line for line in lines if line.strip().startswith("TF32:"))
    if native:
        assert bf16_line.strip() == f"bf16: native ({sm})"
        assert tf32_line.strip().startswith(f"TF32: available on {sm}; settings:")
    else:
        assert bf16_line.strip() == "bf16: emulated (no native bf16 on sm_75)"
        assert tf32_line.strip().startswith("TF32: no TF32 on sm_75 (needs sm_80 or newer)")
    assert "allow_tf32=False" in tf32_line and "cuDNN allow_tf32=True" in tf32_line
    assert ("fp32_precision matmul='none'" in tf32_line) is (not old)


def test_a_gpu_without_bf16_says_so():
    rep = mocked_report("Tesla P100", "6.0", fake_torch(False, emulated=False))
    assert pd.bf16_status(rep) == "not supported on sm_60"
    assert pd.tf32_status(rep).startswith("no TF32 on sm_60")


def test_legacy_tf32_flags_are_read_behind_a_guard():
    """Once the newer API was used, torch raises on a legacy read: the report says None."""
    torch = fake_torch(True, mixed=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        settings = pd.tf32_settings(torch)
    assert settings == {"tf32_matmul": None, "tf32_cudnn": True, "matmul_fp32_precision": "none",
                        "cudnn_fp32_precision": "tf32"}
    assert "allow_tf32=None" in pd.tf32_status(mocked_report("NVIDIA H100", "9.0", torch))


@pytest.mark.parametrize("cc, want", [(None, None), ("7.5", (7, 5)), ((8, 0), (8, 0)),
                                      ("9", (9, 0))])
def test_parse_capability(cc, want):
    assert pd.parse_capability(cc) == want
    assert pd.sm_name(cc) == ("cpu" if want is None else f"sm_{want[0]}{want[1]}")


def test_cpu_report_lines_and_no_torch_lines(torch_mod):
    rep = probe.device_report("cpu")
    assert rep["bf16"].startswith("CPU kernels") and rep["tf32_hardware"] is False
    lines = probe.device_lines(rep)
    assert lines[0] == "device: cpu   [CPU — not a GPU measurement]"
    assert any(line.strip().startswith("TF32: none on a CPU (CUDA sm_80+ only)") for line in lines)


def test_no_torch_device_lines(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    lines = probe.device_lines(probe.device_report())
    assert "torch is not installed" in lines[0] and "pip install" in lines[1]


def test_real_torch_report_after_the_new_tf32_api_was_used(torch_mod):
    """In a fresh process (the setting is global): set ``fp32_precision`` the new way, then the
    report reads the legacy flags without a warning or an error."""
    code = ("import warnings, torch; torch.backends.cuda.matmul.fp32_precision = 'tf32'\n"
            "warnings.simplefilter('error')\n"
            "from fampnb import probe; r = probe.device_report('cpu')\n"
            "print(r['tf32_matmul'], r['matmul_fp32_precision'])\n"
            "print('\\n'.join(probe.device_lines(r)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    first = out.stdout.splitlines()[0]
    if hasattr(torch_mod.backends.cuda.matmul, "fp32_precision"):
        assert first == "None tf32", out.stdout  # torch >= 2.9 refuses the legacy read
    assert "TF32: none on a CPU (CUDA sm_80+ only)" in out.stdout
