"""The readers column of the orphan and cost reports (reports.tally.readers_text)."""

from __future__ import annotations

from lineagegraph.reports.tally import readers_text


def test_readers_are_named_last_reader_first_and_the_rest_counted() -> None:
    dataset = {"readers": {"etl": 5, "arn:aws:iam::1:user/ana": 9}}
    bucket = {"readers": {"etl": 7, "10.0.0.1": 1, "dash board": 7}}
    one_object = {"readers": {"spark job": 3}}
    assert readers_text([dataset, bucket, one_object]) == (
        "arn:aws:iam::1:user/ana, dash board, etl and 2 more"
    )
    assert readers_text([{"readers": {}}]) is None
    assert readers_text([]) is None
