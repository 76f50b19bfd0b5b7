"""Lineage-shaped test graphs for benchmarks (docs/graph-model.md), not uniform random graphs.

Domains of ~1,000 assets each, layered raw -> staging -> marts -> reports with fan-in 1-6
(mean ~3.5, so about two edges per asset), one 20-deep chain per domain, and a few hub tables
with hundreds of downstream neighbours across domains. Deterministic for a given seed.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass

from lineagegraph.model import Asset, Flow

DOMAIN = 1000
LAYERS = (("raw", 0.4), ("staging", 0.3), ("marts", 0.2), ("reports", 0.1))
CHAIN = 20
T0 = 1_700_000_000_000


@dataclass
class Shape:
    """Where to start traversals in the generated graph."""

    raw: list[str]
    reports: list[str]
    chain_heads: list[str]
    chain_tails: list[str]
    hubs: list[str]


def urn(domain: int, layer: str, i: int) -> str:
    if layer == "raw":
        return f"s3://bench-raw/d{domain}/feed{i}"
    return f"snowflake://bench/D{domain}.{layer.upper()}.T{i}"


def _domain_layers(d: int) -> list[list[str]]:
    sizes = [int(DOMAIN * share) for _, share in LAYERS]
    return [[urn(d, name, i) for i in range(n)] for (name, _), n in zip(LAYERS, sizes, strict=True)]


def assets(n_assets: int) -> Iterator[Asset]:
    for d in range(max(1, n_assets // DOMAIN)):
        for (name, _), members in zip(LAYERS, _domain_layers(d), strict=True):
            kind, system = ("Dataset", "s3") if name == "raw" else ("Table", "snowflake")
            for u in members:
                yield Asset(u, kind, system, u.rsplit("/", 1)[-1], T0)


def flows(n_assets: int, seed: int = 7, hubs: int = 10, hub_fanout: int = 300) -> Iterator[Flow]:
    rnd = random.Random(seed)
    domains = max(1, n_assets // DOMAIN)
    for d in range(domains):
        layers = _domain_layers(d)
        for upper, lower in itertools.pairwise(layers):
            for dst in lower:
                for src in rnd.sample(upper, rnd.randint(1, 6)):
                    yield Flow(src, dst, T0)
        # one 20-deep chain through staging tables of this domain
        chain = layers[1][:CHAIN]
        for src, dst in itertools.pairwise(chain):
            yield Flow(src, dst, T0)
    for h in range(hubs):
        hub = urn(h % domains, "marts", 0)
        for _ in range(hub_fanout):
            yield Flow(hub, urn(rnd.randrange(domains), "reports", rnd.randrange(100)), T0)


def shape(n_assets: int, hubs: int = 10) -> Shape:
    domains = max(1, n_assets // DOMAIN)
    picks = range(0, domains, max(1, domains // 20))
    return Shape(
        raw=[urn(d, "raw", 5) for d in picks],
        reports=[urn(d, "reports", 7) for d in picks],
        chain_heads=[urn(d, "staging", 0) for d in picks],
        chain_tails=[urn(d, "staging", CHAIN - 1) for d in picks],
        hubs=[urn(h % domains, "marts", 0) for h in range(hubs)],
    )
