"""``wwho eval --corpus FILE... --tokenizer SPEC...``: compare tokenizers on corpora.

Prints a table (default), ``--markdown``, or ``--json`` (schema: ``wwho/data/eval.schema.json``,
documented in ``docs/eval.md``); ``--plot out.png`` draws one bar chart per metric
(needs matplotlib). SPECs: see :mod:`wwho.eval_specs`.

The metrics are measured by :mod:`wwho.evaluate`; this module only reads the options and
formats the results. It does not train, save or change any tokenizer, and writes no file but the
--plot image.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from wwho.cli.encode import PATTERN_HELP, TIKTOKEN_FILE_HELP, use_tiktoken_file
from wwho.cli.outputs import (
    add_force,
    check_output_file,
    printing,
    refuse_output_among_inputs,
    require_stdout,
)
from wwho.cli.train_sgpe import LINE_BYTES, LINE_HELP
from wwho.corpus import MAX_LINE_BYTES
from wwho.errors import WwhoError, printable

if TYPE_CHECKING:
    from wwho.evaluate import Metrics

COLUMNS = [
    ("tokens/word", "fertility", "{:.3f}"),
    ("bytes/token", "bytes_per_token", "{:.2f}"),
    ("chars/token", "chars_per_token", "{:.2f}"),
    ("in-cluster cuts", "cluster_cut_rate", "{:.2%}"),
    ("in-syllable cuts", "syllable_cut_rate", "{:.2%}"),
    ("known-syllable cuts", "known_syllable_cuts", "{:,}"),
    ("fallback/UNK", "fallback_rate", "{:.2%}"),
    ("lossless", "lossless_rate", "{:.1%}"),
    ("ids used", "vocab_used", "{:,}"),
    ("parity", "parity", "{:.2f}"),
]
PLOTTED = ["fertility", "bytes_per_token", "cluster_cut_rate", "syllable_cut_rate", "fallback_rate",
           "lossless_rate", "parity"]
#: metrics that are shares: plotted as percentages, as the table prints them
RATES = {"cluster_cut_rate", "syllable_cut_rate", "fallback_rate", "lossless_rate"}
UNMEASURED = "n/m"  # written where a bar would be for a value that was not measured
#: The most bars (corpora x tokenizers) a --plot draws: its width grows with them.
MAX_PLOT_BARS = 120


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", nargs="+", required=True, help="corpora, one document per line: text files, folders, .gz/.bz2/.xz, .jsonl (its text field)")
    p.add_argument("--tokenizer", nargs="+", required=True,
                   help="wwho files/directories, tiktoken:NAME (or just NAME, e.g. o200k_base), hf:PATH, spm:MODEL")
    p.add_argument("--parity-with", help="line-aligned reference corpus, e.g. en/flores200-devtest.txt; the parity "
                   "column is the larger token count of the two over the smaller: 1.00 is parity, lower is better")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true", help="print a Markdown table")
    out.add_argument("--json", action="store_true", help="print JSON (see docs/eval.md)")
    p.add_argument("--plot", metavar="PNG", help="write bar charts of the metrics (needs matplotlib; "
                   "an existing file needs --force)")
    add_force(p)
    p.add_argument("--pattern", metavar="NAME|REGEX", help=PATTERN_HELP)
    p.add_argument("--text-field", default=None,
                   help="JSONL field holding the text (default 'text'); given, every corpus file must be "
                        "JSONL by its name (.jsonl, .ndjson)")
    p.add_argument("--tiktoken-file", metavar="PATH", help=TIKTOKEN_FILE_HELP)
    p.add_argument("--max-line-bytes", type=LINE_BYTES, default=MAX_LINE_BYTES, metavar="BYTES",
                   help=LINE_HELP.split(";")[0] + "; a longer line is an error")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from wwho.evaluate import evaluate_all  # here: `wwho --version` does without wwho.evaluate

    require_stdout()  # closed: said before the work, not after
    from wwho.cli.options import text_field

    args.text_field = text_field(args.text_field, [*args.corpus, *filter(None, [args.parity_with])])
    if args.plot:
        bars = len(args.corpus) * len(args.tokenizer)
        if bars > MAX_PLOT_BARS:  # the image grows with them, and its memory (docs/eval.md)
            raise WwhoError(f"--plot draws a bar for each corpus and tokenizer: {len(args.corpus):,} x "
                            f"{len(args.tokenizer):,} is {bars:,} bars, more than the {MAX_PLOT_BARS} one image "
                            "shows; plot fewer at a time, or plot the --json output yourself")
        if Path(args.plot).suffix.lower() != ".png":  # (PNG bytes under another name, before)
            raise WwhoError(f"--plot {printable(args.plot)}: the plot is a PNG image; give a file name ending in "
                            ".png, such as plot.png")
        check_output_file(args.plot, force=args.force, flag="--plot", example="plot.png")
        # (hf:PATH and spm:MODEL name a file too)
        specs = [spec.split(":", 1)[1] if spec.startswith(("hf:", "spm:")) else spec for spec in args.tokenizer]
        refuse_output_among_inputs(args.plot, [*args.corpus, *filter(None, [args.parity_with]), *specs],
                                   flag="--plot")
    use_tiktoken_file(args)
    try:
        results = evaluate_all(tiktoken_specs(args.tokenizer), args.corpus, parity_with=args.parity_with,
                               progress=not args.quiet, max_line_bytes=args.max_line_bytes, pattern=args.pattern,
                               text_field=args.text_field)
    except WwhoError as exc:
        raise one_line(exc) from None
    if args.plot:  # first: a plot that cannot be written is an error with nothing printed
        plot(results, args.plot)
    with printing():
        if args.json:
            # ASCII: a path that is no UTF-8 (bytes kept as surrogates) is then still valid JSON
            print(json.dumps(to_json(results, args.parity_with), indent=1))
        else:
            print(table(results, markdown=args.markdown))
    return 0


def one_line(exc: WwhoError) -> WwhoError:
    """``exc`` with the unprintable characters of its message escaped: the readers and loaders it
    comes from name paths as given, and a path may hold a line end."""
    from wwho.errors import printable

    message = str(exc)
    safe = printable(message)
    if safe == message:
        return exc
    try:
        return type(exc)(safe)
    except TypeError:  # an error class of other arguments
        return WwhoError(safe)


def tiktoken_specs(specs: list[str]) -> list[str]:
    """The specs with a bare known encoding (``o200k_base``, no such path) spelled ``tiktoken:o200k_base``,
    as ``wwho encode`` takes both spellings."""
    from wwho.bytelevel.files import known_encoding_name

    given: dict[str, str] = {}  # each spelling -> the spec it was first given as
    out = []
    for spec in specs:
        name = None if spec.startswith("tiktoken:") else known_encoding_name(spec)
        spelled = f"tiktoken:{name}" if name else spec
        first = given.setdefault(spelled, spec)
        if first != spec:  # (two spellings: named as given; one spelling twice is evaluate_all's to refuse)
            raise WwhoError(f"tokenizer {printable(spec)} is given twice (as {printable(first)}): give each "
                            "tokenizer once")
        out.append(spelled)
    return out


def to_json(results: list[Metrics], parity_with: str | None) -> dict:
    return {"format": "wwho-eval/1", "parity_with": parity_with, "results": [m.to_json() for m in results]}


def short_names(corpora: Iterable[str]) -> dict[str, str]:
    """Each corpus as ``lang/file.txt``, its file name with its folder (corpora of several languages
    share names), and with more of its folders where two corpora would read the same (``a/si/x.txt``
    and ``b/si/x.txt``: their rows could not be told apart)."""
    parts = {c: Path(c).parts for c in dict.fromkeys(corpora)}

    def tail(c: str, k: int) -> str:
        return Path(*parts[c][-k:]).as_posix() if parts[c] else c

    names = {}
    for corpus in parts:
        k = 2
        while k < len(parts[corpus]) and any(tail(o, k) == tail(corpus, k) for o in parts if o != corpus):
            k += 1
        names[corpus] = tail(corpus, k)
    return names


def _cell(m: Metrics, attr: str, fmt: str) -> str:
    value = getattr(m, attr)
    text = "-" if value is None else _share(value, fmt) if attr in RATES else fmt.format(value)
    if attr in ("cluster_cut_rate", "syllable_cut_rate") and m.unmeasured_lines:
        text += f" ({m.unmeasured_lines} unmeasured lines)"
    return text


def _share(value: float, fmt: str) -> str:
    """A share as ``fmt`` prints it, except that one that is not all or nothing never reads as if it
    were (a share just under 1 would print 100.0%): ``>99.9%``, ``<0.01%``."""
    text = fmt.format(value)
    if 0 < value < 1:
        smallest = fmt.format(0)[:-2] + "1%"  # "0.0%" -> "0.1%": the last digit shown
        if text == fmt.format(1):
            return ">" + fmt.format(1 - float(smallest[:-1]) / 100)
        if text == fmt.format(0):
            return "<" + smallest
    return text


def table(results: list[Metrics], *, markdown: bool = False) -> str:
    """The rows of ``results``; names with control characters (a line end) are printed escaped."""
    from wwho.errors import printable

    header = ["tokenizer", "corpus", *(c[0] for c in COLUMNS)]
    names = short_names(m.corpus for m in results)
    rows = [[printable(m.tokenizer), printable(names[m.corpus]), *(_cell(m, a, f) for _, a, f in COLUMNS)]
            for m in results]
    if markdown:  # a | in a name would end its cell
        cell = lambda c: c.replace("\\", "\\\\").replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 2 + "---:|" * len(COLUMNS)]
        lines += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    fmt = lambda r: "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


def plot_series(results: list[Metrics]) -> list[tuple[str, dict[str, list[float | None]]]]:
    """What :func:`plot` draws: ``(title, {tokenizer: value per corpus})`` per chart. Rates are in
    percent (``(%)`` in the title, as in the table); a value that was not measured is None (drawn
    as "n/m", never as a zero bar); a cut rate measured on only some lines says so in its title."""
    tokenizers = list(dict.fromkeys(m.tokenizer for m in results))
    corpora = list(dict.fromkeys(m.corpus for m in results))
    by_key = {(m.tokenizer, m.corpus): m for m in results}
    titles = {a: t for t, a, _ in COLUMNS}
    out = []
    for attr in PLOTTED:
        if not any(getattr(m, attr) is not None for m in results):
            continue
        values: dict[str, list[float | None]] = {}
        for name in tokenizers:
            row: list[float | None] = []
            for corpus in corpora:
                m = by_key.get((name, corpus))
                v = None if m is None else getattr(m, attr)
                row.append(None if v is None else (100 * v if attr in RATES else v))
            values[name] = row
        title = titles[attr] + (" (%)" if attr in RATES else "")
        if attr in ("cluster_cut_rate", "syllable_cut_rate") and any(m.unmeasured_lines for m in results):
            title += "\n(lines some tokenizers cannot place are not measured)"  # (two lines: one is too wide)
        out.append((title, values))
    return out


def _label(name: str) -> str:
    """A corpus or tokenizer name as matplotlib draws it: unprintable characters and bytes that are no
    UTF-8 (kept as surrogates) escaped, and ``$`` escaped, which matplotlib reads as mathtext."""
    return printable(name).encode("utf-8", "backslashreplace").decode("utf-8").replace("$", r"\$")


def series_colors(n: int) -> list:
    """A color for each of ``n`` tokenizers, all different: matplotlib's default cycle repeats after
    ten, which made two tokenizers' bars and legend entries alike."""
    from matplotlib import colormaps

    if n <= 20:
        palette = colormaps["tab10" if n <= 10 else "tab20"]
        return [palette(k) for k in range(n)]
    return [colormaps["turbo"](k / (n - 1)) for k in range(n)]


def plot(results: list[Metrics], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from wwho.errors import WwhoError

        raise WwhoError("--plot needs matplotlib (pip install 'wwho[plot]')") from None
    series = plot_series(results)
    tokenizers = list(dict.fromkeys(m.tokenizer for m in results))
    corpora = list(dict.fromkeys(m.corpus for m in results))
    names = short_names(corpora)
    fig, axes = plt.subplots(len(series), 1, figsize=(max(6, 1.6 * len(corpora) * max(1, len(tokenizers)) / 2),
                                                      2.6 * len(series)), squeeze=False)
    width = 0.8 / max(1, len(tokenizers))
    colors = series_colors(len(tokenizers))
    for ax, (title, values_by_tokenizer) in zip(axes[:, 0], series):
        for k, name in enumerate(tokenizers):
            xs = [i + k * width for i in range(len(corpora))]
            values = values_by_tokenizer[name]
            ax.bar(xs, [0 if v is None else v for v in values], width, label=_label(name), color=colors[k])
            for x, v in zip(xs, values):
                if v is None:  # no bar is not a zero: say it
                    ax.text(x, 0, UNMEASURED, ha="center", va="bottom", fontsize=6, rotation=90)
        ax.set_title(title)
        ax.set_xticks([i + width * (len(tokenizers) - 1) / 2 for i in range(len(corpora))])
        ax.set_xticklabels([_label(names[c]) for c in corpora], fontsize=7)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    from wwho.atomic_write import atomic_open

    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", dpi=110)
    plt.close(fig)
