"""The lab wing: tools built on the client's public API, for people exploring the partner API.
Two rooms that never import each other, and the modules both use (or the notebooks do):

- :mod:`kit.lab.populations` — population simulation (public name ``kit.simulate``).
- :mod:`kit.lab.explorer` — the ipywidgets explorer (public name ``kit.widgets``).
- Shared, here at the wing's top: :mod:`kit.lab.journeys` (the onboarding journey, written once
  for both rooms, the notebooks, the tests and the benchmarks), :mod:`kit.lab.display` (who is
  looking: a person, or a regression run with ``KIT_REGRESS=1``) and :mod:`kit.lab.walk` (the
  scripted walk of ``kit walk`` / ``make walk``).

Importing ``kit.lab`` loads none of them.

Example::

    >>> from kit.lab.journeys import onboard
    >>> onboard(kit.connect("sim")).status           # doctest: +SKIP
    'established'
"""

from kit._extras import require

# Populations start simulators, the explorer is ipywidgets: the lab extra (it includes sim's).
require("lab", "kit.lab (kit.simulate, kit.widgets, kit walk)")
