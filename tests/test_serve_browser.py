"""``wwho serve`` in a real browser: the real server (a ``wwho serve`` subprocess on a free port) and
headless Chromium (Debian's ``chromium`` package, driven by Playwright; no browser is downloaded).

Text is typed into the page key by key; the tokens the page shows (their text, and their ids with
"show ids") must equal each tokenizer's own output: tiktoken's for o200k_base, wwho's ByteBPE for the
Llama 3 GGUF vocabulary (checked against llama.cpp's vectors in test_gguf.py), and the SGPE
tokenizer's. Cut marks are checked against ``regex`` ``\\X`` and the schema syllables. The notice for
scripts without a font is checked against fontconfig (``fc-list``), and with the check's outcome forced.

Skipped, with the reason, only when no Chromium can be found (``.ci/run`` installs it) or Playwright
is missing. ``WWHO_SCREENSHOT=docs/img/serve.png`` also saves the README's screenshot from the run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import CORPORA, DATA, O200K_FILE, real_server
from test_serve_view import inside_clusters, inside_syllables

LLAMA3 = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
VISIBLE = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}
SHOWN = {v: k for k, v in VISIBLE.items()}
CONTINUATION = range(0x80, 0xC0)

TEXTS = {
    "sinhala": "ශ්‍රී ලංකා ප්‍රජාතාන්ත්‍රික සමාජවාදී ජනරජය",
    "hindi": "क्षत्रिय राजा ने कहा: नमस्ते दुनिया।",
    "mixed": "Hello ශ්‍රී ලංකා, क्षत्रिय नमस्ते 2024!\nනව පේළිය 🏏 ok",
}


def find_chromium() -> str | None:
    for candidate in (os.environ.get("WWHO_CHROMIUM"), "/usr/lib/chromium/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set WWHO_CHROMIUM=/path/to/chrome)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def sgpe_dir(tokenizers, tmp_path_factory):
    path = tmp_path_factory.mktemp("serve-sgpe") / "sgpe-mixed"
    tokenizers["mixed"].save(path)
    return path


@pytest.fixture(scope="module")
def server(sgpe_dir, tmp_path_factory):
    """A real ``wwho serve`` on a free port; yields its address."""
    log = tmp_path_factory.mktemp("serve-log") / "stderr.txt"
    with real_server(log, "tiktoken:o200k_base", LLAMA3, sgpe_dir) as (_, port):
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module")
def truth(tokenizers):
    """name -> text -> (ids, token bytes), from each tokenizer itself."""
    from wwho import ByteBPE
    from wwho.bytelevel.tiktoken_loader import get_encoding

    enc = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
    llama = ByteBPE.from_gguf(LLAMA3)
    sgpe = tokenizers["mixed"]

    def o200k(text):
        ids = enc.encode_ordinary(text)
        return ids, [enc.decode_single_token_bytes(i) for i in ids]

    def own(tok):
        def run(text):
            ids = tok.encode(text)
            return ids, [tok.token_bytes(i) for i in ids]
        return run
    return {"tiktoken:o200k_base": o200k, LLAMA3.name: own(llama), "sgpe-mixed": own(sgpe)}


@pytest.fixture
def page(browser, server):
    page = browser.new_page(viewport={"width": 1100, "height": 760})
    requests, problems = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(server)
    page.wait_for_function("() => window.wwhoView && window.wwhoView.renderedText !== null")
    yield page
    assert problems == [], problems
    assert all(u.startswith((server, "data:")) for u in requests), requests  # offline
    page.close()


# -- reading what the page shows -------------------------------------------------------------------------

READ_ROWS = """() => [...document.querySelectorAll('#results .row')].map(row => ({
  label: row.querySelector('.name').textContent,
  stats: row.querySelector('.stats').textContent,
  tokens: [...row.querySelectorAll('.tok')].map(t => ({shown: t.textContent, cls: t.className.split(' ')})),
}))"""


def show(text: str) -> str:
    return "".join(VISIBLE.get(c, c) for c in text)


def unshow(text: str) -> str:
    return "".join(SHOWN.get(c, c) for c in text)


def drawn(page, text: str | None = None) -> None:
    """Wait until the page has drawn every token (of ``text``, when given)."""
    page.wait_for_function("t => !window.wwhoView.rendering && (t === null || window.wwhoView.renderedText === t)",
                           arg=text, timeout=60_000)


def type_text(page, text: str) -> None:
    box = page.locator("#text")
    box.fill("")
    box.press_sequentially(text)
    drawn(page, text)


def expected_tokens(text: str, pieces: list[bytes]) -> list[dict]:
    """What each token must show: the characters whose first byte it holds (visible whitespace), a
    replacement glyph when it starts with continuation bytes, and the cut after it."""
    data = text.encode()
    starts, pos = {}, 0
    for ch in text:
        starts[pos] = ch
        pos += len(ch.encode())
    clusters, syllables = inside_clusters(text), inside_syllables(text)
    out, pos = [], 0
    for k, piece in enumerate(pieces):
        end = pos + len(piece)
        assert data[pos:end] == piece
        chars = "".join(starts[b] for b in range(pos, end) if b in starts)
        last = k == len(pieces) - 1
        out.append({"text": show(chars), "lead": bool(piece) and piece[0] in CONTINUATION,
                    "cut_syl": not last and end in syllables,
                    "cut_gc": not last and end in clusters and end not in syllables})
        pos = end
    return out


@pytest.mark.parametrize("script", list(TEXTS))
def test_typed_text_shows_each_tokenizers_own_tokens(page, truth, script):
    text = TEXTS[script]
    type_text(page, text)
    rows = page.evaluate(READ_ROWS)
    assert [r["label"] for r in rows] == list(truth)
    for row in rows:
        ids, pieces = truth[row["label"]](text)
        shown = row["tokens"]
        assert len(shown) == len(ids), row["label"]
        assert f"{len(ids)} tokens" in row["stats"]
        expected = expected_tokens(text, pieces)
        assert [t["shown"] for t in shown] == [e["text"] for e in expected], row["label"]
        # a replacement glyph (drawn by CSS, not part of the text) where a token starts inside a character
        assert ["lead" in t["cls"] for t in shown] == [e["lead"] for e in expected], row["label"]
        assert ["cut-syl" in t["cls"] for t in shown] == [e["cut_syl"] for e in expected], row["label"]
        assert ["cut-gc" in t["cls"] for t in shown] == [e["cut_gc"] for e in expected], row["label"]
        assert unshow("".join(t["shown"] for t in shown)) == text  # the tokens line up with the input
    page.check("#show-ids")
    drawn(page)
    for row in page.evaluate(READ_ROWS):
        ids, _ = truth[row["label"]](text)
        assert [int(t["shown"]) for t in row["tokens"]] == ids, row["label"]
    # the comparison: the text once, and the spans where the three disagree
    spans = page.evaluate("() => [...document.querySelectorAll('#compare .span')].map(s => "
                          "[s.textContent, s.classList.contains('dis')])")
    assert unshow("".join(s for s, _ in spans)) == text
    assert any(dis for _, dis in spans)  # o200k_base and Llama 3 cut syllables that SGPE keeps whole
    if os.environ.get("WWHO_SCREENSHOT") and script == "mixed":
        page.uncheck("#show-ids")
        drawn(page)
        first = page.locator("#results .row").nth(0).locator(".tok").nth(2)
        first.hover()
        page.screenshot(path=os.environ["WWHO_SCREENSHOT"], full_page=True)


def test_hover_shows_id_and_bytes(page, truth):
    text = TEXTS["sinhala"]
    type_text(page, text)
    ids, pieces = truth[LLAMA3.name](text)
    row = page.locator("#results .row").nth(1)
    for k in (0, 1):
        row.locator(".tok").nth(k).hover()
        tip = page.locator("#tip")
        assert tip.is_visible()
        assert f"id {ids[k]}\n" in tip.text_content()
        assert " ".join(f"{b:02x}" for b in pieces[k]) in tip.text_content()
    assert "not whole UTF-8" in tip.text_content()  # Llama 3 splits ශ into bytes


def test_whitespace_is_visible_and_ids_toggle_back(page, truth):
    text = "a\tb c\nd"
    page.locator("#text").fill(text)
    drawn(page, text)
    row = page.evaluate(READ_ROWS)[0]
    assert "".join(t["shown"] for t in row["tokens"]) == "a→b·c↵d"
    page.check("#show-ids")
    drawn(page)
    page.uncheck("#show-ids")
    drawn(page)
    assert page.evaluate(READ_ROWS)[0]["tokens"] == row["tokens"]


def test_unchecking_a_tokenizer_hides_its_row(page, truth):
    page.locator("#choices input").nth(1).uncheck()
    page.wait_for_function("() => document.querySelectorAll('#results .row').length === 2")
    drawn(page)
    assert [r["label"] for r in page.evaluate(READ_ROWS)] == ["tiktoken:o200k_base", "sgpe-mixed"]


# -- scripts without a font ---------------------------------------------------------------------------------

def fontconfig_has(char: str) -> bool | None:
    """Whether fontconfig (which Chromium asks on Linux) knows a font with a glyph for ``char``; None
    when ``fc-list`` is absent."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    found = subprocess.run([fc_list, f":charset={ord(char):x}", "family"], capture_output=True, text=True,
                           timeout=60, check=True).stdout
    return bool(found.strip())


def notice(page) -> str | None:
    """The text of the "no font for ..." notice, None while it is hidden."""
    box = page.locator("#fonts")
    return " ".join(box.text_content().split()) if box.is_visible() else None


def show_text(page, text: str) -> None:
    page.locator("#text").fill(text)
    drawn(page, text)


def test_font_check_tells_letters_from_boxes(page):
    """The page's check draws a letter and a code point no font has (U+0378) on a canvas: a Latin letter
    is drawn, a noncharacter is a box, and Sinhala and Brahmi are drawn exactly when fontconfig has a
    font for them (so both outcomes are checked on a machine without fonts-noto-core)."""
    can_draw = "c => window.wwhoFonts.canDraw(c)"
    assert page.evaluate(can_draw, "A") is True
    assert page.evaluate(can_draw, "\ufdd0") is False
    for letters in ("\u0d9a\u0d85", "\U00011005"):  # Sinhala KA and A; Brahmi A (fonts-noto-core has both)
        has = fontconfig_has(letters[0])
        if has is None:
            pytest.skip("fc-list is absent: cannot tell which fonts Chromium has")
        assert page.evaluate(can_draw, letters) is has, (letters, has)


def test_notice_when_sinhala_has_no_font(page):
    """On Sinhala text the notice appears exactly when this machine's Chromium has no Sinhala font, and
    then it names Sinhala and the package that fixes it."""
    has = fontconfig_has("\u0d9a")
    if has is None:
        pytest.skip("fc-list is absent: cannot tell whether Chromium has a Sinhala font")
    show_text(page, TEXTS["sinhala"])
    assert page.evaluate("() => window.wwhoFonts.missing") == ([] if has else ["Sinhala"])
    shown = notice(page)
    if has:
        assert shown is None
    else:
        assert shown.startswith("× This browser has no font for Sinhala:"), shown
        assert "sudo apt install fonts-noto-core" in shown and "Noto Sans Sinhala" in shown
    show_text(page, "Hello, world")  # no Indic script: no notice
    assert notice(page) is None


def test_notice_names_each_missing_script_and_can_be_dismissed(page):
    """The outcome of the check forced (its cache filled in), so that this runs the same with or without
    fonts: only the scripts present in the text and without a font are named; closing the notice keeps
    it closed for those scripts, and a script newly missing brings it back."""
    page.evaluate("""() => { const d = window.wwhoFonts.drawable; d.clear();
        d.set('Sinhala', false); d.set('Tamil', false); d.set('Bengali', false); d.set('Devanagari', true); }""")
    show_text(page, "Hello")
    assert notice(page) is None
    show_text(page, "ශ්‍රී ලංකා नमस्ते வணக்கம்")
    assert page.evaluate("() => window.wwhoFonts.missing") == ["Sinhala", "Tamil"]
    shown = notice(page)
    assert shown.startswith("× This browser has no font for Sinhala and Tamil:"), shown
    assert "install Noto Sans Sinhala and Noto Sans Tamil from" in shown and "Devanagari" not in shown
    page.locator("#fonts .close").click()
    assert notice(page) is None
    show_text(page, "ලංකාව வணக்கம்")
    assert notice(page) is None  # dismissed for these scripts
    show_text(page, "ලංකාව বাংলা")
    assert notice(page).startswith("× This browser has no font for Bengali:")
    assert page.evaluate("() => window.wwhoFonts.missing") == ["Sinhala", "Bengali"]


def test_ten_thousand_characters(page, truth):
    """10,000 characters of Sinhala news with three tokenizers: every token shown, ids exact. The page's
    own timings are printed (benchmarks/bench_serve.py measures them; this test does not time)."""
    news = CORPORA / "si" / "news-bbcsinhala.txt"
    if not news.is_file():
        pytest.skip(f"{news} is absent")
    with open(news, encoding="utf-8") as f:
        text = f.read(10_000)
    page.locator("#text").fill(text)
    drawn(page, text)
    page.check("#show-ids")
    drawn(page)
    shown = page.evaluate("""() => [...document.querySelectorAll('#results .row')].map(row =>
        [row.querySelector('.name').textContent, [...row.querySelectorAll('.tok')].map(t => +t.textContent)])""")
    assert [label for label, _ in shown] == list(truth)
    for label, ids in shown:
        assert ids == truth[label](text)[0], label
    timings = page.evaluate("() => window.wwhoView")
    print(f"10,000 characters: server {timings['serverMs']:.0f} ms, first screen {timings['firstMs']:.0f} ms, "
          f"all {timings['tokens']} tokens {timings['renderMs']:.0f} ms")
