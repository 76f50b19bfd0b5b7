"""The one place where asset, column and transformation URNs are built (docs/identity.md).

Lineage from S3 listings, Spark plans, Snowflake's ACCESS_HISTORY and OpenLineage events only
joins up when every harvester names the same data the same way, so no harvester builds a URN
by hand: each calls a function here.

Two kinds of S3/local identity exist on purpose:

* a listed object's ``:File`` urn is its key exactly as listed, so two objects never collide;
* a ``:Dataset`` urn (a prefix, or a path another system references) is collapsed and folded,
  so a Spark read of ``s3a://b/t/dt=2024-01-01/`` meets the objects listed under ``s3://b/t``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote_plus


class IdentityError(ValueError):
    """An input that cannot be turned into a URN; the message names the input."""


_S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)", re.DOTALL)
_URN_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# Snowflake's rule for an identifier that needs no quotes (and so is stored upper-cased).
_PLAIN_SNOWFLAKE_IDENTIFIER = re.compile(r"[A-Z_][A-Z0-9_$]*")
# A referenced path split into its root (``s3://bucket`` or ``file://``) and its segments.
_Parts = tuple[str, list[str]]


@dataclass(frozen=True)
class FoldRules:
    """How referenced paths become dataset urns beyond the fixed rules; empty by default.

    ``patterns`` fold a dataset where one matches one or more whole consecutive segments joined
    by ``/`` (docs/identity.md): with ``\\d{4}/\\d{2}/\\d{2}``,
    ``s3://b/logs/2024/01/31/x`` folds to ``s3://b/logs``.

    ``aliases`` map a path prefix to the prefix it really names, applied before folding: a
    bucket mounted or mirrored locally (``file:///mnt/s3/raw`` = ``s3://raw``), so a Spark job
    reading the mount meets the objects an S3 listing saw. Prefixes match at segment boundaries.
    Patterns and aliases are checked once, so a bad one fails when settings load, not mid-run.
    """

    patterns: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = field(
        init=False, repr=False, compare=False, default=()
    )
    _alias_parts: tuple[tuple[_Parts, _Parts], ...] = field(
        init=False, repr=False, compare=False, default=()
    )

    def __post_init__(self) -> None:
        if isinstance(self.patterns, str):
            raise IdentityError(f"fold patterns must be a list, not one string: {self.patterns!r}")
        patterns = tuple(self.patterns)  # settings may hand over a list
        compiled = []
        for pattern in patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise IdentityError(f"invalid fold pattern {pattern!r}: {exc}") from exc
        aliases = tuple((str(a), str(b)) for a, b in dict(self.aliases).items())
        parts = tuple((_split_path(a), _split_path(b)) for a, b in aliases)
        object.__setattr__(self, "patterns", patterns)
        object.__setattr__(self, "aliases", aliases)
        object.__setattr__(self, "_compiled", tuple(compiled))
        object.__setattr__(self, "_alias_parts", parts)

    def matches_at(self, segments: Sequence[str], start: int) -> bool:
        """True when a pattern matches whole segments beginning at ``segments[start]``."""
        return any(
            pattern.fullmatch("/".join(segments[start:end]))
            for end in range(start + 1, len(segments) + 1)
            for pattern in self._compiled
        )

    def unalias(self, parts: _Parts) -> _Parts:
        """The path a mount or mirror stands for (the longest matching alias wins)."""
        root, segments = parts
        best: tuple[int, _Parts] | None = None
        for (a_root, a_segs), (t_root, t_segs) in self._alias_parts:
            longer = best is None or len(a_segs) > best[0]
            if longer and root == a_root and segments[: len(a_segs)] == a_segs:
                best = (len(a_segs), (t_root, t_segs + segments[len(a_segs) :]))
        return best[1] if best else parts


NO_FOLD_RULES = FoldRules()
"""The default: only Hive segments fold."""


# --- S3 and local paths -------------------------------------------------------------------


def _check_bucket(bucket: str) -> None:
    if not bucket or "/" in bucket:
        raise IdentityError(f"not an S3 bucket name: {bucket!r}")


def _is_hive_segment(segment: str) -> bool:
    key, sep, _ = segment.partition("=")
    return bool(sep and key)


def _fold(segments: Iterable[str], rules: FoldRules) -> list[str]:
    """Drop empty segments (repeated '/'), then cut at the first Hive segment or pattern match."""
    kept = [segment for segment in segments if segment]
    for index, segment in enumerate(kept):
        if _is_hive_segment(segment) or rules.matches_at(kept, index):
            return kept[:index]
    return kept


def _join(root: str, segments: Sequence[str]) -> str:
    return root + "".join("/" + segment for segment in segments)


def s3_file_urn(bucket: str, key: str) -> str:
    """The ``:File`` urn of a listed object: its key exactly as listed, so urns never collide.

    >>> s3_file_urn("b", "raw//a b/café.csv")
    's3://b/raw//a b/café.csv'
    """
    _check_bucket(bucket)
    if not key:
        raise IdentityError(f"empty S3 key in bucket {bucket!r}")
    return f"s3://{bucket}/{key}"


def decode_inventory_key(key: str) -> str:
    """Decode a key from an S3 Inventory CSV, where keys arrive URL-encoded.

    The encoding is form encoding (``application/x-www-form-urlencoded``, as in S3 event
    notifications): a space is written ``+`` and a literal ``+`` is ``%2B``. So the decoding
    is ``unquote_plus``; plain ``unquote`` would turn every space in a key into a ``+``.
    Percent escapes are UTF-8; an escape that is not valid UTF-8 raises instead of being
    replaced, since a guessed key would name an object that does not exist.

    >>> decode_inventory_key("raw/a+b%2Bc%25/caf%C3%A9.csv")
    'raw/a b+c%/café.csv'
    """
    try:
        return unquote_plus(key, errors="strict")
    except UnicodeDecodeError as exc:
        raise IdentityError(f"S3 Inventory key is not URL-encoded UTF-8: {key!r}") from exc


def is_folder_marker(key: str, size: int) -> bool:
    """Zero-byte keys ending in '/' are console "folder" markers: counted, not assets."""
    return size == 0 and key.endswith("/")


def s3_dataset_urn_for_key(bucket: str, key: str, rules: FoldRules = NO_FOLD_RULES) -> str:
    """The ``:Dataset`` a listed object is PART_OF: its directory prefix, collapsed and folded.

    Only directory segments fold, never the file name, so ``x=1.csv`` stays a file.

    >>> s3_dataset_urn_for_key("b", "sales//orders/dt=2024-01-01/part=1/x=1.csv")
    's3://b/sales/orders'
    >>> s3_dataset_urn_for_key("b", "orders/x=1.csv")
    's3://b/orders'
    >>> s3_dataset_urn_for_key("b", "top.csv")
    's3://b'
    """
    _check_bucket(bucket)
    if not key:
        raise IdentityError(f"empty S3 key in bucket {bucket!r}")
    directories = key.split("/")[:-1]
    return _join(f"s3://{bucket}", _fold(directories, rules))


S3_ACCESS_SYSTEM = "s3-access"
"""The system of the readers that S3 server access logs and CloudTrail saw."""


def s3_access_transformation_urn(bucket: str, principal: str) -> str:
    """The ``:Transformation`` standing for one principal's direct reads of one bucket, as S3
    server access logs or CloudTrail saw them (no harvested job did): it READS_FROM the
    datasets the keys it read fold into.

    >>> s3_access_transformation_urn("lake", "arn:aws:sts::1:assumed-role/analyst/alice")
    's3-access://lake/arn:aws:sts::1:assumed-role/analyst/alice'
    """
    _check_bucket(bucket)
    if not principal:
        raise IdentityError(f"empty principal reading bucket {bucket!r}")
    return f"s3-access://{bucket}/{principal}"


def dataset_urn(path: str, rules: FoldRules = NO_FOLD_RULES) -> str:
    """The ``:Dataset`` urn of a path another system references (Spark, Snowflake stages,
    OpenLineage).

    A referenced path names a directory, so every segment may fold, the last one included.
    Accepts ``s3://``, ``s3a://``, ``s3n://``, ``file:/x``, ``file:///x`` and absolute local
    paths. The text is taken literally (no percent-decoding): Hadoop paths and OpenLineage
    names carry keys as written.

    >>> dataset_urn("s3a://b//sales/orders/dt=2024-01-01/")
    's3://b/sales/orders'
    >>> dataset_urn("s3n://b/")
    's3://b'
    >>> dataset_urn("/tmp/out/part=3")
    'file:///tmp/out'
    >>> dataset_urn("file:/")
    'file:///'
    """
    root, segments = rules.unalias(_split_path(path))
    folded = _fold(segments, rules)
    if root == "file://":
        return _join(root, folded) if folded else "file:///"
    return _join(root, folded)


def _split_path(path: str) -> _Parts:
    """A referenced path as (root, non-empty segments): ``s3://bucket`` or ``file://``."""
    if path.startswith("/"):
        return "file://", [seg for seg in path.split("/") if seg]
    match = _SCHEME.fullmatch(path)
    if match is None:
        raise IdentityError(f"not an absolute path or URL: {path!r}")
    scheme, rest = match.group(1).lower(), match.group(2)
    if scheme in _S3_SCHEMES:
        if not rest.startswith("//"):
            raise IdentityError(f"not an S3 path: {path!r}")
        bucket, _, key = rest[2:].partition("/")
        if not bucket:
            raise IdentityError(f"no bucket in S3 path: {path!r}")
        return f"s3://{bucket}", [seg for seg in key.split("/") if seg]
    if scheme == "file":
        if rest.startswith("///"):
            return _split_path(rest[2:])
        if rest.startswith("//"):
            raise IdentityError(f"file URL with a host is not a local path: {path!r}")
        if rest.startswith("/"):
            return _split_path(rest)
        raise IdentityError(f"relative file path: {path!r}")
    raise IdentityError(f"unsupported scheme {scheme!r} in path {path!r}")


# --- Snowflake ----------------------------------------------------------------------------


def parse_snowflake_name(text: str, *, from_metadata: bool = False) -> list[str]:
    """Split a dotted Snowflake name into its parts, respecting double quotes.

    Quoted parts keep their case, lose their quotes, and ``""`` inside them is one ``"``.
    Unquoted parts are upper-cased, as Snowflake resolves names typed in SQL, unless the name
    comes from Snowflake's own metadata (``from_metadata``), where parts are already stored.

    >>> parse_snowflake_name('db.sch."My.Tab"')
    ['DB', 'SCH', 'My.Tab']
    >>> parse_snowflake_name('"a""b"')
    ['a"b']
    >>> parse_snowflake_name("Db.Sch.my_table", from_metadata=True)
    ['Db', 'Sch', 'my_table']
    """
    parts: list[str] = []
    position = 0
    while True:
        if text.startswith('"', position):
            part, position = _read_quoted(text, position)
        else:
            end = text.find(".", position)
            end = len(text) if end == -1 else end
            part = text[position:end]
            if '"' in part:
                raise IdentityError(f"unbalanced quotes in Snowflake name {text!r}")
            if not from_metadata:
                part = part.upper()
            position = end
        if not part:
            raise IdentityError(f"empty part in Snowflake name {text!r}")
        parts.append(part)
        if position == len(text):
            break
        if text[position] != ".":
            raise IdentityError(f"unbalanced quotes in Snowflake name {text!r}")
        position += 1
    if len(parts) > 3:
        raise IdentityError(f"more than 3 parts in Snowflake name {text!r}")
    return parts


def _read_quoted(text: str, start: int) -> tuple[str, int]:
    """Read the quoted part opening at ``text[start]``; return it unquoted and the next index."""
    pieces = []
    position = start + 1
    while True:
        close = text.find('"', position)
        if close == -1:
            raise IdentityError(f"unbalanced quotes in Snowflake name {text!r}")
        pieces.append(text[position:close])
        if not text.startswith('"', close + 1):
            return '"'.join(pieces), close + 1
        position = close + 2


def quote_snowflake_name(parts: Sequence[str]) -> str:
    """Write stored name parts as SQL text that :func:`parse_snowflake_name` reads back.

    >>> quote_snowflake_name(["DB", "sch", 'a"b'])
    'DB."sch"."a""b"'
    """
    return ".".join(
        part if _PLAIN_SNOWFLAKE_IDENTIFIER.fullmatch(part) else _double_quote(part)
        for part in parts
    )


def _double_quote(part: str) -> str:
    return '"' + part.replace('"', '""') + '"'


def _urn_part(part: str) -> str:
    """A part with '.' or '"' keeps Snowflake quoting in the urn, so the urn splits back.

    So does a part starting with '@': unquoted, a table in database ``@x`` would share its urn
    with the placeholder of a stage in database ``x``.
    """
    needs_quotes = "." in part or '"' in part or part.startswith("@")
    return _double_quote(part) if needs_quotes else part


def _snowflake_account(account: str) -> str:
    if not account or "/" in account:
        raise IdentityError(f"not a Snowflake account: {account!r}")
    return account.lower()


def _qualify(parts: list[str], database: str | None, schema: str | None, name: str) -> list[str]:
    """Fill in the database and schema a 1- or 2-part name leaves out."""
    context = [database, schema][: 3 - len(parts)]
    given = [part for part in context if part]
    if len(given) != len(context):
        raise IdentityError(f"cannot qualify Snowflake name {name!r}: no database or schema given")
    return given + parts


def snowflake_urn_from_parts(account: str, database: str, schema: str, name: str) -> str:
    """The urn of a Snowflake object whose parts are known separately, as stored (SHOW output).

    Parts are not parsed, so a stored name such as ``My.Tab`` stays one part.

    >>> snowflake_urn_from_parts("MyOrg-Acct", "DB", "PUBLIC", "My.Tab")
    'snowflake://myorg-acct/DB.PUBLIC."My.Tab"'
    """
    parts = [database, schema, name]
    if not all(parts):
        raise IdentityError(f"empty part in Snowflake name {parts!r}")
    return f"snowflake://{_snowflake_account(account)}/" + ".".join(map(_urn_part, parts))


def snowflake_urn(
    account: str,
    name: str,
    *,
    from_metadata: bool = False,
    database: str | None = None,
    schema: str | None = None,
) -> str:
    """``snowflake://{account}/{DB}.{SCHEMA}.{NAME}`` for a dotted name.

    ``from_metadata`` says the name comes from Snowflake itself (ACCESS_HISTORY ``objectName``,
    SHOW output): parts are used as stored. Otherwise it is SQL or user text and unquoted parts
    are upper-cased. ``database`` and ``schema`` (from QUERY_HISTORY) qualify a 1- or 2-part
    name and are used as stored.

    >>> snowflake_urn("Org-Acct", 'analytics.public."My.Tab"')
    'snowflake://org-acct/ANALYTICS.PUBLIC."My.Tab"'
    >>> snowflake_urn("org-acct", "orders", database="DB", schema="Sales")
    'snowflake://org-acct/DB.Sales.ORDERS'
    """
    parts = _qualify(
        parse_snowflake_name(name, from_metadata=from_metadata), database, schema, name
    )
    return snowflake_urn_from_parts(account, *parts)


def snowflake_stage_placeholder_urn(
    account: str,
    stage: str,
    *,
    database: str | None = None,
    schema: str | None = None,
    from_metadata: bool = True,
) -> str:
    """The placeholder ``:Dataset`` of a stage whose URL could not be resolved, so no lineage
    is dropped. A leading ``@`` (as written in SQL) is accepted.

    >>> snowflake_stage_placeholder_urn("acct", "@landing", database="RAW", schema="S")
    'snowflake://acct/@RAW.S.landing'
    """
    bare = stage.removeprefix("@")
    parts = _qualify(
        parse_snowflake_name(bare, from_metadata=from_metadata), database, schema, stage
    )
    return f"snowflake://{_snowflake_account(account)}/@" + ".".join(map(_urn_part, parts))


# --- Spark, OpenLineage, columns, transformations -----------------------------------------


def _require(**values: str) -> None:
    for label, value in values.items():
        if not value:
            raise IdentityError(f"empty {label.replace('_', ' ')}: {value!r}")


def spark_table_urn(catalog: str, db: str, table: str) -> str:
    """``spark://{catalog}/{db}.{table}``, for a catalog table with no known storage location."""
    _require(catalog=catalog, database=db, table=table)
    return f"spark://{catalog}/{db}.{table}"


def openlineage_urn(namespace: str, name: str, rules: FoldRules = NO_FOLD_RULES) -> str:
    """Map an OpenLineage dataset onto our urns, so it meets the same data seen elsewhere.

    >>> openlineage_urn("s3a://b", "/sales/dt=2024-01-01")
    's3://b/sales'
    >>> openlineage_urn("file", "/tmp/out")
    'file:///tmp/out'
    >>> openlineage_urn("snowflake://Org-Acct", "DB.SCH.T")
    'snowflake://org-acct/DB.SCH.T'
    >>> openlineage_urn("postgres://db:5432/", "//shop.public.orders")
    'postgres://db:5432/shop.public.orders'
    >>> openlineage_urn("bigquery", "proj.sales.orders")  # a namespace with no authority
    'bigquery:///proj.sales.orders'
    """
    _require(namespace=namespace)
    if namespace.rstrip("/").lower() in ("file", "file:"):
        return dataset_urn("file:///" + name.lstrip("/"), rules)
    if namespace.partition(":")[0].lower() in _S3_SCHEMES:
        return dataset_urn(namespace.rstrip("/") + "/" + name.lstrip("/"), rules)
    if namespace.lower().startswith("snowflake://"):
        account = namespace[len("snowflake://") :].strip("/")
        return snowflake_urn(account, name, from_metadata=True)
    if not name.lstrip("/"):
        raise IdentityError(f"empty OpenLineage dataset name {name!r} in namespace {namespace!r}")
    if "://" not in namespace:  # a bare platform (BigQuery's "bigquery") or a plain name
        urn = f"{namespace.rstrip(':')}:///{name.lstrip('/')}"
    else:
        urn = namespace.rstrip("/") + "/" + name.lstrip("/")
    if not _URN_SCHEME.match(urn):
        raise IdentityError(
            f"OpenLineage namespace {namespace!r} is neither a URI (scheme://...) nor a plain "
            "platform name (letters, digits, + . -)"
        )
    return urn


def warehouse_table_urn(namespace: str, parts: Sequence[str]) -> str:
    """A non-Snowflake warehouse table in OpenLineage's naming: ``{namespace}/{db}.{schema}.{t}``.

    A namespace that is a bare platform name (BigQuery's ``bigquery``) becomes a scheme with an
    empty authority, as `openlineage_urn` names the same table from an OpenLineage event.

    >>> warehouse_table_urn("postgres://db:5432", ["shop", "public", "orders"])
    'postgres://db:5432/shop.public.orders'
    >>> warehouse_table_urn("bigquery", ["proj", "sales", "orders"])
    'bigquery:///proj.sales.orders'
    """
    _require(namespace=namespace)
    if not parts or not all(parts):
        raise IdentityError(f"empty part in table name {list(parts)!r} (namespace {namespace!r})")
    name = ".".join(parts)
    if namespace.endswith("://"):  # a namespace with no authority, as OpenLineage writes it bare
        namespace = namespace[: -len("://")]
    return openlineage_urn(namespace, name)


def dbt_transformation_urn(project: str, unique_id: str) -> str:
    """``dbt://{project}/{unique_id}``: one dbt model (or snapshot), the job that builds it."""
    _require(project=project, unique_id=unique_id)
    return f"dbt://{project}/{unique_id}"


def openlineage_job_urn(namespace: str, name: str) -> str:
    """``openlineage://{job namespace}/{job name}``."""
    _require(job_namespace=namespace, job_name=name)
    return f"openlineage://{namespace}/{name}"


def openlineage_check_urn(target_urn: str, name: str) -> str:
    """``{dataset or column urn}::{assertion name}``: an OpenLineage assertion's check, stable
    across runs, one per dataset, column and assertion name.

    >>> openlineage_check_urn("s3://b/orders#id", "not_null")
    's3://b/orders#id::not_null'
    """
    _require(target_urn=target_urn, assertion_name=name)
    return f"{target_urn}::{name}"


def openlineage_name(urn: str) -> tuple[str, str]:
    """The OpenLineage (namespace, name) of a dataset urn: the inverse of `openlineage_urn`
    on every urn it builds, so an API can answer in the names its callers sent.

    >>> openlineage_name("s3://b/sales"), openlineage_name("file:///tmp/out")
    (('s3://b', 'sales'), ('file', '/tmp/out'))
    >>> openlineage_name('snowflake://acct/DB.S."My.Tab"')
    ('snowflake://acct', 'DB.S."My.Tab"')
    >>> openlineage_name("s3://b"), openlineage_name("bigquery:///proj.sales.orders")
    (('s3://b', '/'), ('bigquery', 'proj.sales.orders'))
    """
    system = system_of(urn)
    if system == "file":
        return "file", urn[len("file://") :]
    scheme, _, rest = urn.partition("://")
    authority, _, path = rest.partition("/")
    if not authority and path:  # `scheme:///name`: a bare namespace (BigQuery's "bigquery")
        return scheme, path
    return f"{scheme}://{authority}", path or "/"


def openlineage_urns(namespace: str, name: str, rules: FoldRules = NO_FOLD_RULES) -> list[str]:
    """The urns an OpenLineage (namespace, name) may name, most likely first: the one
    `openlineage_urn` builds, then the plain join of the two, which `openlineage_name` gives
    for urns no event builds (an S3 object under a Hive segment, a Snowflake stage).

    >>> openlineage_urns("snowflake://acct", "@DB.S.LANDING")
    ['snowflake://acct/"@DB".S.LANDING', 'snowflake://acct/@DB.S.LANDING']
    """
    urns = []
    with contextlib.suppress(IdentityError):
        urns.append(openlineage_urn(namespace, name, rules))
    if namespace != "file" and "://" in namespace:
        plain = namespace.rstrip("/") + "/" + name.lstrip("/")
        if name.lstrip("/") and plain not in urns:
            urns.append(plain)
    return urns


def openlineage_job_name(urn: str, name: str) -> tuple[str, str]:
    """The OpenLineage job (namespace, name) of a transformation urn whose node `name` is
    known: an OpenLineage job's namespace may itself hold '/', so only its stored name splits
    ``openlineage://{namespace}/{name}`` exactly. Other transformations (a Snowflake query, a
    Spark action) are split after the urn's authority.

    >>> openlineage_job_name("openlineage://airflow/dag.task", "dag.task")
    ('airflow', 'dag.task')
    >>> openlineage_job_name("snowflake://acct/query/ab12", "ab12")
    ('snowflake://acct', 'query/ab12')
    """
    prefix = "openlineage://"
    if urn.startswith(prefix) and name and urn.endswith("/" + name):
        namespace = urn[len(prefix) : -len(name) - 1]
        if namespace:
            return namespace, name
    return openlineage_name(urn)


def openlineage_job_urns(namespace: str, name: str) -> list[str]:
    """The transformation urns an OpenLineage job (namespace, name) may name: the one
    `openlineage_job_urn` builds, then (a namespace with a scheme) the plain join, which
    `openlineage_job_name` gives for Snowflake and Spark transformations.

    >>> openlineage_job_urns("snowflake://acct", "query/ab12")
    ['openlineage://snowflake://acct/query/ab12', 'snowflake://acct/query/ab12']
    """
    urns = []
    with contextlib.suppress(IdentityError):
        urns.append(openlineage_job_urn(namespace, name))
    if "://" in namespace and name:
        urns.append(namespace.rstrip("/") + "/" + name)
    return urns


def column_urn(asset_urn: str, column: str) -> str:
    """``{asset urn}#{column}``.

    A column name containing '#' is refused: split at the last '#', its urn would name the
    wrong asset.
    """
    _require(asset_urn=asset_urn, column=column)
    if "#" in column:
        raise IdentityError(f"column name contains '#': {column!r} (of {asset_urn!r})")
    return f"{asset_urn}#{column}"


def split_column_urn(urn: str) -> tuple[str, str]:
    """Split a column urn into (asset urn, column) at the last '#': asset urns (S3 keys) may
    contain '#' themselves.

    >>> split_column_urn("s3://b/a#b.csv#id")
    ('s3://b/a#b.csv', 'id')
    """
    asset, sep, column = urn.rpartition("#")
    if not sep or not asset or not column:
        raise IdentityError(f"not a column urn: {urn!r}")
    return asset, column


def snowflake_query_transformation_urn(
    account: str,
    parameterized_hash: str | None,
    targets: Iterable[str],
    sources: Iterable[str],
) -> str:
    """The stable identity of a Snowflake query: ``snowflake://{account}/query/{hash}``.

    Without QUERY_PARAMETERIZED_HASH, the hash is the first 16 hex digits of SHA-256 over the
    JSON list of the sorted target urns followed by the sorted source urns (docs/identity.md).
    Each is a set: an urn repeated in the input counts once, so the identity does not depend on
    how often a row mentions an object.

    >>> snowflake_query_transformation_urn("ACCT", "abc123", [], [])
    'snowflake://acct/query/abc123'
    >>> snowflake_query_transformation_urn("acct", None, ["snowflake://acct/D.S.T"], [])
    'snowflake://acct/query/dbcab0128cbd508e'
    """
    account = _snowflake_account(account)
    if not parameterized_hash:
        urns = sorted(set(targets)) + sorted(set(sources))
        digest = hashlib.sha256(json.dumps(urns).encode("utf-8")).hexdigest()
        parameterized_hash = digest[:16]
    return f"snowflake://{account}/query/{parameterized_hash}"


def spark_transformation_urn(app_name: str, output_urn: str) -> str:
    """``spark://{app name}/{output urn}``: one Spark application writing one output."""
    _require(app_name=app_name, output_urn=output_urn)
    return f"spark://{app_name}/{output_urn}"


# --- Reading urns back --------------------------------------------------------------------

# Systems whose assets' `name` is whole: a path's last segment (a file or folder name, whose
# dots are no separators) or, on Snowflake, already the object's own name. Every other
# system's name is a dotted table name (`db.schema.table`, `db.table`), whose trailing parts
# are short names too (lineagegraph.questions.lineage.resolve).
WHOLE_NAME_SYSTEMS = frozenset(
    {"s3", "file", "gs", "gcs", "hdfs", "abfs", "abfss", "wasb", "wasbs", "dbfs", "snowflake"}
)


def system_of(urn: str) -> str:
    """The node's ``system`` property: the urn's scheme (s3, file, snowflake, spark,
    openlineage; an OpenLineage dataset of another platform keeps that platform's scheme)."""
    match = _URN_SCHEME.match(urn)
    if match is None:
        raise IdentityError(f"not a urn: {urn!r}")
    return match.group(1).lower()


def name_of(urn: str) -> str:
    """A short human name for the node's ``name`` property.

    >>> name_of("s3://b/sales/x.csv"), name_of("s3://b"), name_of("file:///")
    ('x.csv', 'b', '/')
    >>> name_of('snowflake://acct/DB.S."My.Tab"'), name_of("snowflake://acct/@DB.S.LANDING")
    ('My.Tab', '@LANDING')
    """
    system = system_of(urn)
    rest = urn.split("://", 1)[1]
    if system == "snowflake":
        path = rest.partition("/")[2]
        parts = parse_snowflake_name(path.removeprefix("@"), from_metadata=True)
        if len(parts) == 1 and path.startswith("query/"):  # objects always have 3 parts
            return path.removeprefix("query/")
        stage = "@" if path.startswith("@") else ""
        return stage + parts[-1]
    segments = [segment for segment in rest.split("/") if segment]
    return segments[-1] if segments else "/"
