"""The binary forms of ``wwho encode``, ``wwho decode`` and ``wwho inspect``.

The generic verbs (owned by ``wwho.cli``) call these when ``--binary`` is given or
the tokenizer file is a binary tokenizer (:func:`is_binary_tokenizer`). The
``add_*_arguments`` functions add only the options the parser does not have yet, so
a verb that already defines ``--tokenizer`` or ``--binary`` can share them.

- encode: bytes of a file or stdin -> ids, tokens as hex, byte offsets (JSON, table or ids)
- decode: ids (arguments, or ``-``: whitespace/comma separated or JSON on stdin) -> bytes
- inspect: vocabulary sizes, special tokens, template, first merges and longest tokens
"""

from __future__ import annotations

import argparse
import json
import os
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from wwho.binary.io import is_binary_tokenizer, load, tokenizer_file
from wwho.binary.mapping import (
    BinaryEncoding,
    decode_to_byte_blocks,
    encode_bytes_ids_parts,
    encode_bytes_parts,
)
from wwho.cli.id_input import parse_id_array, parse_ids
from wwho.cli.outputs import FORCE_HELP, IDS_INSTEAD, results_output, standard_input
from wwho.errors import CorpusError, TokenizerError, VocabError
from wwho.fileio import (
    MAX_FILE_ENV,
    max_file_bytes,
    parse_json,
    read_bytes,
    read_upto,
)

__all__ = ["add_decode_arguments", "add_encode_arguments", "inspect_tokenizer", "is_binary_tokenizer",
           "run_decode", "run_encode"]


def _add(p: argparse.ArgumentParser, *flags: str, **kwargs: Any) -> None:
    """Add an argument unless the parser already has it (by option string or positional dest)."""
    if flags[0].startswith("-"):
        if any(flag in p._option_string_actions for flag in flags):
            return
    elif any(action.dest == flags[0] for action in p._actions):
        return
    p.add_argument(*flags, **kwargs)


def add_encode_arguments(p: argparse.ArgumentParser) -> None:
    _add(p, "--tokenizer", required=True, help="tokenizer.json of a binary tokenizer")
    _add(p, "--binary", action="store_true", help="treat the input as raw bytes (binary tokenizer)")
    _add(p, "input", help="file to encode, or - for standard input")
    _add(p, "--specials", action="store_true",
         help="add the template's special tokens (<|start|> ... <|end|>)")
    _add(p, "--format", choices=("json", "table", "ids"), default="json",
         help="json: {ids, tokens (hex), offsets} (default); table: id, hex, start, end per line; "
              "ids: ids only, space separated")
    _add(p, "-o", "--output", help="write here instead of standard output (an existing file needs --force)")
    _add(p, "--force", action="store_true", help=FORCE_HELP)


def add_decode_arguments(p: argparse.ArgumentParser) -> None:
    _add(p, "--tokenizer", required=True, help="tokenizer.json of a binary tokenizer")
    _add(p, "--binary", action="store_true", help="write raw bytes (binary tokenizer)")
    _add(p, "ids", nargs="*", metavar="ID", help="token ids, or - (the default: none given) to read them from "
         "standard input (whitespace/comma separated, or the JSON from encode)")
    _add(p, "--keep-specials", action="store_true",
         help="binary tokenizers: write special tokens' names instead of dropping them (text tokenizers "
              "always write them)")
    _add(p, "-o", "--output", help="write here (default: standard output; an existing file needs --force)")
    _add(p, "--force", action="store_true", help=FORCE_HELP)


def read_standard_input(give: str | None = None) -> bytes:
    """All of standard input, up to the bound wwho reads from a file (``WWHO_MAX_FILE_BYTES``,
    :func:`wwho.fileio.max_file_bytes`): more (``/dev/zero``, an endless pipe) is a
    :class:`CorpusError` naming standard input and the bound, after reading one byte past it."""
    limit = max_file_bytes()
    stream = standard_input() if give is None else standard_input(give)
    parts: list[bytes] | None = None
    try:
        parts, total = read_upto(stream, limit)
        if total > limit:
            parts = None
            raise CorpusError(f"stdin: more than {limit:,} bytes, the most wwho reads from standard input "
                              f"(set {MAX_FILE_ENV} to read more, e.g. {MAX_FILE_ENV}={_size_text(2 * limit)})")
        return b"".join(parts)
    except MemoryError:
        parts = None  # (what was read is freed before the error is made)
        raise CorpusError(f"stdin: not enough memory to read it (wwho reads up to {limit:,} bytes, set by "
                          f"{MAX_FILE_ENV})") from None


def _size_text(n: int) -> str:
    """``n`` bytes as ``WWHO_MAX_FILE_BYTES`` takes it: ``4G``, ``512M``, ``2k`` or a number."""
    for suffix, shift in (("G", 30), ("M", 20), ("k", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def _read_input(name: str) -> bytes:
    if name == "-":
        return read_standard_input()
    if not os.path.lexists(name):
        raise CorpusError(f"{name}: cannot read: No such file or directory")
    # A regular file, up to wwho.fileio's bound (WWHO_MAX_FILE_BYTES): /dev/zero would never end; a
    # stream is given as - (standard input).
    return read_bytes(name, error=CorpusError, what="file to encode")


def run_encode(args: argparse.Namespace) -> int:
    output = results_output(args)
    tokenizer = load(args.tokenizer)
    if args.specials and tokenizer.post_processor is None:
        raise TokenizerError(f"{args.tokenizer}: has no template to add special tokens "
                             "(train with --with-template)")
    source = getattr(args, "file", None)  # wwho encode --file FILE: that file's bytes, not standard input
    if source and args.input is not None:  # (- too: standard input would be left unread)
        raise CorpusError("give the bytes to encode as --file FILE or as INPUT (or -), not both")
    name = source or args.input or "-"
    if name == args.input != "-" and not getattr(args, "binary", True) and not os.path.lexists(name):
        # `wwho encode --tokenizer BIN TEXT`: INPUT is text for the other kinds (its help says so).
        raise CorpusError(f"{name}: no such file: a binary tokenizer encodes the bytes of a file (--binary FILE, "
                          "or - for standard input), not text given on the command line; for text, "
                          "pipe it: printf '%s' TEXT | wwho encode --tokenizer ... --binary -")
    # ``wwho encode``'s --ids/--tokens/--json/--table (its --format is an alias of them), or this module's --format
    fmt = getattr(args, "show", None) or getattr(args, "format", None) or "json"
    if fmt == "npy" or getattr(args, "eot", None) is not None:
        raise CorpusError("--npy and --eot are for text tokenizers (one array of every line's ids); a binary "
                          "tokenizer writes --ids, --tokens, --json or --table")
    data = _read_input(name)
    specials = bool(args.specials)
    from wwho.cli.bars import file_progress

    # (a bar of the bytes encoded, where standard error is a terminal the results do not go to)
    with output as out, file_progress(name, verb="encoding", quiet=getattr(args, "quiet", False),
                                      output=getattr(args, "output", None)) as bar:
        # A part at a time (a batch of pieces): no list of every token's id, bytes, text or offsets.
        if fmt == "ids":  # the ids alone: no token bytes, offsets or hex strings (a tenth of the memory)
            parts = encode_bytes_ids_parts(tokenizer, data, add_special_tokens=specials, read=bar.update)
            _write_joined(out, (str(i) for ids in parts for i in ids), sep=" ")
            out.write(b"\n")
        else:
            write = {"tokens": _write_tokens, "table": _write_table, "json": _write_json}[fmt]
            write(out, encode_bytes_parts(tokenizer, data, add_special_tokens=specials, read=bar.update))
    return 0


def _shown(part: BinaryEncoding, show: Callable[[bytes], str], known: dict[int, str]) -> list[str]:
    """Each token of ``part`` as text: a special token's name, another's ``show(bytes)``, made
    once per id (``known``: bounded by the vocabulary)."""
    out = []
    for i, token, special in zip(part.ids, part.tokens, part.special_tokens_mask):
        if special:
            out.append(token.decode("utf-8"))
            continue
        text = known.get(i)
        if text is None:
            text = known[i] = show(token)
        out.append(text)
    return out


def _write_tokens(out: IO[bytes], parts: Iterable[BinaryEncoding]) -> None:
    """``--tokens``: every token readable (:func:`wwho.readable.readable`), one line, ``" | "`` between."""
    from wwho.readable import readable

    known: dict[int, str] = {}

    def texts() -> Iterator[str]:
        for part in parts:
            shown = _shown(part, readable, known)
            part = None  # (not held while the next one is made)
            yield from shown

    _write_joined(out, texts(), sep=" | ")
    out.write(b"\n")


def _write_table(out: IO[bytes], parts: Iterable[BinaryEncoding]) -> None:
    """``--table``: ``id, hex (a special token: its name), start, end`` per line, tab-separated."""
    known: dict[int, str] = {}
    for part in parts:
        shown = _shown(part, bytes.hex, known)
        out.write("".join(f"{i}\t{tok}\t{s}\t{e}\n" for i, tok, (s, e) in zip(part.ids, shown, part.offsets))
                  .encode("utf-8"))
        part = shown = None  # (not held while the next one is made)


def _write_json(out: IO[bytes], parts: Iterable[BinaryEncoding]) -> None:
    """``--json``: ``json.dumps({"ids", "tokens" (hex; a special token: its name), "offsets"})``.
    The ids are kept in an array (4 bytes a token) while the parts go by, and each id's hex and
    length once; the three lists are then written from them. A token covers the bytes after the one
    before it (a special token none: ``[0, 0]``), which the parts' offsets are checked to show."""
    ids = array("I")
    names: dict[int, str] = {}  # position -> a special token's name
    hexes: dict[int, str] = {}  # id -> its bytes in hex
    at = 0
    for part in parts:
        for k, (i, token, special, (start, end)) in enumerate(
                zip(part.ids, part.tokens, part.special_tokens_mask, part.offsets)):
            if special:
                names[len(ids) + k] = token.decode("utf-8")
                continue
            if i not in hexes:
                hexes[i] = token.hex()
            if (start, end) != (at, at + len(token)):  # (never, for a binary tokenizer's Latin-1 text)
                raise TokenizerError(f"token {len(ids) + k:,} covers bytes {start:,} to {end:,}, not the "
                                     f"{len(token)} after byte {at:,}: not a binary tokenizer's encoding")
            at = end
        ids.extend(part.ids)
        part = None  # (not held while the next one is made)
    out.write(b'{"ids": [')
    _write_joined(out, (str(i) for i in ids))
    out.write(b'], "tokens": [')
    _write_joined(out, (json.dumps(names[k]) if k in names else f'"{hexes[i]}"' for k, i in enumerate(ids)))
    out.write(b'], "offsets": [')

    def offsets() -> Iterator[str]:
        at = 0
        for k, i in enumerate(ids):
            if k in names:
                yield "[0, 0]"
            else:
                end = at + len(hexes[i]) // 2
                yield f"[{at}, {end}]"
                at = end

    _write_joined(out, offsets())
    out.write(b"]}\n")


def _write_joined(out: IO[bytes], texts: Iterable[str], *, sep: str = ", ", at_once: int = 65536) -> None:
    """``sep.join(texts)`` to ``out``, ``at_once`` texts at a time (never one string of them all)."""
    batch: list[str] = []
    first = True
    for text in texts:
        batch.append(text)
        if len(batch) == at_once:
            out.write((("" if first else sep) + sep.join(batch)).encode("utf-8"))
            batch, first = [], False
    if batch:
        out.write((("" if first else sep) + sep.join(batch)).encode("utf-8"))


def run_decode(args: argparse.Namespace) -> int:
    output = results_output(args)
    tokenizer = load(args.tokenizer)
    if args.ids == ["-"]:
        text = read_standard_input(IDS_INSTEAD).decode("utf-8", "surrogateescape")  # a stray byte is named
        try:
            ids = parse_id_array(text)  # 8 bytes an id; encode's JSON without its tokens and offsets
        except MemoryError:
            raise TokenizerError(f"stdin: not enough memory for the ids of its {len(text):,} characters "
                                 f"(wwho reads up to {max_file_bytes():,} bytes, set by {MAX_FILE_ENV})") from None
        del text
    else:
        ids = parse_ids(" ".join(args.ids), where="arguments")
    blocks = decode_to_byte_blocks(tokenizer, ids, skip_special=not getattr(args, "keep_specials", False))
    with output as out:
        for data in blocks:
            out.write(data)
    return 0


def _hex(token: str, limit: int = 32) -> str:
    raw = token.encode("latin-1")
    shown = raw[:limit].hex(" ")
    return shown + (f" ... ({len(raw)} bytes)" if len(raw) > limit else "")


def _ascii(token: str, limit: int = 32) -> str:
    return "".join(c if " " <= c <= "~" else "." for c in token[:limit])


def inspect_tokenizer(path: str | Path, *, top: int = 10) -> str:
    """A text report: vocabulary sizes, special tokens, template, first merges, longest tokens."""
    path = tokenizer_file(path)
    tokenizer = load(path)  # validates: readable, binary, loadable by HF
    data = parse_json(read_bytes(path, error=VocabError, what="tokenizer"), source=str(path), error=VocabError)
    vocab: dict[str, int] = data["model"]["vocab"]
    merges = data["model"].get("merges") or []
    added = sorted(data.get("added_tokens") or [], key=lambda t: t["id"])
    total = tokenizer.get_vocab_size(with_added_tokens=True)
    lines = [f"binary BPE tokenizer: {path}",
             f"vocabulary: {total:,} = {len(vocab):,} model (256 bytes + {len(merges):,} merges) "
             f"+ {len(added):,} added"]
    lengths = [len(tok) for tok in vocab]
    lines.append(f"token length: mean {sum(lengths) / len(lengths):.2f} bytes, max {max(lengths)} bytes")
    named = [t for t in added if not t["content"].startswith("<|reserved:")]
    reserved = [t for t in added if t["content"].startswith("<|reserved:")]
    lines.append("special tokens: " + (", ".join(f"{t['content']}={t['id']}" for t in named) or "none"))
    if reserved:
        lines.append(f"reserved: {len(reserved)} ({reserved[0]['content']}={reserved[0]['id']} .. "
                     f"{reserved[-1]['content']}={reserved[-1]['id']})")
    post = data.get("post_processor")
    if post and post.get("type") == "TemplateProcessing":
        def show(items: list[dict[str, Any]]) -> str:
            return " ".join(it["SpecialToken"]["id"] if "SpecialToken" in it else "$" + it["Sequence"]["id"]
                            for it in items)
        lines.append(f"template: single {show(post['single'])!r}, pair {show(post['pair'])!r}")
    else:
        lines.append(f"template: {post['type'] if post else 'none'}")
    lines.append(f"first {min(top, len(merges))} merges (hex):")
    for rank, merge in enumerate(merges[:top]):
        if not isinstance(merge, list):  # the pre-0.20 "a b" form is ambiguous when a byte is a space
            lines.append(f"  {rank:>6}: {merge!r}")
            continue
        left, right = merge
        lines.append(f"  {rank:>6}: {_hex(left)} + {_hex(right)} -> id {vocab.get(left + right, '?')}")
    lines.append(f"longest {min(top, len(vocab))} tokens:")
    for tok, i in sorted(vocab.items(), key=lambda kv: (-len(kv[0]), kv[1]))[:top]:
        lines.append(f"  id {i:>6}, {len(tok):>5} bytes: {_hex(tok)}  |{_ascii(tok)}|")
    return "\n".join(lines)

