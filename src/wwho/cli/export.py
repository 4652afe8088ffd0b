"""``wwho export hf PATH -o OUT [--verify CORPUS...]``: write the Hugging Face files of a vocabulary.

OUT gets ``vocab.json`` and the Hugging Face files as one save (as ``SGPETokenizer.save``), so
the files in it always belong together. With ``--verify``, the check runs on the files before they are
saved: an export that fails it, or a corpus that cannot be read, leaves OUT as it was.
"""

from __future__ import annotations

import argparse
import sys

from wwho.cli.options import text_field
from wwho.cli.outputs import SGPE_FILES, add_force, check_output_dir
from wwho.corpus import CorpusStats, iter_documents, resolve_paths
from wwho.export.verify import verify
from wwho.notices import plural
from wwho.savedir import check_target, save_files
from wwho.sgpe import SGPETokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("format", choices=["hf"], help="hf: tokenizer.json, tokenizer_config.json, special_tokens_map.json")
    p.add_argument("path", help="an SGPE vocab.json or its directory")
    p.add_argument("-o", "--out", "--output", dest="out", required=True,
                   help="output directory: gets vocab.json and the HF files (other files in it stay); "
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

    from wwho.errors import VocabError
    from wwho.export.meta_files import CONFIG_FILE

    p = Path(path)
    folder = p if p.is_dir() else p.parent
    if (folder / CONFIG_FILE).is_file():
        raise VocabError(f"{path}: is a meta vocabulary (o200k_base + SGPE); exporting its SGPE part alone would "
                         f"drop tiktoken's ids and the offset. To fix: load it in transformers with "
                         f"wwho.hf.WWHOTokenizer.from_pretrained({str(folder)!r}) (docs/meta.md), or export "
                         f"the SGPE vocabulary it was trained from")


def run(args: argparse.Namespace) -> int:
    from tokenizers import Tokenizer

    args.text_field = text_field(args.text_field, args.verify)
    out = check_output_dir(check_target(args.out), SGPE_FILES, force=args.force)
    refuse_meta(args.path)
    tok = SGPETokenizer.load(args.path)
    if tok.fallback != "bytes":
        from wwho.errors import VocabError

        raise VocabError(f"{args.path}: only byte-fallback vocabularies can be exported exactly (this one uses [UNK])")
    corpora = resolve_paths(args.verify) if args.verify else []  # a missing or unreadable corpus: before writing
    files = dict(tok.files())
    if args.verify:
        hf = Tokenizer.from_str(files["tokenizer.json"].decode("utf-8"))
        stats = CorpusStats()
        docs = iter_documents(corpora, text_field=args.text_field, skip_bad_lines=True, stats=stats)
        report = verify(tok, hf, docs, progress=not args.quiet, max_examples=10)
        print(report.summary())
        if stats.bad_lines:  # lines no text can be read from (invalid UTF-8, JSON): said, not silently left out
            print(f"wwho: warning: {plural(stats.bad_lines, 'corpus line')} not text, left out of the check "
                  f"(the first: {stats.first_bad[0] if stats.first_bad else '?'})", file=sys.stderr)
        if not report.ok:
            print(f"the export does NOT reproduce the native tokenizer; nothing was written to {out}",
                  file=sys.stderr)
            return 1
    save_files(out, files, kind="sgpe")
    paths = [out / name for name in ("vocab.json", "tokenizer.json", "tokenizer_config.json",
                                     "special_tokens_map.json")]
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0
