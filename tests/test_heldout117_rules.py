"""The general rules heldout117's to heldout120's first runs led to, each on lines of its own (not
the held-out files): a Python dict that ``pprint`` wrote one field a line, its values numpy or JAX
scalars (``'loss': array(nan, dtype=float32),``), and a key qualified by a bracketed tag
(``loss [jax]: 0.0037``)."""

from __future__ import annotations

from doctor_helpers import diagnose_both as _both

from fampnb import logs
from fampnb.logs._notation import json_field, pairs

PPRINT = ["{'dataset_example_index': 234,", " 'gradient_norm': array(nan, dtype=float32),",
          " 'learning_rate': array(1.5999998e-05, dtype=float32),",
          " 'loss': array(nan, dtype=float32),", " 'step': 0,",
          " 'text_acc': array(0., dtype=float32)}"]


def test_a_pprinted_dict_of_numpy_scalars_is_one_record() -> None:
    assert json_field(" 'loss': array(nan, dtype=float32),") == ("loss", "nan")
    assert json_field("  \"loss\": 2.5,") == ("loss", "2.5")
    assert json_field(" 'dataset_average_tps': array(3.82700721e-05),") == (
        "dataset_average_tps", "3.82700721e-05")
    assert json_field(" 'name': 'resnet',") is None
    lines = ["{"] + [x.lstrip("{").rstrip("}") for x in PPRINT] + ["}", "step:1"]
    events = [e for e in logs.parse(lines) if e.kind != "note"]
    assert [(e.kind, e.step) for e in events] == [("nan", 0)]
    assert _both(lines).verdict == "data"


def test_a_key_with_a_bracketed_tag() -> None:
    assert pairs("loss [jax]:  0.0037127752 loss [torch]:  0.0037127751857042313") == {
        "loss": "0.0037127752"}
    lines = [f"loss [jax]:  {x} loss [torch]:  {x}" for x in (0.0037, 0.0044, 0.0051, 0.0036)]
    assert [e.loss for e in logs.parse(lines)] == [0.0037, 0.0044, 0.0051, 0.0036]
    assert _both(lines).verdict == "healthy"
    # a numeric index is still no qualifier: the value is the key's
    assert pairs("train_batch_loss[ 6590 ]: nan") == {"train_batch_loss": "nan"}
