"""Strict command-line options: an option given twice never silently drops its first value.

argparse keeps the last value of a repeated option, so ``wwho eval --tokenizer A --tokenizer B``
would evaluate only B. :func:`strict` fixes a parser (and its sub-parsers) in place:

* an option taking a list (``nargs="+"`` / ``"*"``) accumulates: ``--corpus a b --corpus c`` is
  ``[a, b, c]``;
* an option taking one value (or a fixed number) may be given once; a second time is an error
  naming both values;
* flags that set the same destination to different values (``--ids`` then ``--json``,
  ``--pretty`` then ``--no-pretty``) are an error; repeating the same flag is harmless.

``append`` and ``count`` options already accumulate and are left alone. Every ``wwho`` verb
and every ``wwho train --kind K`` parser goes through :func:`strict`.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

_GIVEN = "_wwho_given_options"  # on the namespace while parsing, removed after


def _given(namespace: argparse.Namespace) -> dict:
    given = getattr(namespace, _GIVEN, None)
    if given is None:
        given = {}
        setattr(namespace, _GIVEN, given)
    return given


class _StoreOnce(argparse._StoreAction):
    def __call__(self, parser, namespace, values, option_string=None):
        given = _given(namespace)
        key = ("value", self.dest)
        if key in given:
            first_flag, first = given[key]
            parser.error(f"{option_string} given twice ({first_flag} {_show(first)}, then {option_string} "
                         f"{_show(values)}); give it once")
        given[key] = (option_string, values)
        setattr(namespace, self.dest, values)


class _ConstOnce(argparse._StoreConstAction):
    """store_const / store_true / store_false: a second flag for the same destination must agree."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = _given(namespace)
        key = ("const", self.dest)
        if key in given and given[key][1] != self.const:
            parser.error(f"{given[key][0]} and {option_string} contradict each other; give one")
        given.setdefault(key, (option_string, self.const))
        setattr(namespace, self.dest, self.const)


def _show(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def _one_line_error(parser: argparse.ArgumentParser):
    """argparse's ``error`` as every other error of the command: one line, exit 2 (argparse prints its
    whole usage first, 17 lines for ``wwho train --kind sgpe``), naming where the options are."""

    def error(message: str) -> NoReturn:
        prog = parser.prog
        if message.startswith("unrecognized arguments") and prog == "wwho":
            # A verb's unknown option is found by the top parser, after the verb's own parse: name
            # the verb, and its help, not the top's.
            verbs = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
            verb = next((arg for arg in sys.argv[1:] if arg in verbs), None)
            if verb is not None:
                prog = verbs[verb].prog
        verb = prog.removeprefix("wwho").strip()
        sys.stderr.write(f"wwho: error: {verb + ': ' if verb else ''}{message} (options: {prog} --help)\n")
        sys.exit(2)

    return error


def _print_message(message: str, file=None) -> None:
    """argparse's, without its ``except OSError: pass``: ``wwho --help > /dev/full`` printed nothing and
    exited 0. A failed write is one error naming the stream; a reader gone (``| head``) stays quiet."""
    from wwho.cli.outputs import writes_to

    file = file or sys.stderr
    if message and file is not None:
        with writes_to("standard output" if file is sys.stdout else "standard error"):
            file.write(message)
            file.flush()


def strict(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make ``parser`` (and its sub-parsers) strict about repeated options (see the module docs)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                strict(sub)
            continue
        if not action.option_strings:
            continue  # positionals take what they take
        kind = type(action)
        if kind is argparse._StoreAction:
            if action.nargs in ("+", "*"):
                action.__class__ = argparse._ExtendAction
            else:
                action.__class__ = _StoreOnce
        elif kind in (argparse._StoreConstAction, argparse._StoreTrueAction, argparse._StoreFalseAction):
            action.__class__ = _ConstOnce
    parser.error = _one_line_error(parser)  # type: ignore[method-assign]
    parser._print_message = _print_message  # type: ignore[method-assign]
    original = parser.parse_known_args

    def parse_known_args(args=None, namespace=None):
        namespace, rest = original(args, namespace)
        if hasattr(namespace, _GIVEN):
            delattr(namespace, _GIVEN)
        return namespace, rest

    parser.parse_known_args = parse_known_args  # type: ignore[method-assign]
    return parser


def path_argument(value: str) -> str:
    """A positional path (``type=``): an empty one is refused, where ``Path("")`` would be the current
    directory (``wwho train --kind sgpe "$CORPUS"`` with the variable unset trained on every file
    under it)."""
    if not value:
        raise argparse.ArgumentTypeError("an empty path (an unset shell variable?): give a file or directory")
    return value


def output_path(value: str) -> str:
    """``-o`` of a verb that writes files (``type=``): ``-``, standard output to ``encode`` and
    ``decode``, would be a file or folder named ``-`` here (``./-`` names one), and an empty one the
    current directory."""
    if value == "-":
        raise argparse.ArgumentTypeError("this command writes files, not to standard output: give a path "
                                         "(./- names a file or folder called -)")
    return path_argument(value)


def text_field(value: str | None, corpus) -> str:
    """``--text-field``: left out, ``"text"`` (JSONL files by their name, plain text otherwise);
    given, every corpus file must be JSONL by its name (:func:`wwho.corpus.check_named_jsonl`), or
    the field would be silently ignored for the others."""
    if value is None:
        return "text"
    if corpus:
        from wwho.corpus import check_named_jsonl

        check_named_jsonl(corpus, value)
    return value
