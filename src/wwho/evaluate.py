"""Tokenizer evaluation: how many tokens a text costs and how well tokens respect the script.

``load_spec(spec)`` (:mod:`wwho.eval_specs`: a wwho directory or file, ``tiktoken:NAME``,
``hf:PATH``, ``spm:MODEL``) turns a SPEC into an :class:`~wwho.eval_specs.Evaluated` tokenizer.

``evaluate(tokenizer, lines)`` measures, per corpus (:class:`Metrics`): tokens per
whitespace word (fertility), UTF-8 bytes and characters per token, the share of token
boundaries that fall inside an extended grapheme cluster (``regex`` ``\\X``) and inside a
schema syllable (Indic runs found by the router, syllabified by their schema:
:mod:`wwho.cut_structure`), the byte-fallback/UNK rate, the number of distinct ids used, and the
share of lines that decode back exactly. For SGPE and meta tokenizers it also counts the
boundaries inside a syllable that the vocabulary knows, with or without its leading space
(``known_syllable_cuts``: the integrity wwho promises, 0 unless something is wrong), and for a
``wwho extend`` directory those inside a syllable the extension built; other tokenizers have no
syllable vocabulary, and that count is None. Lines whose token ends are unknown (SentencePiece
normalized them) are not measured, and counted. ``parity(a, b)`` compares token counts of
line-aligned corpora (FLORES, NTREX).

``evaluate_all`` refuses a corpus or tokenizer given twice and a corpus without text. Names in
messages go through :func:`wwho.errors.printable`.

This module does not load tokenizers (:mod:`wwho.eval_specs` does) or print: output formats
(table, Markdown, JSON, plot) live in :mod:`wwho.cli.eval`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from wwho.corpus import MAX_LINE_BYTES, check_max_line_bytes
from wwho.cut_structure import line_structure
from wwho.errors import CorpusError, TokenizerError, WwhoError, WwhoWarning, printable
from wwho.eval_specs import Evaluated, load_spec
from wwho.notices import warn

#: Seconds before a corpus's progress bar is drawn: a bad line found at once is then the one line
#: said, with no bar before it (the corpora are read as they are measured).
BAR_DELAY = 1.0


@dataclass
class Metrics:
    tokenizer: str
    corpus: str
    lines: int = 0
    words: int = 0
    chars: int = 0
    bytes: int = 0
    tokens: int = 0
    boundaries: int = 0
    boundaries_in_cluster: int = 0
    boundaries_in_syllable: int = 0
    #: boundaries inside a syllable the vocabulary knows, bare or after a space (None: no syllable
    #: vocabulary, or a line without offsets)
    known_syllable_cuts: int | None = None
    unmeasured_lines: int = 0
    fallback_tokens: int = 0
    lossless_lines: int = 0
    vocab_used: int = 0
    vocab_size: int = 0
    parity: float | None = None
    ids_used: set = field(default_factory=set, repr=False)

    # A ratio over no words or no tokens is not measured (None: "-" in the table, null in JSON), not a
    # zero that would read as measured (a corpus of spaces has tokens and no words).
    @property
    def fertility(self) -> float | None:
        return self.tokens / self.words if self.words else None

    @property
    def bytes_per_token(self) -> float | None:
        return self.bytes / self.tokens if self.tokens else None

    @property
    def chars_per_token(self) -> float | None:
        return self.chars / self.tokens if self.tokens else None

    @property
    def cluster_cut_rate(self) -> float | None:
        return self.boundaries_in_cluster / self.boundaries if self.boundaries else None

    @property
    def syllable_cut_rate(self) -> float | None:
        return self.boundaries_in_syllable / self.boundaries if self.boundaries else None

    @property
    def fallback_rate(self) -> float | None:
        return self.fallback_tokens / self.tokens if self.tokens else None  # (over no token: not measured)

    @property
    def lossless_rate(self) -> float:
        return self.lossless_lines / self.lines if self.lines else 0.0

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("ids_used")
        for name in ("fertility", "bytes_per_token", "chars_per_token", "cluster_cut_rate", "syllable_cut_rate",
                     "fallback_rate", "lossless_rate"):
            data[name] = getattr(self, name)
        return data


def evaluate(tok: Evaluated, lines: Iterable[str], *, corpus: str = "", progress: bool = False) -> Metrics:
    """Measure ``tok`` on ``lines``; see :class:`Metrics`."""
    from wwho.progress import progress_bar

    m = Metrics(tokenizer=tok.name, corpus=corpus, vocab_size=tok.vocab_size)
    where = Path(corpus)
    # The file and its folder (si/flores200-devtest.txt: the language), not "/name" for a bare name.
    shown_corpus = f"{where.parent.name}/{where.name}" if where.parent.name else where.name
    shown = printable(f"{Path(tok.name).name or tok.name} on {shown_corpus}")
    for line in progress_bar(lines, desc=shown, unit="line", disable=not progress, leave=False, delay=BAR_DELAY):
        try:
            ids, ends = tok.encode(line)
        except Exception as exc:  # a peer failing on a line is reported with the line
            raise TokenizerError(printable(f"{tok.name} failed on {corpus} line {m.lines + 1}: {exc}")) from None
        m.lines += 1
        m.words += len(line.split())
        m.chars += len(line)
        m.bytes += len(line.encode("utf-8", "surrogatepass"))
        m.tokens += len(ids)
        m.ids_used.update(ids)
        m.fallback_tokens += sum(1 for i in ids if tok.is_fallback(i))
        m.lossless_lines += tok.decode(list(ids)) == line
        if ends is None:
            m.unmeasured_lines += 1
            continue
        inside_cluster, inside_syllable = line_structure(line)
        size = len(line.encode("utf-8", "surrogatepass"))
        # Boundaries are the places strictly inside the line where one token ends and the next
        # begins, each once: not the line's end, and not its start, where a token of no text of the
        # line ends (the dummy space a prefix-space SGPE or Metaspace adds).
        inner = [e for k, e in enumerate(ends) if 0 < e < size and (k == 0 or e != ends[k - 1])]
        if inner:
            m.boundaries += len(inner)
            m.boundaries_in_cluster += inside_cluster.count_in(inner)
            m.boundaries_in_syllable += inside_syllable.count_in(inner)
        if tok.known_cuts is not None:
            m.known_syllable_cuts = (m.known_syllable_cuts or 0) + tok.known_cuts(line, ends)
    m.vocab_used = len(m.ids_used)
    return m


def parity(metrics: Metrics, reference: Metrics) -> float | None:
    """How far from equal the tokenizer treats two line-aligned corpora (e.g. Sinhala FLORES and the
    same lines in English): the larger token count over the smaller, so 1.0 is parity and **lower is
    better**, whichever side is the costly one. (A bare ratio ``tokens / reference tokens`` rewarded
    a tokenizer for being bad at the reference language: a Sinhala-only model scored well because
    English cost it many tokens.)"""
    if metrics.lines != reference.lines:
        raise TokenizerError(f"parity needs line-aligned corpora: {printable(metrics.corpus)} has {metrics.lines} "
                             f"lines, {printable(reference.corpus)} has {reference.lines}")
    low, high = sorted((metrics.tokens, reference.tokens))
    return high / low if low else None


class _Corpus:
    """A corpus read again for each tokenizer, a line at a time (its memory is a line's, not the
    corpus's), with empty lines left out as every corpus reader does; refused where its files differ
    from those the first tokenizer read, so that every row measures the same text."""

    def __init__(self, name: str, max_line_bytes: int, text_field: str) -> None:
        self.name, self.max_line_bytes, self.text_field = name, max_line_bytes, text_field
        self.files: list[tuple[Path, tuple[int, int, int] | None]] | None = None

    def lines(self) -> Iterator[str]:
        from wwho.corpus import file_stamp, iter_documents
        from wwho.corpus_files import resolve_paths

        files = [(path, file_stamp(path)) for path in resolve_paths(self.name)]
        if self.files is None:
            self.files = files
        elif files != self.files:
            raise CorpusError(f"{printable(self.name)}: changed while the tokenizers were measured on it (written "
                              "to, or files added or removed), so their rows would measure other texts: "
                              "measure again once it is written")
        # every line counts (parity pairs corpora line by line): a bad one is fixed, not skipped
        yield from iter_documents([path for path, _ in files], max_line_bytes=self.max_line_bytes,
                                  text_field=self.text_field, bad_line_hint="every line is measured: fix or remove it")


def read_lines(path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> list[str]:
    """A corpus's lines as :func:`evaluate_all` reads them, held as a list (for callers that keep a
    corpus anyway, as the benchmarks do); a corpus with none is a :class:`CorpusError`."""
    lines = list(_Corpus(str(path), check_max_line_bytes(max_line_bytes), "text").lines())
    if not lines:
        raise _no_text(str(path))
    return lines


def _no_text(name: str) -> CorpusError:
    return CorpusError(f"{printable(name)}: no text to measure (the corpus is empty or has only empty lines)")


def _measured(tok: Evaluated, corpus: _Corpus, *, progress: bool = False) -> Metrics:
    m = evaluate(tok, corpus.lines(), corpus=corpus.name, progress=progress)
    if not m.lines:  # rates over no text would read as measured zeros
        raise _no_text(corpus.name)
    return m


def check_unique(names: Sequence[str], what: str) -> None:
    """Refuse a corpus or tokenizer named twice: each is measured once, and two rows of one name could
    not be told apart. A path is compared resolved (``a.txt`` and ``./a.txt`` are one file)."""
    seen: dict[str, str] = {}
    for name in names:
        key = _identity(name)
        if key in seen:
            same = "" if seen[key] == name else f" (as {printable(seen[key])})"
            raise WwhoError(f"{what} {printable(name)} is given twice{same}: give each {what} once")
        seen[key] = name


def _identity(name: str) -> str:
    kind, colon, rest = name.partition(":")
    if colon and kind == "tiktoken":
        return name
    prefix, path = (f"{kind}:", rest) if colon and kind in ("hf", "spm") and rest else ("", name)
    try:
        return prefix + os.path.realpath(path)
    except (OSError, ValueError):  # a NUL in the name: no file; loading says so
        return name


def evaluate_all(specs: Sequence[str], corpora: Sequence[str], *, parity_with: str | None = None,
                 progress: bool = False, max_line_bytes: int = MAX_LINE_BYTES,
                 pattern: str | None = None, text_field: str = "text") -> list[Metrics]:
    """Every tokenizer on every corpus (and its parity when ``parity_with`` is given).
    ``pattern``: the pre-tokenizer of ``.tiktoken`` files that are not a known encoding;
    ``text_field``: the field of JSONL corpora that holds the text. A corpus or
    tokenizer given twice, and a corpus with no text, are errors."""
    check_max_line_bytes(max_line_bytes)
    check_unique(corpora, "corpus")
    check_unique(specs, "tokenizer")
    tokenizers = [load_spec(s, pattern=pattern) for s in specs]  # (a misspelt one before any corpus is read)
    texts = [_Corpus(c, max_line_bytes, text_field) for c in corpora]
    reference = _Corpus(parity_with, max_line_bytes, text_field) if parity_with else None
    results, unaligned = [], set()
    for tok in tokenizers:
        ref = _measured(tok, reference) if reference is not None else None
        for corpus in texts:
            m = _measured(tok, corpus, progress=progress)
            if ref is not None and m.lines == ref.lines:
                m.parity = parity(m, ref)
            elif ref is not None and corpus.name not in unaligned:  # asked for, and not given: said, not left to a null
                unaligned.add(corpus.name)
                warn(f"no parity for {printable(corpus.name)}: it has {m.lines:,} lines and "
                     f"{printable(parity_with)} has {ref.lines:,}; parity needs line-aligned "
                     f"corpora (the same sentences, line by line)", WwhoWarning)
            results.append(m)
    return results
