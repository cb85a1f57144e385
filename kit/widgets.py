"""The public alias of :mod:`kit.lab.widgets` (``import kit.widgets`` is that module)."""

import sys

from kit.lab import widgets as _module

sys.modules[__name__] = _module
