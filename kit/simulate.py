"""The public alias of :mod:`kit.lab.simulate` (``import kit.simulate`` is that module)."""

import sys

from kit.lab import simulate as _module

sys.modules[__name__] = _module
