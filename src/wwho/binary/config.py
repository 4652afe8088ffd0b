"""Settings of a binary training run: defaults < ``config.toml`` < command-line flags.

A config file is flat TOML whose keys are the long flag names with ``_`` or ``-``
(``vocab_size = 4096``, ``mode = "random"``, ``ext = ["so", "gz"]``), plus ``inputs``
(list of paths) and ``output``; relative paths in it are relative to the file. Sizes
may be integers or strings with a binary suffix (``"4k"``, ``"16MiB"``). Unknown keys
and wrong types are errors that name the file and the key.

What this module deliberately does not do: parse ``argv`` (``wwho.cli.train_binary``)
or run anything.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wwho.binary.ingest_types import MAX_EXP, MODES, IngestOptions, OptionError
from wwho.binary.train import ALPHABET, MIN_TOKEN_LENGTH, check_options
from wwho.errors import WwhoError, brief
from wwho.sizes import (
    BYTES_EXAMPLE,
    COUNT_EXAMPLE,
    MAX_COUNT,
    MAX_VOCAB_SIZE,
    MAX_WINDOW_BYTES,
    MAX_WORKERS,
    SizeError,
    check_range,
)
from wwho.sizes import parse_int as _parse_int
from wwho.sizes import parse_size as _parse_size

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class ConfigError(OptionError):
    """A config file or flag value is invalid (names the file or flag, and the key)."""


def parse_size(value: Any, where: str, *, example: str = BYTES_EXAMPLE) -> int:
    """``4096``, ``"4096"``, ``"4k"``, ``"4KiB"``, ``"2M"`` -> bytes (binary multiples; ASCII digits)."""
    try:
        return _parse_size(value, where, example=example)
    except SizeError as exc:
        raise ConfigError(str(exc)) from None


def parse_hex(value: Any, where: str) -> bytes:
    """``"0a"``, ``"0d0a"``, ``"0x00"``, ``"0d 0a"`` -> bytes; at least one byte."""
    text = value.strip() if isinstance(value, str) else None
    if text and text[:2].lower() == "0x":
        text = text[2:]
    try:
        data = bytes.fromhex(text) if text else b""
    except ValueError:
        data = b""
    if not data:
        raise ConfigError(f"{where}: expected hex bytes such as 0a or 0d0a, got {brief(value)}")
    return data


def _int(value: Any, where: str, low: int | None = None, high: int = MAX_COUNT) -> int:
    """An integer in ``[low, high]`` (ASCII digits if a string); checked before it is used."""
    try:
        value = _parse_int(value, where)
        if low is not None:
            check_range(value, where, low, high)
    except SizeError as exc:
        raise ConfigError(str(exc)) from None
    return value


def _size(low: int, high: int, example: str = BYTES_EXAMPLE) -> Callable[[Any, str], int]:
    return lambda v, w: _int(parse_size(v, w, example=example), w, low, high)


def _float(value: Any, where: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: expected a number, got {brief(value)}")
    return float(value)


def _rate(value: Any, where: str) -> float:
    rate = _float(value, where)
    if not 0 < rate <= 1:
        raise ConfigError(f"{where}: expected a number in (0, 1], got {brief(value)}")
    return rate


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {brief(value)}")
    return value


def _mode(value: Any, where: str) -> str:
    if value not in MODES:
        raise ConfigError(f"{where}: expected one of {', '.join(MODES)}, got {brief(value)}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: expected a non-empty string, got {brief(value)}")
    return value


def _str_list(value: Any, where: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{where}: expected a string or a list of strings, got {brief(value)}")
    return items


def _exts(value: Any, where: str) -> tuple[str, ...]:
    exts = [e.strip() for item in _str_list(value, where) for e in item.split(",")]
    if not all(exts):
        raise ConfigError(f"{where}: empty extension in {brief(value)}")
    return tuple(exts)


def _over_budget(value: Any, where: str) -> str:
    if value not in ("refuse", "sample"):
        raise ConfigError(f"{where}: expected refuse or sample, got {brief(value)}")
    return value


# key -> converter(value, where) that checks and normalises a value from TOML or argv
_KEYS: dict[str, Callable[[Any, str], Any]] = {
    "inputs": _str_list,
    "output": _str,
    "pretty": _bool,
    "vocab_size": _size(len(ALPHABET), MAX_VOCAB_SIZE, COUNT_EXAMPLE),  # as the trainer says
    "min_frequency": lambda v, w: _int(v, w, 0),
    "max_token_length": lambda v, w: _int(v, w, MIN_TOKEN_LENGTH),
    "mode": _mode,
    "window_bytes": _size(1, MAX_WINDOW_BYTES),
    "min_exp": lambda v, w: _int(v, w, 0, MAX_EXP),
    "max_exp": lambda v, w: _int(v, w, 0, MAX_EXP),
    "delimiter_hex": parse_hex,
    "max_docs": lambda v, w: _int(v, w, 1),
    "max_docs_per_file": lambda v, w: _int(v, w, 1),
    "sample_rate": _rate,
    "seed": _int,
    "follow_symlinks": _bool,
    "ext": _exts,
    "max_file_size": _size(1, MAX_COUNT),
    "standard_specials": _bool,
    "mask": _bool,
    "unk": _bool,
    "reserve": lambda v, w: _int(v, w, 0, MAX_VOCAB_SIZE),
    "template": _bool,
    "pad_to_power_of_two": _bool,
    "threads": lambda v, w: _int(v, w, 1, MAX_WORKERS),
    "progress": _bool,
    "memory_budget": _size(1, MAX_COUNT),
    "over_budget": _over_budget,
}
#: Command-line switches that are not config keys, and the key that says the same.
_SWITCH_KEYS = {
    "with_template": "template = true", "no_template": "template = false",
    "with_mask": "mask = true", "no_mask": "mask = false", "with_unk": "unk = true", "no_unk": "unk = false",
    "with_standard_specials": "standard_specials = true", "no_standard_specials": "standard_specials = false",
    "no_pad": "pad_to_power_of_two = false", "quiet": "progress = false", "no_progress": "progress = false",
    "no_follow_symlinks": "follow_symlinks = false", "min_freq": "min_frequency = N", "out": "output = \"...\"",
    "force": "the --force flag (a config file cannot replace files)", "config": "no key (a config names no config)",
}
_TRAIN_KEYS = ("vocab_size", "min_frequency", "max_token_length", "standard_specials", "mask", "unk",
               "reserve", "template", "pad_to_power_of_two", "threads", "progress")
DEFAULTS: dict[str, Any] = {
    "inputs": [], "output": None, "pretty": False,
    "vocab_size": 32768, "min_frequency": 2, "max_token_length": None,
    "mode": "fixed", "window_bytes": 4096, "min_exp": 3, "max_exp": 14, "delimiter_hex": None,
    "max_docs": None, "max_docs_per_file": None, "sample_rate": 1.0, "seed": 0,
    "follow_symlinks": False, "ext": (), "max_file_size": None,
    "standard_specials": True, "mask": True, "unk": True, "reserve": 128, "template": False,
    "pad_to_power_of_two": True, "threads": None, "progress": True,
    "memory_budget": None, "over_budget": "refuse",
}


@dataclass(frozen=True)
class RunConfig:
    """Everything a training run needs, validated."""

    inputs: list[Path]
    output: Path
    pretty: bool
    ingest: IngestOptions
    train: dict[str, Any]  # keyword arguments of wwho.binary.train.train_from_counts
    memory_budget: int | None = None  # None: wwho.binary.budget.default_budget()
    over_budget: str = "refuse"


#: A config file is a few lines; this bounds what is read (and parsed) from one.
MAX_CONFIG_BYTES = 16 * 2**20


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and check a TOML config file; paths in it are made relative to its directory."""
    from wwho.fileio import read_bytes

    path = Path(path)
    if not os.path.lexists(path):
        raise ConfigError(f"{path}: config file not found")
    data = read_bytes(path, error=ConfigError, what="config file", limit=MAX_CONFIG_BYTES)  # no FIFO, no device
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 at byte {exc.start}") from None
    except RecursionError:  # tomllib recurses per nesting level: [[[[...]]]] runs out of stack
        raise ConfigError(f"{path}: invalid TOML: nested too deeply for a config file") from None
    values: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        name = _config_key(path, key)
        if name in spelled:
            raise ConfigError(f"{path}: keys {brief(spelled[name])} and {brief(key)} are the same option; give it once")
        spelled[name] = key
        values[name] = _KEYS[name](value, f"{path}: key {brief(key)}")
    base = path.parent
    if "inputs" in values:
        values["inputs"] = [str(base / p) for p in values["inputs"]]
    if "output" in values:  # (a final slash kept: it says a directory, refused below)
        slash = "/" if values["output"].endswith(("/", os.sep)) else ""
        values["output"] = str(base / values["output"]) + slash
    return values


def _config_key(path: Path, key: str) -> str:
    """The option a config key names (``-`` and ``_`` alike); unknown keys are refused, with the key
    to use instead where the key is a command-line switch."""
    name = key.replace("-", "_")
    if name in _KEYS:
        return name
    if name in _SWITCH_KEYS:
        raise ConfigError(f"{path}: key {brief(key)} is a command-line switch, not a config key: use {_SWITCH_KEYS[name]}")
    raise ConfigError(f"{path}: unknown key {brief(key)} (known: {', '.join(sorted(_KEYS))})")


#: An option's Python name in a message, for the command line to show as its flag.
_SNAKE_NAMES = re.compile(r"\b(" + "|".join(sorted((k for k in _KEYS if "_" in k), key=len, reverse=True)) + r")\b")


def flag_names(message: str) -> str:
    """``message`` with the options' Python names (``sample_rate``) written as flags (``--sample-rate``)."""
    return _SNAKE_NAMES.sub(lambda m: "--" + m.group(1).replace("_", "-"), message)


def resolve(flags: Mapping[str, Any], config: str | Path | None = None) -> RunConfig:
    """Merge defaults, the config file and the flags that were given (not None, not empty)."""
    values = dict(DEFAULTS)
    if config is not None:
        values.update(load_config(config))
    for key, value in flags.items():
        if key not in _KEYS:
            raise ConfigError(f"unknown option {brief(key)}")
        if value is None or (key in ("inputs", "ext") and not value):
            continue
        values[key] = _KEYS[key](value, "--" + key.replace("_", "-"))
    if not values["inputs"]:
        raise ConfigError("no inputs: give INPUT paths or `inputs = [...]` in the config file")
    if not values["output"]:
        raise ConfigError("no output: give -o tokenizer.json or `output = \"...\"` in the config file")
    output = Path(values["output"])
    if str(values["output"]).endswith(("/", os.sep)):  # (Path drops the slash: a file would be written)
        raise ConfigError(f"{values['output']}: output names a directory (it ends with '/'); give a file name "
                          f"such as {output / 'tokenizer.json'}")
    try:
        is_dir = output.is_dir()
    except OSError as exc:  # a name too long for the filesystem, a loop of links
        raise ConfigError(f"output {brief(str(output))}: {exc.strerror or exc}") from None
    if is_dir:
        raise ConfigError(f"{output}: output is a directory; give a file name "
                          f"such as {output / 'tokenizer.json'}")
    try:
        ingest = IngestOptions(
            mode=values["mode"], window_bytes=values["window_bytes"], min_exp=values["min_exp"],
            max_exp=values["max_exp"], delimiter=values["delimiter_hex"], max_docs=values["max_docs"],
            max_docs_per_file=values["max_docs_per_file"], sample_rate=values["sample_rate"], seed=values["seed"],
            follow_symlinks=values["follow_symlinks"], extensions=tuple(values["ext"]),
            max_file_size=values["max_file_size"])
        check_options(**{k: values[k] for k in _TRAIN_KEYS})
    except OptionError as exc:  # VocabError (too small a vocabulary) is named the same way
        raise ConfigError(flag_names(str(exc))) from None
    except WwhoError as exc:
        raise type(exc)(flag_names(str(exc))) from None
    return RunConfig(inputs=[Path(p) for p in values["inputs"]], output=output, pretty=values["pretty"],
                     ingest=ingest, train={k: values[k] for k in _TRAIN_KEYS},
                     memory_budget=values["memory_budget"], over_budget=values["over_budget"])
