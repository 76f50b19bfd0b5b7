"""Exclusion globs: what they compile to and the errors a malformed one gets.

Whether the graph matches keys the way a glob means is checked against the glob's regular
expression on real stores in test_orphans.py.
"""

from __future__ import annotations

import pytest

from lineagegraph.errors import ConfigError
from lineagegraph.values.globs import DEFAULT_EXCLUDES, compile_glob, exclusion_globs


def test_defaults_exclude_spark_markers_and_temporary_output() -> None:
    assert [g.text for g in exclusion_globs()] == ["**/_SUCCESS", "**/_temporary/**"]
    success, temporary = (compile_glob(text).program for text in DEFAULT_EXCLUDES)
    # Both take the plain string path in the graph, not the block matcher.
    assert (success["general"], success["equals"], success["ends"]) == (
        False,
        "_SUCCESS",
        "/_SUCCESS",
    )
    assert (temporary["general"], temporary["starts"], temporary["contains"]) == (
        False,
        "_temporary/",
        "/_temporary/",
    )


@pytest.mark.parametrize(
    ("glob", "forms"),
    [
        ("logs/**", {"starts": "logs/"}),
        ("a/b", {"equals": "a/b"}),
        ("**/.DS_Store", {"equals": ".DS_Store", "ends": "/.DS_Store"}),
        ("**/tmp/x/**", {"starts": "tmp/x/", "contains": "/tmp/x/"}),
    ],
)
def test_literal_globs_become_string_tests(glob: str, forms: dict[str, str]) -> None:
    program = compile_glob(glob).program
    tests = {k: program[k] for k in ("equals", "starts", "ends", "contains") if program[k]}
    assert (program["general"], tests) == (False, forms)


def test_wildcard_globs_become_blocks_of_segment_pieces() -> None:
    program = compile_glob("raw/**/dt=*/**/*.crc").program
    assert program["general"] is True
    assert program["needle"] == ".crc"  # the longest piece every match contains
    assert program["blocks"] == [
        {"anchor": "start", "segments": [["raw"]]},
        {"anchor": "float", "segments": [["dt=", ""]]},
        {"anchor": "end", "segments": [["", ".crc"]]},
    ]
    assert program["rest"] == 0
    assert compile_glob("tmp/*/**").program["rest"] == 1  # a trailing '**' needs a segment


def test_repeated_double_stars_mean_one() -> None:
    assert compile_glob("a/**/**/b").program == compile_glob("a/**/b").program


@pytest.mark.parametrize("glob", ["a**", "**b/c", "x/a**b", "***"])
def test_double_star_must_be_a_whole_segment(glob: str) -> None:
    with pytest.raises(ValueError, match=r"'\*\*' must be a whole path segment"):
        compile_glob(glob)


def test_configured_and_given_globs_add_to_the_defaults_once() -> None:
    globs = exclusion_globs(["logs/**", "**/_SUCCESS"], ("logs/**", "*.tmp"))
    assert [g.text for g in globs] == ["**/_SUCCESS", "**/_temporary/**", "logs/**", "*.tmp"]


@pytest.mark.parametrize(
    ("glob", "message"),
    [
        ("", "an exclusion glob is empty"),
        ("logs**", "exclusion glob 'logs**': '**' must be a whole path segment"),
    ],
)
def test_a_bad_glob_is_a_config_error_naming_it(glob: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        exclusion_globs([glob])
    assert message in str(err.value)
    assert "--exclude or [reports] exclude" in str(err.value)
