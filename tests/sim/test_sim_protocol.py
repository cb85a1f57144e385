"""``kit serve``'s HTTP protocol class (:mod:`kit.sim.protocol`): made with its own name."""

from __future__ import annotations

from kit.sim import protocol
from kit.sim.protocol import with_header_timeout


def test_the_header_timeout_protocol_is_named_after_the_protocol_it_extends() -> None:
    made = with_header_timeout(1.5)
    base = protocol._base()
    assert issubclass(made, base)
    assert made.__name__ == made.__qualname__ == f"HeaderTimeout{base.__name__}"
    assert made.__module__ == protocol.__name__
