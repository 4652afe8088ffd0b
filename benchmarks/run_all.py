"""Run every benchmark side by side with the peers, in one run, and write docs/benchmarks.md.

    python benchmarks/run_all.py [--only NAME ...] [--skip NAME ...] [--out docs/benchmarks.md]

Each benchmark is a script of this folder, run in its own process; its output (which
already prints us vs peer with ratios) goes into the report verbatim, under the machine,
the library versions and the data used. Comparison tokenizers (HF BPE, SentencePiece) are
trained on the same data by bench_train.py and cached under .cache/. Then ``wwho eval``
compares everything on the FLORES devtest of Sinhala and Hindi (parity against English) and
draws docs/img/eval-si.png and docs/img/eval-hi.png. Peers that are not installed are skipped
with a message.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import shlex
import subprocess
import sys
import time
from pathlib import Path

from _measure import CORPORA, DATA, HI_TRAIN, O200K_FILE, ROOT, machine, require

HERE = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "bench_train"
BENCHMARKS = {
    "syllables-si": ("Syllabification speed, Sinhala news", ["bench_syllables.py"]),
    "syllables-hi": ("Syllabification speed, Devanagari (Hindi, Marathi, Nepali, Sanskrit)",
                     ["bench_syllables.py", "--script", "devanagari", "--spec-mb", "2",
                      *(str(p) for lang in ("hi", "mr", "ne", "sa") for p in sorted((CORPORA / lang).glob("*.txt")))]),
    "train-si": ("SGPE training vs HF tokenizers and SentencePiece, Sinhala news, vocabulary 32,000",
                 ["bench_train.py"]),
    "train-hi": ("SGPE training vs peers, Hindi (TICO-19, WMT14, Tatoeba, classical), vocabulary 32,000",
                 ["bench_train.py", "--script", "devanagari", "--tag", "hi", "--eval",
                  str(CORPORA / "hi" / "flores200-devtest.txt"), *map(str, HI_TRAIN)]),
    "compression": ("SGPE compression vs peers on the same text, and where the ids and tokens go (8k, 32k, 64k)",
                    ["bench_compression.py", "--sweep"]),
    "encode": ("Encoding speed on held-out Sinhala", ["bench_encode.py"]),
    "batch": ("encode_batch on 1 and 2 threads, SGPE and byte-level, batches of 6-15 MB", ["bench_batch.py"]),
    "engine": ("The merge engine alone (SGPE input from all the Sinhala news)",
               ["bench_engine.py", "--all-news", "--reference"]),
    "bytelevel": ("Byte-level BPE: tiktoken-exact and GGUF encoders, and training vs HF",
                  ["bench_bytelevel.py", "--train"]),
    "peers": ("Byte-level o200k_base against every exact peer", ["bench_peers.py"]),
    "calls": ("What one call costs: each entry point on a tiny input, against tiktoken and HF tokenizers",
              ["bench_calls.py"]),
    "meta": ("Meta tokenizer (o200k_base + SGPE) on code-switched text", ["bench_meta.py"]),
    "npy": ("A corpus as one array of ids: wwho encode --npy against nanoGPT's way with tiktoken",
            ["bench_npy.py"]),
    "extend": ("Extending Llama 3, Qwen2 and o200k_base with Sinhala or Devanagari syllables (`wwho extend`)",
               ["bench_extend.py"]),
    # 40 MB, not the 200 MB: HF's BpeTrainer needs about 80 bytes of memory per input byte
    # (measured), so 200 MB would need ~20 GB on a 24 GiB machine.
    "binary": ("Binary BPE on system binaries (40 MB of ELF files)", ["bench_binary.py", "--mb", "40", "--runs", "wwho,hf"]),
    # Prints Markdown tables and a plot link: included as is, not as a code block.
    "scripts": ("Every Indic script: SGPE vs SentencePiece, HF BPE, o200k_base, Llama 3, Qwen2 on FLORES-200 devtest",
                ["bench_scripts.py"]),
    "languages": ("Every Indic language: SGPE vs SentencePiece and HF BPE, word-bounded and across spaces",
                  ["bench_languages.py"]),
    "languages-spaces": ("Every Indic language on FLORES as SentencePiece normalizes its whitespace",
                         ["bench_languages.py", "--split", "flores-spaces"]),
    "languages-domain": ("Every Indic language on text of another domain than the training text",
                         ["bench_languages.py", "--split", "domain", "--sizes", "8000"]),
    "sweep": ("Vocabulary-size sweep, Sinhala and Hindi, SGPE vs SentencePiece BPE",
              ["bench_languages.py", "--sweep", "--plot", str(ROOT / "docs" / "img" / "sweep.png")]),
    "serve": ("`wwho serve`: 10,000 characters with three tokenizers, server and page (headless Chromium)",
              ["bench_serve.py"]),
}
MARKDOWN_OUTPUT = {"scripts", "serve", "languages", "languages-spaces", "languages-domain", "sweep"}


def versions() -> str:
    out = [f"Python {sys.version.split()[0]}"]
    for name in ("wwho", "regex", "tiktoken", "tokenizers", "sentencepiece", "transformers", "numpy"):
        try:
            out.append(f"{name} {md.version(name)}")
        except md.PackageNotFoundError:
            out.append(f"{name} (not installed)")
    return ", ".join(out)


def shown(cmd: list[str]) -> str:
    """The command a section quotes: ``python benchmarks/SCRIPT ARGS``, every argument that was run,
    as typed from the repository: the shared data's paths as ``$WWHO_SHARED_DATA/...``, the
    repository's relative to it, and all the ``*.txt`` files of a folder (sorted, as BENCHMARKS
    lists them) as ``FOLDER/*.txt``, so that a section's line says what ran without a screenful of
    machine-specific paths."""

    def short(arg: str) -> str:
        path = Path(arg)
        if path.is_absolute() and path.is_relative_to(DATA):
            return "$WWHO_SHARED_DATA/" + shlex.quote(path.relative_to(DATA).as_posix())
        if path.is_absolute() and path.is_relative_to(ROOT):
            return shlex.quote(path.relative_to(ROOT).as_posix())
        return shlex.quote(arg)

    words, i = [f"benchmarks/{cmd[0]}"], 1
    while i < len(cmd):
        folder = Path(cmd[i]).parent
        every = [str(p) for p in sorted(folder.glob("*.txt"))] if Path(cmd[i]).is_absolute() else []
        if len(every) > 1 and cmd[i : i + len(every)] == every:
            words.append(short(str(folder)) + "/*.txt")
            i += len(every)
        else:
            words.append(short(cmd[i]))
            i += 1
    return "python " + " ".join(words)


def run(args: list[str], cwd: Path = HERE) -> tuple[str, float, int]:
    import os

    env = dict(os.environ)
    if O200K_FILE.is_file():  # tiktoken offline: the verified ranks file of the shared data
        env.setdefault("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env)
    text = proc.stdout + (f"\n[stderr]\n{proc.stderr[-2000:]}" if proc.returncode else "")
    if not proc.returncode:  # a benchmark skipped for want of data says so on stderr (_measure.skip)
        text += "".join(f"{line}\n" for line in proc.stderr.splitlines() if line.startswith("skipped:"))
    return text, time.perf_counter() - t0, proc.returncode


def eval_section(report: list[str]) -> None:
    rel = lambda p: str(p.relative_to(ROOT))  # noqa: E731  (short names in the table)
    report += ["## Tokenizers compared on FLORES-200 devtest (`wwho eval`)", "",
               "Every vocabulary at 32,000 tokens, trained on the same text per language (`si-*`: the Sinhala "
               "news; `hi-*`: the Hindi training files above); o200k_base is GPT-4o's (200,019 tokens). Parity: "
               "tokens relative to the same tokenizer on the aligned English lines.", ""]
    for lang in ("si", "hi"):
        specs = [rel(p) for p in [CACHE / f"{lang}-wwho-32000"] if p.exists()]
        specs += ["tiktoken:o200k_base"]
        specs += [f"hf:{rel(p)}" for p in [CACHE / f"{lang}-hf-32000.json", CACHE / f"{lang}-hfmeta-32000.json"]
                  if p.exists()]
        specs += [f"spm:{rel(p)}" for p in [CACHE / f"{lang}-spm-32000.model"] if p.exists()]
        img = ROOT / "docs" / "img" / f"eval-{lang}.png"
        img.parent.mkdir(parents=True, exist_ok=True)
        cmd = ["-m", "wwho", "eval", "--quiet", "--markdown", "--corpus", str(CORPORA / lang / "flores200-devtest.txt"),
               "--tokenizer", *specs, "--parity-with", str(CORPORA / "en" / "flores200-devtest.txt"), "--plot", str(img),
               "--force"]  # the plot is this report's own, made again on every run
        text, seconds, code = run(cmd, cwd=ROOT)
        report += [text.strip(), "", f"![{lang} metrics](img/eval-{lang}.png)", ""]
        print(text)


def merge_sections(old: str, new: str) -> str:
    """The old report with the sections of the new one replaced (``--only`` reruns a few benchmarks)."""
    import re

    def split(text: str) -> tuple[str, dict[str, str]]:
        parts = re.split(r"(?m)^(?=## )", text)
        key = lambda part: re.sub(r" \(FAILED.*", "", part.splitlines()[0])  # noqa: E731
        return parts[0], {key(p): p for p in parts[1:]}

    head, sections = split(old)
    _, fresh = split(new)
    sections.update(fresh)
    return head + "".join(sections.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help=f"benchmarks to run: {' '.join(BENCHMARKS)} eval")
    ap.add_argument("--skip", nargs="*", default=[])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    require(CORPORA)
    chosen = [n for n in BENCHMARKS if (not args.only or n in args.only) and n not in args.skip]
    report = [
        "# Benchmarks", "",
        "Written by `python benchmarks/run_all.py` (`make bench`). Every figure in a section was measured in one "
        "run, peers on the same data in the same run. A full run writes every generated section (its title, the "
        "command and how long it took); `--only` replaces just the sections it reruns; a section whose title "
        "names a build (`build abc1234`) was recorded by hand for that build, with its date, command and the "
        "machine's load. So sections can come from different builds: read each one's own build and date. The "
        "README's results link to the newest section of each kind.", "",
        "The last full run:", "",
        f"- machine: {machine()}",
        f"- versions: {versions()}",
        "- data: public corpora (FLORES-200, TICO-19, NTREX-128, news text), llama.cpp's GGUF vocabulary files "
        "and tiktoken's o200k_base, in the folder `WWHO_SHARED_DATA` names; corpora as listed in each section", "",
    ]
    for name in chosen:
        title, cmd = BENCHMARKS[name]
        if not (HERE / cmd[0]).exists():
            print(f"{name}: skipped ({cmd[0]} is missing)")
            continue
        print(f"== {name}: {title}", flush=True)
        text, seconds, code = run(cmd)
        print(text, flush=True)
        status = "" if code == 0 else f" (FAILED, exit code {code})"
        body = [text.strip()] if name in MARKDOWN_OUTPUT and not code else ["```", text.strip(), "```"]
        report += [f"## {title}{status}", "", f"`{shown(cmd)}` ({seconds:.0f} s)", "",
                   *body, ""]
    if not args.only or "eval" in args.only:
        eval_section(report)
    text = "\n".join(report) + "\n"
    if args.only and args.out.exists():
        text = merge_sections(args.out.read_text(encoding="utf-8"), text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
