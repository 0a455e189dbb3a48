"""flux dws wait's verdict from a job's data.dws.dataout and
data.dws.teardown records (the waiting itself runs under a broker:
t/t3303-early-release.t)."""

from __future__ import annotations

from flux_dws.cli.wait import verdict

DONE = {"state": "complete", "time": 2.0}


def test_complete() -> None:
    assert verdict({"state": "complete", "time": 1.0}, DONE) == (
        0, "data out complete; storage torn down")


def test_failed_names_dws_error() -> None:
    assert verdict({"state": "failed", "time": 1.0, "error": "DW Directive 1: no space"},
                   DONE) == (1, "copy_out failed: DW Directive 1: no space")
    assert verdict({"state": "failed", "time": 1.0}, DONE) == (
        1, "copy_out failed: no reason recorded")


def test_skipped() -> None:
    assert verdict({"state": "skipped", "time": 1.0, "error": "teardown_after expired"},
                   DONE) == (1, "data movement skipped: teardown_after expired")


def test_missing_records() -> None:
    assert verdict(None, None) == (
        1, "no Teardown record: the service never finished this job's storage")
    assert verdict({"state": "complete"}, None)[0] == 1
    assert verdict(None, DONE) == (
        1, "DataOut never ran (the job ended before it); its storage is gone")
