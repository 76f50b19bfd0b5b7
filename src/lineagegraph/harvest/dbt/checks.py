"""dbt test results (run_results.json) as CheckResult values, on the asset or column tested."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, get_args

from lineagegraph import identity
from lineagegraph.harvest.dbt.artifacts import Artifacts, iso_ms
from lineagegraph.model import CheckResult, CheckStatus

SYSTEM = "dbt"


def check_results(
    artifacts: Artifacts,
    nodes: Mapping[str, dict[str, Any]],
    asset_urn: Callable[[str], str | None],
    column_name: Callable[[str, str], str],
    problems: list[str],
) -> Iterator[CheckResult]:
    """One CheckResult per test result (unit tests test code, not data, and are left out).

    `nodes` are the manifest's readable nodes (a malformed test is already reported skipped).

    The target is the test's attached node, or each model it depends on when a singular test
    has none; a column test targets `{asset urn}#{COLUMN}`. `asset_urn` maps a unique_id to
    its urn (None: ephemeral or unknown); `column_name(unique_id, name)` gives a YAML column
    name as that relation stores it.
    """
    results = artifacts.run_results
    if not results:
        return
    where = artifacts.target / "run_results.json"
    metadata = results.get("metadata") or {}
    run_id = str(metadata.get("invocation_id") or "")
    default_at = iso_ms(metadata.get("generated_at"), where)
    for result in results.get("results") or []:
        unique_id = str(result.get("unique_id") or "")
        node = nodes.get(unique_id)
        if node is None or node.get("resource_type") != "test":
            continue
        status = _status(result.get("status"))
        if status is None:
            if result.get("status") != "success":  # success: compiled, not run (docs generate)
                problems.append(
                    f"{where}: {unique_id}: unknown test status {result.get('status')!r}"
                )
            continue
        targets = _targets(node, asset_urn)
        if not targets:
            problems.append(f"{where}: {unique_id}: tests nothing harvested (ephemeral?)")
            continue
        column = node.get("column_name")
        failures = result.get("failures")
        for target_id, target in targets:
            try:
                tested = (
                    identity.column_urn(target, column_name(target_id, str(column)))
                    if column
                    else target
                )
            except identity.IdentityError as exc:
                problems.append(f"{where}: {unique_id}: {exc}")
                continue
            yield CheckResult(
                urn=unique_id,
                system=SYSTEM,
                name=str(node.get("name") or unique_id),
                target=tested,
                status=status,
                at=_completed(result, default_at, where),
                run_id=run_id,
                failures=failures if isinstance(failures, int) else None,
            )


def _status(value: Any) -> CheckStatus | None:
    for status in get_args(CheckStatus):
        if value == status:
            return status  # type: ignore[no-any-return]
    return None


def _targets(node: dict[str, Any], asset_urn: Callable[[str], str | None]) -> list[tuple[str, str]]:
    attached = node.get("attached_node")
    ids = [attached] if attached else (node.get("depends_on") or {}).get("nodes") or []
    return [(i, urn) for i in ids if (urn := asset_urn(i))]


def _completed(result: dict[str, Any], default: int, where: Any) -> int:
    for timing in result.get("timing") or []:
        if timing.get("name") == "execute" and timing.get("completed_at"):
            return iso_ms(timing["completed_at"], where)
    return default
