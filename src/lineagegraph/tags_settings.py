"""[tags]: classifications stated by settings (globs over asset urns), ordered levels, and the
policies `lineagegraph check --policy` enforces (docs/classifications.md)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from lineagegraph.settings_base import Section


def split_tag(text: str) -> tuple[str, str | None]:
    """`pii=email` -> ('pii', 'email'), `pii` -> ('pii', None); the key must not be empty.

    >>> split_tag("pii=email"), split_tag(" pii "), split_tag("note=a=b")
    (('pii', 'email'), ('pii', None), ('note', 'a=b'))
    """
    key, sep, value = text.partition("=")
    key = key.strip()
    if not key:
        raise ValueError(f"a tag is KEY or KEY=VALUE with a key, got {text!r}")
    return key, (value if sep else None)


class TagGlob(Section):
    """A tag every asset whose urn matches a glob carries, stated by settings."""

    pattern: str = Field(
        description="A glob over asset urns: '*' within a path segment, '**' across them, "
        "e.g. 's3://raw/customers/**' (the dataset urn itself: 's3://raw/customers')."
    )
    tag: str = Field(description="KEY or KEY=VALUE, e.g. 'pii=contact'.")
    reason: str | None = Field(None, description="Why, shown with every tag it gives.")

    @field_validator("tag")
    @classmethod
    def _tag(cls, value: str) -> str:
        split_tag(value)
        return value


class Policy(Section):
    """Where a classification may live. An asset breaks the policy when it carries the tag
    (its own, a column's, or one derived along lineage) and any rule given says no."""

    name: str = Field(description="Named in every violation.")
    tag: str = Field(description="KEY (any value) or KEY=VALUE the policy is about, e.g. 'pii'.")
    buckets: list[str] | None = Field(
        None, description="The only S3 buckets an S3 asset carrying the tag may be in."
    )
    regions: list[str] | None = Field(
        None,
        description="The only regions (an S3 dataset's bucket region, read by the S3 "
        "harvester) an asset carrying the tag may be in; an asset of unknown region passes.",
    )
    accounts: list[str] | None = Field(
        None, description="The only Snowflake accounts a table carrying the tag may be in."
    )
    databases: list[str] | None = Field(
        None, description="The only Snowflake databases (upper case) a table may be in."
    )
    storage_classes: list[str] = Field(
        default_factory=list,
        description="S3 storage classes an object carrying the tag must not be in (GLACIER).",
    )
    not_tagged: list[str] = Field(
        default_factory=list,
        description="Tags (KEY or KEY=VALUE) of assets the tag must not reach, e.g. "
        "'exposure=public'.",
    )

    @field_validator("tag", "not_tagged")
    @classmethod
    def _tags(cls, value: str | list[str]) -> str | list[str]:
        for text in [value] if isinstance(value, str) else value:
            split_tag(text)
        return value


class TagSettings(Section):
    """Classifications: tags by glob, ordered levels and policies."""

    globs: list[TagGlob] = Field(
        default_factory=list,
        description="Tags given by settings to every asset whose urn matches a glob, "
        "[[tags.globs]] tables of pattern, tag and reason. Applied when tags are computed, "
        "never stored: editing the list changes every answer at once.",
    )
    levels: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Keys whose values are ordered levels, lowest first, e.g. "
        "{sensitivity = ['public', 'internal', 'confidential', 'restricted']}: where several "
        "reach one column or asset, the highest wins.",
    )
    policies: list[Policy] = Field(
        default_factory=list,
        description="[[tags.policies]]: where a classification may live, checked by "
        "`lineagegraph check --policy`.",
    )

    @model_validator(mode="after")
    def _unique_levels(self) -> TagSettings:
        for key, values in self.levels.items():
            if len(set(values)) != len(values):
                raise ValueError(f"tags.levels.{key} names a level twice")
        return self
