"""``wwho decode --tokenizer PATH [ID... | -]``: ids back to text (``--binary``: to bytes; ``--npy FILE
--eot TOKEN``: the array ``wwho encode --npy`` wrote, a line at each end token, read a slice at a
time (a file cut meanwhile is an error naming it, not a crash), and a long line, the whole array
with ``--eot none``, decoded a block of ids at a time into the bytes its whole decode gives).

Ids are ASCII digits (``١٢`` or ``１２`` are not ids). With ``-``, or no ids at all (as
``wwho encode`` reads its text), they are read from standard input, one sequence per line (space or comma separated, or the JSON printed by
``wwho encode --json``), each decoded to one line: an empty line (``wwho encode``'s ids of an
empty line) to an empty line, so a round trip keeps every line in its place. A line of plain ids
of a MiB or more is held as an array of them (8 bytes an id), and a long one decoded a block at a
time, as a long ``--npy`` line is. The text goes to standard output, or to ``-o FILE`` (an existing
file needs ``--force``); a lone surrogate in it (SGPE decodes them losslessly) is written
as its surrogate-pass UTF-8 bytes (``ED A0 80`` for U+D800), never as a traceback.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib

from wwho.cli.encode import PATTERN_HELP, TIKTOKEN_FILE_HELP, use_tiktoken_file
from wwho.cli.id_input import parse_id_array, parse_ids
from wwho.cli.outputs import IDS_INSTEAD, results_output, standard_input
from wwho.cli.results_text import write_text
from wwho.cli.train_sgpe import LINE_BYTES
from wwho.corpus import MAX_LINE_BYTES, bounded_lines
from wwho.loading import detect_kind, load_tokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", required=True, help="vocab.json, a tokenizer directory, tokenizer.json, .gguf, .tiktoken, or a known encoding: "
                   "o200k_base (also spelled tiktoken:o200k_base)")
    p.add_argument("--tiktoken-file", metavar="PATH", help=TIKTOKEN_FILE_HELP)
    p.add_argument("--pattern", metavar="NAME|REGEX", help=PATTERN_HELP)
    p.add_argument("--max-line-bytes", type=LINE_BYTES, default=MAX_LINE_BYTES, metavar="BYTES",
                   help=f"with -: longest line of ids in bytes, its line end included, k/M/G suffixes "
                        f"allowed (default {MAX_LINE_BYTES >> 20}M); a longer one is an error")
    p.add_argument("--npy", metavar="FILE", help="decode the flat array of ids `wwho encode --npy` wrote, a line at "
                   "each --eot token")
    p.add_argument("--eot", metavar="TOKEN|none",
                   help="--npy: the special token that ends each line (as encode --npy --eot wrote it), or none: "
                        "the whole array is one line")
    from wwho.cli import binary

    binary.add_decode_arguments(p)


def run(args: argparse.Namespace) -> int:
    if args.npy is not None or args.eot is not None:
        return _run_npy(args)
    if not args.ids:  # `wwho encode ... | wwho decode ...`, as encode reads a pipe by default
        args.ids = ["-"]
    if "-" in args.ids and len(args.ids) > 1:  # (it read as "item 0 is '-', not a token id")
        from wwho.errors import WwhoError

        raise WwhoError("- (read the ids from standard input) must be the only ID")
    kind = detect_kind(args.tokenizer)
    if kind == "binary":
        from wwho.cli import binary

        return binary.run_decode(args)
    if args.binary:  # a text tokenizer is not read as a binary one: say so, not "not a tokenizer"
        from wwho.errors import CorpusError
        from wwho.kinds import KIND_NAMES

        raise CorpusError(f"--binary is for binary tokenizers; {args.tokenizer} is {KIND_NAMES[kind]}")
    output = results_output(args, reads=["-"] if args.ids == ["-"] else [])
    stdin = standard_input(IDS_INSTEAD) if args.ids == ["-"] else None  # closed: said before any work
    use_tiktoken_file(args)
    tok = load_tokenizer(args.tokenizer, pattern=args.pattern)
    with output as out:
        if stdin is not None:
            # One line out per line in (an empty one too), each read in bounded memory: a long line
            # of plain ids is held as an array of them, and decoded a block at a time.
            from wwho.imports import import_module

            # numpy before the first line: imported after a long one, under a tight memory limit,
            # its BLAS threads may fail to start
            import_module("numpy")
            for n, raw in enumerate(bounded_lines(stdin, "stdin", args.max_line_bytes), start=1):
                line = raw.decode("utf-8", "surrogateescape")  # a byte that is no digit: parse_ids names it
                if len(raw) < SHORT_LINE_BYTES:  # (a list costs less than an array for a few ids)
                    write_text(out, _decoded(tok, parse_ids(line, where=f"stdin:{n}"), f"stdin:{n}") + "\n")
                    continue
                del raw
                ids = parse_id_array(line, where=f"stdin:{n}")
                del line
                _write_line(out, tok, ids, 0, len(ids), f"stdin:{n}", whole_named=True)
        else:
            write_text(out, tok.decode(parse_ids(" ".join(args.ids), where="arguments")) + "\n")
    return 0


def _decoded(tok, ids: list[int], where: str, *, decode=None):
    """``tok.decode(ids)`` (or ``decode(ids)``); an id it refuses (out of range) is an error naming the
    input line, as a malformed id is (the tokenizer's message says only the position in the line)."""
    from wwho.errors import WwhoError

    try:
        return (decode or tok.decode)(ids)
    except WwhoError as exc:
        raise _named(exc, where) from None


def _named(exc, where: str):
    """``exc`` said again with ``where`` (the input line) before its message, of its own class."""
    from wwho.errors import WwhoError

    try:
        return type(exc)(f"{where}: {exc}")
    except TypeError:  # an error class of other arguments
        return WwhoError(f"{where}: {exc}")


#: Ids looked at at once for the line ends of ``--npy`` (a flag per id: bounded memory).
NPY_CHUNK = 1 << 22

#: A line longer than this many ids (of a ``--npy`` array, where ``--eot none`` makes the whole array
#: one line, or of standard input) is decoded a block of ids at a time.
LINE_BLOCK = 1 << 20

#: A line of standard input shorter than this many bytes is read as a list of ids, a longer one as
#: an array (8 bytes an id, not a Python int's 36).
SHORT_LINE_BYTES = 1 << 20

#: Lines of a ``--npy`` array written together (their texts held until then).
TEXTS_AT_ONCE = 1 << 12

#: The longest line a Hugging Face tokenizer.json decodes, in ids: its decoders take a line whole.
HF_LINE = 1 << 22


def _run_npy(args: argparse.Namespace) -> int:
    """``--npy FILE --eot TOKEN|none``: one line of text for each line of ids the array holds."""
    import numpy as np

    from wwho.cli.npy_output import eot_id, read_npy
    from wwho.errors import CorpusError, WwhoError

    if args.npy is None:
        raise CorpusError("--eot is an option of --npy (decode --npy FILE --eot TOKEN)")
    if args.ids:
        raise CorpusError("give the ids as --npy FILE or as IDs, not both")
    kind = detect_kind(args.tokenizer)
    if kind == "binary" or args.binary:
        raise CorpusError("--npy is for text tokenizers (one array of every line's ids)")
    ids = read_npy(args.npy)  # (checked before the output is made or the tokenizer loaded)
    output = results_output(args, reads=[args.npy])
    use_tiktoken_file(args)
    tok = load_tokenizer(args.tokenizer, pattern=args.pattern)
    eot = eot_id(tok, args.eot)
    whole = _longest_whole(tok)
    decode = tok.decode
    with output as out, contextlib.closing(ids):
        start, line = 0, 0
        if eot is not None:
            for at in range(0, len(ids), NPY_CHUNK):  # (a flag per id of one chunk at a time)
                chunk = ids[at:at + NPY_CHUNK]
                texts: list[str] = []  # the chunk's lines decoded from it, written together
                for end in (at + np.flatnonzero(chunk == eot)).tolist():
                    line += 1
                    if start >= at and end - start <= whole:  # a line of this chunk, decoded whole
                        try:  # (the line's name made only for an error)
                            texts.append(decode(chunk[start - at:end - at]))
                        except WwhoError as exc:
                            raise _named(exc, f"{args.npy}: line {line:,} (ids {start:,} to {end:,})") from None
                        if len(texts) == TEXTS_AT_ONCE:
                            _write_texts(out, texts)
                    else:
                        _write_texts(out, texts)
                        _write_line(out, tok, ids, start, end, f"{args.npy}: line {line:,}")
                    start = end + 1
                _write_texts(out, texts)
        if start < len(ids) or eot is None:  # a last line without its end token; --eot none: the one line
            _write_line(out, tok, ids, start, len(ids), f"{args.npy}: line {line + 1:,}")
    return 0


def _longest_whole(tok) -> int:
    """The most ids of a line decoded at once: a wwho kind decodes a longer line a block at a time,
    a Hugging Face tokenizer.json (no ``token_bytes``) only whole, up to :data:`HF_LINE`."""
    return LINE_BLOCK if hasattr(tok, "token_bytes") else HF_LINE


def _write_texts(out, texts: list[str]) -> None:
    """Each of ``texts`` and a newline, written together (not a write and flush a line), and
    ``texts`` emptied."""
    if texts:
        write_text(out, "\n".join(texts) + "\n")
        texts.clear()


def _write_line(out, tok, ids, start: int, end: int, line: str, *, whole_named: bool = False) -> None:
    """The text of ``ids[start:end]`` and a newline, as ``tok.decode`` gives it, a block of
    :data:`LINE_BLOCK` ids at a time (errors name the block's ids: positions count from its
    start; with ``whole_named``, a line decoded whole is named ``line`` alone)."""
    import numpy as np

    whole = _longest_whole(tok)
    if end - start <= whole:
        where = line if whole_named else f"{line} (ids {start:,} to {end:,})"
        write_text(out, _decoded(tok, np.asarray(ids[start:end]), where) + "\n")
        return
    if not hasattr(tok, "token_bytes"):
        from wwho.errors import CorpusError

        raise CorpusError(f"{line}: {end - start:,} ids, more than the {HF_LINE:,} a Hugging Face "
                          "tokenizer.json decodes at once (its decoders take a line whole); cut it into shorter "
                          "lines (with --npy: an --eot token after each), or decode it in Python")
    blocks = range(start, end, LINE_BLOCK)

    def block_bytes(at: int) -> bytes:
        block = np.asarray(ids[at:min(at + LINE_BLOCK, end)])
        data = _decoded(tok, block, f"{line} (ids {at:,} to {at + len(block):,})", decode=tok.decode_bytes)
        if at > start and getattr(tok, "prefix_space", False):
            # decode_bytes drops a leading space as the dummy space of a text's start; inside a line
            # it is the line's own
            first = next((b for b in (tok.token_bytes(int(i)) for i in block) if b), b"")
            if first[:1] == b" ":
                data = b" " + data
        return data

    # SGPE's decode keeps a lone surrogate's bytes where all of the line's bytes are otherwise UTF-8
    # (its byte fallback spells them); any other invalid bytes, and every other kind, become U+FFFD.
    from wwho.sgpe import SGPETokenizer

    if isinstance(tok, SGPETokenizer) and _utf8_but_surrogates(block_bytes(at) for at in blocks):
        for at in blocks:
            out.write(block_bytes(at))
    else:
        text = codecs.getincrementaldecoder("utf-8")("replace")
        for at in blocks:
            out.write(text.decode(block_bytes(at)).encode("utf-8"))
        out.write(text.decode(b"", final=True).encode("utf-8"))
    write_text(out, "\n")


def _utf8_but_surrogates(blocks) -> bool:
    """Whether the bytes of ``blocks``, joined, are UTF-8 with lone surrogates allowed."""
    check = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    try:
        for data in blocks:
            check.decode(data)
        check.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True
