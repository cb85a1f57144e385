"""The explorer room of the lab (public name ``kit.widgets``): one client's session state
machine as buttons, its last calls and its webhooks.

- :mod:`~kit.lab.explorer.widgets` — the ipywidgets view and the public surface.
- :mod:`~kit.lab.explorer.flow` — the state machine: what step may come next, performing it.
- :mod:`~kit.lab.explorer.views` — the tables of calls and webhooks.

It uses the shared :mod:`kit.lab.journeys` and :mod:`kit.lab.display`, never the populations.
Importing the package loads none of its modules.
"""
