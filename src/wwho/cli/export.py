"""``wwho export hf PATH -o OUT [--verify CORPUS...]``: write the Hugging Face files of a vocabulary.

PATH is an SGPE vocabulary or a byte-level one (a wwho byte-level directory, a ``.tiktoken`` file,
a known encoding's name, a GGUF file). OUT gets the Hugging Face files (and an SGPE vocabulary's
``vocab.json``) as one save (as ``SGPETokenizer.save`` and ``ByteBPE.export_hf``), so the files in
it always belong together. With ``--verify``, the check runs on the files before they are
saved: an export that fails it, or a corpus that cannot be read, leaves OUT as it was.

It does not export a meta vocabulary (its SGPE part alone would give other ids: :func:`refuse_meta`
says what to use instead), nor a binary or Hugging Face tokenizer (already in that format), and it
does not train; the files are written by :mod:`wwho.export`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wwho.bytelevel.hf_files import hf_directory_files
from wwho.cli.encode import PATTERN_HELP, TIKTOKEN_FILE_HELP, use_tiktoken_file
from wwho.cli.options import output_path, path_argument, text_field
from wwho.cli.outputs import (
    BYTELEVEL_HF_FILES,
    SGPE_FILES,
    add_force,
    check_output_dir,
    printing,
    require_stdout,
)
from wwho.corpus import CorpusStats, iter_documents
from wwho.corpus_files import resolve_paths
from wwho.errors import VocabError, WwhoWarning, printable
from wwho.export.verify import verify
from wwho.kinds import KIND_NAMES
from wwho.loading import detect_kind, load_tokenizer
from wwho.notices import plural, warn
from wwho.savedir import check_target, save_files
from wwho.sgpe import SGPETokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("format", choices=["hf"], help="hf: tokenizer.json, tokenizer_config.json, special_tokens_map.json")
    p.add_argument("path", type=path_argument, help="an SGPE vocab.json or its directory, or a byte-level tokenizer: its directory, "
                   "a .tiktoken or .gguf file, or a known encoding such as o200k_base")
    p.add_argument("--tiktoken-file", metavar="PATH", help=TIKTOKEN_FILE_HELP)
    p.add_argument("--pattern", metavar="NAME|REGEX", help=PATTERN_HELP)
    p.add_argument("-o", "--out", "--output", dest="out", required=True, type=output_path,
                   help="output directory: gets the HF files (and an SGPE vocabulary's vocab.json; other files in "
                        "it stay); "
                        "if it already holds them, --force is needed")
    add_force(p)
    p.add_argument("--verify", nargs="+", metavar="CORPUS", help="encode these corpora with both and compare")
    p.add_argument("--text-field", default=None,
                   help="with --verify: the JSONL field holding the text (default 'text'; plain text files have none)")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars")


def refuse_meta(path: str) -> None:
    """A meta directory also holds an SGPE ``vocab.json``, but its ids are offset after tiktoken's:
    exporting that part alone would give other ids than the meta tokenizer, silently."""
    from pathlib import Path

    from wwho.export.meta_files import CONFIG_FILE

    p = Path(path)
    folder = p if p.is_dir() else p.parent
    if (folder / CONFIG_FILE).is_file():
        raise VocabError(f"{path}: is a meta vocabulary (o200k_base + SGPE); exporting its SGPE part alone would "
                         f"drop tiktoken's ids and the offset. To fix: load it in transformers with "
                         f"wwho.hf.WWHOTokenizer.from_pretrained({str(folder)!r}) (docs/meta.md), or export "
                         f"the SGPE vocabulary it was trained from")


def _kind(args: argparse.Namespace) -> str:
    """What is exported (``"sgpe"`` or ``"bytelevel-hf"``, the kind of save), found without loading it;
    what cannot be exported is refused here, before any work."""
    try:
        kind = detect_kind(args.path)
    except VocabError:
        if Path(args.path).is_dir():  # a folder of no tokenizer: the detection says what it expected
            raise
        kind = "sgpe"  # SGPETokenizer.load says what is wrong with the file
    if kind in ("bytelevel", "gguf"):
        return "bytelevel-hf"
    if kind in ("binary", "hf"):
        raise VocabError(f"{args.path}: is {KIND_NAMES[kind]}, already Hugging Face's format: "
                         "tokenizers.Tokenizer.from_file and AutoTokenizer read it as it is")
    refuse_meta(args.path)
    if args.pattern is not None:
        raise VocabError("--pattern is for a .tiktoken file of your own or a GGUF file without "
                         "tokenizer.ggml.pre; an SGPE vocabulary names its own pre-tokenizer")
    return "sgpe"


def _load(args: argparse.Namespace, kind: str):
    use_tiktoken_file(args)  # (an SGPE vocabulary reads none: the flag's warning says it was not used)
    if kind == "bytelevel-hf":
        return load_tokenizer(args.path, pattern=args.pattern)
    tok = SGPETokenizer.load(args.path)
    if tok.fallback != "bytes":
        raise VocabError(f"{args.path}: only byte-fallback vocabularies can be exported exactly (this one uses [UNK])")
    return tok


def run(args: argparse.Namespace) -> int:
    from tokenizers import Tokenizer

    require_stdout()  # what was written is said there: closed, it is an error before any file is written
    args.text_field = text_field(args.text_field, args.verify)
    kind = _kind(args)
    names = SGPE_FILES if kind == "sgpe" else BYTELEVEL_HF_FILES
    out = check_output_dir(check_target(args.out), names, force=args.force)
    tok = _load(args, kind)
    corpora = resolve_paths(args.verify) if args.verify else []  # a missing or unreadable corpus: before writing
    files = dict(tok.files()) if kind == "sgpe" else hf_directory_files(tok.model)
    if args.verify:
        hf = Tokenizer.from_str(files["tokenizer.json"].decode("utf-8"))
        stats = CorpusStats()
        docs = iter_documents(corpora, text_field=args.text_field, skip_bad_lines=True, stats=stats)
        report = verify(tok, hf, docs, progress=not args.quiet, max_examples=10)
        with printing():  # the report is the result: written (or its failure said) before any file is
            print(report.summary())
        note = report.special_text_note()
        if note:
            warn(note, WwhoWarning)
        if not report.lines:  # a gate that checked nothing (an empty file, a wrong --text-field) must not pass
            from wwho.errors import CorpusError

            why = []
            if stats.bad_lines:
                first = f", the first {stats.first_bad[0]}" if stats.first_bad else ""
                why.append(f"{plural(stats.bad_lines, 'line')} not text{first}")
            if report.skipped_surrogates:
                why.append(f"{plural(report.skipped_surrogates, 'line')} with lone surrogates")
            raise CorpusError(f"--verify: no line of {', '.join(map(str, corpora))} could be checked "
                              f"({', '.join(why) or 'no text in it'}; with JSONL, is --text-field right?): nothing "
                              f"was written to {out}")
        if stats.bad_lines:  # lines no text can be read from (invalid UTF-8, JSON): said, not silently left out
            print(f"wwho: warning: {plural(stats.bad_lines, 'corpus line')} not text, left out of the check "
                  f"(the first: {stats.first_bad[0] if stats.first_bad else '?'})", file=sys.stderr)
        if not report.ok:
            print(f"the export does NOT reproduce the native tokenizer; nothing was written to {out}",
                  file=sys.stderr)
            return 1
    save_files(out, files, kind=kind)
    paths = [out / name for name in names]
    with printing():
        print(f"wrote {', '.join(printable(str(p)) for p in paths)}")
    return 0
