"""Data files bundled with wwho, read with ``importlib.resources.files("wwho.data")``: the Sinhala
sample that :mod:`wwho.demo` trains on and the JSON Schema of ``wwho eval --json``. The README.md
beside them gives each file's source and licence.

This package holds no code, and not the script schemas (those are ``wwho/schemas/*.json``,
read by :mod:`wwho.schema`).
"""
