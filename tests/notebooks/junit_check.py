"""The reports every run writes, checked against their schemas: ``junit.xml`` against the JUnit
schema of Jenkins' xUnit plugin (``junit_schema/``, vendored with its source and licence),
``results.json`` against ``data/schemas/results.schema.json``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import xmlschema

from kit.regress import record

JUNIT_XSD = Path(__file__).resolve().parent / "junit_schema" / "junit-10.xsd"


@cache
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(JUNIT_XSD))


def valid_junit(source: Path | bytes) -> None:
    """Raise when ``source`` (a path or the bytes) is not well-formed or not valid JUnit."""
    text = source.read_bytes() if isinstance(source, Path) else source
    junit_schema().validate(text.decode("utf-8"))


@cache
def results_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(record.SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def valid_results(path: Path) -> dict[str, Any]:
    """``path`` (an OUT folder or a results.json) read, after checking it against its schema."""
    file = path / record.FILE if path.is_dir() else path
    data = json.loads(file.read_text(encoding="utf-8"))
    errors = sorted(results_validator().iter_errors(data), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    return data


def case_properties(root: ET.Element, case: ET.Element) -> dict[str, str]:
    """A testcase's properties: those of its testsuite named ``CLASSNAME::NAME::KEY`` (the
    JUnit schema has no properties on a testcase), as ``{KEY: value}``."""
    prefix = f"{case.get('classname')}::{case.get('name')}::"
    for suite in root.iter("testsuite"):
        if case in list(suite):
            return {
                str(p.get("name"))[len(prefix) :]: str(p.get("value"))
                for p in suite.iterfind("properties/property")
                if str(p.get("name")).startswith(prefix)
            }
    raise AssertionError(f"testcase {prefix} is in no testsuite")
