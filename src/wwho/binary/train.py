"""Train a binary BPE tokenizer: counted byte windows -> HF ``BpeTrainer`` -> ``Tokenizer``.

The result is a stock HF tokenizer: a BPE model whose ids 0..255 are the bytes 0..255
(Latin-1 characters), then the merges in the order they were learned; no normalizer,
no pre-tokenizer, a ``Fuse`` decoder (concatenation, so ``decode`` gives the bytes
back); special tokens in the added vocabulary after the model's ids, in the order
``<|start|> <|end|> <|sep|> <|cls|> <|pad|> <|mask|> <|unk|> <|reserved:0|> ...``; and
optionally a ``TemplateProcessing`` post-processor (``<|start|> $A <|end|>``).

``vocab_size`` counts the model and the special tokens. When ``pad_to_power_of_two``
is on, more ``<|reserved:N|>`` tokens are appended until the total is a power of two
(training may stop below ``vocab_size`` when no pair reaches ``min_frequency``).

Counts reach the trainer without expanding the corpus: each distinct window is sent
as the same ``str`` object repeated ``count`` times, in lists of at most 1024, so the
Python side holds one copy per distinct window; HF copies and hashes each repeat,
so feeding costs the same as the windows' total size, and much less than training.

What this module deliberately does not do: read files (``ingest``), or implement BPE:
the merges are HF's.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, processors, trainers

from wwho.binary.ingest import IngestOptions, OptionError, count_windows
from wwho.errors import VocabError
from wwho.sizes import MAX_COUNT, MAX_VOCAB_SIZE, MAX_WORKERS

ALPHABET = [chr(b) for b in range(256)]
STANDARD_SPECIALS = ("<|start|>", "<|end|>", "<|sep|>", "<|cls|>", "<|pad|>")
MASK = "<|mask|>"
UNK = "<|unk|>"
TEMPLATE_SINGLE = "<|start|> $A <|end|>"
TEMPLATE_PAIR = "<|start|> $A <|sep|> $B <|end|>"
_FEED_BATCH = 1024
_MAX_PAIR_COUNT = 2**31 - 1  # HF BpeTrainer keeps pair counts in an i32


def reserved(i: int) -> str:
    return f"<|reserved:{i}|>"


def special_tokens(*, standard_specials: bool = True, mask: bool = True, unk: bool = True,
                   reserve: int = 128) -> list[str]:
    """The special tokens of a binary tokenizer, in id order (before power-of-two padding)."""
    if isinstance(reserve, bool) or not isinstance(reserve, int) or not 0 <= reserve <= MAX_VOCAB_SIZE:
        raise OptionError(f"reserve must be an integer from 0 to {MAX_VOCAB_SIZE:,}, got {reserve!r}")
    names = list(STANDARD_SPECIALS) if standard_specials else []
    names += [MASK] * mask + [UNK] * unk
    return names + [reserved(i) for i in range(reserve)]


def check_options(*, vocab_size: int = 32768, min_frequency: int = 1024, max_token_length: int | None = None,
                  standard_specials: bool = True, mask: bool = True, unk: bool = True, reserve: int = 128,
                  template: bool = False, pad_to_power_of_two: bool = True, threads: int | None = None,
                  progress: bool = False) -> list[str]:
    """Validate training options before any work; return the special tokens they imply."""
    for name, value, low, high in (("vocab_size", vocab_size, 1, MAX_VOCAB_SIZE),
                                   ("min_frequency", min_frequency, 0, MAX_COUNT),
                                   ("max_token_length", max_token_length, 2, MAX_COUNT),
                                   ("threads", threads, 1, MAX_WORKERS)):
        if value is None and name in ("max_token_length", "threads"):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise OptionError(f"{name} must be an integer from {low:,} to {high:,}, got {value!r}")
    names = special_tokens(standard_specials=standard_specials, mask=mask, unk=unk, reserve=reserve)
    if vocab_size < len(ALPHABET) + len(names):
        raise VocabError(f"vocab_size {vocab_size} is smaller than the 256-byte alphabet plus {len(names)} "
                         f"special tokens ({len(ALPHABET) + len(names)}); raise it or use fewer --reserve")
    if template and not standard_specials:
        raise OptionError("a template needs the standard special tokens (<|start|>, <|end|>, <|sep|>)")
    return names


@contextlib.contextmanager
def thread_limit(threads: int | None) -> Iterator[None]:
    """Limit HF's Rust thread pool while the block runs.

    ``threads=1`` always works (``TOKENIZERS_PARALLELISM=false`` is read on every call).
    Other values set ``RAYON_NUM_THREADS``, which the pool reads once, when the process
    first runs parallel HF code; the CLI sets it before that, a library caller may be late.
    """
    if threads is None:
        yield
        return
    saved = {k: os.environ.get(k) for k in ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS")}
    os.environ["TOKENIZERS_PARALLELISM"] = "false" if threads == 1 else "true"
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _feed(counts: Mapping[bytes, int]) -> Iterator[list[str]]:
    for window, n in counts.items():
        text = window.decode("latin-1")
        while n > 0:
            k = min(n, _FEED_BATCH)
            yield [text] * k
            n -= k


def train_from_counts(counts: Mapping[bytes, int], *, vocab_size: int = 32768, min_frequency: int = 1024,
                      max_token_length: int | None = None, standard_specials: bool = True, mask: bool = True,
                      unk: bool = True, reserve: int = 128, template: bool = False,
                      pad_to_power_of_two: bool = True, threads: int | None = None,
                      progress: bool = False) -> Tokenizer:
    """Train on windows counted by :func:`wwho.binary.ingest.count_windows` (``{bytes: count}``)."""
    names = check_options(vocab_size=vocab_size, min_frequency=min_frequency,
                          max_token_length=max_token_length, standard_specials=standard_specials, mask=mask,
                          unk=unk, reserve=reserve, template=template, threads=threads)
    if not counts:
        raise VocabError("nothing to train on: no windows were counted")
    pairs = sum(n * (len(w) - 1) for w, n in counts.items())
    if pairs > _MAX_PAIR_COUNT:
        raise OptionError(f"{pairs:,} byte pairs to count: HF's trainer counts pairs in 32-bit integers, "
                          "which could overflow; sample fewer windows (--max-docs, --sample-rate, "
                          "--max-docs-per-file)")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(names), min_frequency=min_frequency,
                                  show_progress=progress, initial_alphabet=ALPHABET,
                                  # HF only forms tokens shorter than its limit (len < max_token_length)
                                  max_token_length=None if max_token_length is None else max_token_length + 1)
    tokenizer = Tokenizer(models.BPE())
    with thread_limit(threads):
        tokenizer.train_from_iterator(_feed(counts), trainer, length=sum(counts.values()))
    tokenizer.decoder = decoders.Fuse()
    model_size = tokenizer.get_vocab_size(with_added_tokens=False)
    _add_specials(tokenizer, names, model_size)
    if pad_to_power_of_two:
        total = tokenizer.get_vocab_size(with_added_tokens=True)
        target = 1 << (total - 1).bit_length()
        _add_specials(tokenizer, [reserved(i) for i in range(reserve, reserve + target - total)], total)
    if template:
        ids = [(name, tokenizer.token_to_id(name)) for name in STANDARD_SPECIALS[:3]]
        tokenizer.post_processor = processors.TemplateProcessing(single=TEMPLATE_SINGLE, pair=TEMPLATE_PAIR,
                                                                 special_tokens=ids)
    tokenizer.encode_special_tokens = True
    return tokenizer


def _add_specials(tokenizer: Tokenizer, names: list[str], first_id: int) -> None:
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    clash = [name for name in names if name in vocab]
    if clash:
        # HF would reuse the learned token's id, and skipping specials on decode would drop data.
        raise VocabError(f"special token {clash[0]!r} was learned as a byte sequence from the training data; "
                         "remove that text from the corpus or lower --max-token-length below its length")
    tokenizer.add_special_tokens([AddedToken(name, special=True, normalized=False) for name in names])
    for offset, name in enumerate(names):
        if tokenizer.token_to_id(name) != first_id + offset:  # guards the id layout documented above
            raise VocabError(f"special token {name!r} got id {tokenizer.token_to_id(name)}, "
                             f"expected {first_id + offset}")


def train(paths: Iterable[str | Path], *, ingest: IngestOptions | None = None, vocab_size: int = 32768,
          min_frequency: int = 1024, max_token_length: int | None = None, standard_specials: bool = True,
          mask: bool = True, unk: bool = True, reserve: int = 128, template: bool = False,
          pad_to_power_of_two: bool = True, threads: int | None = None, progress: bool = False) -> Tokenizer:
    """Train a binary tokenizer on files and directories (see :mod:`wwho.binary.ingest`).

    Options are checked before any file is read; errors are :class:`wwho.WwhoError`.
    """
    check_options(vocab_size=vocab_size, min_frequency=min_frequency, max_token_length=max_token_length,
                  standard_specials=standard_specials, mask=mask, unk=unk, reserve=reserve, template=template,
                  threads=threads)
    counted = count_windows(paths, ingest or IngestOptions(), progress=progress)
    return train_from_counts(counted.counts, vocab_size=vocab_size, min_frequency=min_frequency,
                             max_token_length=max_token_length, standard_specials=standard_specials,
                             mask=mask, unk=unk, reserve=reserve, template=template,
                             pad_to_power_of_two=pad_to_power_of_two, threads=threads, progress=progress)
