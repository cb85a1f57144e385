"""``-r`` keeps values as strings: an amount such as ``20.00`` never becomes a float."""

from __future__ import annotations

from kit.regress import build_parser, parse_parameters


def test_raw_parameters_stay_strings_so_money_is_never_a_float() -> None:
    assert parse_parameters(["amount=20.00"], raw=True) == {"amount": "20.00"}
    assert parse_parameters(["amount=20.00"]) == {"amount": 20.0}
    args = build_parser().parse_args(["-r", "amount=20.00", "-p", "seed=8"])
    assert args.raw_parameters == ["amount=20.00"] and args.parameters == ["seed=8"]
