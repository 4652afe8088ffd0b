"""Check that the exported ``tokenizer.json`` encodes and decodes exactly like the native tokenizer.

``verify(tok, hf, documents)`` encodes every document with both (native with
``allowed_special="all"``, since HF always recognizes special-token text; HF with
``add_special_tokens=False``), compares the ids, and checks that HF's decode gives the
document back, or what the native decode gives (with ``prefix_space``, special-token text followed
by a letter decodes with a space after it in both). ``wwho train`` runs it on the start of its corpus (:func:`save_verified`, on a
second thread while it saves: the first 2,000 documents, at most 256 KiB) and fails on any
mismatch; ``wwho export hf --verify`` runs it on whole corpora. Documents with a lone
surrogate are counted apart and not compared: HF ``tokenizers`` takes only valid Unicode
(Rust strings), so it cannot encode them at all (the native tokenizer round-trips them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wwho.corpus import iter_documents
from wwho.corpus_files import read_again
from wwho.errors import WwhoError
from wwho.protocol import special_text_pattern

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
    #: special token -> lines checked that hold its text: the export (as HF always does) and
    #: ``allowed_special="all"`` read it as the special token there; ``encode()`` reads it as text
    special_text: dict[str, int] = field(default_factory=dict)
    #: False where :func:`save_verified` left the Hugging Face files out of the save, as they differ
    hf_saved: bool = True

    def special_text_note(self) -> str | None:
        """What :attr:`special_text` means to the user, or None when no line held such text."""
        if not self.special_text:
            return None
        shown = ", ".join(f"{name!r} in {n:,} {'line' if n == 1 else 'lines'}" for name, n in self.special_text.items())
        return (f"special-token text occurs in the lines checked ({shown}): the tokenizer.json, as HF always "
                "does, reads it as the special token, where encode() reads it as text unless allowed_special "
                "names it; choose special tokens the text does not contain to keep the two alike")

    @property
    def ok(self) -> bool:
        return not (self.id_mismatches or self.decode_mismatches)

    def summary(self, *, sep: str = "\n") -> str:
        text = (f"{self.lines:,} lines checked: {self.id_mismatches} with different ids, "
                f"{self.decode_mismatches} not decoded as the native tokenizer decodes them")
        if self.skipped_surrogates:
            text += f"; {self.skipped_surrogates:,} lines with lone surrogates skipped (HF cannot encode them)"
        return sep.join([text, *(e.strip() if sep != "\n" else e for e in self.examples)])

    def check(self, path: str | Path) -> VerifyReport:
        """This report, or :class:`ExportMismatch` naming the exported ``path`` if the ids or texts
        differ (one line, as the command line prints errors)."""
        if not self.ok:
            unsaved = "" if self.hf_saved else " (so the Hugging Face files were not saved; vocab.json was)"
            raise ExportMismatch(f"{path} does not reproduce the native tokenizer{unsaved}: {self.summary(sep='; ')}")
        return self


#: Characters of the documents checked at a time (or ``batch`` documents, whichever comes first): both
#: encoders hold every id and HF every ``Encoding`` of a batch, so the memory of a batch follows its
#: text, not its number of documents. A document longer than this is checked alone.
BATCH_CHARS = 1 << 18


def _chunks(docs: Iterator[str], batch: int, max_chars: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    chars = 0
    for doc in docs:
        if chunk and (len(chunk) >= batch or chars + len(doc) > max_chars):
            yield chunk
            chunk, chars = [], 0
        chunk.append(doc)
        chars += len(doc)
    if chunk:
        yield chunk


def verify(tok, hf, documents: Iterable[str], *, batch: int = 1000, progress: bool = False,
           max_examples: int = 5) -> VerifyReport:
    from wwho.progress import progress_bar  # tqdm only when a bar is shown

    report = VerifyReport()
    specials = special_text_pattern(tok.special_tokens)
    docs = iter(documents)
    bar = progress_bar(desc="verifying export", unit="line", disable=not progress)
    for chunk in _chunks(docs, batch, BATCH_CHARS):
        bar.update(len(chunk))
        valid = [doc for doc in chunk if not _SURROGATE.search(doc)]
        report.skipped_surrogates += len(chunk) - len(valid)
        chunk = valid
        # Both encoders batch on all cores without the GIL; HF's fast batch skips the offsets,
        # which the comparison does not need.
        encodings = hf.encode_batch_fast(chunk, add_special_tokens=False)
        natives = tok.encode_batch(chunk, allowed_special="all")
        hf_ids = [enc.ids for enc in encodings]
        decoded = hf.decode_batch(hf_ids, skip_special_tokens=False)
        for doc, native, ids, text in zip(chunk, natives, hf_ids, decoded):
            report.lines += 1
            if specials is not None:
                for name in dict.fromkeys(specials.findall(doc)):  # (in the line's order: a set's varied per run)
                    report.special_text[name] = report.special_text.get(name, 0) + 1
            if native != ids:
                report.id_mismatches += 1
                if len(report.examples) < max_examples:
                    i = next((k for k, (a, b) in enumerate(zip(native, ids)) if a != b), min(len(native), len(ids)))
                    tokens = hf.encode(doc, add_special_tokens=False).tokens
                    # (every kind has token_bytes; only SGPE and meta have tokenize)
                    mine = [tok.token_bytes(t).decode("utf-8", "backslashreplace") for t in native[max(0, i - 2):i + 3]]
                    report.examples.append(
                        f"  ids differ at token {i} in {doc[:60]!r}: native {mine} vs HF {tokens[max(0, i - 2):i + 3]}")
            elif text != doc and text != tok.decode(native):  # (wwho's own decode is the export's promise:
                # with prefix_space, special-token text followed by a letter gains a space in both)
                report.decode_mismatches += 1
                if len(report.examples) < max_examples:
                    report.examples.append(f"  HF decode differs for {doc[:60]!r}")
    bar.close()
    return report


#: How much of the corpus ``wwho train`` checks the export on: the first 2,000 documents, at most
#: 256 KiB of UTF-8. Reading the file back and HF's encoder are the check's time, and on small
#: corpora the check was a fifth of the whole command; ``wwho export hf --verify`` checks whole corpora.
SAMPLE_LINES = 2000
SAMPLE_BYTES = 256 * 1024


def _first(documents: Iterable[str], lines: int, max_bytes: int) -> Iterator[str]:
    """The first ``lines`` documents, stopping before the one that would pass ``max_bytes``. The
    first document is always given, its first ``max_bytes`` only: a corpus of one 50 MB line is
    checked on a sample too (any text is one both encoders must agree on)."""
    total = 0
    for i, doc in enumerate(documents):
        data = doc.encode("utf-8", "surrogatepass")
        total += len(data)
        if i >= lines or (i and total > max_bytes):
            return
        if len(data) > max_bytes:
            cut = max_bytes
            while cut and data[cut] & 0xC0 == 0x80:  # back to the start of a character
                cut -= 1
            doc = data[:cut].decode("utf-8", "surrogatepass")
        yield doc


def save_verified(tok, directory: str | Path, corpus, *, text_field: str = "text", lines: int = SAMPLE_LINES,
                  max_bytes: int = SAMPLE_BYTES, progress: bool = False) -> VerifyReport:
    """``tok.save(directory)`` and :func:`verify` of what it writes on the first ``lines`` documents
    of ``corpus`` (at most ``max_bytes`` of them; the first always, cut to ``max_bytes``), in about the time of the
    longer one: the check runs on a second thread from the bytes of ``tokenizer.json``
    while ``vocab.json`` is built and the save is written (both encoders release the GIL).
    Where they differ, ``vocab.json`` is saved alone: a ``tokenizer.json`` known to give other ids
    is no file to leave for transformers to load. The report says whether they match (its
    :meth:`VerifyReport.check` raises :class:`ExportMismatch` if not)."""
    from tokenizers import Tokenizer

    from wwho.background import Background
    from wwho.savedir import save_files

    def check(text: bytes) -> VerifyReport:
        hf = Tokenizer.from_str(text.decode("utf-8"))
        with read_again():  # (training read it first, and said what it had to)
            docs = _first(iter_documents(corpus, text_field=text_field, skip_bad_lines=True), lines, max_bytes)
            return verify(tok, hf, docs, progress=progress)

    path = Path(directory) / "tokenizer.json"
    files: dict[str, bytes] = {}
    with Background(1, name="wwho-verify") as pool:
        report = None
        for name, data in tok.files():
            files[name] = data
            if name == path.name:
                report = pool.submit(check, data)
        if report is None:
            raise ExportMismatch(f"{path}: this vocabulary has no Hugging Face export to check (it uses [UNK])")
        result = report.result()
        if not result.ok:
            files = {"vocab.json": files["vocab.json"]}
            result.hf_saved = False
        save_files(directory, files, kind="sgpe")
        return result

