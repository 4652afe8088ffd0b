"""wwho's PEP 517 build backend: maturin, after checking that a Rust toolchain is there.

Without ``cargo`` on PATH, maturin's backend asks for ``puccinialin`` and downloads a Rust toolchain
into a temporary directory, silently, for minutes (or for ever, offline). A source build of wwho
fails at once instead, with one line saying what to install. Everything else is maturin's.
"""

from __future__ import annotations

import shutil

import maturin
from maturin import *  # noqa: F403 -- every hook maturin has, those below wrapped

MESSAGE = ("wwho needs a Rust toolchain to build from source: install it from https://rustup.rs "
           "(or `apt install cargo`), or install a wheel")


def _need_cargo() -> None:
    if shutil.which("cargo") is None:
        raise SystemExit(MESSAGE)


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
