"""The ``wwho serve`` web application through Starlette's test client, and the ``serve`` verb's checks.

Ids are checked against tiktoken and llama.cpp's GGUF vocabulary run by wwho's ByteBPE (itself checked
against llama.cpp's test vectors in test_gguf.py). Every error must be one line of JSON with a 4xx code.
"""

from __future__ import annotations

import json
import re
import socket

import pytest
from conftest import DATA, O200K_FILE
from starlette.testclient import TestClient

from wwho.cli import main
from wwho.errors import VocabError
from wwho.eval_specs import Evaluated
from wwho.serve.app import STATIC, create_app
from wwho.serve.limits import Limits
from wwho.serve.tokenizers import Loaded, load_tokenizers

LLAMA3 = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"


@pytest.fixture(scope="module")
def loaded():
    if not (O200K_FILE.is_file() and LLAMA3.is_file()):
        pytest.skip(f"{O200K_FILE} or {LLAMA3} is absent")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
        return load_tokenizers(["tiktoken:o200k_base", str(LLAMA3)])


@pytest.fixture(scope="module")
def client(loaded):
    return TestClient(create_app(loaded, limits=Limits(max_chars=1000)))


@pytest.fixture(scope="module")
def llama3_native(loaded):
    from wwho import ByteBPE

    return ByteBPE.from_gguf(LLAMA3)


def tiktoken_ids(text):
    from wwho.bytelevel.tiktoken_loader import get_encoding

    return get_encoding("o200k_base", tiktoken_file=O200K_FILE).encode_ordinary(text)


def error_of(response, status):
    assert response.status_code == status, response.text
    assert "\n" not in response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]
    return body["error"]


# -- the page and its files ----------------------------------------------------------------------------

def test_page_and_static_files(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert '<script src="/static/app.js"' in page.text and 'href="/static/style.css"' in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200


@pytest.mark.parametrize("path", ["/", "/static/index.html", "/static/app.js", "/api/tokenizers", "/nowhere"])
def test_every_answer_has_the_policy_and_nosniff(client, path):
    """Every answer has the Content-Security-Policy, not GET / alone (the same page under
    /static/index.html could be framed by any site), and says nosniff."""
    r = client.get(path)
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    # The files' URLs carry no version: a browser asks again, not pairing a new page with an old
    # app.js (every file says no-cache, not / alone).
    assert r.headers["cache-control"] == "no-cache"
    refused = client.get(path, headers={"Origin": "http://elsewhere.example"})  # HostGuard's own answer
    assert refused.status_code == 403 and refused.headers["x-content-type-options"] == "nosniff"


def test_static_files_fetch_nothing_from_elsewhere():
    """Offline: no URL, font or import of another host in the page's files."""
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import|url\(", text, re.IGNORECASE), path.name


def test_tokenizers_listed_with_limits(client, loaded):
    data = client.get("/api/tokenizers").json()
    assert [t["name"] for t in data["tokenizers"]] == ["tiktoken:o200k_base", LLAMA3.name]  # names, not paths
    assert [t["kind"] for t in data["tokenizers"]] == ["tiktoken", "gguf"]
    assert data["tokenizers"][0]["vocab_size"] == 200_000  # its tokens, as every kind counts them (n_vocab: 200,019)
    assert data["limits"] == {"max_chars": 1000, "max_body_bytes": 12 * 1000 + 65_536, "max_tokens": 40_000}


# -- tokenizing ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["ශ්‍රී ලංකාව", "क्षत्रिय और नमस्ते", "Hello ශ්‍රී क्ष 🏏\n\tx"])
def test_tokenize_gives_each_tokenizers_own_ids(client, llama3_native, text):
    data = client.post("/api/tokenize", json={"text": text}).json()
    assert data["chars"] == len(text) and data["bytes"] == len(text.encode())
    o200k, llama = data["results"]
    assert o200k["tokens"]["id"] == tiktoken_ids(text)
    assert llama["tokens"]["id"] == llama3_native.encode(text)
    for r in data["results"]:
        columns = r["tokens"]
        assert set(columns) == {"id", "text", "bytes", "start", "end", "lead", "partial", "cut_syllable",
                                "cut_cluster"}
        assert r["aligned"] and not r["truncated"] and all(len(c) == r["count"] == r["shown"] for c in columns.values())
        assert "".join(columns["text"]) == text
        assert columns["start"] == [0, *columns["end"][:-1]] and columns["end"][-1] == len(text)
        assert b"".join(map(bytes.fromhex, columns["bytes"])) == text.encode()
        assert r["chars_per_token"] == pytest.approx(len(text) / r["count"])
    assert "".join(s["text"] for s in data["compare"]) == text


def test_tokenize_a_chosen_subset_in_order(client):
    data = client.post("/api/tokenize", json={"text": "abc", "tokenizers": [LLAMA3.name]}).json()
    assert [r["tokenizer"] for r in data["results"]] == [LLAMA3.name]
    data = client.post("/api/tokenize", json={"text": "", "tokenizers": []}).json()
    assert data["results"] == [] and data["compare"] == []


def test_empty_text(client):
    data = client.post("/api/tokenize", json={"text": ""}).json()
    assert [r["count"] for r in data["results"]] == [0, 0] and data["compare"] == []


def test_json_with_charset_is_accepted(client):
    body = json.dumps({"text": "ශ්‍රී"}, ensure_ascii=False).encode()
    r = client.post("/api/tokenize", content=body, headers={"content-type": "application/json; charset=utf-8"})
    assert r.status_code == 200


def test_a_failing_tokenizer_does_not_hide_the_others(loaded):
    def broken(text):
        raise RuntimeError("boom")
    bad = Loaded("broken", "test", Evaluated("broken", broken, lambda ids: "", lambda i: False, 1))
    client = TestClient(create_app([bad, *loaded]))
    data = client.post("/api/tokenize", json={"text": "ශ්‍රී"}).json()
    assert data["results"][0] == {"tokenizer": "broken", "kind": "test", "error": "RuntimeError: boom"}
    assert data["results"][1]["tokens"]["id"] == tiktoken_ids("ශ්‍රී")


# -- bad requests: one line of JSON, 4xx ------------------------------------------------------------------

def test_bad_json(client):
    msg = error_of(client.post("/api/tokenize", content=b'{"text": ', headers={"content-type": "application/json"}),
                   400)
    assert msg.startswith("request body is not JSON")
    # json's own "... starting at" must not come out as "starting at at line 1"
    msg = error_of(client.post("/api/tokenize", content=b'{"text": "abc', headers={"content-type": "application/json"}),
                   400)
    assert msg == "request body is not JSON: Unterminated string starting at line 1 column 10", msg
    msg = error_of(client.post("/api/tokenize", content=b"\xff\xfe", headers={"content-type": "application/json"}),
                   400)
    assert "UTF-8" in msg or "JSON" in msg


@pytest.mark.parametrize(("body", "status", "words"), [
    (["a", "b"], 400, "JSON object"),
    ({}, 400, '"text" must be a string'),
    ({"text": ["a"]}, 400, '"text" must be a string'),
    ({"text": 5}, 400, 'a number (5); expected {"text": "...", "tokenizers": ["..."]}'),
    ({"text": "a", "extra": "x"}, 400, "unknown field 'extra'"),
    ({"text": "a", "tokenizers": "tiktoken:o200k_base"}, 400, "list of tokenizer names"),
    ({"text": "a", "tokenizers": ["nope"]}, 422, "unknown tokenizer 'nope'; loaded: tiktoken:o200k_base"),
    ({"text": "a\ud800b"}, 422, "lone surrogate U+D800 at character 1"),
    ({"text": "x" * 1001}, 413, "1,001 characters; the limit is 1,000"),
])
def test_bad_requests(client, body, status, words):
    content = json.dumps(body).encode()  # ensure_ascii: a lone surrogate travels as \ud800
    msg = error_of(client.post("/api/tokenize", content=content, headers={"content-type": "application/json"}),
                   status)
    assert words in msg


def test_an_array_inside_a_value_is_refused_before_the_body_is_parsed(client, monkeypatch):
    """"tokenizers" is checked before json.loads builds every nested array of a body, which would
    hold the event loop."""
    import wwho.serve.body as body_module

    def parse(*args, **kwargs):
        raise AssertionError("the body was parsed")

    nested = b'{"text": "a[\\"[", "tokenizers": [' + b",".join([b"[[[[]]]]"] * 1000) + b"]}"
    with monkeypatch.context() as m:  # (json is one module: the answer is read after)
        m.setattr(body_module.json, "loads", parse)
        answer = client.post("/api/tokenize", content=nested, headers={"content-type": "application/json"})
    msg = error_of(answer, 400)
    assert msg.startswith("request body has an array inside a value")
    # Brackets inside strings are text: one array, parsed as usual.
    r = client.post("/api/tokenize", json={"text": "[[a]] \\[", "tokenizers": ["tiktoken:o200k_base"]})
    assert r.status_code == 200, r.text


def test_wrong_content_type(client):
    msg = error_of(client.post("/api/tokenize", content=b"text=a",
                               headers={"content-type": "application/x-www-form-urlencoded"}), 415)
    assert "application/json" in msg


def test_body_too_large(client):
    limit = Limits(max_chars=1000).max_body_bytes
    body = b'{"text": "' + b"a" * limit + b'"}'
    msg = error_of(client.post("/api/tokenize", content=body, headers={"content-type": "application/json"}), 413)
    assert f"{limit:,} bytes" in msg

    def chunks():  # no Content-Length: chunked, refused before any chunk is read
        yield b'{"text": "'
        for _ in range(limit // 4096 + 1):
            yield b"a" * 4096
        yield b'"}'
    r = client.post("/api/tokenize", content=chunks(), headers={"content-type": "application/json"})
    assert "chunked bodies are not read" in error_of(r, 411)
    small = client.post("/api/tokenize", content=iter([b'{"text": "ab"}']), headers={"content-type": "application/json"})
    assert "send the body with a Content-Length" in error_of(small, 411)


def test_trailing_slashes_are_json_404s_not_redirects(client):
    # An empty 307 to http://localhost/api/tokenize (port 80 when the Host had no port).
    for path in ("/api/tokenizers/", "/static"):
        r = client.get(path, follow_redirects=False)
        assert r.status_code == 404 and "error" in r.json(), (path, r.status_code)


def test_unknown_route_and_method(client):
    assert "Not Found" in error_of(client.get("/api/nothing"), 404)
    error_of(client.get("/api/tokenize"), 405)


# -- loading and the serve verb --------------------------------------------------------------------------

def test_serve_without_the_extra_says_which_to_install(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn -> ImportError(name="uvicorn")
    assert main(["serve", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "wwho: error: wwho serve needs the optional web extra: pip install 'wwho[serve]' " \
                  "(Starlette and uvicorn)"


def test_serve_on_a_busy_port_is_one_line(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port), "--tokenizer", "tiktoken:o200k_base"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"wwho: error: cannot listen on 127.0.0.1:{port}: ")


@pytest.mark.parametrize(("args", "words"), [
    (["--port", "70000"], "--port must be in 0..65535"),
    (["--max-chars", "0"], "--max-chars must be from 1 to 1,000,000, got 0"),
    # --max-chars has an upper bound, and so a request's body has one
    (["--max-chars", "99999999999999"], "--max-chars must be from 1 to 1,000,000"),
    (["--host", "no-such-host.invalid"], "cannot resolve"),
    (["--port", "0", "--tokenizer", "/no/such/file.json"], "no such file"),
])
def test_serve_argument_errors(capsys, args, words):
    assert main(["serve", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("wwho: error: ") and words in err[-1]


def test_bind_tells_loopback_apart():
    from wwho.cli.serve import bind

    for host, loopback in (("127.0.0.1", True), ("localhost", True), ("0.0.0.0", False)):
        sock, is_loopback = bind(host, 0)
        sock.close()
        assert is_loopback is loopback, host


def test_an_ipv4_loopback_address_written_as_ipv6_is_loopback():
    """--host ::ffff:127.0.0.1 is loopback: no warning that anyone can reach it, and the Host check on."""
    from wwho.cli.serve import _is_loopback

    assert _is_loopback("::ffff:127.0.0.1") and _is_loopback("::1") and _is_loopback("127.0.0.2")
    assert not _is_loopback("::ffff:10.0.0.1") and not _is_loopback("0.0.0.0") and not _is_loopback("::")


def test_serve_warns_when_not_on_loopback(tmp_path):
    """A real ``wwho serve --host 0.0.0.0``: the warning, then the address; stopped at once (no request sent)."""
    import subprocess
    import sys

    if not LLAMA3.is_file():
        pytest.skip(f"{LLAMA3} is absent")
    proc = subprocess.Popen([sys.executable, "-m", "wwho", "serve", "--host", "0.0.0.0", "--port", "0",
                             "--tokenizer", str(LLAMA3)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        address = proc.stdout.readline()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert re.fullmatch(r"wwho serve: http://0\.0\.0\.0:\d+/  \(Ctrl-C to stop\)\n", address)
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "not a loopback address" in warning[0]


def test_a_tiktoken_file_of_no_known_encoding_is_served_with_its_pattern(tmp_path):
    # serve's own error does not ask for --pattern, which serve does not take
    import base64

    ranks = tmp_path / "mine.tiktoken"
    ranks.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))
                     + f"{base64.b64encode(b'ab').decode()} 256\n")
    with pytest.raises(VocabError, match="pattern"):
        load_tokenizers([str(ranks)])
    (loaded,) = load_tokenizers([str(ranks)], pattern="gpt2")
    ids, _ = loaded.tokenizer.encode("ab ab")
    assert ids == [256, 32, 256] and loaded.tokenizer.decode(ids) == "ab ab"
    assert loaded.tokenizer.vocab_size == 257
    from wwho.cli import build_parser

    assert build_parser().parse_args(["serve", "--tokenizer", str(ranks), "--pattern", "gpt2"]).pattern == "gpt2"
