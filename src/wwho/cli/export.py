"""``wwho export hf PATH -o OUT [--verify CORPUS...]``: write the Hugging Face files of a vocabulary.

OUT gets ``vocab.json`` and the Hugging Face files as one save (as ``SGPETokenizer.save``), so
the files in it always belong together.
"""

from __future__ import annotations

import argparse
import sys

from wwho.corpus import iter_documents
from wwho.export.verify import verify
from wwho.savedir import check_target
from wwho.sgpe import SGPETokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("format", choices=["hf"], help="hf: tokenizer.json, tokenizer_config.json, special_tokens_map.json")
    p.add_argument("path", help="an SGPE vocab.json or its directory")
    p.add_argument("-o", "--out", required=True,
                   help="output directory: gets vocab.json and the HF files, replacing them if present "
                        "(other files in it stay)")
    p.add_argument("--verify", nargs="+", metavar="CORPUS", help="encode these corpora with both and compare")
    p.add_argument("--text-field", default="text")
    p.add_argument("--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    from tokenizers import Tokenizer

    tok = SGPETokenizer.load(args.path)
    if tok.fallback != "bytes":
        from wwho.errors import VocabError

        raise VocabError(f"{args.path}: only byte-fallback vocabularies can be exported exactly (this one uses [UNK])")
    out = check_target(args.out)
    tok.save(out)
    paths = [out / name for name in ("vocab.json", "tokenizer.json", "tokenizer_config.json",
                                     "special_tokens_map.json")]
    print(f"wrote {', '.join(str(p) for p in paths)}")
    if not args.verify:
        return 0
    hf = Tokenizer.from_file(str(out / "tokenizer.json"))
    docs = iter_documents(args.verify, text_field=args.text_field, skip_bad_lines=True)
    report = verify(tok, hf, docs, progress=not args.quiet, max_examples=10)
    print(report.summary())
    if not report.ok:
        print("the export does NOT reproduce the native tokenizer", file=sys.stderr)
        return 1
    return 0
