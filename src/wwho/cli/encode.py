"""``wwho encode --tokenizer PATH [--ids | --tokens | --json] [TEXT | - | --file FILE]`` (and ``--binary FILE``,
which also takes ``--table``; ``--npy --eot TOKEN -o FILE.npy``: :mod:`wwho.cli.npy_output`).

Text comes from the argument, from a file (``--file``; ``.gz``, ``.xz`` and ``.bz2`` read decompressed), or with ``-`` (the default) from standard
input, one document per line. All are read as UTF-8 with lone surrogates allowed in their
surrogate-pass form (``ED A0 80`` is U+D800, what ``wwho decode`` writes for it); other invalid
bytes are an ``arguments``, ``FILE:LINE`` or ``stdin:LINE`` error. Lines are read in blocks
(``--block-mb``), each block is encoded by the tokenizer's ``encode_batch`` on ``--threads``
threads (default: all cores; byte-level and SGPE tokenizers release the GIL), and the results are
written in input order, so memory stays bounded by a couple of blocks whatever the input size; a
line is encoded whole, so one line may be at most ``--max-line-bytes`` (default 64 MiB).
The tokenizer kind is detected from PATH (see :mod:`wwho.loading`); a ``.tiktoken`` file that is
not a known encoding needs ``--pattern``. Output goes to standard output, or to ``-o FILE`` (an
existing file needs ``--force``). Text that cannot be UTF-8 (a lone surrogate) is written as its
surrogate-pass bytes, and escaped as ``\\udXXX`` in ``--json``.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from wwho.cli.bars import file_progress
from wwho.cli.outputs import names_a_file, results_output, standard_input
from wwho.cli.results_text import id_text, json_text, token_text
from wwho.cli.train_sgpe import LINE_BYTES
from wwho.corpus import MAX_LINE_BYTES, bounded_lines
from wwho.errors import CorpusError, TokenizerError
from wwho.kinds import KIND_NAMES
from wwho.loading import detect_kind, load_tokenizer
from wwho.notices import warn
from wwho.protocol import special_text_pattern
from wwho.threads import MAX_THREADS

PATTERN_HELP = ("pre-tokenizer of a .tiktoken file that is not a known encoding, or of a .gguf file without "
                "tokenizer.ggml.pre: gpt2, gpt4, o200k (or another name wwho knows) or a regex")

TIKTOKEN_FILE_HELP = ("tiktoken's ranks file (e.g. o200k_base.tiktoken) for o200k_base/meta tokenizers offline; "
                      "same as WWHO_TIKTOKEN_FILE=PATH")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", required=True, help="vocab.json, a tokenizer directory, tokenizer.json, .gguf, .tiktoken, or a known encoding: "
                   "o200k_base (also spelled tiktoken:o200k_base)")
    p.add_argument("input", nargs="?", default=None, help="text to encode, or - (default) to read lines from standard input; "
                   "with --binary: a file")
    p.add_argument("--file", metavar="FILE", help="encode every line of FILE (UTF-8; a .gz, .xz or .bz2 file is read decompressed), in order")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for encoding (default: all cores; 1: no parallelism)")
    p.add_argument("--block-mb", type=float, default=4.0,
                   help="lines are encoded in blocks of about this many MB (default 4)")
    p.add_argument("--max-line-bytes", type=LINE_BYTES, default=MAX_LINE_BYTES, metavar="BYTES",
                   help=f"longest input line in bytes, its line end included, k/M/G suffixes allowed "
                        f"(default {MAX_LINE_BYTES >> 20}M): a line is encoded whole, in memory several times its size; a longer one is an error")
    p.add_argument("--tiktoken-file", metavar="PATH", help=TIKTOKEN_FILE_HELP)
    p.add_argument("--pattern", metavar="NAME|REGEX", help=PATTERN_HELP)
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                   help="no progress bar (one is drawn for --file FILE when standard error is a terminal)")
    special = p.add_mutually_exclusive_group()
    special.add_argument("--allow-special", action="store_true",
                         help="encode special-token text (e.g. <|endoftext|>, [CLS]) as the special token")
    special.add_argument("--special-as-text", action="store_true",
                         help="encode special-token text as plain text (tiktoken's disallowed_special=()); by "
                              "default such text is an error for the kinds that refuse it (byte-level, meta)")
    # One set of output flags for every kind (the binary kind's --format X is a hidden alias of --X).
    out = p.add_mutually_exclusive_group()
    out.add_argument("--ids", dest="show", action="store_const", const="ids",
                     help="print ids (the default, except with --binary: --json)")
    out.add_argument("--tokens", dest="show", action="store_const", const="tokens",
                     help="print tokens as readable text separated by ' | ' (bytes that are not whole "
                          "UTF-8 characters as <0xE0>)")
    out.add_argument("--json", dest="show", action="store_const", const="json",
                     help="print {ids, tokens} as JSON (--binary: tokens as hex, and byte offsets)")
    out.add_argument("--table", dest="show", action="store_const", const="table",
                     help="--binary only: id, hex, start, end per line")
    out.add_argument("--npy", dest="show", action="store_const", const="npy",
                     help="write every line's ids, in order, as one flat NumPy array to -o FILE.npy (uint16 where "
                          "the vocabulary's ids fit, else uint32), with --eot's id after each line")
    out.add_argument("--format", dest="show", choices=("ids", "tokens", "json", "table", "npy"), help=argparse.SUPPRESS)
    p.add_argument("--eot", metavar="TOKEN|none",
                   help="--npy: the special token written after each line's ids (e.g. <|endoftext|>), or none")
    from wwho.cli import binary

    binary.add_encode_arguments(p)


def run(args: argparse.Namespace) -> int:
    kind = detect_kind(args.tokenizer)
    if kind == "binary":
        from wwho.cli import binary

        return binary.run_encode(args)
    if args.binary:  # a text tokenizer is not read as a binary one: say so, not "not a tokenizer"
        raise CorpusError(f"--binary is for binary tokenizers; {args.tokenizer} is {KIND_NAMES[kind]}")
    if args.specials:  # the template's tokens around the data: only binary tokenizers have one
        raise CorpusError("--specials is for binary tokenizers (their template's tokens); a text tokenizer "
                          "writes special tokens found in the text with --allow-special")
    if args.threads is not None and not 1 <= args.threads <= MAX_THREADS:  # (the batch API's bound, named here)
        raise CorpusError(f"--threads must be an integer from 1 to {MAX_THREADS}, not {args.threads}")
    if not 0 < args.block_mb <= 1e6:  # (nan and inf fail this too)
        raise CorpusError(f"--block-mb must be a number of megabytes in (0, 1,000,000], not {args.block_mb}")
    if args.file and args.input is not None:  # (- too: standard input would be left unread)
        raise CorpusError("give either TEXT (or -) or --file, not both")
    if args.input is None:
        args.input = "-"
    if args.show == "table":
        raise CorpusError("--table is for binary tokenizers (--binary); text tokenizers print --ids, --tokens "
                          "or --json")
    if args.eot is not None and args.show != "npy":
        raise CorpusError("--eot is an option of --npy")
    if args.show == "npy":
        from wwho.cli.outputs import stream_kind

        if not args.output or args.output == "-" or stream_kind(args.output) is not None:
            raise CorpusError("--npy writes a .npy file, whose header is completed at the end: give -o FILE.npy "
                              "(a file, not standard output or a pipe)")
        if not args.output.lower().endswith(".npy"):  # a reader of raw ids (nanoGPT's train.bin) would take
            # numpy's header for ids
            raise CorpusError(f"--npy writes a .npy file (numpy's header, then the ids), not raw ids: name it "
                              f"-o NAME.npy, not {args.output!r} (for nanoGPT's raw train.bin: "
                              "numpy.load('NAME.npy').tofile('train.bin'))")
    streamed = args.file or ("-" if args.input == "-" else None)  # what is read as the results are written
    output = results_output(args, reads=[streamed] if streamed else [])
    if args.file == "-" or (not args.file and args.input == "-"):
        standard_input()  # closed: said before the tokenizer is loaded
    use_tiktoken_file(args)
    tok = load_tokenizer(args.tokenizer, pattern=args.pattern)
    if args.show == "npy":
        return _write_npy(args, tok, output)
    encode_batch = batch_encoder(tok, allow_special=args.allow_special, special_as_text=args.special_as_text,
                                 threads=args.threads)
    show = args.show or "ids"
    if show == "ids":
        writer = id_text()
    else:
        writer = (token_text if show == "tokens" else json_text)(token_shower(tok))
    with _encoding(args, output, encode_batch, len) as (out, blocks):
        for results in blocks:
            writer.write(out, results)
    return 0


@contextlib.contextmanager
def _encoding(args: argparse.Namespace, output, encode_batch: Callable[[list[str]], Any],
              lines_of: Callable[[Any], int]) -> Iterator[tuple[IO[bytes], Iterator[Any]]]:
    """``(out, blocks)``: the output opened, and ``encode_batch`` of each block of the input's lines,
    in order, for the caller to write; ``lines_of(result)`` counts a block's lines, so that a refused
    special token names its line; the progress bar follows the input read."""
    read = [0]
    with output as out, _special_advice(args) as done, _progress(args) as bar:
        def blocks() -> Iterator[Any]:
            for results in _encoded_ahead(_blocks(_lines(args, read), int(args.block_mb * 1e6)), encode_batch):
                yield results
                done[0] += lines_of(results)
                bar.update(read[0] - bar.n)

        yield out, blocks()


@contextlib.contextmanager
def _progress(args: argparse.Namespace) -> Iterator:
    """:func:`file_progress` of ``--file FILE`` for ``encode``."""
    with file_progress(args.file, verb="encode", output=args.output, quiet=getattr(args, "quiet", False)) as bar:
        yield bar


def _write_npy(args: argparse.Namespace, tok, output) -> int:
    """``--npy``: the lines' ids as one flat array (:mod:`wwho.cli.npy_output`), a block at a time."""
    from wwho.cli.npy_output import NpyWriter, eot_id, npy_dtype

    eot = eot_id(tok, args.eot)
    encode_batch = batch_encoder(tok, allow_special=args.allow_special, special_as_text=args.special_as_text,
                                 threads=args.threads, method="encode_batch_to_numpy")
    with _encoding(args, output, encode_batch, lambda flat: len(flat.offsets) - 1) as (out, blocks):
        writer = NpyWriter(out, npy_dtype(tok), eot)
        for flat in blocks:
            writer.write(flat)
        writer.finish()
    return 0


def _encoded_ahead(blocks: Iterator[list[str]], encode_batch: Callable[[list[str]], list]) -> Iterator[list]:
    """``encode_batch(block)`` for each block, in order, the next block read and encoded by a
    helper thread while the caller writes this one (the core encodes without the GIL, so writing
    and encoding overlap). At most two blocks are held. An error reading the input is raised
    after the block before it is handed out, as it would be without the look-ahead. (A helper
    thread of :mod:`wwho.background`: a Ctrl-C cannot leave it waiting on a lock.)"""
    from wwho.background import Background

    with Background(1, name="wwho-encode") as ahead:
        pending = None
        while True:
            try:
                block = next(blocks, None)
            except BaseException:
                if pending is not None:
                    yield pending.result()
                raise
            if block is None:
                break
            future = ahead.submit(encode_batch, block)
            if pending is not None:
                yield pending.result()
            pending = future
        if pending is not None:
            yield pending.result()


def _lines(args: argparse.Namespace, read: list[int] | None = None) -> Iterator[str]:
    """The input's lines; ``read[0]`` counts the bytes of ``--file FILE``'s lines read so far."""
    if args.file and args.file != "-":  # (--file -: standard input, as usual)
        from wwho.corpus import READ_ERRORS, unchanged_while_open

        try:
            with (open_input_file(args.file, what="file to encode") as f,
                  unchanged_while_open(f, args.file, redo="encode it again")):
                yield from _decoded(bounded_lines(f, args.file, args.max_line_bytes), args.file, read)
        except READ_ERRORS as exc:
            raise read_failed(args.file, exc) from None
    elif args.file or args.input == "-":
        yield from _decoded(bounded_lines(standard_input(), "stdin", args.max_line_bytes), "stdin")
    else:
        yield argument_text(args.input)


def open_input_file(path: str, *, what: str) -> IO[bytes]:
    """``path`` opened for reading as bytes: a regular file, or a FIFO read once as a stream (as
    standard input is); never a directory or a device (/dev/zero is one endless line). A .gz,
    .xz or .bz2 file is read decompressed, as train and eval read it; another compressed file
    is refused by its format's name. Errors while reading it: :func:`read_failed`."""
    from wwho.corpus import check_text_file, compressed_by_name, open_binary
    from wwho.fileio import open_regular

    if compressed_by_name(Path(path)):
        return open_binary(Path(path))
    check_text_file(Path(path))
    return io.BufferedReader(open_regular(path, error=CorpusError, what=what, fifo=True))


def read_failed(path: str, exc: BaseException) -> CorpusError:
    """The error to raise for ``exc``, one of ``wwho.corpus.READ_ERRORS`` raised while reading
    ``path`` (a read that failed, or a compressed file cut short or corrupt)."""
    if isinstance(exc, OSError) and exc.strerror:
        return CorpusError(f"{path}: cannot read: {exc.strerror}")
    return CorpusError(f"{path}: cannot read (corrupt or truncated file?): {exc}")


def _decoded(lines: Iterable[bytes], name: str, read: list[int] | None = None) -> Iterator[str]:
    """Each line's text without its line end, ``\n`` or ``\r\n``: a ``\r`` before that is text,
    which ``wwho decode`` must give back (the training reader strips them all, a corpus convention)."""
    for n, raw in enumerate(lines, start=1):
        if read is not None:
            read[0] += len(raw)
        if raw.endswith(b"\n"):
            raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
        try:
            yield raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{name}:{n}: invalid UTF-8 at byte {exc.start}") from None


def argument_text(text: str) -> str:
    """The text of a TEXT argument, read as standard input is read. One that names a file is
    still the text itself (as documented), with a warning saying how to read the file instead:
    ``wwho encode corpus.txt`` would otherwise print the ids of the word "corpus.txt" and exit 0."""
    import shlex

    from wwho.errors import WwhoWarning

    # Python decodes argv with surrogateescape: get the bytes back and read them as stdin is read.
    try:
        decoded = os.fsencode(text).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"arguments: the text is not UTF-8 (invalid byte at {exc.start})") from None
    if names_a_file(text):
        warn(f"{decoded!r} is taken as the text itself, not read, though it names a file; to read "
             f"the file, give --file {shlex.quote(decoded)}", WwhoWarning)
    return decoded


#: Lines in one block at most: a short line's ids cost far more than its text (a list, and a string
#: per line for the output), so a block bounded in characters alone could hold millions of
#: short lines and many times their size in memory.
MAX_BLOCK_LINES = 1 << 16


def _blocks(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive lists of lines of about ``size`` bytes (characters, as a cheap proxy) each, and
    of at most :data:`MAX_BLOCK_LINES` lines."""
    block: list[str] = []
    held = 0
    for line in lines:
        block.append(line)
        held += len(line) + 1
        if held >= size or len(block) >= MAX_BLOCK_LINES:
            yield block
            block, held = [], 0
    if block:
        yield block


def batch_encoder(tok, *, allow_special: bool = False, special_as_text: bool = False,
                  threads: int | None = None, method: str = "encode_batch") -> Callable[[list[str]], list]:
    """``texts -> ids`` for any tokenizer kind: its ``encode_batch`` (or ``method``) with
    ``num_threads`` where it takes one (byte-level, SGPE, HF), else its ``encode_batch``, else
    ``encode`` line by line. ``special_as_text``: special-token text is plain text where the kind
    would refuse it."""
    from wwho.loading import HFTokenizer

    if isinstance(tok, HFTokenizer):
        return _hf_batch_encoder(tok, allow_special=allow_special, special_as_text=special_as_text,
                                 threads=threads, method=method)
    options: dict = {"allowed_special": "all"} if allow_special else {}
    batch = getattr(tok, method, None)
    if batch is not None:
        params = inspect.signature(batch).parameters
        if "num_threads" in params:
            options["num_threads"] = threads or os.cpu_count() or 1
        if special_as_text and "disallowed_special" in params:
            options["disallowed_special"] = ()
        return lambda texts: batch(texts, **options)
    if special_as_text and "disallowed_special" in inspect.signature(tok.encode).parameters:
        options["disallowed_special"] = ()
    return lambda texts: [tok.encode(t, **options) for t in texts]


def _hf_batch_encoder(tok, *, allow_special: bool, special_as_text: bool, threads: int | None,
                      method: str) -> Callable[[list[str]], list]:
    """:func:`batch_encoder` for a ``tokenizer.json`` read by HF ``tokenizers``, which reads
    special-token text as its special token whatever it is asked: a line holding such text is
    refused as the other kinds refuse it, unless ``--allow-special`` (a stray ``<|endoftext|>`` in a
    document would otherwise end it in an ``--npy`` array); ``--special-as-text`` cannot be done."""
    if special_as_text:
        raise TokenizerError("--special-as-text: a tokenizer.json always reads special-token text as its special "
                             "token (as Hugging Face tokenizers does), so it cannot encode that text as plain text; "
                             "give another kind (a wwho folder) or --allow-special")
    batch = getattr(tok, method)
    options = {"num_threads": threads or os.cpu_count() or 1}
    specials = special_text_pattern(t.content for t in tok.tokenizer.get_added_tokens_decoder().values() if t.special)
    if allow_special or specials is None:
        return lambda texts: batch(texts, **options)

    def refusing(texts: list[str]) -> list:
        for n, text in enumerate(texts):
            found = specials.search(text) if isinstance(text, str) else None
            if found:
                raise TokenizerError(f"texts[{n}]: the special token {found[0]!r} at offset {found.start()}: a "
                                     "tokenizer.json reads it as that token; add --allow-special to encode it so")
        return batch(texts, **options)

    return refusing


@contextlib.contextmanager
def _special_advice(args: argparse.Namespace) -> Iterator[list[int]]:
    """Says which input line holds special-token text the tokenizer refuses, and the command's
    options for it (the library's error names its keyword arguments). Yields the count of lines
    encoded so far, which the caller keeps."""
    from wwho.bytelevel.tokenizer import DisallowedSpecialError

    done = [0]
    where = args.file or ("standard input" if args.input == "-" else "the argument")
    try:
        yield done
    except DisallowedSpecialError as exc:
        line = done[0] + (exc.text_index or 0) + 1
        raise TokenizerError(f"{where}: line {line:,}: the special token {exc.token!r} at offset {exc.offset}: "
                             "add --allow-special to encode it as the special token, or --special-as-text to "
                             "encode it as plain text") from None
    except TokenizerError as exc:  # any other text refused (a byte without a token): its line, not its block's
        place = _BATCH_PLACE.match(str(exc))
        if place is None:
            raise
        line = done[0] + int(place[1]) + 1
        raise TokenizerError(f"{where}: line {line:,}: {str(exc)[place.end():]}") from None


#: How a batch's error names its text: ``texts[7]: ...`` (its place in the block of lines encoded).
_BATCH_PLACE = re.compile(r"texts\[([0-9]+)\]: ")


def use_tiktoken_file(args: argparse.Namespace) -> None:
    """``--tiktoken-file PATH`` is the same as ``WWHO_TIKTOKEN_FILE=PATH`` for this command
    (and wins over ``WWHO_TIKTOKEN_FILE_<NAME>``, as ``tiktoken_file=`` does in Python)."""
    if getattr(args, "tiktoken_file", None):
        from wwho.tiktoken_file import use_flag

        use_flag(args.tiktoken_file)


def warn_if_tiktoken_file_unused() -> None:
    """After a verb that took ``--tiktoken-file``: a warning when no tokenizer it loaded was an
    encoding named by the file's name (``o200k_base``, ``tiktoken:cl100k_base``, a meta tokenizer's
    byte-level part), so that a typo in the tokenizer's name is not mistaken for the file's use."""
    from wwho.tiktoken_file import flag_unused

    path = flag_unused()
    if path is not None:
        from wwho.errors import WwhoWarning

        warn(f"--tiktoken-file {path} was not used: no tokenizer given is a tiktoken encoding named "
             "by its name (o200k_base, tiktoken:cl100k_base, ...)", WwhoWarning)


def token_shower(tok) -> Callable[[int], str]:
    """How each id is shown: the token's bytes as readable text (:func:`wwho.readable.readable`:
    invalid UTF-8 and control bytes as ``<0xE0>``), the same for every kind; a tokenizer
    without ``token_bytes`` (a plain HF one) shows its token strings."""
    from wwho.readable import readable

    if hasattr(tok, "token_bytes"):
        return lambda i: readable(tok.token_bytes(i))
    convert = getattr(tok.tokenizer, "id_to_token", None) if hasattr(tok, "tokenizer") else None
    if convert is not None:
        return convert
    return lambda i: tok.decode([i])
