"""The options of binary ingestion: each invalid value is an OptionError naming the option."""

from __future__ import annotations

import pytest

from wwho.binary.ingest_types import IngestOptions, OptionError


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "lines"}, "mode 'lines' is not one of"),
    ({"window_bytes": 0}, "window_bytes must be an integer from 1 to 16,777,216"),
    ({"sample_rate": 0}, r"sample_rate must be in \(0, 1\]"),
    ({"sample_rate": 1.5}, r"sample_rate must be in \(0, 1\]"),
    ({"min_exp": 9, "max_exp": 4}, "min_exp .9. is larger than max_exp .4."),
    ({"mode": "delim"}, "needs a delimiter"),
    ({"delimiter": b"\n"}, "only applies to mode 'delim'"),
    ({"max_docs": 0}, "max_docs must be an integer from 1 to "),
])
def test_bad_options_are_option_errors(kwargs, message):
    with pytest.raises(OptionError, match=message):
        IngestOptions(**kwargs)
