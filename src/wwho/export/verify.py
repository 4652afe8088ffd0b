"""Check that the exported ``tokenizer.json`` encodes and decodes exactly like the native tokenizer.

``verify(tok, hf, documents)`` encodes every document with both (native with
``allowed_special="all"``, since HF always recognizes special-token text; HF with
``add_special_tokens=False``), compares the ids, and checks that HF's decode gives the
document back. ``wwho train`` runs it on the start of its corpus (:func:`verify_sample`: the
first 5,000 documents, at most 1 MB) and fails on any mismatch; ``wwho export hf --verify`` runs it on whole corpora. Documents with a lone
surrogate are counted apart and not compared: HF ``tokenizers`` takes only valid Unicode
(Rust strings), so it cannot encode them at all (the native tokenizer round-trips them).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wwho.corpus import iter_documents
from wwho.errors import WwhoError

_SURROGATE = re.compile("[\ud800-\udfff]")


class ExportMismatch(WwhoError):
    """The exported tokenizer does not reproduce the native one."""


@dataclass
class VerifyReport:
    lines: int = 0
    skipped_surrogates: int = 0  # documents HF cannot take (lone surrogates), not compared
    id_mismatches: int = 0
    decode_mismatches: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.id_mismatches or self.decode_mismatches)

    def summary(self) -> str:
        text = (f"{self.lines:,} lines checked: {self.id_mismatches} with different ids, "
                f"{self.decode_mismatches} not decoded back exactly")
        if self.skipped_surrogates:
            text += f"; {self.skipped_surrogates:,} lines with lone surrogates skipped (HF cannot encode them)"
        return "\n".join([text, *self.examples])


def verify(tok, hf, documents: Iterable[str], *, batch: int = 1000, progress: bool = False,
           max_examples: int = 5) -> VerifyReport:
    from wwho.progress import progress_bar  # tqdm only when a bar is shown

    report = VerifyReport()
    docs = iter(documents)
    bar = progress_bar(desc="verifying export", unit="line", disable=not progress)
    while True:
        chunk = list(itertools.islice(docs, batch))
        if not chunk:
            break
        bar.update(len(chunk))
        valid = [doc for doc in chunk if not _SURROGATE.search(doc)]
        report.skipped_surrogates += len(chunk) - len(valid)
        chunk = valid
        encodings = hf.encode_batch(chunk, add_special_tokens=False)
        for doc, enc in zip(chunk, encodings):
            report.lines += 1
            native = tok.encode(doc, allowed_special="all")
            if native != enc.ids:
                report.id_mismatches += 1
                if len(report.examples) < max_examples:
                    i = next((k for k, (a, b) in enumerate(zip(native, enc.ids)) if a != b), min(len(native), len(enc.ids)))
                    report.examples.append(
                        f"  ids differ at token {i} in {doc[:60]!r}: native {tok.tokenize(doc)[max(0, i - 2):i + 3]} "
                        f"vs HF {enc.tokens[max(0, i - 2):i + 3]}")
            elif hf.decode(enc.ids, skip_special_tokens=False) != doc:
                report.decode_mismatches += 1
                if len(report.examples) < max_examples:
                    report.examples.append(f"  HF decode differs for {doc[:60]!r}")
    bar.close()
    return report


#: How much of the corpus ``wwho train`` checks the export on: the first 5,000 documents, at most
#: 1 MB of UTF-8 (HF's encoder is most of the check's time; ``wwho export hf --verify`` checks
#: whole corpora).
SAMPLE_LINES = 5000
SAMPLE_BYTES = 1_000_000


def _first(documents: Iterable[str], lines: int, max_bytes: int) -> Iterator[str]:
    """The first ``lines`` documents, stopping before the one that would pass ``max_bytes``
    (the first document is always given)."""
    total = 0
    for i, doc in enumerate(documents):
        total += len(doc) if doc.isascii() else len(doc.encode("utf-8", "surrogatepass"))
        if i >= lines or (i and total > max_bytes):
            return
        yield doc


def verify_sample(tok, directory: str | Path, corpus, *, text_field: str = "text", lines: int = SAMPLE_LINES,
                  max_bytes: int = SAMPLE_BYTES, progress: bool = False) -> VerifyReport:
    """Verify the files written in ``directory`` on the first ``lines`` documents of ``corpus``,
    at most ``max_bytes`` of them."""
    from tokenizers import Tokenizer

    path = Path(directory) / "tokenizer.json"
    hf = Tokenizer.from_file(str(path))
    docs = _first(iter_documents(corpus, text_field=text_field, skip_bad_lines=True), lines, max_bytes)
    report = verify(tok, hf, docs, progress=progress)
    if not report.ok:
        raise ExportMismatch(f"{path} does not reproduce the native tokenizer:\n{report.summary()}")
    return report
