"""Imported once by each population worker — a local one (:mod:`kit.lab.populations._worker`) at its start,
every Dask worker before its first shard (:mod:`kit.lab.populations.engine`, when the shards run
their own simulators): what every shard needs, imported and built once, so that no shard pays
for it — the shard's code and this process's simulator, started and kept idle for the first
shard (:func:`kit.lab.populations.shard.warm_simulator`).
"""

from __future__ import annotations

from kit.lab.populations.shard import warm_simulator

warm_simulator()
