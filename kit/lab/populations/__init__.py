"""The populations room of the lab (public name ``kit.simulate``): N synthetic customers through
the API's journeys, in shards, on local worker processes or a Dask cluster.

- :mod:`~kit.lab.populations.simulate` — :func:`run` and what it returns; the public surface.
- :mod:`~kit.lab.populations.planning` — every customer's plan, drawn from the seed.
- :mod:`~kit.lab.populations.target` — where the customers play: each shard's own simulator, or
  (another profile) that profile's server, capped.
- :mod:`~kit.lab.populations.shard` — one shard, with its own simulator or as clients of that
  server, where it is sent; :mod:`~kit.lab.populations.customer` — one customer's journeys.
- :mod:`~kit.lab.populations.engine` — where shards run: :mod:`~kit.lab.populations.pool`
  (local worker processes, each ``python -m kit.lab.populations._worker``, warmed by
  :mod:`~kit.lab.populations._warm`) or Dask.
- :mod:`~kit.lab.populations.aggregate`, :mod:`~kit.lab.populations.results`,
  :mod:`~kit.lab.populations.summary`, :mod:`~kit.lab.populations.plots` — the figures.

It uses the shared :mod:`kit.lab.journeys` and :mod:`kit.lab.display`, never the explorer.
Importing the package loads none of its modules.
"""
