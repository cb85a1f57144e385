"""Seeded identifiers: the same seed and the same calls give the same ids (the wire contract)."""

from __future__ import annotations

import hashlib
import random
import uuid
from collections import defaultdict


class Ids:
    """Opaque, prefixed ids (``acc_…``) derived from the seed and a counter per prefix.

    A counter per prefix keeps ids of one kind independent of calls of another kind: creating
    a card does not shift the next account id.
    """

    def __init__(self, seed: int, *, uuids: bool = False) -> None:
        self.seed = seed
        self.uuids = uuids  # ids as UUIDs without a prefix, still seeded (a choice overlay, A60)
        self._counters: defaultdict[str, int] = defaultdict(int)

    def next(self, prefix: str) -> str:
        self._counters[prefix] += 1
        digest = hashlib.sha256(f"{self.seed}:{prefix}:{self._counters[prefix]}".encode()).hexdigest()
        if self.uuids:
            return str(uuid.UUID(hex=digest[:32], version=4))
        return f"{prefix}_{digest[:20]}"

    def rng(self, *parts: object) -> random.Random:
        """A random source seeded by the simulator seed and ``parts`` (for derived values)."""
        material = ":".join([str(self.seed), *map(str, parts)]).encode()
        return random.Random(int.from_bytes(hashlib.sha256(material).digest()[:8], "big"))
