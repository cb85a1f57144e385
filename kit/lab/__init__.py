"""The lab wing: tools built on the client's public API, for people exploring the partner API.

- :mod:`kit.lab.journeys` — the onboarding journey (anonymous → account → person with KYC),
  written once for the lab, the tests and the benchmarks.
- :mod:`kit.lab.simulate` — population simulation (public name ``kit.simulate``), with
  :mod:`~kit.lab.planning`, :mod:`~kit.lab.customer`, :mod:`~kit.lab.results` and
  :mod:`~kit.lab.plots`.
- :mod:`kit.lab.widgets` — the ipywidgets explorer (public name ``kit.widgets``), over the
  state machine in :mod:`kit.lab.flow`.
- :mod:`kit.lab.walk` — the scripted walk of ``kit walk`` / ``make walk``.

Importing ``kit.lab`` loads none of them.

Example::

    >>> from kit.lab.journeys import onboard
    >>> onboard(kit.connect("sim")).status           # doctest: +SKIP
    'established'
"""
