"""Training a byte-level BPE vocabulary: corpus -> pieces -> bytes -> merges -> :class:`~wwho.bytelevel.model.ByteLevelModel`.

1. **count**: documents (:mod:`wwho.corpus`) are cut at special-token text (so special tokens
   are never part of a piece nor merged), then split by the compiled core's pre-tokenizer (the
   one encoding uses) and the pieces counted in the core on threads without the GIL
   (:func:`count_bytelevel`; 64-bit counts);
2. **words**: each distinct piece becomes the list of its UTF-8 byte values;
3. **merges**: :class:`wwho.bpe.MergeEngine` over the 256 byte symbols, most frequent pair
   first (a pair merges while its count is ``>= min_freq``), ties to the lexicographically
   *greater* byte pair (the GPT-2 convention), until ``vocab_size`` is reached;
4. **vocabulary**: ids 0-255 are the bytes, then merged tokens in the order they were made,
   then the special tokens. The result uses the merges rule (the merges in training order),
   which reproduces exactly what training did to each piece.

The counts and the merge choice do not depend on the number of workers or on the order of
the pieces, so the same corpus and options give the same vocabulary. Pre-tokenizers with
several regexes or a byte stage (GGUF models' own) are for loading, not for training here.
The counts equal those of the ``regex`` module's ``findall`` with the same pattern
(``tests/reference/counting.py``, the tests' reference), except for characters the two
Unicode tables classify differently; counting with the encoder's own pre-tokenizer means
training sees exactly the pieces that encoding will.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import regex

from wwho import _core
from wwho.background import Background
from wwho.bpe import MergeEngine
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.bytelevel.validate import pretokenizer_option
from wwho.corpus import MAX_LINE_BYTES, CorpusStats, check_max_line_bytes, iter_documents
from wwho.corpus_files import resolve_paths
from wwho.counting import batches
from wwho.errors import CorpusError, VocabError
from wwho.notices import plural, warn, warn_short_vocabulary
from wwho.progress import progress_bar
from wwho.protocol import special_token_list
from wwho.sizes import MAX_COUNT, check_range, check_vocab_size, check_workers

if TYPE_CHECKING:  # for the annotations only
    from wwho.scale.counts import CountSource
    from wwho.scale.texts import TextSource

_SURROGATE = regex.compile("[\ud800-\udfff]")


def train_bytelevel(
    corpus: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    vocab_size: int,
    pattern: str = "gpt4",
    special_tokens: Iterable[str] = (),
    min_freq: int = 2,
    workers: int | None = None,
    progress: bool = True,
    text_field: str = "text",
    skip_bad_lines: bool = False,
    stats: CorpusStats | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    engine: str = "local",
    address: str | None = None,
    shard_bytes: int | None = None,
    balance: float | None = None,
    balance_seed: int = 0,
) -> ByteLevelModel:
    """Train a byte-level BPE model on text/JSONL files (see the module docstring).

    ``vocab_size`` counts everything: the 256 byte tokens, the merged tokens and the special
    tokens. ``pattern`` is ``gpt2``, ``gpt4`` (cl100k), ``o200k`` or a regex. ``engine="ray"``:
    count shards of the corpus in Ray tasks (:mod:`wwho.scale.ray_counter`), same result.
    ``balance=alpha``: ``corpus`` is several corpora (one per language), sampled into one stream
    with temperature ``alpha`` (:mod:`wwho.balance`), seeded by ``balance_seed``.
    """
    if engine not in ("local", "ray"):
        raise VocabError(f"engine must be one of local, ray, not {engine!r}")
    if (address is not None or shard_bytes is not None) and engine != "ray":
        raise VocabError("address and shard_bytes are options of engine='ray'")
    if balance is not None and engine != "local":
        raise VocabError("balance is an option of engine='local'")
    specials = _specials(special_tokens)
    smallest = smallest_vocab_size(specials)
    if type(vocab_size) is int and vocab_size < smallest:
        held = "the 256 byte tokens" + (f" and the {len(specials)} special tokens" if specials else "")
        raise VocabError(f"vocab_size {vocab_size!r} is too small: it must hold {held} "
                         f"(at least {smallest:,})")
    check_vocab_size(vocab_size, low=smallest)
    check_range(min_freq, "min_freq", 1, MAX_COUNT)
    check_workers(workers)
    check_max_line_bytes(max_line_bytes)
    pretok = training_pretokenizer(pattern)
    stats = stats if stats is not None else CorpusStats()

    t0 = time.perf_counter()
    files = resolve_paths(corpus, texts_hint="ByteBPE.train_from_iterator")
    if engine == "ray":
        from wwho.scale.ray_counter import count_on_ray
        from wwho.scale.shards import CountOptions, plan_shards

        shards = plan_shards(files, shard_bytes=shard_bytes, max_line_bytes=max_line_bytes)
        options = CountOptions("bytelevel", text_field=text_field, skip_bad_lines=skip_bad_lines,
                               max_line_bytes=max_line_bytes, pattern=pretok.patterns[0], specials=tuple(specials),
                               count_documents=count_bytelevel)
        pieces = count_on_ray(shards, options, address=address, workers=workers, stats=stats,
                              total_bytes=sum(s.size for s in shards), progress=progress)
        stats.files += len(files)
    else:
        if balance is not None:
            from wwho import balance as balancing

            documents = balancing.stream(corpus, balance, seed=balance_seed, text_field=text_field,
                                         skip_bad_lines=skip_bad_lines, max_line_bytes=max_line_bytes,
                                         stats=stats, progress=progress)
        else:
            documents = iter_documents(files, text_field=text_field, skip_bad_lines=skip_bad_lines, stats=stats,
                                       max_line_bytes=max_line_bytes)
        pieces = count_bytelevel(documents, pattern=pretok, specials=specials, workers=workers,
                                 progress=progress)
    if not pieces:
        raise CorpusError(f"the corpus has no text ({plural(stats.files, 'file')}, "
                          f"{plural(stats.documents, 'document')})")
    where = f" in {stats.documents:,} documents"
    return _train_on_pieces(pieces, pretok, specials, vocab_size, min_freq, progress, t0, where)


def _train_on_pieces(pieces, pretok, specials, vocab_size, min_freq, progress, t0, where) -> ByteLevelModel:
    say = (lambda msg: print(msg, file=sys.stderr)) if progress else (lambda msg: None)
    say(f"counted {sum(pieces.values()):,} pieces ({len(pieces):,} distinct){where}, "
        f"{time.perf_counter() - t0:.1f}s")

    merges, symbols = learn_merges(pieces, max_symbols=vocab_size - len(specials), min_freq=min_freq,
                                   progress=progress)
    say(f"learned {len(merges):,} merges, {len(symbols):,} tokens + {len(specials)} special, "
        f"{time.perf_counter() - t0:.1f}s in all")
    warn_short_vocabulary(len(symbols) + len(specials), vocab_size, min_freq=min_freq)
    ranks = {s: i for i, s in enumerate(symbols)}
    special_ids = {s: len(symbols) + k for k, s in enumerate(specials)}
    # A special token with a usual name (<pad>, </s>, <|endoftext|>...) has its role, as SGPE's do: the
    # Hugging Face export names it, so that transformers pads a batch. Nothing is added to encodings.
    from wwho.export.sgpe_hf import special_roles

    roles = {role: special_ids[token] for role, token in special_roles(list(specials)).items()}
    return ByteLevelModel(ranks, pretok, special_tokens=special_ids, merges=merges, ignore_merges=False,
                          name="bytelevel", bos_id=roles.get("bos_token"), eos_id=roles.get("eos_token"),
                          pad_id=roles.get("pad_token"))


def training_pretokenizer(pattern) -> Pretokenizer:
    """The pre-tokenizer training runs ``pattern`` with: one regex, of no empty match (else a
    :class:`VocabError`); the command line asks it before any other check of ``--pattern``."""
    pretok = pretokenizer_option(pattern)
    if len(pretok.patterns) != 1 or pretok.has_byte_stage:
        raise VocabError(
            f"training needs a single-regex pre-tokenizer (gpt2, gpt4, o200k or a regex), not {pattern!r}"
        )
    import regex

    try:
        empty = regex.compile(pretok.patterns[0]).match("") is not None
    except regex.error:
        empty = False  # a regex only the core's engine reads: it checks it itself
    if empty:  # (the counts, the encoder and HF's Split would each cut such pieces their own way)
        raise VocabError(f"the pre-tokenizer regex {pretok.patterns[0]!r} matches the empty string: make every "
                         "alternative take at least one character (\\w+, not \\w*)")
    return pretok


def count_bytelevel(
    documents: Iterable[str], *, pattern: str | Pretokenizer, specials: list[str], workers: int | None = None,
    progress: bool = True, batch_chars: int = 8_000_000,
) -> Counter[str]:
    """The pieces of documents as training counts them (surrogates replaced, special tokens cut
    out, the pre-tokenizer): the one counting path of local runs, iterators and Ray shards.

    The compiled core cuts and counts each batch of about ``batch_chars`` characters on ``workers``
    threads (default: all cores) without the GIL, with the pre-tokenizer encoding uses, while this
    thread reads the next batch.
    """
    documents = replace_surrogates(documents)
    found: Counter[str] = Counter()
    if specials:
        documents = split_specials(documents, specials, found=found)
    pretok = training_pretokenizer(pattern)
    core_pretokenizer = pretok._core  # the same package
    counter = _core.PieceCounter()
    threads = 0 if workers is None else max(1, int(workers))

    def count(batch: list[str]) -> None:
        counter.count_pretokenized(batch, core_pretokenizer, threads=threads)

    with Background(1, name="wwho-count") as pool, \
            progress_bar(desc="counting", unit="char", unit_scale=True, disable=not progress) as bar:
        pending = None
        for batch in batches(documents, batch_chars):
            if pending is not None:
                pending.result()
            pending = pool.submit(count, batch)
            bar.update(sum(map(len, batch)))
        if pending is not None:
            pending.result()
    _warn_specials_in_text(found, pretok)
    # Pieces are cut from valid UTF-8 at character boundaries: they decode.
    return Counter({piece.decode("utf-8"): n for piece, n in counter.byte_items()})


def _warn_specials_in_text(found: Mapping[str, int], pretok: Pretokenizer) -> None:
    """Warn of a special token found in the training text where it is ordinary text there (one piece
    of the pre-tokenizer: a word, not markup such as ``<|endoftext|>`` between documents)."""
    for special, count in found.items():
        if count and pretok.split(special) == [special]:
            warn(f"special token {special!r} occurs {plural(count, 'time')} in the training text, where it is "
                 "ordinary text (a word of the pre-tokenizer's): training left it out there, and encode refuses "
                 "text holding it unless allowed_special names it; choose special tokens that text does not "
                 "contain, such as '<|endoftext|>'")


def learn_merges(
    pieces: Mapping[str, int] | Mapping[bytes, int], *, max_symbols: int, min_freq: int = 2,
    progress: bool = False,
) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """Merges (as byte pairs, in training order) and the symbol table (bytes, by id) for piece
    counts (keys: text, or its UTF-8 bytes)."""
    by_bytes: Counter[bytes] = Counter()
    for piece, count in pieces.items():
        by_bytes[piece if isinstance(piece, bytes) else piece.encode("utf-8", "surrogatepass")] += count
    keys = sorted(by_bytes)  # a fixed order, whatever order the counter came in
    # Each word is its bytes (a bytes object is a sequence of byte ids).
    engine = MergeEngine(keys, [by_bytes[k] for k in keys], [bytes([b]) for b in range(256)], tie_break="greater")
    engine.train(max_symbols=max_symbols, min_freq=min_freq, progress=progress)
    symbols: list[bytes] = list(engine.symbols)
    return [(symbols[a], symbols[b]) for a, b in engine.merges], symbols


def replace_surrogates(documents: Iterable[str]) -> Iterator[str]:
    """Each document with its lone surrogates replaced by U+FFFD, as :meth:`ByteBPE.encode` (and
    tiktoken) do before encoding: training then sees the bytes encoding will see."""
    for doc in documents:
        if _SURROGATE.search(doc) is None:
            yield doc
        else:
            yield doc.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def split_specials(documents: Iterable[str], specials: list[str], *,
                   found: Counter[str] | None = None) -> Iterator[str]:
    """Each document cut at special-token text (longest first), without the special tokens (counted
    into ``found``, if given)."""
    splitter = regex.compile("(" + "|".join(map(regex.escape, sorted(specials, key=lambda s: (-len(s), s)))) + ")")
    for doc in documents:
        if splitter.search(doc) is None:
            yield doc
            continue
        parts = splitter.split(doc)  # text, special, text, ..., text
        if found is not None:
            found.update(parts[1::2])
        yield from (part for part in parts[::2] if part)


def smallest_vocab_size(special_tokens: Iterable[str]) -> int:
    """The least ``vocab_size`` with these special tokens (repeats counted once): the 256 byte
    tokens and they."""
    return 256 + len(_specials(special_tokens))


def _specials(special_tokens) -> list[str]:
    """The special tokens, in order without repeats: non-empty strings, given as a list (one string
    would be taken as its characters)."""
    specials = list(dict.fromkeys(special_token_list(special_tokens)))
    for s in specials:
        if len(s.encode("utf-8", "surrogatepass")) == 1:  # said now, not once training is done
            raise VocabError(f"special token {s!r} is one byte, the text of that byte's own token: choose "
                             "special tokens text does not contain, such as '<|endoftext|>'")
    return specials


def _checked(vocab_size, pattern, special_tokens, min_freq, workers=None) -> tuple[Pretokenizer, list[str]]:
    specials = _specials(special_tokens)
    check_vocab_size(vocab_size, low=256 + len(specials))
    check_range(min_freq, "min_freq", 1, MAX_COUNT)
    check_workers(workers)
    return training_pretokenizer(pattern), specials


def train_bytelevel_from_iterator(
    iterator: TextSource, *, vocab_size: int, pattern: str = "gpt4", special_tokens: Iterable[str] = (), min_freq: int = 2,
    workers: int | None = None, progress: bool = True, length: int | None = None, engine: str = "local",
    address: str | None = None, text_column: str = "text",
) -> ByteLevelModel:
    """Train on texts from an iterable of strings or of batches of strings (:mod:`wwho.scale.texts`),
    or from a Hugging Face ``datasets.Dataset`` (its ``text_column``, read in slices); each string is
    one document, as one line of a file is. ``engine="ray"``: counted in Ray tasks, batches of about
    8 MB of text each (sent from this process)."""
    from wwho.scale.texts import dataset_texts, iter_texts

    pretok, specials = _checked(vocab_size, pattern, special_tokens, min_freq, workers)
    if engine not in ("local", "ray"):
        raise VocabError(f"engine must be one of local, ray, not {engine!r}")
    if address is not None and engine != "ray":
        raise VocabError("address is an option of engine='ray'")
    t0 = time.perf_counter()
    iterator, length = dataset_texts(iterator, text_column, length)
    texts = iter_texts(iterator, length=length, progress=progress, files_hint="ByteBPE.train")
    if engine == "ray":
        from wwho.scale.ray_counter import count_on_ray
        from wwho.scale.shards import CountOptions, text_shards

        options = CountOptions("bytelevel", pattern=pretok.patterns[0], specials=tuple(specials),
                               count_documents=count_bytelevel)
        pieces = count_on_ray(text_shards(texts), options, address=address, workers=workers, progress=False)
    else:
        pieces = count_bytelevel(texts, pattern=pretok, specials=specials, workers=workers,
                                 progress=False)
    if not pieces:
        raise CorpusError("the iterator has no text")
    return _train_on_pieces(pieces, pretok, specials, vocab_size, min_freq, progress, t0, "")


def train_bytelevel_from_counts(
    counts: CountSource, *, vocab_size: int, pattern: str = "gpt4", special_tokens: Iterable[str] = (), min_freq: int = 2,
    progress: bool = True,
) -> ByteLevelModel:
    """Train on piece counts: a dict, or ``piece<TAB>count`` files (:mod:`wwho.scale.counts`). The
    counts of a corpus's pieces give the same model as the corpus. ``pattern`` is the
    pre-tokenizer the model will encode with (the counts' pieces should be its matches)."""
    from wwho.scale.counts import add_counts, iter_counts

    pretok, specials = _checked(vocab_size, pattern, special_tokens, min_freq)
    t0 = time.perf_counter()
    pieces = add_counts({}, ((_no_surrogates(p), n) for p, n in iter_counts(counts)))
    if not pieces:
        raise CorpusError("the counts are empty")
    return _train_on_pieces(pieces, pretok, specials, vocab_size, min_freq, progress, t0, "")


def _no_surrogates(piece: str) -> str:
    if _SURROGATE.search(piece) is None:
        return piece
    return piece.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
