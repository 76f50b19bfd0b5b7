"""Reading S3 server access logs and CloudTrail data events as object reads
(harvest/s3/access_logs.py): AWS's documented lines, generated lines with awkward keys and
user agents, lines cut short, CloudTrail files, and a generated log read back whole."""

from __future__ import annotations

import gzip
import io

import pytest
from access_log_fixtures import (
    AWS_EXAMPLE,
    ROLE,
    access_line,
    cloudtrail_file,
    cloudtrail_record,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from lineagegraph.harvest.s3.access_logs import (
    AccessLogParser,
    Read,
    ReadProblems,
    file_reads,
)

AT = 1_549_411_238_000  # 06/Feb/2019:00:00:38 +0000


def reads_of(data: bytes, where: str = "log") -> tuple[list[Read], ReadProblems]:
    """The reads of a log file, each key whole again."""
    problems = ReadProblems()
    found = [
        Read(bucket, directory + name, principal, at)
        for bucket, directory, name, principal, at in file_reads(
            io.BytesIO(data), where, problems, AccessLogParser()
        )
    ]
    return found, problems


def test_aws_documented_example_parses_and_holds_no_object_read() -> None:
    found, problems = reads_of(AWS_EXAMPLE.encode())
    assert (found, problems.skipped) == ([], 0)


def test_aws_documented_put_line_turned_into_a_get_is_a_read_at_its_time() -> None:
    put = AWS_EXAMPLE.splitlines()[4]
    line = put.replace("REST.PUT.OBJECT", "REST.GET.OBJECT")
    found, problems = reads_of(line.encode())
    owner = line.split(" ")[0]
    assert found == [Read("amzn-s3-demo-bucket1", "s3-dg.pdf", owner, AT + 79_000)]
    assert problems.skipped == 0


@pytest.mark.parametrize(
    "key",
    ["raw/a b/c d.csv", "raw/100%/x+y.csv", "raw/café/日本語 ☃.parquet", 'q/"quoted".json',
     "raw/dt=2024-01-01/part-0.parquet", "top.csv", "a/%2F/b"],
)  # fmt: skip
def test_generated_keys_come_back_exactly(key: str) -> None:
    found, _ = reads_of(access_line("lake", key, AT).encode())
    assert found == [Read("lake", key, ROLE, AT)]


def test_an_object_named_dash_is_told_from_no_key_by_the_request_uri() -> None:
    """The log writes the key `-` as it writes no key; the request URI says which it was."""
    path_style = access_line("lake", "-", AT)
    virtual_host = path_style.replace('"GET /lake/- HTTP/1.1"', '"GET /- HTTP/1.1"')
    assert virtual_host != path_style
    no_key = path_style.replace('"GET /lake/- HTTP/1.1"', '"GET /lake/ HTTP/1.1"')
    found, problems = reads_of("\n".join([path_style, virtual_host, no_key]).encode())
    assert found == [Read("lake", "-", ROLE, AT)] * 2
    assert problems.skipped == 1 and problems.named[0].endswith(":3: REST.GET.OBJECT with no key")


def test_reads_are_get_head_copy_source_and_select_and_only_when_they_succeeded() -> None:
    ops = ["REST.GET.OBJECT", "REST.HEAD.OBJECT", "REST.COPY.OBJECT_GET", "REST.POST.SELECT",
           "REST.PUT.OBJECT", "REST.DELETE.OBJECT", "REST.GET.BUCKET",
           "REST.COPY.OBJECT"]  # fmt: skip
    lines = [access_line("lake", f"k/{i}", AT, operation=op) for i, op in enumerate(ops)]
    lines += [
        access_line("lake", "k/denied", AT, status="403"),
        access_line("lake", "k/missing", AT, operation="REST.HEAD.OBJECT", status="404"),
        access_line("lake", "k/partial", AT, status="206"),
        access_line("lake", "k/cached", AT, status="304"),
    ]
    found, problems = reads_of("\n".join(lines).encode())
    assert [r.key for r in found] == ["k/0", "k/1", "k/2", "k/3", "k/partial", "k/cached"]
    assert problems.skipped == 0


def test_anonymous_reads_are_by_the_remote_ip_and_the_time_zone_is_applied() -> None:
    line = access_line("lake", "pub/x", AT, "-", ip="203.0.113.9").replace("+0000]", "+0130]")
    found, _ = reads_of(line.encode())
    assert found == [Read("lake", "pub/x", "203.0.113.9", AT - 90 * 60_000)]


@pytest.mark.parametrize(
    "agent",
    ['Mozilla/5.0 "quoted" (X11)', 'agent \\"escaped\\" x', '"', "-", 'a" "b'],
)
def test_quotes_in_user_agents_do_not_break_a_line(agent: str) -> None:
    for newer in (True, False):
        found, problems = reads_of(
            access_line("lake", "k", AT, agent=agent, newer_fields=newer).encode()
        )
        assert (found, problems.skipped) == ([Read("lake", "k", ROLE, AT)], 0)


def test_lines_cut_short_are_skipped_and_named_by_file_and_line_the_others_kept() -> None:
    good = access_line("lake", "k", AT)
    cut_at = [good.index('"-"') + 3, good.index('"aws-cli') + 4, good.index(" 200 ") + 4, 60]
    lines = [good, *(good[:n] for n in cut_at), "garbage", good.replace("Feb", "Fbr"), good]
    found, problems = reads_of("\n".join(lines).encode(), "s3://logs/2019-02-06-00-00-38-X")
    assert len(found) == 2
    assert problems.skipped == 6
    assert [p.split(": ")[0] for p in problems.named] == [
        f"s3://logs/2019-02-06-00-00-38-X:{n}" for n in range(2, 8)
    ]
    assert "cut short" in problems.named[0]


def test_every_prefix_of_a_line_is_its_read_or_a_named_bad_line() -> None:
    """A line cut anywhere (a log file written part way) is never a wrong read: cut before its
    user agent it is a named bad line, cut after it the whole line's read (cut inside a user
    agent that holds quotes, it may be either: the fields read are whole by then)."""
    whole = access_line("lake", "raw/a b/100%.csv", AT, agent='ua "quoted" x')
    expected = reads_of(whole.encode())[0]
    agent_start, agent_end = whole.index('"ua '), whole.index('x" ') + 2
    for n in range(1, len(whole)):
        found, problems = reads_of(whole[:n].encode())
        if n >= agent_end or (n > agent_start and found):
            assert (found, problems.skipped) == (expected, 0), n
        else:
            assert found == [] and problems.skipped == 1, n
            shaped = n > whole.index("[")
            assert ("cut short" in problems.named[0]) == shaped, (n, problems.named)


def test_blank_and_fieldless_lines() -> None:
    """Blank lines (however many spaces) are no lines; ten fields that hold no time are no
    access log line; a key at the bucket's top has no directory."""
    top = access_line("lake", "top+1.csv", AT)
    lines = ["", " " * 30, "\t", "a b c d e f g h i j", top, top.replace(" top%2B1.csv ", " - ")]
    found, problems = reads_of("\n".join(lines).encode())
    assert found == [Read("lake", "top+1.csv", ROLE, AT)]
    assert problems.named == [
        "log:4: not an S3 server access log line",
        "log:6: REST.GET.OBJECT with no key",
    ]


def test_a_key_that_is_not_utf8_is_a_bad_line() -> None:
    line = access_line("lake", "k", AT).replace(" k ", " bad%FF ")
    found, problems = reads_of(line.encode())
    assert found == [] and "not URL-encoded UTF-8" in problems.named[0]


def test_gzipped_access_logs_and_crlf_endings_read_alike() -> None:
    text = access_line("lake", "a b", AT) + "\r\n" + access_line("lake", "c", AT) + "\r\n"
    assert reads_of(gzip.compress(text.encode()))[0] == reads_of(text.encode())[0]
    assert [r.key for r in reads_of(text.encode())[0]] == ["a b", "c"]


def test_cloudtrail_reads_with_copy_source_select_and_anonymous() -> None:
    records = [
        cloudtrail_record("lake", "raw/a b.csv", AT),
        cloudtrail_record("lake", "raw/h", AT + 1000, event="HeadObject"),
        cloudtrail_record("lake", "raw/src é.csv", AT + 2000, event="CopyObject"),
        cloudtrail_record("lake", "raw/s", AT + 3000, event="SelectObjectContent"),
        cloudtrail_record("lake", "raw/pub", AT + 4000, None, ip="203.0.113.9"),
        cloudtrail_record("lake", "raw/put", AT, event="PutObject"),
        cloudtrail_record("lake", "raw/denied", AT, error="AccessDenied"),
        {"eventSource": "s3.amazonaws.com", "eventName": "GetObject", "eventTime": "x"},
        "not a record",
    ]
    found, problems = reads_of(cloudtrail_file(records), "trail.json.gz")
    assert found == [
        Read("lake", "raw/a b.csv", ROLE, AT),
        Read("lake", "raw/h", ROLE, AT + 1000),
        Read("lake", "raw/src é.csv", ROLE, AT + 2000),
        Read("lake", "raw/s", ROLE, AT + 3000),
        Read("lake", "raw/pub", "203.0.113.9", AT + 4000),
    ]
    assert problems.skipped == 2
    assert problems.named[0].startswith("trail.json.gz: Records[7]: ")


def test_a_cloudtrail_file_that_is_not_json_is_one_problem() -> None:
    found, problems = reads_of(gzip.compress(b'{"Records": [1, 2'), "t.json.gz")
    assert found == [] and problems.skipped == 1
    assert problems.named[0].startswith("t.json.gz: not a CloudTrail log file")


def test_a_truncated_gzip_raises_so_nothing_of_the_file_counts() -> None:
    data = gzip.compress((access_line("lake", "k", AT) + "\n").encode() * 1000)
    with pytest.raises((EOFError, OSError)):
        reads_of(data[: len(data) // 2])


def test_times_of_one_minute_each_second_its_own_and_bad_seconds_named() -> None:
    """The parser works each minute out once and adds the seconds: the seconds (up to a leap
    second, 60) and the time zone still count, and bad seconds are a bad line."""
    base = access_line("lake", "k", AT)  # 06/Feb/2019:00:00:38 +0000
    lines = [base, base.replace(":38 ", ":05 "), base.replace(":38 ", ":60 "),
             base.replace(":38 +0000]", ":59 -0100]"), base.replace(":38 ", ":61 "),
             base.replace(":38 ", ":3x "), base.replace("2019:00:", "2019:24:"), base]  # fmt: skip
    found, problems = reads_of("\n".join(lines).encode())
    minute = AT - 38_000
    assert [r.at for r in found] == [
        AT,
        minute + 5_000,
        minute + 60_000,
        minute + 59_000 + 3_600_000,
        AT,
    ]
    assert [p.split(": ", 1)[0] for p in problems.named] == ["log:5", "log:6", "log:7"]
    assert "no such time of day" in problems.named[0] and "no such" in problems.named[2]


def test_an_unknown_month_is_a_bad_line() -> None:
    found, problems = reads_of(access_line("lake", "k", AT).replace("/Feb/", "/Fex/").encode())
    assert found == [] and problems.named == ["log:1: unknown month 'Fex' in the time"]


# --- a generated log reads back as the reads it describes -----------------------------------

_KEY_CHARS = st.one_of(
    st.sampled_from([" ", "+", "%", "/", '"', "=", "é", "日", "😀", "\t", "?", "#", "&"]),
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
)
_keys = st.text(_KEY_CHARS, min_size=1, max_size=40)
_principals = st.one_of(
    st.from_regex(r"arn:aws:sts::\d{12}:assumed-role/[A-Za-z0-9+=,.@_-]{1,20}/[a-z0-9]{1,8}",
                  fullmatch=True),
    st.from_regex(r"[0-9a-f]{64}", fullmatch=True),
    st.just("-"),
)  # fmt: skip
# Keys that share directories and times that share minutes, as a log's lines do (the parser
# remembers both), besides keys and times of any kind.
_directories = st.sampled_from(["", "raw/", "raw/dt=2024-06-01/", "a b/c+d/", "100%/", "日/"])
_entries = st.tuples(
    st.from_regex(r"[a-z0-9][a-z0-9.-]{2,20}", fullmatch=True),
    st.one_of(_keys, st.builds(str.__add__, _directories, _keys)),
    _principals,
    st.one_of(st.integers(0, 4_000_000_000), st.integers(1_717_200_000, 1_717_200_150)).map(
        lambda s: s * 1000
    ),
    st.sampled_from(
        ["REST.GET.OBJECT", "REST.HEAD.OBJECT", "REST.PUT.OBJECT", "REST.COPY.OBJECT_GET"]
    ),
    st.sampled_from(["200", "206", "304", "403", "404", "500"]),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30),
    st.booleans(),
)


@settings(deadline=None, max_examples=300)  # a loaded machine is no failure
@given(st.lists(_entries, max_size=30))
def test_a_generated_log_round_trips_to_the_reads_it_describes(entries: list) -> None:
    lines, expected = [], []
    for bucket, key, principal, at, operation, status, agent, newer in entries:
        lines.append(
            access_line(bucket, key, at, principal, ip="198.51.100.7", operation=operation,
                        status=status, agent=agent, newer_fields=newer)
        )  # fmt: skip
        if operation != "REST.PUT.OBJECT" and (status.startswith("2") or status == "304"):
            who = "198.51.100.7" if principal == "-" else principal
            expected.append(Read(bucket, key, who, at))
    found, problems = reads_of("\n".join(lines).encode())
    assert found == expected
    assert problems.skipped == 0
