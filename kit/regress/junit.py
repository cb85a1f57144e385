"""``junit.xml``: a run as the JUnit XML that CI servers read, always well-formed and valid.

The report fits the JUnit schema of Jenkins' xUnit plugin (``junit-10.xsd``, which also covers
Maven Surefire's reruns; the tests validate every report against it): a ``<testsuites>`` root;
a ``notebooks`` testsuite with one testcase per (notebook, set) — ``classname="notebooks"``
and the notebook's stem, or ``notebooks.SET`` and ``STEM[SET]`` in a matrix; its
``<properties>`` hold the run's parameters and what changed since the last run
(``since.newly_failing`` …, :mod:`kit.regress.history`). A notebook that failed has a
``<failure>`` (then one ``<rerunFailure>`` per rerun that failed too); a flaky one (it passed on
a rerun, ``--reruns``) has a ``<flakyFailure>`` per failed attempt and no failure. Then a
``checks`` testsuite (a testcase per named check), ``contract drift`` and ``contract
differences``. The schema allows no properties on a testcase: a check's basis and a
difference's outcome are properties of its testsuite named ``CLASSNAME::NAME::basis`` (and
``::kind``, ``::outcome``), and the first lines of the testcase's ``<system-out>``.

Every text and attribute goes through :func:`clean` first: a character XML 1.0 does not allow
(a kernel's ANSI colour, a bell, a NUL, a byte that was not UTF-8) is written ``#x1B`` as
pytest's JUnit writer does, so the report always parses.

Example::

    >>> clean("\\x1b[31mred\\x1b[0m \\x07")
    '#x1B[31mred#x1B[0m #x07'
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kit.regress.model import NotebookResult

__all__ = ["clean", "report"]

_ILLEGAL = re.compile("[^\t\n\r\x20-\x7e\x80-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: Any) -> str:
    """``text`` with each character XML 1.0 does not allow written ``#xHH`` (``#xHHHH`` past
    0xFF), as pytest's JUnit writer does.

    Example::

        >>> clean("a\\x00b\\udcff")
        'a#x00b#xDCFF'

    Raises:
        Nothing.
    """

    def escape(found: re.Match[str]) -> str:
        code = ord(found.group())
        return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"

    return _ILLEGAL.sub(escape, str(text))


def _clean_tree(root: ET.Element) -> None:
    for element in root.iter():
        if element.text is not None:
            element.text = clean(element.text)
        if element.tail is not None:
            element.tail = clean(element.tail)
        for key, value in element.attrib.items():
            element.set(key, clean(value))


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def _stem(notebook: str) -> str:
    base, _, rest = notebook.partition("[")
    return Path(base).stem + (f"[{rest}" if rest else "")


def _classname(notebook: str) -> str:
    _, _, rest = notebook.partition("[")
    return f"notebooks.{rest.rstrip(']')}" if rest else "notebooks"


def _suite(
    root: ET.Element, name: str, tests: int, failures: int, skipped: int, seconds: float = 0
) -> ET.Element:
    return ET.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time=_seconds(seconds),
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    )


def _case(suite: ET.Element, classname: str, name: str, seconds: float = 0) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=name, time=_seconds(seconds))


def _properties(suite: ET.Element, values: Sequence[tuple[str, str]]) -> None:
    if values:
        props = ET.SubElement(suite, "properties")
        for name, value in values:
            ET.SubElement(props, "property", name=name, value=value)


def _rerun(case: ET.Element, tag: str, message: str, details: str) -> None:
    """A Surefire rerun element: ``rerunFailure`` or ``flakyFailure`` with its stack trace."""
    element = ET.SubElement(case, tag, message=message, type="NotebookFailed")
    ET.SubElement(element, "stackTrace").text = details


def _notebooks(root: ET.Element, results: Sequence[NotebookResult], props: list[tuple[str, str]]) -> None:
    failures = sum(not r.ok for r in results)
    suite = _suite(root, "notebooks", len(results), failures, 0, sum(r.seconds for r in results))
    _properties(suite, props)
    for r in results:
        case = _case(suite, _classname(r.notebook), _stem(r.notebook), r.seconds)
        if r.status == "flaky":
            for attempt in r.attempts:
                _rerun(case, "flakyFailure", attempt.message, attempt.details)
        elif not r.ok:
            kind = "Leak" if r.status == "leaked" else (r.error or "Error").split(":")[0]
            ET.SubElement(case, "failure", message=r.message, type=kind).text = r.details
            for attempt in r.attempts:
                _rerun(case, "rerunFailure", attempt.message, attempt.details)
        if r.notes or r.stderr:
            ET.SubElement(case, "system-err").text = "\n".join([*r.notes, r.stderr]).strip()


def _checks(root: ET.Element, results: Sequence[NotebookResult], strict: bool) -> None:
    checks = [(r, c) for r in results for c in r.checks]
    if not checks:
        return
    failed = sum(c.outcome == "failed" or (strict and c.outcome == "differs") for _, c in checks)
    suite = _suite(root, "checks", len(checks), failed, sum(c.outcome == "skipped" for _, c in checks))
    props: list[tuple[str, str]] = []
    for r, c in checks:
        classname = f"checks.{_stem(r.notebook)}"
        case = _case(suite, classname, c.name)
        key = f"{classname}::{c.name}"
        lines = []
        if c.basis:
            props += [(f"{key}::kind", c.kind), (f"{key}::basis", c.basis)]
            lines.append(f"basis: {c.kind} {c.basis}".strip())
        if c.outcome == "skipped":
            ET.SubElement(case, "skipped", message=c.reason)
        elif c.outcome == "differs":
            props.append((f"{key}::outcome", "differs"))
            lines.append("outcome: differs")
            if strict:
                ET.SubElement(case, "failure", message=f"{c.reason} (--strict-choices)", type="ChoiceDiffers")
            lines.append(c.reason)
        elif c.outcome != "passed":
            failure = ET.SubElement(case, "failure", message=c.reason or c.outcome, type="CheckFailed")
            failure.text = c.cell
        if lines:
            ET.SubElement(case, "system-out").text = "\n".join(lines)
    suite.insert(0, ET.Element("properties"))
    for name, value in props:
        ET.SubElement(suite[0], "property", name=name, value=value)


def _contract(root: ET.Element, results: Sequence[NotebookResult], allow_drift: bool, strict: bool) -> None:
    drift = [(r, d) for r in results for d in r.seed_drift]
    if drift:
        suite = _suite(
            root, "contract drift", len(drift), 0 if allow_drift else len(drift), allow_drift * len(drift)
        )
        for r, d in drift:
            case = _case(suite, f"drift.{_stem(r.notebook)}", f"{d.operation} {d.field}")
            message = f"expected {d.expected}, got {d.got}"
            message += f" (request {d.request_id})" if d.request_id else ""
            if allow_drift:
                ET.SubElement(case, "skipped", message=f"contract drift allowed (--allow-drift): {message}")
            else:
                ET.SubElement(case, "failure", message=message, type="ContractDrift").text = str(d)
    differ = [(r, d) for r in results for d in r.drift if d.differs]
    if differ:
        suite = _suite(root, "contract differences", len(differ), strict * len(differ), 0)
        props: list[tuple[str, str]] = []
        for r, d in differ:
            classname, name = f"differs.{_stem(r.notebook)}", f"{d.operation} {d.field}"
            case = _case(suite, classname, name)
            text = f"differs from {d.basis}: {d}"
            props += [(f"{classname}::{name}::basis", d.basis), (f"{classname}::{name}::outcome", "differs")]
            if strict:
                ET.SubElement(case, "failure", message=f"{text} (--strict-choices)", type="ChoiceDiffers")
            ET.SubElement(case, "system-out").text = f"outcome: differs\n{text}"
        suite.insert(0, ET.Element("properties"))
        for key, value in props:
            ET.SubElement(suite[0], "property", name=key, value=value)


def report(
    results: Sequence[NotebookResult],
    params: Mapping[str, Any],
    *,
    allow_drift: bool = False,
    strict_choices: bool = False,
    since: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The run's JUnit XML (UTF-8, with its declaration): see the module docstring.

    ``since`` are the notebooks suite's extra properties (what changed since the last run,
    :func:`kit.regress.history.properties`), after the parameters (``repr`` of each value).

    Example::

        >>> report([NotebookResult("00_quickstart.ipynb", "passed", 2.5, Path("out"))], {"seed": 7})[:38]
        b"<?xml version='1.0' encoding='utf-8'?>"

    Raises:
        Nothing.
    """
    total = sum(r.seconds for r in results)
    root = ET.Element("testsuites", name="kit regress", time=_seconds(total))
    props = [(key, repr(value)) for key, value in params.items()] + list(since)
    _notebooks(root, results, props)
    _checks(root, results, strict_choices)
    _contract(root, results, allow_drift, strict_choices)
    root.set("tests", str(len(root.findall(".//testcase"))))
    root.set("failures", str(len(root.findall(".//testcase/failure"))))
    root.set("errors", "0")
    _clean_tree(root)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
