"""The article's numbers, reproduced exactly (../shared/seed/SUMMARY.md)."""

from __future__ import annotations

from fampnb import seed
from fampnb.formats import FP16


def test_experiment_1_numbers():
    a, b = seed.experiment_1()
    assert (a.g_abs_max, a.scale, a.scaled, a.verdict) == (32000.0, 65536.0, 2097152000.0, "OVERFLOW")
    assert repr(b.scale) == "2.3283064365386963e-10"
    assert b.scale == 65536.0 / 2**48
    assert repr(b.scaled) == "6.984919309616089e-07"
    assert b.verdict == "UNDERFLOW"


def test_experiment_2_rows():
    rows = seed.experiment_2()
    assert [r.scale for r in rows] == [65536, 32768, 16384, 8192, 4096, 2048, 1024, 512]
    assert rows[3].scale == 8192 and rows[4].scale == 4096
    assert [r.scaled for r in rows] == [2097152000.0, 524288000.0, 131072000.0, 32768000.0,
                                        8192000.0, 2048000.0, 512000.0, 128000.0]
    assert all(r.verdict == "OVERFLOW" for r in rows)
    assert [r.next_scale for r in rows] == [32768, 16384, 8192, 4096, 2048, 1024, 512, 256]
    assert all(isinstance(r.scale, int) for r in rows)


def test_limits_used_are_the_articles():
    assert FP16.max == 65504.0 and FP16.min_normal == 6.103515625e-05


def test_cli_prints_the_articles_numbers_byte_identically(run_cli):
    first, second = run_cli("seed"), run_cli("seed")
    assert first.returncode == 0 and first.stderr == ""
    assert first.stdout == second.stdout == seed.render()
    for text in ("2097152000.0", "6.984919309616089e-07", "2.3283064365386963e-10",
                 "row 4 = 8192, expected 8192, MATCH",
                 "sequence: 65536,32768,16384,8192,4096,2048,1024,512",
                 "OVERFLOW 1  UNDERFLOW 1  total 2/2"):
        assert text in first.stdout


def test_cli_usage_errors_are_one_line(run_cli):
    for args in (("nonsense",), ("seed", "extra"), ()):
        r = run_cli(*args)
        assert r.returncode == 2
        assert "Traceback" not in r.stderr + r.stdout
