"""The kit's source read as code: the string constants a scan looks at, docstrings left out.

The tests that keep one home for a name of the wire (its paths, its headers, a value written
once) read every module with :mod:`ast` and look at its constants; a docstring may say
anything, so it is left out, once, here.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator


def docstrings(tree: ast.Module) -> set[int]:
    """The ids of the constants that stand alone as statements: docstrings and the like."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def constants(tree: ast.Module, *, skip: Collection[int] = ()) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of each string and bytes constant of the code (bytes read as latin-1),
    docstrings and the constants whose ids are in ``skip`` left out."""
    skipped = docstrings(tree) | set(skip)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in skipped:
            if isinstance(node.value, str):
                yield node.lineno, node.value
            elif isinstance(node.value, bytes):
                yield node.lineno, node.value.decode("latin-1")
