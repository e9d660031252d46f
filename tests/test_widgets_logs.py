"""The NaN walkthrough (04) and the log reader (05), wired without a browser."""

from __future__ import annotations

import gzip

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from fampnb.chain import CHECKLIST, walk_chain  # noqa: E402
from fampnb.formats import FP16  # noqa: E402


def _classes(w):
    return set(w._dom_classes)


# --- the chain, pure ----------------------------------------------------------------------

def test_chain_overflow_type():
    r = walk_chain("updating", 3.2e4, 65536.0, "later")
    assert r.verdict == "overflow" and r.article_zone == "OVERFLOW" and r.exact_zone == "OVERFLOW"
    assert "learning rate" in r.first_switch and "clipping" in r.first_switch
    assert r.scaled == 3.2e4 * 65536.0 and len(r.steps) == 3


def test_chain_data_type_and_the_bf16_pretrained_trap():
    r = walk_chain("none", 1.0, 1024.0, "step0")
    assert r.verdict == "data" and "labels" in r.first_switch
    t = walk_chain("none", 1.0, 1024.0, "step0", bf16_pretrained=True)
    assert t.verdict == "forward-overflow" and "bf16" in t.first_switch
    assert "forward" in t.steps[2][1]


def test_chain_underflow_uses_the_exact_zone_too():
    r = walk_chain("updating", 3e3, 2.0 ** -32, "none")
    assert r.verdict == "underflow" and r.article_zone == "UNDERFLOW"
    assert r.exact_zone == "SUBNORMAL"  # the article's "flushed to 0" is a simplification
    assert "batch" in r.first_switch and "bf16" in r.first_switch


def test_chain_bf16_goes_straight_to_step_3():
    r = walk_chain("none", 10.0, 1.0, "later", precision="bf16")
    assert r.verdict == "no-scaler" and "straight to step 3" in r.steps[0][1]
    assert walk_chain("none", 10.0, 1.0, "step0", precision="bf16").verdict == "data"
    assert walk_chain("none", 10.0, 1.0, "none", precision="bf16").verdict == "healthy"


def test_chain_calibration_is_healthy_and_the_256_line():
    assert walk_chain("stopped", 1.0, 8192.0, "none").verdict == "healthy"
    assert walk_chain("updating", 1.0, 8192.0, "none").verdict == "healthy"
    low = walk_chain("updating", 1.0, 128.0, "none")
    assert low.verdict == "overflow" and "below 256" in low.steps[0][1]


def test_chain_thresholds_are_the_formats_ones():
    just_over = walk_chain("updating", FP16.max * (1 + 2**-20), 1.0, "none")
    assert just_over.article_zone == "OVERFLOW" and just_over.exact_zone == "NORMAL"
    assert walk_chain("none", FP16.min_normal, 1.0, "none").article_zone == "IN_RANGE"


@pytest.mark.parametrize("kw", [dict(g=-1.0), dict(g=float("nan")), dict(scale=float("inf")),
                                dict(lines="maybe"), dict(nan="soon"), dict(precision="fp8")])
def test_chain_bad_answers_raise_value_error(kw):
    with pytest.raises(ValueError):
        walk_chain(**kw)


def test_checklist_is_the_articles():
    for needle in ("65504", "6.1e-05", "bf16", "eight steps", "step 0", "normalization"):
        assert needle in CHECKLIST


def test_chain_without_g_skips_step_2():
    r = walk_chain("updating", None, 1.0, "later")
    assert r.verdict == "overflow" and r.article_zone == "" and "print" in r.steps[1][1]


# --- the walkthrough widget ----------------------------------------------------------------

from fampnb import diagnose, logs  # noqa: E402
from fampnb.chain import LOG_KINDS, answers_from_diagnosis, generate_log  # noqa: E402
from fampnb.widgets.walkthrough import make_walkthrough  # noqa: E402


@pytest.mark.parametrize("kind", list(LOG_KINDS))
def test_generated_logs_read_back_as_their_kind(kind):
    d = diagnose.diagnose(logs.parse(generate_log(kind, "deepspeed")))
    assert d.verdict == kind
    ans = answers_from_diagnosis(d)
    assert walk_chain(ans["lines"], None, ans.get("scale", 1.0), ans["nan"],
                      ans["precision"]).verdict == kind


def test_walkthrough_classes_and_default_state():
    ui, c, a = make_walkthrough()
    assert "fampnb-walk" in _classes(ui)
    for key, ctl in c.items():
        assert f"fampnb-walk-{key.replace('_', '-')}" in _classes(ctl)
    for key in ("chain_text", "log_text", "diagnosis_text", "checklist_text"):
        assert f"fampnb-walk-{key.replace('_', '-')}" in _classes(a[key])
    assert "overflow" in a["chain_text"].value
    assert a["diagnosis"].verdict == "overflow"
    assert "OVERFLOW!" in a["log_text"].value
    assert "65504" in a["checklist_text"].value


def test_walkthrough_answers_change_verdict_and_marker():
    ui, c, a = make_walkthrough()
    c["lines"].value = "none"
    c["nan"].value = "step0"
    assert a["result"].verdict == "data" and ">data<" in a["chain_text"].value
    c["bf16_pretrained"].value = True
    assert a["result"].verdict == "forward-overflow"
    c["g"].value, c["scale"].value = 1e-3, 2.0 ** -10
    x = a["range"]["marker"].get_xdata()[0]
    assert x == pytest.approx(c["g"].value * c["scale"].value)
    assert a["result"].article_zone == "UNDERFLOW"


def test_walkthrough_generator_and_load_button():
    ui, c, a = make_walkthrough()
    c["kind"].value = "no-scaler"
    assert a["diagnosis"].verdict == "no-scaler"
    c["load"].click()
    assert c["precision"].value == "bf16" and c["nan"].value == "later"
    assert a["result"].verdict == "no-scaler"
    c["kind"].value = "healthy"
    c["style"].value = "apex"
    assert a["diagnosis"].verdict == "healthy" and "Gradient overflow" in a["log_text"].value
    c["load"].click()
    assert c["lines"].value == "stopped" and a["result"].verdict == "healthy"


def test_walkthrough_bad_input_is_a_message(monkeypatch):
    import fampnb.widgets.walkthrough as wt

    ui, c, a = make_walkthrough()

    def boom(*args, **kw):
        raise ValueError("g_abs_max must be a finite number >= 0, got nan")

    monkeypatch.setattr(wt, "walk_chain", boom)
    c["g"].value = 10.0
    assert "g_abs_max must be" in a["status"].value
    monkeypatch.undo()
    c["g"].value = 20.0
    assert a["status"].value == ""


# --- the log reader ------------------------------------------------------------------------

import datetime as _dt  # noqa: E402

from fampnb.widgets.logreader import make_log_reader, read_log  # noqa: E402


def _upload_value_8(name: str, content: bytes) -> tuple:
    """FileUpload.value in ipywidgets 8: a tuple of dicts."""
    return ({"name": name, "type": "text/plain", "size": len(content),
             "content": memoryview(content),
             "last_modified": _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc)},)


def _upload_value_7(name: str, content: bytes) -> dict:
    """FileUpload.value in ipywidgets 7: a dict of name -> {metadata, content}."""
    return {name: {"metadata": {"name": name, "type": "text/plain", "size": len(content),
                                "lastModified": 1704067200000}, "content": content}}


def _upload(widget, name: str, content: bytes) -> None:
    """Choose a file as the front end does: ipywidgets 8 sets ``value``; 7 sets ``metadata`` and
    ``data`` and bumps ``_counter``, and the widget builds its read-only ``value`` from them."""
    import ipywidgets

    if int(ipywidgets.__version__.split(".")[0]) >= 8:
        widget.value = _upload_value_8(name, content)
        return
    widget.metadata = [_upload_value_7(name, content)[name]["metadata"]]
    widget.data = [content]
    widget.set_trait("_counter", widget._counter + 1)


@pytest.mark.parametrize("make", [_upload_value_7, _upload_value_8],
                         ids=["ipywidgets7", "ipywidgets8"])
def test_upload_value_of_either_ipywidgets_release(make):
    from fampnb.widgets.logreader import _upload_bytes

    assert _upload_bytes(make("a.log", b"loss 1.0\n")) == ("a.log", b"loss 1.0\n")
    assert _upload_bytes(type(make("a.log", b""))()) is None  # nothing chosen yet


@pytest.mark.parametrize("data, needle", [
    (None, "Paste"), ("", "empty"), (" \n\t\n", "empty"), (b"", "empty"),
    (b"\x00\x01\x02\x03ELF binary", "binary"), (bytes(range(256)) * 4, "binary"),
    (b"\x1f\x8b\x08\x00garbage", "gzip"),
])
def test_read_log_bad_input_is_a_message(data, needle):
    r = read_log(data)
    assert needle in r.message and r.diagnosis is None and not r.ok


def test_read_log_never_evaluates_anything(tmp_path):
    marker = tmp_path / "evaluated"
    text = (f"__import__('pathlib').Path({str(marker)!r}).touch()\n"
            "loss: {__import__('os').system('true')}\n")
    r = read_log(text)
    assert not marker.exists() and r.diagnosis is not None


def test_read_log_matches_the_doctor_on_every_shipped_excerpt():
    for name in logs.sample_logs():
        text = "\n".join(logs.read_sample(name))
        expected = diagnose.diagnose(logs.parse(logs.read_sample(name))).verdict
        assert read_log(text).diagnosis.verdict == expected
        assert read_log(gzip.compress(text.encode())).diagnosis.verdict == expected


def test_log_reader_classes_and_empty_start():
    ui, c, a = make_log_reader()
    assert "fampnb-logreader" in _classes(ui)
    for key, ctl in c.items():
        assert f"fampnb-logreader-{key}" in _classes(ctl)
    for key in ("verdict_text", "advice_text", "evidence_text", "source_text"):
        assert f"fampnb-logreader-{key.replace('_', '-')}" in _classes(a[key])
    assert "Paste a log" in a["verdict_text"].value
    assert a["timeline"]["title"].get_text() == "no log yet"


def test_log_reader_paste_sample_upload_and_bad_paste():
    import matplotlib.pyplot as plt

    ui, c, a = make_log_reader()
    before = plt.get_fignums()
    fig = a["figure"].fig
    c["sample"].value = "apex_apex_834.log"
    d = diagnose.diagnose(logs.parse(logs.read_sample("apex_apex_834.log")))
    assert ">overflow<" in a["verdict_text"].value and "apex" in a["verdict_text"].value
    assert "line " in a["evidence_text"].value and a["advice_text"].value.count("<li>") >= 1
    assert len(a["timeline"]["scale"].get_xdata()) == len(d.trajectory)
    assert len(a["timeline"]["backoff"].get_offsets()) == d.backoffs
    assert "apex_apex_834.log" in a["source_text"].value
    c["paste"].value = "\x00\x00\x00 not a log"
    assert "binary" in a["verdict_text"].value and a["advice_text"].value == ""
    assert a["timeline"]["title"].get_text() == "no log yet"
    c["paste"].value = ""
    assert "empty" in a["verdict_text"].value
    text = "\n".join(logs.read_sample("deepspeed_CogVideo_233.log")).encode()
    _upload(c["upload"], "cog.log.gz", gzip.compress(text))
    assert ">healthy<" in a["verdict_text"].value and "cog.log.gz" in a["source_text"].value
    c["paste"].value = "\n".join(logs.read_sample("hf-trainer_LlamaFactory_5660-bf16.log"))
    c["precision"].value = "bf16"
    assert a["reading"].diagnosis.verdict == "no-scaler"
    assert a["status"].value == "" and plt.get_fignums() == before and a["figure"].fig is fig


def test_log_reader_callback_error_becomes_a_message(monkeypatch):
    import fampnb.widgets.logreader as lr

    ui, c, a = make_log_reader()

    def boom(*args, **kw):
        raise RuntimeError("reader broke")

    monkeypatch.setattr(lr, "read_log", boom)
    c["paste"].value = "loss: 1.0"
    assert "RuntimeError: reader broke" in a["status"].value


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_walkthrough_typed_g_bad_value_is_a_message(bad):
    ui, c, a = make_walkthrough()
    c["g"].value = bad
    assert "g_abs_max must be a finite number" in a["status"].value
    c["g"].value = 3.0e3
    c["scale"].value = 2.0 ** -32
    assert a["status"].value == "" and a["result"].verdict == "underflow"


def test_walkthrough_log_window_shows_the_first_evidence_line():
    ui, c, a = make_walkthrough(kind="overflow", style="deepspeed")
    first = a["diagnosis"].evidence[0].line_no
    assert f"{first:>4}  " in a["log_text"].value and "     ..." in a["log_text"].value
