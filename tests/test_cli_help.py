"""The ``kit`` command's help says everything: every command and sub-command has a description
and examples that parse, every argument its help, every option that takes a value its default
(in words where the machine decides it); the CLI reference page is that help, and the page of
environment variables names every variable the kit reads.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import cli

ROOT = Path(__file__).resolve().parent.parent


def _walk(
    parser: argparse.ArgumentParser, name: str = "kit"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command of ``parser`` by its full name, read off argparse's own actions."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from _walk(subparser, f"{name} {sub}")


COMMANDS = dict(_walk(cli.build_parser()))


def _shown_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """``action``'s help as ``--help`` prints it, on one line."""
    return " ".join(parser._get_formatter()._expand_help(action).split())


def _examples(parser: argparse.ArgumentParser) -> list[str]:
    """The command lines under ``examples:`` at the end of ``parser``'s help."""
    text = parser.format_help()
    assert "\nexamples:\n" in text, f"{parser.prog} shows no examples"
    block = text.split("\nexamples:\n", 1)[1]
    return [line.strip() for line in block.splitlines() if line.startswith("  ")]


def test_every_command_is_walked() -> None:
    assert {
        "kit",
        "kit serve",
        "kit state snapshot",
        "kit walk",
        "kit notebooks copy",
        "kit choices check",
        "kit health",
        "kit regress",
    } <= set(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_a_description_and_examples_that_parse(name: str) -> None:
    parser = COMMANDS[name]
    assert parser.description and len(parser.description) > 40, name
    examples = _examples(parser)
    assert examples, name
    for example in examples:
        argv = shlex.split(example.split(" > ", 1)[0])  # a shell redirection is not an argument
        assert argv[0] == "kit", example
        cli.build_parser().parse_args(argv[1:])  # an unknown command or option: SystemExit


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_argument_has_help_and_every_value_its_default(name: str) -> None:
    parser = COMMANDS[name]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        label = f"{name} {'/'.join(action.option_strings) or action.metavar or action.dest}"
        if isinstance(action, argparse._SubParsersAction):
            assert action.help, label
            assert all(choice.help for choice in action._choices_actions), label
            continue
        shown = _shown_help(parser, action)
        assert shown, f"{label} has no help"
        takes_value = action.nargs != 0 or isinstance(action, argparse.BooleanOptionalAction)
        if takes_value and (action.option_strings or action.nargs in ("?", "*")):
            assert "default" in shown, f"{label} does not show its default: {shown!r}"
        if not action.option_strings:
            assert action.metavar and action.metavar.isupper(), f"{label}: an unlabelled positional"


def test_the_defaults_are_shown_with_their_values() -> None:
    serve = COMMANDS["kit serve"].format_help()
    for shown in ("(default: 127.0.0.1)", "(default: 8000)", "(default: 7)", "(default: 1.2.0-20221215)"):
        assert shown in " ".join(serve.split()), shown
    assert "--host HOST the address to listen on" in " ".join(serve.split())


def test_a_default_the_machine_decides_is_said_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    from kit import _clihelp

    pages = []
    for cores in (1, 64):
        monkeypatch.setattr("os.cpu_count", lambda cores=cores: cores)
        parser = cli.build_parser()
        pages.append(_clihelp.reference(parser))
        workers = next(a for a in dict(_walk(parser))["kit serve"]._actions if a.dest == "crypto_workers")
        assert "one per spare core" in _shown_help(parser, workers)
    assert pages[0] == pages[1]


def test_kit_serve_log_levels_are_uvicorns() -> None:
    from uvicorn.config import LOG_LEVELS

    action = next(a for a in COMMANDS["kit serve"]._actions if a.dest == "log_level")
    assert tuple(action.choices or ()) == tuple(LOG_LEVELS)
    assert cli.build_parser().parse_args(["serve", "--log-level", "DEBUG"]).log_level == "debug"


def test_the_reference_page_is_the_help_of_every_command() -> None:
    from kit import _clihelp

    page = _clihelp.reference(cli.build_parser())
    for name, parser in COMMANDS.items():
        assert f"\n## `{name}`\n" in page, name
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            invocation = parser._get_formatter()._format_action_invocation(action)
            assert f"\n| `{invocation}` | " in page, f"{name}: {invocation}"
    assert "[A70](contract.md#a70)" in page  # the register entries named are linked


def test_the_site_hook_generates_the_reference_page() -> None:
    import importlib.util

    from kit import _clihelp

    spec = importlib.util.spec_from_file_location("site_hook_cli", ROOT / "docs" / "hooks" / "site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.cli_reference() == _clihelp.reference(cli.build_parser())
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "cli.md" in nav and "environment.md" in nav
    assert "| option | meaning |" not in (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")


def _variables() -> set[str]:
    """Every environment variable the kit names: ``kit._env``'s, and any ``KIT_…`` or
    ``PARTNER_API_…`` string the kit's source holds."""
    from kit import _env

    names = {
        value
        for value in vars(_env).values()
        if isinstance(value, str) and re.fullmatch(r"[A-Z][A-Z0-9_]+", value)
    }
    for path in (ROOT / "kit").rglob("*.py"):
        names |= set(
            re.findall(
                r"[\"']((?:KIT|PARTNER_API)_[A-Z0-9_]*[A-Z0-9])[\"']", path.read_text(encoding="utf-8")
            )
        )
    return names


def test_the_environment_page_names_every_variable() -> None:
    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    names = _variables()
    assert {"KIT_SIM_PARTNERS", "PARTNER_API_CLIENT_SECRET", "KIT_SIM_KEY_CACHE"} <= names
    assert sorted(name for name in names if f"`{name}`" not in page) == []
