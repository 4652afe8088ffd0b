"""``config.toml`` of binary training (``binary/config.py``): hostile files are one clear error."""

from __future__ import annotations

import pytest
from conftest import one_line_error, run_wwho

from wwho.binary.config import ConfigError, load_config


# Short ids: pytest 8.0 puts a test's id (here 100 kB) in PYTEST_CURRENT_TEST, and every command it
# starts then fails with "Argument list too long".
@pytest.mark.parametrize("text", [
    "vocab_size = " + "[" * 100_000 + "]" * 100_000,
    "a = " + "{b = " * 20_000 + "1" + "}" * 20_000,
], ids=["arrays", "tables"])
def test_deeply_nested_toml_is_one_line(tmp_path, text):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c.toml: invalid TOML: nested too deeply"):
        load_config(path)
    line = one_line_error(run_wwho("train", "--kind", "binary", "--config", path, "-o", tmp_path / "t.json"))
    assert "c.toml: invalid TOML: nested too deeply" in line
