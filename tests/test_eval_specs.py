"""SPECs loaded as tokenizers under evaluation (``eval_specs.py``): clear errors for what cannot be
loaded, SentencePiece token ends, and the count of cuts inside known syllables."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from conftest import without_each_merge_result

from wwho.errors import VocabError
from wwho.eval_specs import _known_cuts, _spm_ends, load_spec


def test_unknown_specs_are_clear_errors(tmp_path):
    with pytest.raises(VocabError, match="not a file or directory, nor tiktoken:NAME"):
        load_spec("no-such-thing")
    with pytest.raises(VocabError, match="HF tokenizers cannot load"):
        bad = tmp_path / "t.json"
        bad.write_text('{"model": {"type": "Nonesuch"}}')
        load_spec(f"hf:{bad}")
    with pytest.raises(VocabError, match=r"t.json: not a tokenizer.json \(no 'model' object\)"):
        bad.write_text("{}")
        load_spec(f"hf:{bad}")
    with pytest.raises(VocabError, match="absent.model: no such SentencePiece model"):
        load_spec(f"spm:{tmp_path / 'absent.model'}")
    with pytest.raises(VocabError, match="SentencePiece cannot load"):
        load_spec(f"spm:{bad}")
    with pytest.raises(VocabError):
        load_spec("tiktoken:no_such_encoding")


def test_an_hf_file_whose_merge_makes_no_token_is_named_and_hf_never_panics(tmp_path, capfd, metaspace_bpe_json):
    """``hf:PATH`` runs the file as HF reads it, but a merge whose result is no token (on some of
    which HF panics, printing from inside it) is refused first, naming the merge."""
    path = tmp_path / "tokenizer.json"
    for n, text in without_each_merge_result(metaspace_bpe_json):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(VocabError, match=rf"model\.merges\[{n}\] .*: .* is not a token of model\.vocab"):
            load_spec(f"hf:{path}")
    assert "panicked" not in capfd.readouterr().err
    path.write_text(json.dumps(metaspace_bpe_json), encoding="utf-8")
    assert load_spec(f"hf:{path}").encode("ශ්‍රී ලංකාව")[0]  # the file itself loads


def test_spm_without_sentencepiece_names_the_extra(tmp_path, monkeypatch):
    """As every optional package's message does: the extra to install, ``wwho[spm]``."""
    model = tmp_path / "m.model"
    model.write_bytes(b"x")
    monkeypatch.setitem(__import__("sys").modules, "sentencepiece", None)  # import fails
    with pytest.raises(VocabError, match=r"needs? the optional package sentencepiece \(pip install 'wwho\[spm\]'\)"):
        load_spec(f"spm:{model}")


def test_spm_token_ends_are_byte_offsets_found_in_linear_time(tmp_path):
    """SentencePiece token ends from the pieces' own bytes: a byte-fallback piece ends inside its
    character (decoding every prefix gave the replacement characters' lengths there, and took time
    quadratic in the line: a 20,000-emoji text held `wwho serve` for 30 s)."""
    spm = pytest.importorskip("sentencepiece")

    corpus = tmp_path / "c.txt"
    corpus.write_text(resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8"))
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=800,
                                   model_type="bpe", minloglevel=2, byte_fallback=True)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    for text in ["එය ඖපචාරික ලෙසින්", "Hello, world 123!", "👩‍👩‍👧‍👦 ශ්‍රී"]:
        ids = sp.encode(text)
        assert sp.decode(ids) == text
        ends = _spm_ends(sp, ids, text)
        pieces = [bytes([int(p[3:5], 16)]) if sp.is_byte(i) else p.replace("\u2581", " ").encode()
                  for i, p in ((i, sp.id_to_piece(i)) for i in ids)]
        whole = b"".join(pieces)
        skip = len(whole) - len(text.encode())  # the dummy prefix space decode drops
        assert whole[skip:] == text.encode() and skip in (0, 1)
        assert ends == [max(sum(map(len, pieces[:k])) - skip, 0) for k in range(1, len(ids) + 1)]
        assert ends == sorted(ends) and ends[-1] == len(text.encode())
    long = "👩‍👩‍👧‍👦" * 20_000
    assert _spm_ends(sp, sp.encode(long), long)[-1] == len(long.encode())


def test_known_cuts_on_a_line_without_the_script_split_nothing(tokenizers, tmp_path, monkeypatch):
    # A long line of other text was split unit by unit and every token end put in a set: one
    # line of 4 MiB of 'a' took 1.3 GB. Such a line has no word to cut: nothing is split.
    tok = tokenizers["sinhala"]
    evaluated = load_spec(str(tok.save(tmp_path / "t")))
    monkeypatch.setattr(type(tok.splitter), "split", lambda *a: pytest.fail("split a line without the script"))
    line = "a" * 10_000 + " 123 " + "\u0915" * 50  # Latin, digits, Devanagari: no Sinhala
    assert evaluated.known_cuts(line, evaluated.encode(line)[1]) == 0


def test_known_cuts_of_a_line_whose_words_start_with_another_scripts_consonants():
    # A Devanagari splitter's words also start with other Brahmic consonants (kept whole as a
    # conjunct would be): a Bengali line under a Devanagari tokenizer that knows its syllables has
    # words, and cuts in them count (a shortcut on the script's own characters counted none).
    import itertools

    from wwho import SGPETokenizer

    hindi = "नमस्ते दुनिया भारत देश है"
    bengali = "কলকাতা শহর বাংলা ভাষা"
    docs = [hindi + " क" + bengali.replace(" ", "")] * 30 + [hindi] * 30
    tok = SGPETokenizer.train_from_iterator(docs, vocab_size=400, script="devanagari", progress=False)
    count = _known_cuts(tok)
    assert "কা" in tok.vocab
    ends = [len(c.encode()) for c in itertools.accumulate(bengali)]  # a cut after every character
    assert count(bengali, ends) > 0


def test_hf_byte_fallback_tokens_of_latin_1_letters_are_read_as_utf8(tmp_path):
    """A byte-fallback vocabulary's 'é' or '½' token is that character, not the byte GPT-2's map reads
    it as: the cuts inside a character are counted on a line holding one as on any other. Checked
    against the token strings HF ``tokenizers`` gives (<0xNN> one byte, '▁' a space)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from wwho.evaluate import evaluate

    text = tmp_path / "text.txt"
    text.write_text("½ é ab abc " * 200 + "\n", encoding="utf-8")
    hf = Tokenizer(models.BPE(byte_fallback=True))
    hf.pre_tokenizer, hf.decoder = pre_tokenizers.Metaspace(), decoders.Metaspace()
    hf.train([str(text)], trainers.BpeTrainer(vocab_size=40, show_progress=False))
    data = json.loads(hf.to_str())
    vocab = data["model"]["vocab"]
    vocab.update({f"<0x{b:02X}>": len(vocab) + b for b in range(256)})  # Llama's byte tokens
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf = Tokenizer.from_file(str(path))
    for line in ("a½ क", "aé ක", "½½ क", "x क"):
        ids = hf.encode(line, add_special_tokens=False).ids
        parts = []
        for i in ids:
            piece = hf.id_to_token(i)
            parts.append(bytes([int(piece[3:5], 16)]) if piece.startswith("<0x") else
                         piece.replace("\u2581", " ").encode())
        joined = b"".join(parts)
        dummy = len(joined) - len(line.encode())
        assert joined[dummy:] == line.encode(), line
        ends = [len(b"".join(parts[:k])) - dummy for k in range(1, len(ids))]
        inner = [end for end in ends if 0 < end < len(line.encode())]  # (not the dummy prefix's own end)
        measured = evaluate(load_spec(f"hf:{path}"), [line])
        assert measured.boundaries == len(inner), line
        # the cuts inside a character (क's three bytes are three byte-fallback tokens)
        assert measured.boundaries_in_cluster == sum(end not in _char_edges(line) for end in inner) > 0, line


def _char_edges(text: str) -> set[int]:
    edges, at = {0}, 0
    for c in text:
        at += len(c.encode())
        edges.add(at)
    return edges
