"""The lab wing: tools built on the client's public API, for people exploring the partner API.

- :mod:`kit.lab.journeys` — the onboarding journey (anonymous → account → person with KYC),
  written once for the lab, the tests and the benchmarks.
- :mod:`kit.lab.simulate` — population simulation (public name ``kit.simulate``), with
  :mod:`~kit.lab.planning` (the seeded plans), :mod:`~kit.lab.shard` (one shard in a worker
  process, its own simulator), :mod:`~kit.lab.engine` (local worker processes or Dask),
  :mod:`~kit.lab.customer`, :mod:`~kit.lab.aggregate` (the shards' summable figures),
  :mod:`~kit.lab.results`, :mod:`~kit.lab.summary` and :mod:`~kit.lab.plots`.
- :mod:`kit.lab.widgets` — the ipywidgets explorer (public name ``kit.widgets``), over the
  state machine in :mod:`kit.lab.flow`, with its tables in :mod:`kit.lab.views`.
- :mod:`kit.lab.display` — who is looking: a person, or a regression run (``KIT_REGRESS=1``).
- :mod:`kit.lab.walk` — the scripted walk of ``kit walk`` / ``make walk``.

Importing ``kit.lab`` loads none of them.

Example::

    >>> from kit.lab.journeys import onboard
    >>> onboard(kit.connect("sim")).status           # doctest: +SKIP
    'established'
"""

from kit._extras import require

# Populations start simulators, the explorer is ipywidgets: the lab extra (it includes sim's).
require("lab", "kit.lab (kit.simulate, kit.widgets, kit walk)")
