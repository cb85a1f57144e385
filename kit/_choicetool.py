"""``kit choices template``, ``check FILE`` and ``infer``: start a dialect file, check one, infer one.

A dialect file is a choice overlay (:mod:`kit._choices`) that says how a sandbox spells what the
spec does not show (:mod:`kit._dialect`). ``template`` prints every entry and key a file may
re-choose, commented out, with the simulator's value and the spec's words it fills in;
``check`` validates a file and names the line of each problem; ``infer`` writes one from a
sandbox's OpenAPI document (:mod:`kit._infer_openapi`) or recorded exchanges (:mod:`kit._infer_har`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kit import _choices, register
from kit._tomltext import key as toml_key
from kit._tomltext import value as toml_value

__all__ = ["add_parser", "check", "served", "template"]

#: The entries a dialect file re-chooses first (the wire's spelling), then the rest of what the
#: simulator serves under an overlay, in the register's order.
_DIALECT_FIRST = ("A67", "A68", "A01", "A02", "A05", "A06", "A18", "A20", "A24", "A27", "A28", "A64")


def _overlayable() -> Iterator[tuple[str, list[str]]]:
    """(entry, its keys a file may re-choose) in template order."""
    served = _choices.SERVED
    rest = [str(a["id"]) for a in register.assumptions() if a["id"] not in _DIALECT_FIRST]
    order = [*_DIALECT_FIRST, *rest]
    for entry in order:
        if entry not in served:
            continue
        value = register.value(entry)
        keys = served[entry]
        yield entry, [k for k in value if keys is None or k in keys]


def template() -> str:
    """The commented TOML of every overlayable entry and key (see the module docstring)."""
    lines = [
        "# A dialect file: how your server spells what the API's spec does not show.",
        "# Every line below is the simulator's own choice, commented out. Uncomment and change what",
        "# your server does differently; leave the rest. Then: kit choices check FILE",
        "# Read by kit.connect(..., choices=FILE), kit regress --choices FILE and kit serve --choices FILE.",
        "",
        '# description = "our sandbox"',
    ]
    for entry, keys in _overlayable():
        item = register.assumption(entry)
        ids = register.cite(item.get("spec", ""))
        lines += ["", f"# [{entry}] {item['topic']}"]
        lines.append(f"#   the spec{' (' + ', '.join(ids) + ')' if ids else ''}: {item.get('spec', '')}")
        value = register.value(entry)
        fixed = {k for (e, k) in _choices.SEED_FIXED if e == entry} | set(item.get("seed_fixed", {}))
        scalars = [k for k in keys if not isinstance(value[k], dict) or not value[k]]
        lines.append(f"# [{entry}]")
        for k in scalars:
            note = "   # the spec fixes part of it" if k in fixed else ""
            lines.append(f"# {toml_key(k)} = {toml_value(value[k])}{note}")
        for k in keys:
            if k in scalars:
                continue
            lines.append(f"# [{entry}.{toml_key(k)}]")
            methods = register.value("A67")["methods"] if (entry, k) == ("A67", "paths") else {}
            for name, v in value[k].items():
                tail = f"   # {methods[name]}" if name in methods else ""
                lines.append(f"# {toml_key(name)} = {toml_value(v)}{tail}")
    return "\n".join(lines) + "\n"


def _line_of(text: str, entry: str, key: str) -> int | None:
    """The line (1-based) of ``entry``'s ``key`` (dotted for a sub-table's key) in ``text``;
    the entry's table when the key is not found; ``None`` when neither is."""
    want = [entry, *key.split(".")] if key else [entry]
    table: list[str] = []
    header_line = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        head = re.fullmatch(r"\[([^\[\]]+)\]", line)
        if head:
            table = [p.strip().strip('"') for p in head.group(1).split(".")]
            if table == want[: len(table)] and header_line is None:
                header_line = number
            if table == want:
                return number
            continue
        assign = re.match(r"([A-Za-z0-9_\-\".]+)\s*=", line)
        if assign:
            full = table + [p.strip('"') for p in assign.group(1).split(".")]
            if full == want[: len(full)] and len(full) >= 2:
                return number
    return header_line


def served(path: str) -> _choices.Overlay:
    """The overlay of the file at ``path`` as ``kit serve --choices`` serves it: read (every rule
    of :mod:`kit._choices` and :mod:`kit._dialect_rules`) and resolved by the simulator's
    personality (``kit.sim.personality.resolve``: what it can serve, its route table built as the
    server builds it).

    Raises:
        ChoicesError: every problem, each naming entry and key.
    """
    from kit.sim.personality import resolve

    overlay = _choices.load(path)
    resolve(overlay)
    return overlay


def check(path: str) -> list[str]:
    """The problems of the dialect file at ``path``, each ``FILE:LINE: [entry] key: why``
    (empty when the file is good): every rule :func:`served` applies, so a file it accepts is
    one ``kit serve --choices`` serves."""
    text = Path(path).read_text(encoding="utf-8") if Path(path).is_file() else ""
    try:
        served(path)
    except _choices.ChoicesError as exc:
        out = []
        for problem in exc.problems:
            line = _line_of(text, problem.entry, problem.key)
            out.append(f"{path}:{line or 1}: {problem}")
        return out
    return []


def _run(args: argparse.Namespace) -> int:
    if args.choices_command == "template":
        sys.stdout.write(template())
        return 0
    if args.choices_command == "infer":
        return _infer(args)
    problems = check(args.file)
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"{args.file}: a good dialect file")
    return 1 if problems else 0


def add_parser(commands: Any) -> None:
    """Add ``kit choices`` to the CLI's sub-commands."""
    choices = commands.add_parser("choices", help="start, check or infer a dialect file")
    sub = choices.add_subparsers(dest="choices_command", required=True)
    sub.add_parser("template", help="print every re-choosable value, commented, to start a file")
    checker = sub.add_parser("check", help="validate a file; each problem names its line")
    checker.add_argument("file", metavar="FILE", help="the dialect file (TOML) to check")
    infer = sub.add_parser("infer", help="write a dialect file from an OpenAPI document or recorded traffic")
    source = infer.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--openapi",
        metavar="URL|FILE",
        help="the sandbox's OpenAPI document (3.0 or 3.1, JSON or YAML), a file or an http(s) URL; "
        "no default: this or --har",
    )
    source.add_argument(
        "--har",
        metavar="FILE",
        nargs="+",
        help="HAR files of exchanges with the sandbox (kit regress --har writes them); no default: "
        "this or --openapi",
    )
    infer.add_argument(
        "-o",
        "--out",
        metavar="OUT",
        default=None,
        help="write the dialect file here (created new, mode 0600); default: print it",
    )
    choices.set_defaults(func=_run)


def _infer(args: argparse.Namespace) -> int:
    from kit import _files, _infer_har, _infer_openapi

    source = args.openapi or " ".join(args.har)
    try:
        if args.openapi:
            text = _infer_openapi.infer_text(_infer_openapi.load(args.openapi), source=args.openapi)
        else:
            text = _infer_har.infer_text(args.har)
    except (OSError, ValueError) as exc:
        print(f"kit choices infer: {exc}", file=sys.stderr)
        return 1
    if args.out is None:
        sys.stdout.write(text)
        return 0
    _files.write(args.out, text)
    problems = check(args.out)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{args.out}: inferred from {source}" + ("" if not problems else " (with problems)"))
    return 1 if problems else 0
