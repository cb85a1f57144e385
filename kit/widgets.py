"""The explorer, the public name: what :mod:`kit.lab.explorer.widgets` offers.

Example::

    >>> import kit, kit.widgets
    >>> explorer = kit.widgets.explorer(kit.connect("sim"))   # doctest: +SKIP
"""

from kit.lab.explorer.widgets import (
    ACTIONS,
    CLOSED_MESSAGE,
    HISTORY_COLUMNS,
    STATES,
    WEBHOOK_COLUMNS,
    Explorer,
    error_message,
    explorer,
    history_table,
    webhooks_table,
)

__all__ = [
    "ACTIONS",
    "CLOSED_MESSAGE",
    "HISTORY_COLUMNS",
    "STATES",
    "WEBHOOK_COLUMNS",
    "Explorer",
    "error_message",
    "explorer",
    "history_table",
    "webhooks_table",
]
