"""wwho's PEP 517 build backend: maturin, after checking that a Rust toolchain is there.

Without ``cargo`` on PATH, maturin's backend asks for ``puccinialin`` and downloads a Rust toolchain
into a temporary directory, silently, for minutes (or for ever, offline). A source build of wwho
fails at once instead, with one line saying what to install; so does one whose Rust is older than
the crate's ``rust-version`` (a distribution's packaged cargo often is), which would otherwise fail
after minutes of fetching crates. Everything else is maturin's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import maturin
from maturin import *  # noqa: F403 -- every hook maturin has, those below wrapped

CARGO_TOML = Path(__file__).resolve().parent.parent / "rust" / "Cargo.toml"


def _rust_version() -> str:
    """The oldest Rust the crate builds with (its ``rust-version``)."""
    found = re.search(r'(?m)^rust-version\s*=\s*"([0-9.]+)"', CARGO_TOML.read_text(encoding="utf-8"))
    return found.group(1) if found else "1"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _need_cargo() -> None:
    need = _rust_version()
    advice = f"install Rust {need} or newer from https://rustup.rs, or install a wheel"
    cargo = shutil.which("cargo")
    if cargo is None:
        raise SystemExit(f"wwho needs a Rust toolchain to build from source: {advice}")
    try:
        said = subprocess.run([cargo, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return  # cargo could not say: let the build itself find out
    found = re.match(r"cargo (\d+\.\d+(?:\.\d+)?)", said)
    if found and _version(found.group(1)) < _version(need):
        raise SystemExit(f"wwho needs Rust {need} or newer to build from source, and {cargo} is "
                         f"{found.group(1)}: {advice}")


def get_requires_for_build_wheel(config_settings=None):
    _need_cargo()
    return maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings=None):
    _need_cargo()
    return maturin.get_requires_for_build_editable(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    _need_cargo()
    return maturin.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _need_cargo()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _need_cargo()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _need_cargo()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    _need_cargo()
    return maturin.build_sdist(sdist_directory, config_settings)
