"""Train a binary BPE tokenizer: counted byte windows -> HF ``BpeTrainer`` -> ``Tokenizer``.

The result is a stock HF tokenizer: a BPE model whose ids 0..255 are the bytes 0..255
(Latin-1 characters), then the merges in the order they were learned; no normalizer,
no pre-tokenizer, a ``Fuse`` decoder (concatenation, so ``decode`` gives the bytes
back); special tokens in the added vocabulary after the model's ids, in the order
``<|start|> <|end|> <|sep|> <|cls|> <|pad|> <|mask|> <|unk|> <|reserved:0|> ...``; and
optionally a ``TemplateProcessing`` post-processor (``<|start|> $A <|end|>``).

``vocab_size`` counts the model and the special tokens. When ``pad_to_power_of_two``
is on, more ``<|reserved:N|>`` tokens are appended until the total is a power of two
(training may stop below ``vocab_size`` when no pair reaches ``min_frequency``). The default
``min_frequency`` (2: a pair seen once is not a pattern) lets ``vocab_size`` end training on
corpora of a megabyte or more, so the vocabulary is the size asked and no padding is needed.
:func:`describe_size` is the one way the size is told (warning and summary alike).

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
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `import wwho` and `wwho --version` do without it
    from tokenizers import Tokenizer, trainers

from wwho.background import start_thread
from wwho.binary.ingest import count_windows
from wwho.binary.ingest_types import IngestOptions, NothingSampledError, OptionError
from wwho.binary.walk import input_paths
from wwho.errors import CorpusError, VocabError, brief
from wwho.notices import warn
from wwho.sizes import MAX_COUNT, MAX_VOCAB_SIZE, MAX_WORKERS

ALPHABET = [chr(b) for b in range(256)]
STANDARD_SPECIALS = ("<|start|>", "<|end|>", "<|sep|>", "<|cls|>", "<|pad|>")
MASK = "<|mask|>"
UNK = "<|unk|>"
TEMPLATE_SINGLE = "<|start|> $A <|end|>"
TEMPLATE_PAIR = "<|start|> $A <|sep|> $B <|end|>"
_FEED_BATCH = 1024
_MAX_PAIR_COUNT = 2**31 - 1  # HF BpeTrainer keeps pair counts in an i32
_HEARTBEAT_S = 10.0  # how often progress is written when standard error is not a terminal
#: The default ``min_frequency``: stop only when the best pair occurs once (nothing is learned from it)
MIN_FREQUENCY = 2
#: The shortest ``max_token_length``: a limit of one byte would allow no merge at all
MIN_TOKEN_LENGTH = 2


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


def added_tokens_at_most(specials: int, vocab_size: int, pad_to_power_of_two: bool) -> int:
    """How many special and reserved tokens a vocabulary of ``specials`` special tokens can get: with
    the padding, up to the power of two at or above ``vocab_size`` less the 256 bytes (a model that
    learned few merges is padded with reserved tokens from just past its size)."""
    if not pad_to_power_of_two:
        return specials
    return max(specials, (1 << (max(vocab_size, 2) - 1).bit_length()) - 256)


def check_options(*, vocab_size: int = 32768, min_frequency: int = MIN_FREQUENCY, max_token_length: int | None = None,
                  standard_specials: bool = True, mask: bool = True, unk: bool = True, reserve: int = 128,
                  template: bool = False, pad_to_power_of_two: bool = True, threads: int | None = None,
                  progress: bool = False) -> list[str]:
    """Validate training options before any work; return the special tokens they imply."""
    for name, value, low, high in (("vocab_size", vocab_size, len(ALPHABET), MAX_VOCAB_SIZE),
                                   ("min_frequency", min_frequency, 0, MAX_COUNT),
                                   ("max_token_length", max_token_length, MIN_TOKEN_LENGTH, MAX_COUNT),
                                   ("threads", threads, 1, MAX_WORKERS)):
        if value is None and name in ("max_token_length", "threads"):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise OptionError(f"{name} must be an integer from {low:,} to {high:,}, got {value!r}")
    names = special_tokens(standard_specials=standard_specials, mask=mask, unk=unk, reserve=reserve)
    if vocab_size < len(ALPHABET) + len(names):
        raise VocabError(f"vocab_size {vocab_size} is smaller than the 256-byte alphabet plus {len(names)} "
                         f"special tokens ({len(ALPHABET) + len(names)}); raise it or reserve fewer tokens (--reserve, reserve=)")
    if template and not standard_specials:
        raise OptionError("a template needs the standard special tokens (<|start|>, <|end|>, <|sep|>)")
    return names


#: The environment values each running :func:`thread_limit` block replaced, outermost first.
_replaced: list[dict[str, str | None]] = []
#: The values of TOKENIZERS_PARALLELISM that HF reads as "no" (any other is "yes").
_OFF = ("", "off", "false", "f", "no", "n", "0")


@contextlib.contextmanager
def thread_limit(threads: int | None) -> Iterator[None]:
    """Limit HF's Rust thread pool while the block runs.

    ``threads=1`` always works (``TOKENIZERS_PARALLELISM=false`` is read on every call).
    Other values set ``RAYON_NUM_THREADS``, which the pool reads once, when the process
    first runs parallel HF code; the CLI sets it before that, a library caller may be late.
    ``TOKENIZERS_PARALLELISM`` is left as it is (HF runs in parallel unless told otherwise) but
    where it says ``false``: set to ``true``, a fork would give the child a pool whose threads are
    the parent's, which HF disables in a child only where the variable is unset. A child forked
    while the block runs gets the values it replaced back, ``TOKENIZERS_PARALLELISM`` as ``false``
    where it was unset (:func:`_after_fork_in_child`).
    """
    if threads is None:
        yield
        return
    wanted = {"RAYON_NUM_THREADS": str(threads)}
    parallel = os.environ.get("TOKENIZERS_PARALLELISM")
    if threads == 1:
        wanted["TOKENIZERS_PARALLELISM"] = "false"
    elif parallel is not None and parallel.lower() in _OFF:
        wanted["TOKENIZERS_PARALLELISM"] = "true"  # a thread count asked for, over a general "no"
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    _replaced.append(saved)
    try:
        yield
    finally:
        _replaced.remove(saved)
        _restore(saved)


def _restore(saved: Mapping[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _after_fork_in_child() -> None:
    """A child forked while :func:`thread_limit` runs: the values it replaced back, and HF kept off
    the parent's thread pool (whose threads the child does not have)."""
    if _replaced:
        outermost = _replaced[0]
        _restore(outermost)
        if any("TOKENIZERS_PARALLELISM" in saved for saved in _replaced):
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
        _replaced.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _feed(counts: Mapping[bytes, int]) -> Iterator[list[str]]:
    for window, n in counts.items():
        text = window.decode("latin-1")
        while n > 0:
            k = min(n, _FEED_BATCH)
            yield [text] * k
            n -= k


def train_from_counts(counts: Mapping[bytes, int], *, vocab_size: int = 32768, min_frequency: int = MIN_FREQUENCY,
                      max_token_length: int | None = None, standard_specials: bool = True, mask: bool = True,
                      unk: bool = True, reserve: int = 128, template: bool = False,
                      pad_to_power_of_two: bool = True, threads: int | None = None,
                      progress: bool = False) -> Tokenizer:
    """Train on windows counted by :func:`wwho.binary.ingest.count_windows` (``{bytes: count}``)."""
    from tokenizers import Tokenizer, decoders, models, processors, trainers

    names = check_options(vocab_size=vocab_size, min_frequency=min_frequency,
                          max_token_length=max_token_length, standard_specials=standard_specials, mask=mask,
                          unk=unk, reserve=reserve, template=template, threads=threads)
    if not counts:
        raise VocabError("nothing to train on: no windows were counted")
    pairs = _pair_count(counts)
    if pairs > _MAX_PAIR_COUNT:
        raise OptionError(f"{pairs:,} byte pairs to count: HF's trainer counts pairs in 32-bit integers, "
                          "which could overflow; sample fewer windows (--max-docs, --sample-rate, "
                          "--max-docs-per-file)")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(names), min_frequency=min_frequency,
                                  show_progress=progress and sys.stderr.isatty(), initial_alphabet=ALPHABET,
                                  # HF only forms tokens shorter than its limit (len < max_token_length)
                                  max_token_length=None if max_token_length is None else max_token_length + 1)
    tokenizer = Tokenizer(models.BPE())
    with thread_limit(threads):
        _train_interruptibly(tokenizer, counts, trainer, progress=progress)
    tokenizer.decoder = decoders.Fuse()
    model_size = tokenizer.get_vocab_size(with_added_tokens=False)
    total = model_size + len(names)
    padding = (1 << (total - 1).bit_length()) - total if pad_to_power_of_two else 0
    if total < vocab_size:
        _warn_short(model_size, len(names), padding, vocab_size, min_frequency)
    _add_specials(tokenizer, names, model_size)
    if padding:
        _add_specials(tokenizer, [reserved(i) for i in range(reserve, reserve + padding)], total)
    if template:
        ids = [(name, tokenizer.token_to_id(name)) for name in STANDARD_SPECIALS[:3]]
        tokenizer.post_processor = processors.TemplateProcessing(single=TEMPLATE_SINGLE, pair=TEMPLATE_PAIR,
                                                                 special_tokens=ids)
    tokenizer.encode_special_tokens = True
    return tokenizer


def _pair_count(counts: Mapping[bytes, int]) -> int:
    """The byte pairs HF will count; :class:`CorpusError` for a window that is not bytes or a count
    that is not a positive integer (HF would fail on it deep inside, or repeat it a negative number
    of times)."""
    if not isinstance(counts, Mapping):
        raise CorpusError(f"counts must be a mapping {{window bytes: count}}, not {type(counts).__name__}")
    pairs = 0
    for window, n in counts.items():
        if not isinstance(window, bytes):
            raise CorpusError(f"counts: window {brief(window, 60)} is {type(window).__name__}, not bytes")
        if type(n) is not int or not 1 <= n <= MAX_COUNT:
            raise CorpusError(f"counts: window {brief(window, 60)} has count {brief(n)}, "
                              f"not an integer from 1 to {MAX_COUNT:,}")
        pairs += n * max(len(window) - 1, 0)
    return pairs


def describe_size(model_size: int, specials: int, padding: int) -> str:
    """The vocabulary's one size and what it is made of: ``"2,048 tokens = 256 bytes + 634 merges +
    135 special + 1,023 reserved (power-of-two padding)"``."""
    text = (f"{model_size + specials + padding:,} tokens = {len(ALPHABET)} bytes + {model_size - len(ALPHABET):,} "
            f"merges + {specials:,} special")
    return text + (f" + {padding:,} reserved (power-of-two padding)" if padding else "")


def _warn_short(model_size: int, specials: int, padding: int, asked: int, min_frequency: int) -> None:
    """Training stopped before ``asked``: say it with the size the summary prints, and what to change."""

    from wwho.errors import VocabSizeWarning

    room = asked - len(ALPHABET) - specials
    why = ("no pair of tokens is left to merge" if min_frequency <= 1 else
           f"no pair of tokens occurs {min_frequency:,} times or more after that")
    # (said for the command line and for Python alike: this function cannot tell which called)
    fix = "train on more data" + ("" if min_frequency <= 1 else
                                  f" or lower --min-frequency / min_frequency (now {min_frequency:,})")
    warn(f"{model_size - len(ALPHABET):,} merges learned, not the {room:,} that a vocabulary size of {asked:,} "
         f"has room for: {why}; the vocabulary is {describe_size(model_size, specials, padding)}. "
         f"To reach {asked:,}, {fix}", VocabSizeWarning)


def _train_interruptibly(tokenizer: Tokenizer, counts: Mapping[bytes, int], trainer: trainers.BpeTrainer, *,
                         progress: bool) -> None:
    """Run HF's training on a worker thread so that Ctrl-C stops it at once.

    HF's merge loop is Rust that never looks at signals (on a large run Ctrl-C would go unanswered for a long time); it runs
    without the GIL, so this thread keeps waiting in short slices and gets ``KeyboardInterrupt``
    at once. The worker is then told to stop at its next window and abandoned: a daemon thread
    does not keep the process alive (the CLI exits with 130), and in a library call it finishes
    HF's current phase in the background and is dropped.

    With ``progress``, windows fed to HF are counted on a bar (tqdm, which also writes to a log
    that is not a terminal), then the merge phase reports its elapsed time every
    ``_HEARTBEAT_S`` seconds when standard error is not a terminal (HF's own bar shows only on one).
    """
    stop = threading.Event()
    failure: list[BaseException] = []
    total = sum(counts.values())
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="win", unit_scale=True, desc="feeding HF", dynamic_ncols=True,
                   mininterval=0.5 if sys.stderr.isatty() else _HEARTBEAT_S)

    def feed() -> Iterator[list[str]]:
        for batch in _feed(counts):
            if stop.is_set():
                raise KeyboardInterrupt
            if bar is not None:
                bar.update(len(batch))
            yield batch

    def work() -> None:
        try:
            tokenizer.train_from_iterator(feed(), trainer, length=total)
        except BaseException as exc:  # noqa: BLE001 -- handed to the waiting thread
            failure.append(exc)

    started = time.monotonic()
    worker = start_thread(work, name="wwho-binary-train")
    merging_said = next_beat = 0.0
    try:
        while worker.is_alive():
            worker.join(0.1)
            if bar is not None and bar.n >= total and not merging_said:
                bar.close()
                merging_said = time.monotonic()
                next_beat = merging_said + _HEARTBEAT_S
                print("merging (HF tokenizers)..." + ("" if sys.stderr.isatty() else
                      f" its merge bar shows on a terminal; here, the time every {_HEARTBEAT_S:.0f} s"),
                      file=sys.stderr, flush=True)
            if merging_said and not sys.stderr.isatty() and time.monotonic() >= next_beat:
                next_beat += _HEARTBEAT_S
                print(f"merging: {time.monotonic() - merging_said:.0f} s", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        stop.set()
        raise
    finally:
        if bar is not None:
            bar.close()
    if failure:
        raise failure[0]
    if progress:
        print(f"trained in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)


def _add_specials(tokenizer: Tokenizer, names: list[str], first_id: int) -> None:
    from tokenizers import AddedToken

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


def train(paths: str | os.PathLike | Iterable[str | os.PathLike], *, ingest: IngestOptions | None = None,
          vocab_size: int = 32768,
          min_frequency: int = MIN_FREQUENCY, max_token_length: int | None = None, standard_specials: bool = True,
          mask: bool = True, unk: bool = True, reserve: int = 128, template: bool = False,
          pad_to_power_of_two: bool = True, threads: int | None = None, progress: bool = True,
          memory_budget: int | None = None, over_budget: str = "refuse") -> Tokenizer:
    """Train a binary tokenizer on files and directories (see :mod:`wwho.binary.ingest`).

    Options are checked before any file is read; errors are :class:`wwho.WwhoError`. The memory
    the run needs is estimated from the file sizes first (:mod:`wwho.binary.budget`): above
    ``memory_budget`` (default: half of physical memory) it is refused with the options that would
    fit, or sampled to fit with ``over_budget="sample"``. ``progress`` (default on) writes bars and
    the estimate to standard error, also when it is not a terminal.
    """
    from wwho.binary.budget import check

    check_options(vocab_size=vocab_size, min_frequency=min_frequency, max_token_length=max_token_length,
                  standard_specials=standard_specials, mask=mask, unk=unk, reserve=reserve, template=template,
                  threads=threads)
    paths = input_paths(paths)
    if ingest is not None and not isinstance(ingest, IngestOptions):
        raise OptionError(f"ingest must be an IngestOptions, not {type(ingest).__name__}: "
                          "pass ingest=IngestOptions(...)")
    added = added_tokens_at_most(len(special_tokens(standard_specials=standard_specials, mask=mask, unk=unk,
                                                    reserve=reserve)), vocab_size, pad_to_power_of_two)
    options, estimate, note = check(paths, ingest or IngestOptions(), budget=memory_budget,
                                    over_budget=over_budget, added_tokens=added)
    if progress:
        print(note or estimate.describe(), file=sys.stderr, flush=True)
    elif note:
        _warn(note)
    try:  # (no more of each file than was estimated: one that grew since is cut there)
        counted = count_windows(paths, options=options, progress=progress, sizes=estimate.sizes)
    except NothingSampledError as exc:
        if note is None:
            raise
        raise NothingSampledError(exc.rate, exc.windows, exc.where, advice=(
            'over_budget="sample" chose that rate to fit memory_budget: raise memory_budget, or bound the '
            "data with IngestOptions(max_docs=N) instead of sampling")) from None
    return train_from_counts(counted.counts, vocab_size=vocab_size, min_frequency=min_frequency,
                             max_token_length=max_token_length, standard_specials=standard_specials,
                             mask=mask, unk=unk, reserve=reserve, template=template,
                             pad_to_power_of_two=pad_to_power_of_two, threads=threads, progress=progress)


def _warn(note: str) -> None:
    """Say what changed the run (sampling to fit the budget) even when progress is off."""

    from wwho.errors import WwhoWarning

    warn(note, WwhoWarning)
