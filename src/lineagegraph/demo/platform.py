"""The demo's seeded platform: what lives in S3 and what Snowflake recorded, as plain data.

Kept apart from the code that builds it so a test can compute the expected lineage and orphan
totals from these definitions independently of the graph.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

ACCOUNT = "acme-demo"
RAW_BUCKET = "acme-raw"
CURATED_BUCKET = "acme-curated"
DAYS = ("2024-06-01", "2024-06-02", "2024-06-03")
PARTS_PER_DAY = 2
EVENTS_PER_PART = 400
STAGE = "RAW.PUBLIC.CURATED_STAGE"
STAGE_URL = f"s3://{CURATED_BUCKET}/"
CURATED_PREFIX = "events_daily"
STAGING_TABLE = "RAW.PUBLIC.EVENTS_DAILY"
MART_TABLE = "ANALYTICS.MARTS.DAILY_ACTIVE"
DASHBOARD_VIEW = "ANALYTICS.DASH.DAU_DASHBOARD"


@dataclass(frozen=True)
class SeedObject:
    """One object put into S3 before anything runs."""

    bucket: str
    key: str
    size: int
    storage_class: str = "STANDARD"
    read_by_spark: bool = False


def event_lines(day: str, part: int) -> bytes:
    """Deterministic JSON-lines click events for one day and part."""
    rnd = random.Random(f"{day}/{part}")
    lines = [
        json.dumps(
            {
                "user_id": rnd.randrange(500),
                "event": rnd.choice(["view", "click", "buy"]),
                "amount": round(rnd.random() * 100, 2),
                "ts": f"{day}T{i % 24:02d}:00:00Z",
            }
        )
        for i in range(EVENTS_PER_PART)
    ]
    return ("\n".join(lines) + "\n").encode()


def event_key(day: str, part: int) -> str:
    return f"events/dt={day}/part-{part:05d}.json"


def seed_objects() -> list[SeedObject]:
    """Raw events that Spark reads, and data nothing reads (partner drops, archives, backups)."""
    objects = [
        SeedObject(RAW_BUCKET, event_key(d, p), len(event_lines(d, p)), read_by_spark=True)
        for d in DAYS
        for p in range(PARTS_PER_DAY)
    ]
    objects += [
        SeedObject(RAW_BUCKET, f"partners/feeds/2024-05/clicks-{i:03d}.csv", 300_000 + i * 1000)
        for i in range(12)
    ]
    objects.append(SeedObject(RAW_BUCKET, "partners/feeds/2024-05/_SUCCESS", 0))
    objects += [
        SeedObject(RAW_BUCKET, f"archive/2023/events-{m:02d}.json.gz", 64_000, "STANDARD_IA")
        for m in range(1, 13)
    ]
    objects += [
        SeedObject(RAW_BUCKET, f"archive/2022/events-{m:02d}.json.gz", 1_500_000, "GLACIER")
        for m in range(1, 13)
    ]
    objects.append(
        SeedObject(RAW_BUCKET, "backups/warehouse-2024-01.sql.gz", 4_000_000, "DEEP_ARCHIVE")
    )
    return objects


FOLDER_MARKERS = ((RAW_BUCKET, "tmp/"),)


@dataclass(frozen=True)
class SnowflakeColumn:
    """One row of the stand-in's ACCOUNT_USAGE.COLUMNS: `dropped_days_ago` puts the time the
    column was dropped in DELETED, that many days before the demo runs (None: it stands)."""

    table: str
    name: str
    data_type: str
    precision: int | None = None
    scale: int | None = None
    dropped_days_ago: int | None = None


DROPPED_COLUMN = "SESSIONS"
"""The mart's column dropped a day before the demo runs: `schema-history` shows the change."""
SNOWFLAKE_COLUMNS = (
    SnowflakeColumn(STAGING_TABLE, "DT", "DATE"),
    SnowflakeColumn(STAGING_TABLE, "USER_ID", "NUMBER", 38, 0),
    SnowflakeColumn(STAGING_TABLE, "EVENTS", "NUMBER", 38, 0),
    SnowflakeColumn(STAGING_TABLE, "REVENUE", "NUMBER", 12, 2),
    SnowflakeColumn(MART_TABLE, "DT", "DATE"),
    SnowflakeColumn(MART_TABLE, "ACTIVE_USERS", "NUMBER", 38, 0),
    SnowflakeColumn(MART_TABLE, "REVENUE", "NUMBER", 14, 2),
    SnowflakeColumn(MART_TABLE, DROPPED_COLUMN, "NUMBER", 38, 0, dropped_days_ago=1),
)
