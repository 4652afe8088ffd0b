"""Fuzz every loader with mutated copies of real saved files, and count what happens.

    python fuzz/loaders.py [--seconds 300] [--seed 0] [--memory-limit-gb 4]

Seeds are files wwho really wrote (or reads): an SGPE directory, a meta directory, byte-level
directories (merges rule with ``tokenizer.json``, ranks rule), a custom ``.tiktoken`` and
o200k_base's, an HF byte-level ``tokenizer.json``, a binary ``tokenizer.json``, GGUF files
(llama.cpp's GPT-2 vocabulary and a small written one), the bundled schemas, an SGPE
checkpoint and a TOML config. Each directory is a seed twice: as saved (with its manifest) and
without ``wwho-manifest.json`` (as an older wwho or a hand-made directory), so that content
validation is tested and not only the manifest.

Hypothesis draws a seed, a file of it and a mutation (bytes flipped, inserted, deleted; a cut
at any byte or at a line end; lines dropped, duplicated, swapped; a JSON value replaced by
2**63, -1, true, "abc", [], {}, deep nesting; a key deleted or repeated; a list cut short; an
id set to a duplicate; a file swapped for another save's), then runs the loader. Outcomes:

* **clean error**: a :class:`wwho.WwhoError` with a one-line message;
* **traceback**: any other exception (also after loading, in a short encode/decode);
* **wrong load**: the loader accepted a mutation it must refuse (a merge list or ranks file cut
  short, a duplicate or out-of-range id, files of two saves mixed, an edit under a manifest);
* **loaded**: the mutation gave another valid file (a token string changed, whitespace...);
* **loaded, warned**: so, with a :class:`wwho.errors.WwhoWarning` (a file the loader does not read,
  changed since the save: ``ChangedFileWarning``); wwho's warnings are counted, not printed;
* **timeout**: a case took more than 20 s.

Memory: the process's peak RSS, and the largest rise of it during one case. An address-space
limit (``--memory-limit-gb``) turns a runaway allocation into a MemoryError (a traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
# The shared data folder: $WWHO_SHARED_DATA, else ../shared/data beside the repository.
DATA = Path(os.environ.get("WWHO_SHARED_DATA") or ROOT.parent / "shared" / "data")
O200K_FILE = DATA / "tiktoken" / "o200k_base.tiktoken"
SAMPLE = ROOT / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
GPT2_GGUF = DATA / "gguf-vocab" / "ggml-vocab-gpt-2.gguf"
TEXTS = ["ශ්‍රී ලංකාව 2024", "Hello, world! 🏏", "नमस्ते दुनिया", " \t\n"]
MANIFEST = "wwho-manifest.json"
CASE_SECONDS = 20


@dataclass
class Seed:
    name: str
    path: Path  # a directory or a file
    load: object  # path -> loaded object
    files: list[str]  # the files of a directory seed that may be mutated ([] for a file seed)
    other: Path | None = None  # the same kind from another save, for mixing
    manifest: bool = False  # a saved directory with its manifest: any change to a listed file must be refused
    reads: tuple[str, ...] = ()  # the files of a directory its loader reads (without a manifest, only these count)
    unread: tuple[str, ...] = ()  # listed files its loader never reads: a change is a warning (manifest.check_saved)
    refuses: frozenset[str] | None = None  # the mutations its loader must refuse (None: MUST_REFUSE)


@dataclass
class Tally:
    tried: int = 0
    outcomes: Counter = field(default_factory=Counter)
    by_seed: dict = field(default_factory=dict)
    examples: dict = field(default_factory=dict)  # outcome -> a few (seed, mutation, error)
    peak_rise_mb: float = 0.0
    peak_rise_case: str = ""

    def add(self, seed: str, mutation: str, outcome: str, detail: str = "") -> None:
        self.tried += 1
        self.outcomes[outcome] += 1
        self.by_seed.setdefault(seed, Counter())[outcome] += 1
        if outcome in ("traceback", "wrong load", "timeout", "multi-line error"):
            self.examples.setdefault(outcome, [])
            if len(self.examples[outcome]) < 30:
                self.examples[outcome].append(f"{seed} / {mutation}: {detail}")


# --- seeds --------------------------------------------------------------------------------------


def build_seeds(root: Path) -> list[Seed]:
    from wwho import binary, load_tokenizer
    from wwho.binary.config import load_config, resolve
    from wwho.bytelevel import ByteBPE
    from wwho.manifest import HF_FILES
    from wwho.schema import SCHEMA_DIR
    from wwho.sgpe import SGPETokenizer, train_sgpe
    from wwho.syllables import Syllabifier

    root.mkdir(parents=True, exist_ok=True)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(lines[:1500]), encoding="utf-8")
    small = root / "small.txt"
    small.write_text("\n".join(lines[:200]), encoding="utf-8")
    seeds: list[Seed] = []

    def directory(name: str, path: Path, other: Path | None, reads: tuple[str, ...], loader=load_tokenizer,
                  unread: tuple[str, ...] = ()) -> None:
        files = sorted(p.name for p in path.iterdir() if p.is_file())
        seeds.append(Seed(name, path, loader, files, other, manifest=True, reads=reads, unread=unread))
        bare = root / f"{name}-no-manifest"
        shutil.copytree(path, bare)
        (bare / MANIFEST).unlink()
        seeds.append(Seed(f"{name} (no manifest)", bare, loader, [f for f in files if f != MANIFEST], other,
                          reads=reads))

    sgpe = [SGPETokenizer(train_sgpe(corpus, vocab_size=size, progress=False, workers=1)) for size in (2000, 2300)]
    sgpe[0].save(root / "sgpe")
    sgpe[1].save(root / "sgpe-other")
    directory("sgpe dir", root / "sgpe", root / "sgpe-other", ("vocab.json",), unread=HF_FILES)

    if O200K_FILE.is_file():
        from wwho.meta import MetaTokenizer

        for k, name in enumerate(("meta", "meta-other")):
            MetaTokenizer(sgpe[k], "o200k_base", tiktoken_file=O200K_FILE).save(root / name)
        directory("meta dir", root / "meta", root / "meta-other", ("meta_config.json", "vocab.json"),
                  lambda p: MetaTokenizer.load(p, tiktoken_file=O200K_FILE))
        o200k = root / "o200k_base.tiktoken"
        shutil.copy(O200K_FILE, o200k)
        seeds.append(Seed("o200k_base.tiktoken", o200k, ByteBPE.from_tiktoken, []))

    text = root / "text.txt"
    text.write_text(SAMPLE.read_text(encoding="utf-8")[:150_000] + "\nThe quick brown fox, 2024.\n", encoding="utf-8")
    byte = [ByteBPE.train(text, vocab_size=size, special_tokens=["<|end|>"], workers=1, progress=False)
            for size in (600, 700)]
    byte[0].save(root / "bytelevel", hf=True)
    byte[1].save(root / "bytelevel-other", hf=True)
    bytelevel_files = ("bytelevel.json", "ranks.tiktoken", "merges.txt")
    directory("bytelevel dir (merges)", root / "bytelevel", root / "bytelevel-other", bytelevel_files)
    ranks_rule = ByteBPE(byte[0].model.ranks, pattern="gpt2", special_tokens={"<|end|>": byte[0].vocab_size - 1})
    ranks_rule.save(root / "bytelevel-ranks")
    ByteBPE(byte[1].model.ranks, pattern="gpt2").save(root / "bytelevel-ranks-other")
    directory("bytelevel dir (ranks)", root / "bytelevel-ranks", root / "bytelevel-ranks-other", bytelevel_files)
    custom = root / "custom.tiktoken"
    shutil.copy(root / "bytelevel-ranks" / "ranks.tiktoken", custom)
    seeds.append(Seed("custom .tiktoken", custom, lambda p: ByteBPE.from_tiktoken(p, pattern="gpt2"), []))
    hf = root / "hf" / "tokenizer.json"
    hf.parent.mkdir()
    byte[0].export_hf(hf)
    seeds.append(Seed("HF byte-level tokenizer.json", hf, load_tokenizer, []))
    # A tokenizer.json that ByteBPE does not run goes to HF tokenizers as it is, after wwho checks
    # its ids: a merge list cut short is a smaller valid BPE there (HF's alphabets may hold tokens
    # that no merge makes), so only the ids must be refused.
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    metaspace = Tokenizer(models.BPE(byte_fallback=True))
    metaspace.pre_tokenizer = pre_tokenizers.Metaspace()
    metaspace.decoder = decoders.Metaspace()
    metaspace.train([str(text)], trainers.BpeTrainer(vocab_size=600, show_progress=False))
    hf_run = root / "hf-run" / "tokenizer.json"
    hf_run.parent.mkdir()
    metaspace.save(str(hf_run))
    seeds.append(Seed("HF Metaspace tokenizer.json (run by HF)", hf_run, load_tokenizer, [],
                      refuses=frozenset({"duplicate id", "huge id", "negative id", "bool id"})))

    counts = {line.encode("utf-8")[:64]: 10 for line in lines[:3000] if line}
    btok = binary.train_from_counts(counts, vocab_size=1024, min_frequency=2, progress=False)
    binary_path = root / "binary" / "tokenizer.json"
    binary_path.parent.mkdir()
    binary.save(btok, binary_path)
    seeds.append(Seed("binary tokenizer.json", binary_path, load_tokenizer, []))

    if GPT2_GGUF.is_file():
        shutil.copy(GPT2_GGUF, root / "gpt-2.gguf")
        seeds.append(Seed("GGUF (llama.cpp gpt-2)", root / "gpt-2.gguf", ByteBPE.from_gguf, []))
    small_gguf = root / "small.gguf"
    _write_small_gguf(small_gguf)
    seeds.append(Seed("GGUF (small, written)", small_gguf, ByteBPE.from_gguf, []))

    for name in ("sinhala", "devanagari"):
        shutil.copy(SCHEMA_DIR / f"{name}.json", root / f"{name}.json")
        seeds.append(Seed(f"schema {name}", root / f"{name}.json", Syllabifier.from_schema, []))

    checkpoint = root / "checkpoint"
    train_sgpe(small, vocab_size=1500, progress=False, workers=1, checkpoint_dir=checkpoint, checkpoint_every=50)
    seeds.append(Seed("SGPE checkpoint", checkpoint, lambda p: train_sgpe(
        small, vocab_size=1500, progress=False, workers=1, checkpoint_dir=p, resume=True),
        ["checkpoint.json"]))

    config = root / "config" / "config.toml"
    config.parent.mkdir()
    config.write_text('inputs = ["data"]\noutput = "out/tokenizer.json"\nvocab_size = "4k"\nmin_frequency = 64\n'
                      'mode = "random"\nmin_exp = 3\nmax_exp = 12\next = ["so", "gz"]\nreserve = 16\n'
                      'template = true\nseed = 7\nsample_rate = 0.5\n', encoding="utf-8")
    seeds.append(Seed("binary config.toml", config, lambda p: (load_config(p), resolve({}, p)), []))
    return seeds


def _write_small_gguf(path: Path) -> None:
    import gguf

    from wwho.bytelevel.pretokenize import bytes_to_unicode

    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    tokens = [bytes_to_unicode(bytes([b])) for b in range(256)] + ["ab", "abc", "<|end|>"]
    writer.add_token_list(tokens)
    writer.add_token_types([1] * 258 + [3])
    writer.add_token_merges(["a b", "ab c"])
    writer.add_bos_token_id(258)
    writer.add_eos_token_id(258)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()


# --- mutations ----------------------------------------------------------------------------------

WEIRD = [2**63, -1, True, None, "abc", [], {}, 1.5, "", 10**9, [[[[]]]], {"a": {"b": {}}}]
#: Mutations a loader must refuse (the file still parses but says something wrong). Files of two
#: saves mixed, and any change at all, are refusable only under a manifest (see run_case).
MUST_REFUSE = {"cut merge list", "duplicate id", "huge id", "negative id", "bool id", "lines cut at end"}


def _json_paths(data, prefix=()):
    """A few paths into a JSON value (random walk material)."""
    if isinstance(data, dict):
        for k in list(data)[:50]:
            yield prefix + (k,)
    elif isinstance(data, list):
        for i in range(min(len(data), 50)):
            yield prefix + (i,)


def _walk(draw, data):
    path = ()
    node = data
    while isinstance(node, (dict, list)) and node:
        options = list(_json_paths(node, path))
        step = draw(st.sampled_from(options))
        path = step
        node = node[step[-1]]
        if draw(st.integers(0, 3)) == 0:
            break
    return path


def _get_parent(data, path):
    node = data
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def mutation(draw, seed: Seed, raw: bytes, name: str):
    """(label, new bytes, or a callable that changes the seed directory)."""
    kinds = ["flip", "insert", "delete", "cut", "lines cut at end", "drop line", "duplicate line", "swap lines"]
    data = None
    if name.endswith(".json"):
        try:
            data = json.loads(raw)
            kinds += ["json value"] * 4 + ["json delete key", "json repeat key", "json deep"]
        except ValueError:
            pass
    if isinstance(data, dict):
        if ("merges" in data or "syllable_merges" in data or "model" in data) and name != "checkpoint.json":
            kinds += ["cut merge list"] * 2  # (a checkpoint cut short is an earlier, valid checkpoint)
        if "vocab" in data or isinstance(data.get("model"), dict):
            kinds += ["duplicate id", "huge id", "negative id", "bool id"]
    if seed.other is not None:
        kinds.append("mixed with another save")
    kind = draw(st.sampled_from(kinds))
    n = len(raw)
    if kind == "flip":
        out = bytearray(raw)
        for _ in range(draw(st.integers(1, 8))):
            if out:
                out[draw(st.integers(0, len(out) - 1))] ^= draw(st.integers(1, 255))
        return kind, bytes(out)
    if kind == "insert":
        at = draw(st.integers(0, n))
        junk = draw(st.sampled_from([b"\x00", b"\xff\xfe", b"[" * 5000, b"{", b"\n", b"9" * 40, bytes(range(256))]))
        return kind, raw[:at] + junk + raw[at:]
    if kind == "delete":
        at = draw(st.integers(0, max(0, n - 1)))
        return kind, raw[:at] + raw[at + draw(st.integers(1, 64)):]
    if kind == "cut":
        return kind, raw[:draw(st.integers(0, max(0, n - 1)))]
    lines = raw.splitlines(keepends=True)
    if kind == "lines cut at end":
        if len(lines) < 3 or name.endswith((".json", ".toml", ".gguf")):
            return "cut", raw[: n // 2]
        cut = b"".join(lines[: -draw(st.integers(1, max(1, len(lines) // 3)))])
        if seed.name == "custom .tiktoken":  # a smaller valid vocabulary: nothing records its size
            return "lines cut at end (undetectable)", cut
        return kind, cut
    if kind in ("drop line", "duplicate line", "swap lines"):
        if len(lines) < 2:
            return "flip", raw[:-1] + b"!"
        i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        if kind == "drop line":
            del lines[i]
        elif kind == "duplicate line":
            lines.insert(i, lines[j])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return kind, b"".join(lines)
    if kind == "mixed with another save":
        return kind, (seed.other / name).read_bytes() if (seed.other / name).is_file() else raw
    # JSON structure
    if kind == "json deep":
        return kind, raw.rstrip()[:-1] + b', "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    if kind == "json repeat key":
        key = draw(st.sampled_from(list(data) or ["x"]))
        return kind, raw.rstrip()[:-1] + b", " + json.dumps(key).encode() + b": 1}"
    if kind == "json delete key":
        path = _walk(draw, data)
        if path:
            parent = _get_parent(data, path)
            del parent[path[-1]]
        return kind, json.dumps(data, ensure_ascii=False).encode()
    if kind == "json value":
        path = _walk(draw, data)
        if path:
            _get_parent(data, path)[path[-1]] = draw(st.sampled_from(WEIRD))
        return kind, json.dumps(data, ensure_ascii=False).encode()
    if kind == "cut merge list":
        holder = data["model"] if isinstance(data.get("model"), dict) else data
        key = "merges" if "merges" in holder else "syllable_merges"
        merges = holder.get(key)
        if not isinstance(merges, list) or not merges:
            return "json value", raw
        holder[key] = merges[: draw(st.integers(0, len(merges) - 1))]
        if "num_merges" in data and key == "merges":
            data["num_merges"] = len(holder[key])
        return kind, json.dumps(data, ensure_ascii=False).encode()
    vocab = data.get("vocab") if isinstance(data.get("vocab"), dict) else data["model"]["vocab"]
    if not isinstance(vocab, dict) or len(vocab) < 2:
        return "json value", raw
    token = draw(st.sampled_from(sorted(vocab)[:500]))
    vocab[token] = {"duplicate id": next(v for k, v in vocab.items() if k != token), "huge id": 2**63,
                    "negative id": -1, "bool id": True}[kind]
    return kind, json.dumps(data, ensure_ascii=False).encode()


# --- running cases ------------------------------------------------------------------------------


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_case(seed: Seed, name: str, kind: str, new: bytes, work: Path, tally: Tally) -> None:
    from wwho.errors import WwhoError, WwhoWarning

    case = work / f"case{tally.tried}"
    if seed.path.is_dir():
        shutil.copytree(seed.path, case)
        target = case
        (case / name).write_bytes(new)
    else:
        case.mkdir()
        target = case / seed.path.name
        target.write_bytes(new)
        if seed.path.suffix == ".toml":
            (case / "data").mkdir()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    changed = new != (seed.path / name if seed.path.is_dir() else seed.path).read_bytes()
    read = not seed.path.is_dir() or name in seed.reads  # (a file seed is read whole)
    must_refuse = changed and name != MANIFEST and name not in seed.unread and (
        seed.manifest or (kind in (MUST_REFUSE if seed.refuses is None else seed.refuses) and read))
    signal.alarm(CASE_SECONDS)
    label = f"{name}: {kind}"
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = seed.load(target)
            if type(loaded).__name__ == "Tokenizer":  # HF tokenizers' own object
                for text in TEXTS:
                    loaded.decode(loaded.encode(text).ids)
            elif type(loaded).__name__ == "BinaryTokenizer":  # bytes in, bytes out
                for text in TEXTS:
                    loaded.decode(loaded.encode(text.encode("utf-8")))
            elif hasattr(loaded, "encode") and hasattr(loaded, "decode"):
                for text in TEXTS:
                    loaded.decode(loaded.encode(text))
        warned = [str(w.message) for w in caught if issubclass(w.category, WwhoWarning)]
        if must_refuse:
            tally.add(seed.name, label, "wrong load", "accepted" + (f" with a warning: {warned[0][:200]}" if warned else ""))
        else:
            tally.add(seed.name, label, "loaded, warned" if warned else "loaded")
    except _Timeout:
        tally.add(seed.name, label, "timeout", f"> {CASE_SECONDS} s")
    except WwhoError as exc:
        message = str(exc)
        tally.add(seed.name, label, "clean error" if "\n" not in message else "multi-line error", message[:300])
    except Exception as exc:  # noqa: BLE001 -- counting them is the point
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        tally.add(seed.name, label, "traceback", f"{type(exc).__name__}: {str(exc)[:200]} at "
                                                f"{tb[-2].strip().splitlines()[0] if len(tb) > 1 else '?'}")
    finally:
        signal.alarm(0)
        shutil.rmtree(case, ignore_errors=True)
        for w in caught:  # another library's warnings, as they came (wwho's are an outcome above)
            if not issubclass(w.category, WwhoWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    rise = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    if rise > tally.peak_rise_mb:
        tally.peak_rise_mb, tally.peak_rise_case = rise, f"{seed.name} / {label}"


def fuzz(seconds: float, seed: int = 0, *, max_cases: int | None = None, quiet: bool = False) -> Tally:
    """Run mutated cases until ``seconds`` pass (or ``max_cases``); returns the tally."""
    root = Path(tempfile.mkdtemp(prefix="wwho-fuzz-"))
    tally = Tally()
    try:
        t0 = time.perf_counter()
        seeds = build_seeds(root / "seeds")
        if not quiet:
            print(f"{len(seeds)} seeds built in {time.perf_counter() - t0:.1f}s: "
                  + ", ".join(s.name for s in seeds), file=sys.stderr)
        work = root / "work"
        work.mkdir()
        signal.signal(signal.SIGALRM, _alarm)
        deadline = time.perf_counter() + seconds
        batch = 0

        while time.perf_counter() < deadline and (max_cases is None or tally.tried < max_cases):
            @hypothesis_seed(seed * 100_003 + batch)  # reproducible batches
            @settings(max_examples=10 if max_cases is None else min(10, max_cases), deadline=None, database=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(st.data())
            def one(data):
                s = data.draw(st.sampled_from(seeds), label="seed")
                name = data.draw(st.sampled_from(s.files or [s.path.name]), label="file")
                raw = (s.path / name if s.path.is_dir() else s.path).read_bytes()
                kind, new = data.draw(mutation(s, raw, name), label="mutation")
                run_case(s, name, kind, new, work, tally)

            one()
            batch += 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return tally


def report(tally: Tally, seconds: float) -> str:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    o = tally.outcomes
    lines = [
        (f"tried {tally.tried:,} mutated files in {seconds:.0f} s: clean errors {o['clean error']:,}, "
         f"loaded (still valid) {o['loaded'] + o['loaded, warned']:,} ({o['loaded, warned']:,} with a warning), tracebacks {o['traceback']:,}, wrong loads {o['wrong load']:,}, "
         f"multi-line errors {o['multi-line error']:,}, timeouts {o['timeout']:,}"),
        (f"memory: peak RSS {peak:,.0f} MB; largest rise during one case {tally.peak_rise_mb:,.0f} MB "
         f"({tally.peak_rise_case or '-'})"),
        "",
        "| seed | tried | clean error | loaded | traceback | wrong load | timeout |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in sorted(tally.by_seed.items()):
        lines.append(f"| {name} | {sum(c.values()):,} | {c['clean error']:,} | {c['loaded'] + c['loaded, warned']:,} | {c['traceback']:,} "
                     f"| {c['wrong load']:,} | {c['timeout']:,} |")
    for outcome, examples in tally.examples.items():
        lines += ["", f"{outcome} examples:", *(f"  {e}" for e in examples)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300, help="time budget (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory-limit-gb", type=float, default=4.0, help="address-space limit (default 4 GB)")
    args = parser.parse_args()
    limit = int(args.memory_limit_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    t0 = time.perf_counter()
    tally = fuzz(args.seconds, args.seed)
    print(report(tally, time.perf_counter() - t0))
    sys.exit(1 if tally.outcomes["traceback"] or tally.outcomes["wrong load"] else 0)


if __name__ == "__main__":
    main()
