"""Talking to the operator: exit codes, one-line failures, prompts, progress bars.

Everything a person reads goes to stderr (progress, steps, prompts, the reason a
command failed); stdout carries only the result, as text or with ``--json`` as one
JSON document, so scripts can pipe it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from scholarindex.core.exit_codes import (
    EXIT_ALREADY_RUNNING,
    EXIT_DATA_LOST,
    EXIT_FAILED,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    HELP,
)
from scholarindex.indexing.errors import IndexUnavailable

EXIT_CODES_HELP = HELP


class CommandFailed(click.ClickException):
    """A failure; click prints ``Error: <reason>`` as the last line and exits 1."""

    exit_code = EXIT_FAILED

    def __init__(self, reason: str):
        super().__init__(" ".join(reason.split()))  # one line, whatever the cause said


class NotConfirmed(CommandFailed):
    """Bad options, or a destructive step nobody confirmed: exit 2."""

    exit_code = EXIT_USAGE


class ClusterUnavailable(CommandFailed):
    """OpenSearch down or refusing us: exit 3."""

    exit_code = EXIT_UNAVAILABLE


class DataDeadLettered(CommandFailed):
    """Documents went to the dead-letter file: exit 4."""

    exit_code = EXIT_DATA_LOST


class AlreadyRunning(CommandFailed):
    """Another run holds the lock this command needs: exit 75 (try later)."""

    exit_code = EXIT_ALREADY_RUNNING


_FAILURES: dict[int, type[CommandFailed]] = {
    EXIT_FAILED: CommandFailed, EXIT_USAGE: NotConfirmed, EXIT_UNAVAILABLE: ClusterUnavailable,
    EXIT_DATA_LOST: DataDeadLettered, EXIT_ALREADY_RUNNING: AlreadyRunning,
}


def fail(reason: str, exit_code: int = EXIT_FAILED) -> NoReturn:
    """Stop the command with a one-line reason and a non-zero exit status."""
    raise _FAILURES.get(exit_code, CommandFailed)(reason)


def exit_code_for(exc: IndexUnavailable) -> int:
    """3 when the cluster is down or refuses us; 1 when it answered no to a request."""
    status = exc.status
    if exc.retryable or status in (401, 403, "N/A", None):
        return EXIT_UNAVAILABLE
    return EXIT_FAILED


def interactive() -> bool:
    """True when a person can answer a prompt (stdin is a terminal)."""
    return sys.stdin.isatty()


def confirm(question: str, yes: bool, what: str) -> None:
    """Ask before a destructive step; without a terminal and without --yes, refuse.

    A cron job that forgot --yes must do nothing destructive rather than hang or guess.
    """
    if yes:
        return
    if not interactive():
        fail(f"{what} needs confirmation: not a terminal, pass --yes to run it unattended",
             EXIT_USAGE)
    if not click.confirm(question, default=False, err=True):
        fail(f"{what} not confirmed; nothing changed", EXIT_USAGE)


def say(message: str) -> None:
    """A step, for the person watching (stderr)."""
    click.echo(message, err=True)


@contextmanager
def progress(label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr; yields ``advance(n)``. Without a terminal, the label only."""
    with click.progressbar(length=max(total, 0), label=label, file=sys.stderr,
                           show_pos=True, show_eta=True) as bar:
        yield bar.update


def emit(result: Any, as_json: bool, text: Callable[[Any], str]) -> None:
    """Print the result: JSON for scripts, or ``text(result)`` for people."""
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(text(result))
