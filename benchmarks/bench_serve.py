"""``wwho serve`` with 10,000 characters and three tokenizers: server time and page drawing time, one run.

    python benchmarks/bench_serve.py [--chars 10000] [--runs 5] [--chromium PATH]

Starts the real server (``wwho serve --port 0``) with o200k_base (tiktoken), Llama 3 (llama.cpp's GGUF
vocabulary) and an SGPE vocabulary of 8,000 tokens trained on the bundled Sinhala sample (cached under
.cache/bench_serve/), and for each text (the first N characters of held-out Sinhala news, Hindi and
code-switched Sinhala-English news) measures:

* the API alone (``POST /api/tokenize`` from this process): the server's own time for the request
  (``seconds`` in the response: encoding, laying tokens over the text, cuts, comparison) and the
  round trip with JSON; the first request after start ("cold": syllable tables may still be
  building in the background) and the median of ``--runs`` later ones on shifted texts ("warm");
* the worst case the server takes: 20,000 characters (the default limit) of emoji ZWJ sequences,
  which byte-level tokenizers cut into 1.5-3 tokens per code point: the server's time, the tokens
  counted and sent (at most ``max_tokens`` are sent) and the JSON's size (median of ``--runs``);
* the page in headless Chromium (Playwright, the system's Chromium): the text is pasted and the
  page's own measurements are read: round trip, the first screen drawn (synchronous, with layout),
  and every token drawn (in slices, the page answering in between); median of ``--runs``.

The peer is the three tokenizers' own encoding of the same text in this process (warm): the page's
server time over it is the cost of what the page shows beyond the ids.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _measure import CORPORA, DATA, O200K_FILE, ROOT, machine, require

CACHE = ROOT / ".cache" / "bench_serve"
LLAMA3 = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
TEXTS = {"Sinhala news": CORPORA / "si" / "news-bbcsinhala.txt", "Hindi": CORPORA / "hi" / "tico19-test.txt",
         "Sinhala-English news": next(iter(sorted((CORPORA / "si-en").glob("*.txt"))), None)}


def sgpe_dir() -> Path:
    from wwho.demo import sample_lines
    from wwho.sgpe import SGPETokenizer

    out = CACHE / "sgpe-sample-8000"
    if not (out / "vocab.json").is_file():
        lines = sample_lines()
        corpus = CACHE / "sample-train.txt"
        CACHE.mkdir(parents=True, exist_ok=True)
        corpus.write_text("\n".join(lines[: len(lines) * 9 // 10]) + "\n", encoding="utf-8")
        SGPETokenizer.train(corpus, vocab_size=8000, progress=False, workers=1).save(out)
    return out


def start_server(specs: list[str]) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, WWHO_TIKTOKEN_FILE=str(O200K_FILE))
    # The server's messages go to a file (a pipe nobody reads would fill), shown where it fails to start.
    errors = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
    proc = subprocess.Popen([sys.executable, "-m", "wwho", "serve", "--port", "0", "--tokenizer", *specs],
                            stdout=subprocess.PIPE, stderr=errors, text=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if select.select([proc.stdout], [], [], 1)[0]:
            line = proc.stdout.readline()
            if line.startswith("wwho serve: http://"):
                return proc, line.split()[2]
    proc.kill()
    proc.wait()
    errors.seek(0)
    said = errors.read()[-2000:].strip()
    raise SystemExit("wwho serve did not start" + (f":\n{said}" if said else ""))


def post(url: str, text: str) -> tuple[float, float]:
    seconds, trip, _ = post_full(url, text)
    return seconds, trip


def post_full(url: str, text: str) -> tuple[float, float, dict]:
    """The server's time, the round trip, and the answer with its size in bytes as ``size``."""
    body = json.dumps({"text": text}).encode()
    req = urllib.request.Request(url + "api/tokenize", data=body, headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req) as res:
        raw = res.read()
    data = json.loads(raw)
    data["size"] = len(raw)
    return data["seconds"], time.perf_counter() - t0, data


def find_chromium(given: str | None) -> str | None:
    for c in (given, os.environ.get("WWHO_CHROMIUM"), "/usr/lib/chromium/chromium", shutil.which("chromium")):
        if c and Path(c).is_file():
            return c
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--chromium")
    args = ap.parse_args()
    require(O200K_FILE, LLAMA3)
    from wwho.eval_specs import load_spec

    os.environ["WWHO_TIKTOKEN_FILE"] = str(O200K_FILE)
    specs = ["tiktoken:o200k_base", str(LLAMA3), str(sgpe_dir())]
    texts = {}
    for name, path in TEXTS.items():
        if path and path.is_file():
            with open(path, encoding="utf-8") as f:
                texts[name] = f.read(args.chars + args.runs + 1)
    print(f"machine: {machine()}")
    print(f"tokenizers: o200k_base, Llama 3 ({LLAMA3.name}), SGPE 8,000 (bundled Sinhala sample); "
          f"{args.chars:,} characters per request; warm figures are medians of {args.runs}\n")
    peers = [load_spec(s) for s in specs]
    proc, url = start_server(specs)
    chromium = find_chromium(args.chromium)
    try:
        rows = []
        for name, text in texts.items():
            sample = [text[k:k + args.chars] for k in range(args.runs + 1)]
            cold = post(url, sample[0])
            warm = [post(url, t) for t in sample[1:]]
            for p in peers:  # the peers' own encoding, warmed on the first sample
                p.encode(sample[0])
            t0 = time.perf_counter()
            for t in sample[1:]:
                for p in peers:
                    p.encode(t)
            encode = (time.perf_counter() - t0) / args.runs
            rows.append((name, cold, statistics.median(s for s, _ in warm), statistics.median(r for _, r in warm),
                         encode))
        print("| text | server, cold | server, warm | round trip, warm | the three encoders alone | ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, cold, server, trip, encode in rows:
            print(f"| {name} | {cold[0] * 1000:.0f} ms | {server * 1000:.0f} ms | {trip * 1000:.0f} ms | "
                  f"{encode * 1000:.0f} ms | {server / encode:.1f}x |")
        print()
        family = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"
        worst = (family * 3000)[:20_000]
        post_full(url, worst[:100])
        answers = [post_full(url, worst[k:] + worst[:k]) for k in range(args.runs)]
        data = answers[-1][2]
        print(f"worst case, {len(worst):,} characters of emoji ZWJ sequences: server "
              f"{statistics.median(a[0] for a in answers) * 1000:.0f} ms, round trip "
              f"{statistics.median(a[1] for a in answers) * 1000:.0f} ms, tokens counted "
              f"{sum(r['count'] for r in data['results']):,}, sent {sum(r['shown'] for r in data['results']):,}, "
              f"JSON {data['size'] / 1e6:.1f} MB\n")
        if chromium is None:
            print("page: skipped (no Chromium found; apt-get install chromium)")
            return
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            page.wait_for_function("() => window.wwhoView && window.wwhoView.renderedText !== null")
            print("| text | tokens drawn | round trip | first screen | every token | longest task: paste | "
                  "longest task: answer and drawing |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            page.evaluate("""() => { window.__tasks = []; new PerformanceObserver(l => { for (const e of l.getEntries())
                window.__tasks.push([e.startTime, e.duration]); }).observe({type: 'longtask'}); }""")
            for name, text in texts.items():
                runs = []
                for k in range(args.runs):
                    t = text[k:k + args.chars]
                    page.evaluate("() => { window.__tasks = []; }")
                    page.locator("#text").fill(t)
                    page.wait_for_function("t => !window.wwhoView.rendering && window.wwhoView.renderedText === t",
                                           arg=t, timeout=120_000)
                    page.wait_for_timeout(100)  # let the observer report the last task
                    v = page.evaluate("() => ({...window.wwhoView, renderedText: null, tasks: window.__tasks})")
                    # before the request: Chromium putting the text into the text box (and laying it out)
                    v["paste"] = max([d for s, d in v["tasks"] if s < v["sentAt"]], default=0)
                    v["ours"] = max([d for s, d in v["tasks"] if s >= v["sentAt"]], default=0)
                    runs.append(v)
                med = {key: statistics.median(r[key] for r in runs)
                       for key in ("roundTripMs", "firstMs", "renderMs", "paste", "ours")}
                print(f"| {name} | {runs[-1]['tokens']:,} | {med['roundTripMs']:.0f} ms | {med['firstMs']:.0f} ms | "
                      f"{med['renderMs']:.0f} ms | {med['paste']:.0f} ms | {med['ours']:.0f} ms |")
            browser.close()
        print("\nlongest task: the longest stretch (PerformanceObserver 'longtask', >= 50 ms; 0 = none) in which "
              "the page could not react to input: before the request (Chromium puts the pasted text into the text "
              "box), and from the request on (parsing the answer, drawing the tokens).")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
