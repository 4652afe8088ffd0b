"""SGPE training: hand-checkable merges, determinism, resume, vocab.json, bad inputs."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import CORPORA, kill_after_checkpoints, require_data

from wwho.errors import CorpusError, VocabError
from wwho.sgpe import SGPETokenizer, load_vocab_file, train_sgpe
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS

SMALL = 5 + 256  # specials + byte tokens


def corpus(tmp_path, lines, name="c.txt"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_spec_example_merges_by_frequency(tmp_path):
    # " ලංකාව" three times, " ලංකා" once: (" ලං","කා") occurs 4 times, ("කා","ව") 3 times.
    path = corpus(tmp_path, ["ශ්‍රී ලංකාව"] * 3 + ["ශ්‍රී ලංකා"])
    options = dict(merge_scope="words", superword_share=0, progress=False, workers=1)
    vf = train_sgpe(path, vocab_size=1000, complete_endings=False, **options)
    assert vf.merges == [(" ලං", "කා"), (" ලංකා", "ව")]
    # With the ids left (the default), the ending "කාව" of " ලංකාව" (3 times) is learned after them.
    default = train_sgpe(path, vocab_size=1000, **options)
    assert default.merges == [(" ලං", "කා"), (" ලංකා", "ව"), ("කා", "ව")]
    tok = SGPETokenizer(vf)
    assert tok.tokenize("ශ්‍රී ලංකාව") == ["ශ්‍රී", " ලංකාව"]
    # ids: specials, then by final frequency (ශ්‍රී 4, " ලංකාව" 3, " ලංකා" 1), then the rest.
    assert list(vf.vocab)[:8] == [*SPECIAL_TOKENS, "ශ්‍රී", " ලංකාව", " ලංකා"]
    assert list(vf.vocab)[-256:] == list(BYTE_TOKENS)


def test_min_freq_is_strict(tmp_path):
    path = corpus(tmp_path, ["කකක", "කකක"])  # ("ක","ක") occurs 4 times, then ("කක","ක") 2 times
    merges2 = train_sgpe(path, vocab_size=1000, min_freq=2, progress=False, workers=1).merges
    assert merges2 == [("ක", "ක"), ("කක", "ක")]
    merges3 = train_sgpe(path, vocab_size=1000, min_freq=3, progress=False, workers=1).merges
    assert merges3 == [("ක", "ක")]  # the pair of frequency 2 < 3 is not merged


def test_tie_break_prefers_the_smaller_string_pair(tmp_path):
    path = corpus(tmp_path, ["මල", "කට"])  # two pairs of frequency 1 each
    vf = train_sgpe(path, vocab_size=1000, min_freq=1, prune_freq=1, progress=False, workers=1)
    assert vf.merges[0] == ("ක", "ට")  # "ක" (U+0D9A) < "ම" (U+0DB8)


def test_budget_fills_the_vocabulary_exactly(tmp_path):
    path = corpus(tmp_path, ["ශ්‍රී ලංකාව දකුණු ආසියාවේ පිහිටි දිවයිනකි"] * 5 + ["ලංකා රජය", "කාලය"] * 3)
    # A fixed prune_freq and no superword share: each id asked for is then a merge (with the defaults, a
    # budget this small is spent on characters and an unused superword share; see docs/compression.md).
    options = {"min_freq": 1, "prune_freq": 2, "superword_share": 0, "progress": False, "workers": 1}
    full = train_sgpe(path, vocab_size=2000, **options)
    small_size = len(full.vocab) - 3
    small = train_sgpe(path, vocab_size=small_size, **options)
    assert len(small.vocab) == small_size
    assert small.merges == full.merges[: len(small.merges)]


def test_pruned_syllables_fall_back_to_bytes_losslessly(tmp_path):
    path = corpus(tmp_path, ["ලංකාව"] * 5 + ["ඖ"])  # ඖ seen once: pruned at prune_freq=2
    tok = SGPETokenizer(train_sgpe(path, vocab_size=1000, prune_freq=2, progress=False, workers=1))
    assert "ඖ" not in tok.vocab
    assert tok.decode(tok.encode("ඖ ලංකාව")) == "ඖ ලංකාව"
    assert tok.tokenize("ඖ")[0].startswith("<0x")


def news_slice(tmp_path, lines=3000):
    src = require_data(CORPORA / "si" / "news-bbcsinhala.txt")
    with open(src, encoding="utf-8") as f:
        text = "".join(next(f) for _ in range(lines))
    path = tmp_path / "news.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_same_output_whatever_the_worker_count(tmp_path):
    path = news_slice(tmp_path, 1500)
    files = []
    for workers in (1, 2):
        vf = train_sgpe(path, vocab_size=3000, progress=False, workers=workers)
        out = tmp_path / f"w{workers}" / "vocab.json"
        vf.save(out)
        files.append(out.read_bytes())
    assert files[0] == files[1]


def test_resume_after_a_kill_is_byte_identical(tmp_path, monkeypatch):
    path = news_slice(tmp_path, 1500)
    whole = train_sgpe(path, vocab_size=3000, progress=False, workers=1)
    whole.save(tmp_path / "whole" / "vocab.json")

    ckpt = tmp_path / "ckpt"
    kill_after_checkpoints(monkeypatch, lambda: train_sgpe(path, vocab_size=3000, progress=False, workers=1,
                                                           checkpoint_dir=ckpt, checkpoint_every=300))
    saved = json.loads((ckpt / "checkpoint.json").read_text(encoding="utf-8"))
    assert saved["step"] == 600
    resumed = train_sgpe(path, vocab_size=3000, progress=False, workers=2, checkpoint_dir=ckpt,
                         checkpoint_every=300, resume=True)
    resumed.save(tmp_path / "resumed" / "vocab.json")
    assert (tmp_path / "resumed" / "vocab.json").read_bytes() == (tmp_path / "whole" / "vocab.json").read_bytes()


def test_resume_with_another_corpus_is_refused(tmp_path):
    path = news_slice(tmp_path, 300)
    ckpt = tmp_path / "ckpt"
    train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt)
    other = corpus(tmp_path, ["ලංකාව"] * 3, name="other.txt")
    with pytest.raises(VocabError, match="the same options but another corpus"):
        train_sgpe(other, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt, resume=True)


def test_resume_with_other_options_names_them(tmp_path):
    path = news_slice(tmp_path, 300)
    ckpt = tmp_path / "ckpt"
    train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt)
    with pytest.raises(VocabError, match=r"other options: vocab_size 1500 \(now 1600\), prefix_space False "
                                         r"\(now True\); resume"):
        train_sgpe(path, vocab_size=1600, prefix_space=True, progress=False, workers=1, checkpoint_dir=ckpt,
                   resume=True)


def test_wwho_train_names_the_flags_that_changed(tmp_path):
    """The command names its flags, not the API's arguments: a resume without ``--meta`` said
    ``segments_only True (now False)``."""
    from cli_run import one_line_error, wwho

    path = news_slice(tmp_path, 300)
    args = ["train", "--kind", "sgpe", "--quiet", "--checkpoint-dir", tmp_path / "ckpt", "--no-verify", path]
    assert wwho(*args, "--vocab-size", "1500", "-o", tmp_path / "first").returncode == 0
    line = one_line_error(wwho(*args, "-o", tmp_path / "second", "--resume", "--vocab-size", "1600",
                               "--prefix-space", "--no-bare-syllables", "--superwords", "0.1"))
    assert ("other options: --vocab-size 1500 (now 1600), without --prefix-space (now with --prefix-space), "
            "--superwords 0.15 (now 0.1), without --no-bare-syllables (now with --no-bare-syllables)") in line, line


def test_a_resume_names_the_option_that_decides_another(tmp_path):
    """A --prune-freq given where the checkpoint had auto changes what --script-characters does, but
    the user changed only --prune-freq: only it is named."""
    path = news_slice(tmp_path, 300)
    ckpt = tmp_path / "ckpt"
    train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt)
    with pytest.raises(VocabError, match=r"other options: prune_freq 'auto' \(now 3\); resume"):
        train_sgpe(path, vocab_size=1500, prune_freq=3, progress=False, workers=1, checkpoint_dir=ckpt,
                   resume=True)


def test_resume_with_other_special_tokens_is_refused(tmp_path):
    """The special tokens are part of a checkpoint's fingerprint: a resume with others must not go on,
    as its vocabulary (their count sets the merges' ids) would not be the one a training from the
    start with them gives. With the default ones the fingerprint leaves them out, so checkpoints that
    name no special tokens stay valid."""
    path = news_slice(tmp_path, 300)
    ckpt = tmp_path / "ckpt"
    custom = ("<|endoftext|>", "<|a|>", "<|b|>", "<|c|>", "<|d|>", "<|e|>", "<|f|>", "<|g|>")
    whole = train_sgpe(path, vocab_size=1500, progress=False, workers=1, special_tokens=custom)
    train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt)
    with pytest.raises(VocabError, match=r"other options: special_tokens the default \(now \['<\|endoftext\|>', "):
        train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt, resume=True,
                   special_tokens=custom)
    shutil.rmtree(ckpt)
    train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt, special_tokens=custom)
    with pytest.raises(VocabError, match=r"special_tokens \['<\|endoftext\|>', .*\] \(now the default\)"):
        train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt, resume=True)
    resumed = train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt, resume=True,
                         special_tokens=custom)
    assert resumed.to_bytes() == whole.to_bytes()


def test_resume_from_a_checkpoint_without_options_says_what_it_can(tmp_path):
    """A checkpoint of an earlier version holds no options: the error cannot name them."""
    path = news_slice(tmp_path, 300)
    ckpt = tmp_path / "ckpt"
    train_sgpe(path, vocab_size=1500, progress=False, workers=1, checkpoint_dir=ckpt)
    data = json.loads((ckpt / "checkpoint.json").read_text(encoding="utf-8"))
    del data["options"], data["input_sha256"]
    (ckpt / "checkpoint.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(VocabError, match="another corpus or other options"):
        train_sgpe(path, vocab_size=1600, progress=False, workers=1, checkpoint_dir=ckpt, resume=True)


def test_vocab_json_round_trip(tmp_path):
    path = news_slice(tmp_path, 300)
    tok = SGPETokenizer(train_sgpe(path, vocab_size=1500, progress=False, workers=1))
    tok.save(tmp_path / "out")
    data = json.loads((tmp_path / "out" / "vocab.json").read_text(encoding="utf-8"))
    for key in ("version", "vocab_size", "special_tokens", "num_merges", "prune_freq", "leading_space", "merges",
                "vocab", "script", "scripts"):
        assert key in data
    assert data["leading_space"] is True and data["vocab_size"] == len(data["vocab"]) == 1500
    again = SGPETokenizer.load(tmp_path / "out")
    assert again.vocab == tok.vocab and again.merges == tok.merges
    again.save(tmp_path / "out2")
    assert (tmp_path / "out2" / "vocab.json").read_bytes() == (tmp_path / "out" / "vocab.json").read_bytes()


# -- bad inputs ------------------------------------------------------------------------------

def test_missing_and_empty_corpus(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        train_sgpe(tmp_path / "absent.txt", vocab_size=1000, progress=False)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(CorpusError, match="the corpus has no text"):
        train_sgpe(empty, vocab_size=1000, progress=False, workers=1)


def test_invalid_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "ලංකාව"}\n{broken\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c.jsonl:2: invalid JSON"):
        train_sgpe(path, vocab_size=1000, progress=False, workers=1)
    vf = train_sgpe(path, vocab_size=1000, progress=False, workers=1, skip_bad_lines=True, prune_freq=1)
    assert "ලං" in vf.vocab


def test_vocab_size_smaller_than_specials(tmp_path):
    path = corpus(tmp_path, ["ලංකාව"])
    with pytest.raises(VocabError, match="too small"):
        train_sgpe(path, vocab_size=100, progress=False)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("vocab"), "missing key 'vocab'"),
        (lambda d: d["vocab"].update({"x": 10 ** 6}), "'x': id 1000000 is out of range"),
        (lambda d: d.update(merges=[["ල", "nope"]]), r"'nope' is not in 'vocab'"),
        (lambda d: d.update(vocab_size=3), "'vocab_size' is 3"),
        (lambda d: d.update(script="klingon"), "'script' must be one of"),
        (lambda d: d["vocab"].update({"zz": d["vocab"].pop("<0x41>")}), "byte tokens"),
        (lambda d: d.update(leading_space=False), "'leading_space' false is not supported"),
        # every value but true must not be reported as false
        (lambda d: d.update(leading_space="yes"), "'leading_space' must be true, not 'yes'"),
        (lambda d: d.update(leading_space=None), "'leading_space' must be true, not None"),
    ],
)
def test_invalid_vocab_json_is_reported(tmp_path, mutate, message):
    path = corpus(tmp_path, ["ලංකාව"] * 3)
    vf = train_sgpe(path, vocab_size=1000, progress=False, workers=1)
    data = vf.to_json()
    mutate(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(VocabError, match=message):
        load_vocab_file(bad)


def test_not_json_vocab(tmp_path):
    bad = tmp_path / "vocab.json"
    bad.write_text("{oops")
    with pytest.raises(VocabError, match="invalid JSON at line 1"):
        SGPETokenizer.load(tmp_path)


def test_cli_failure_leaves_no_output(tmp_path, capsys):
    from wwho.cli import main

    out = tmp_path / "out"
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "ලංකාව"}\n{broken\n', encoding="utf-8")
    assert main(["train", "--kind", "sgpe", "--vocab-size", "1000", "--out", str(out), "--quiet", str(path)]) == 2
    assert "c.jsonl:2" in capsys.readouterr().err
    assert not (out / "vocab.json").exists()


def test_cli_train_encode_decode_inspect(tmp_path, capsys):
    from wwho.cli import main

    path = news_slice(tmp_path, 300)
    out = tmp_path / "out"
    assert main(["train", "--kind", "sgpe", "--vocab-size", "1500", "--out", str(out), "--quiet", "--workers", "1",
                 str(path)]) == 0
    assert (out / "vocab.json").exists() and not (out / "checkpoints").exists()
    capsys.readouterr()
    assert main(["encode", "--tokenizer", str(out), "ශ්‍රී ලංකාව"]) == 0
    ids = capsys.readouterr().out.split()
    assert main(["decode", "--tokenizer", str(out), *ids]) == 0
    assert capsys.readouterr().out == "ශ්‍රී ලංකාව\n"
    assert main(["encode", "--tokenizer", str(out / "vocab.json"), "--tokens", "ශ්‍රී ලංකාව"]) == 0
    assert "ශ්‍රී" in capsys.readouterr().out
    assert main(["inspect", str(out)]) == 0
    assert "SGPE vocabulary: 1,500 tokens" in capsys.readouterr().out


def _surrogate_corpus(tmp_path):
    """JSONL whose text holds lone surrogates (escaped: the only way a UTF-8 file can carry them)."""
    lines = [json.dumps({"text": t}) for t in ["ශ්‍රී ලංකාව \ud800 ලංකා", "x\udfffy ලංකාව", "\ud83c\udfcf ලංකා \udc00"] * 30]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def test_lone_surrogates_train_resume_save_and_round_trip(tmp_path):
    """Lone surrogates are never tokens (no vocab.json or tokenizer.json could hold them): byte
    fallback encodes them, so they round-trip; the checkpoint fingerprint and save() handle them."""
    path = _surrogate_corpus(tmp_path)
    vf = train_sgpe(path, vocab_size=400, progress=False, workers=1, checkpoint_dir=tmp_path / "ckpt",
                    checkpoint_every=1)
    assert not [t for t in vf.vocab if any("\ud800" <= c <= "\udfff" for c in t)]
    again = train_sgpe(path, vocab_size=400, progress=False, workers=2, checkpoint_dir=tmp_path / "ckpt",
                       checkpoint_every=1, resume=True)
    assert again == vf
    tok = SGPETokenizer(vf)
    out = tok.save(tmp_path / "out")
    loaded = SGPETokenizer.load(out)
    for text in ["ශ්‍රී ලංකාව \ud800 ලංකා", "\udfff", "a\ud800\udc00b"]:
        assert loaded.decode(loaded.encode(text)) == text
    from tokenizers import Tokenizer

    Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))  # HF can load what was written


def test_the_cli_trains_on_lone_surrogates(tmp_path):
    from cli_run import wwho

    path = _surrogate_corpus(tmp_path)
    proc = wwho("train", "--kind", "sgpe", path, "--vocab-size", 400, "--out", tmp_path / "out", "--quiet")
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert (tmp_path / "out" / "vocab.json").is_file()


@pytest.mark.parametrize("scope", ["pieces", "words", "runs"])
@pytest.mark.parametrize("lang, script, warns", [
    ("hi", "sinhala", "devanagari"),  # the wrong script: Hindi is boundary tokens inside spans
    ("si", "devanagari", "sinhala"),
    ("si", "sinhala", None),
    ("hi", "devanagari", None),
])
def test_training_in_the_wrong_script_warns_in_every_scope(tmp_path, scope, lang, script, warns):
    """Real news in one script trained for another: a ScriptWarning naming the script to pass, in
    every merge scope (before, the default scope counted only lone boundary tokens and said nothing
    when a whole Hindi corpus was trained as Sinhala); the right script: none."""
    import warnings

    from conftest import read_slice

    from wwho.errors import ScriptWarning

    name = {"hi": "tico19-test.txt", "si": "news-bbcsinhala.txt"}[lang]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(read_slice(require_data(CORPORA / lang / name), 60_000), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_sgpe(corpus, vocab_size=600, script=script, merge_scope=scope, progress=False, workers=1)
    got = [str(w.message) for w in caught if issubclass(w.category, ScriptWarning)]
    if warns is None:
        assert got == []
    else:
        assert len(got) == 1 and f"pass --script / script={warns}" in got[0], got


@pytest.mark.parametrize("script, seen, unseen", [
    ("devanagari", ["नमस्ते दुनिया", "भारत देश"], "।॥ऄ"),  # dandas and a rare vowel, absent from training
    ("telugu", ["నమస్కారం ప్రపంచం"], "ఱౘ"),
    ("sinhala", ["ලංකාව"], "ඖෟ"),
])
def test_script_characters_give_every_letter_of_the_schema_a_token(tmp_path, script, seen, unseen):
    from tokenizers import Tokenizer

    from wwho.schema import bundled_schema

    path = corpus(tmp_path, seen * 5)
    options = dict(vocab_size=5000, script=script, progress=False, workers=1)
    plain = SGPETokenizer(train_sgpe(path, script_characters=False, **options))
    full = SGPETokenizer(train_sgpe(path, **options))  # the default
    listed = {chr(cp) for cp in bundled_schema(script).common_listed()}
    assert listed <= set(full.vocab)
    text = " ".join([*seen, unseen, unseen[0] + seen[0]])
    for char in unseen:
        assert plain.tokenize(char) == [f"<0x{b:02X}>" for b in char.encode()]  # bytes without it
        assert full.tokenize(char) == [char]
    assert len(full.encode(text)) < len(plain.encode(text))
    assert full.decode(full.encode(text)) == text
    # The exported tokenizer.json has the characters too, and gives the same ids.
    full.save(tmp_path / "hf")
    hf = Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    assert hf.encode(text, add_special_tokens=False).ids == full.encode(text)


def test_script_characters_leave_extension_blocks_to_the_training_text(tmp_path):
    # Devanagari's Vedic Extensions and Extended blocks are marked "extension": their characters
    # get a token only where the training text has them (here one Vedic tone mark, U+1CD0).
    from wwho.schema import bundled_schema

    blocks = {b.name: b for b in bundled_schema("devanagari").blocks}
    assert [name for name, b in blocks.items() if b.extension] == [
        "Vedic Extensions", "Devanagari Extended", "Devanagari Extended-A"]
    seen_mark, unseen_mark, unseen_sign = "\u1cd0", "\u1cd1", "\ua8f2"
    path = corpus(tmp_path, ["नमस्ते दुनिया", "भारत देश", f"ओम{seen_mark} नमः"] * 5)
    tok = SGPETokenizer(train_sgpe(path, vocab_size=5000, script="devanagari", progress=False, workers=1))
    assert seen_mark in tok.vocab
    for char in (unseen_mark, unseen_sign):
        assert char not in tok.vocab
        assert tok.tokenize(char) == [f"<0x{b:02X}>" for b in char.encode()]
    assert "\u0904" in tok.vocab  # a letter of the main block, unseen, still gets its token


def test_script_characters_change_the_checkpoint_fingerprint(tmp_path):
    path = news_slice(tmp_path, 300)
    options = dict(vocab_size=1500, progress=False, workers=1, checkpoint_dir=tmp_path / "ck", checkpoint_every=50)
    train_sgpe(path, script_characters=False, **options)
    with pytest.raises(VocabError, match="checkpoint"):
        train_sgpe(path, resume=True, **options)


def test_cli_script_characters_on_by_default_and_off_on_request(tmp_path):
    from wwho.cli import main

    path = corpus(tmp_path, ["ලංකාව ශ්‍රී"] * 5)
    for flags, has_rare_letter in (([], True), (["--no-script-characters"], False)):
        out = tmp_path / f"out{len(flags)}"
        assert main(["train", "--kind", "sgpe", "--vocab-size", "2000", "--out", str(out), "--quiet",
                     "--workers", "1", *flags, str(path)]) == 0
        vocab = json.loads((out / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        assert ("ඖ" in vocab) is has_rare_letter


def test_script_characters_stay_out_of_a_vocabulary_too_small_for_them(tmp_path, capsys):
    # Two scripts' characters are about 300: in a vocabulary of 1,000 they would take the place of
    # most merges, so they are left out (with a note), and the size asked is not passed. The
    # scripts the text does not have get none, at any size.
    path = corpus(tmp_path, ["नमस्ते दुनिया ලංකාව"] * 5)
    small = train_sgpe(path, vocab_size=1000, script="indic", progress=True, workers=1)
    assert len(small.vocab) <= 1000 and "ඖ" not in small.vocab
    assert "left to byte fallback" in capsys.readouterr().err
    large = train_sgpe(path, vocab_size=40_000, script="indic", progress=False, workers=1)
    assert "ඖ" in large.vocab and "ऄ" in large.vocab
    assert "ఱ" not in large.vocab and "க" not in large.vocab  # no Telugu or Tamil in the text


def test_a_vocabulary_larger_than_asked_is_a_warning_even_when_quiet(tmp_path):
    """The base symbols, the characters and the byte tokens of a corpus may not fit in a small
    vocab_size; the vocabulary is then larger than asked, said by a ``VocabSizeWarning``, not a bare
    ``warning:`` line that ``--quiet`` hides."""
    import warnings

    from conftest import run_wwho

    from wwho.errors import VocabSizeWarning

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(chr(0x0D9A + i) + "ා " + chr(0x0D9A + i) + "ි" for i in range(40)) * 3,
                      encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vocab = train_sgpe(corpus, vocab_size=300, progress=False, workers=1)
    larger = [str(w.message) for w in caught if issubclass(w.category, VocabSizeWarning)]
    assert len(vocab.vocab) > 300
    assert len(larger) == 1 and f"the vocabulary has {len(vocab.vocab):,} tokens, more than the 300 asked" in larger[0]
    done = run_wwho("train", "--kind", "sgpe", "--vocab-size", "300", "--quiet", "-o", tmp_path / "out", corpus)
    assert done.returncode == 0 and f"wwho: warning: the vocabulary has {len(vocab.vocab):,} tokens" in done.stderr


@pytest.mark.parametrize("script", ["mixed", "indic"])
def test_a_stray_mark_both_alone_and_after_a_letter_trains(tmp_path, script):
    """A combining mark after a space is a boundary token, after a letter part of a syllable: one
    symbol, in the multi-script modes too (not 'symbols 0 and 1 are equal')."""
    import warnings

    corpus = tmp_path / "m.txt"
    corpus.write_text("\u0301\n\u0d9a\u0301\n\u0300 x\u0300 \u0915\u0300\n" * 3, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = SGPETokenizer(train_sgpe(corpus, vocab_size=300, script=script, progress=False, workers=1))
    for line in corpus.read_text(encoding="utf-8").splitlines():
        assert tok.decode(tok.encode(line)) == line


def test_superword_merges_follow_min_freq(tmp_path):
    """Superword merges take no phrase seen fewer times than --min-freq says."""
    import warnings

    from conftest import read_slice

    corpus = tmp_path / "c.txt"
    corpus.write_text(read_slice(require_data(CORPORA / "si" / "news-bbcsinhala.txt"), 200_000), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vocab = train_sgpe(corpus, vocab_size=4000, min_freq=10**6, progress=False, workers=1)
    assert vocab.merges == [] and vocab.superword_merges == []


def test_the_size_a_larger_vocabulary_warning_names_fits(tmp_path):
    """The schema's characters are left out of a vocabulary too small for them, and come back at the
    size the warning names; before, that size then warned again with a larger one."""
    import warnings

    from conftest import read_slice

    from wwho.errors import VocabSizeWarning

    corpus = tmp_path / "c.txt"
    corpus.write_text(read_slice(require_data(CORPORA / "si" / "news-bbcsinhala.txt"), 100_000), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_sgpe(corpus, vocab_size=262, progress=False, workers=1)
    said = [str(w.message) for w in caught if issubclass(w.category, VocabSizeWarning)]
    fits = int(said[0].rsplit(">= ", 1)[1].replace(",", "").split()[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vocab = train_sgpe(corpus, vocab_size=fits, progress=False, workers=1)
    assert len(vocab.vocab) <= fits
    assert not [w for w in caught if issubclass(w.category, VocabSizeWarning) and "more than" in str(w.message)]


def test_a_vocabulary_short_for_its_superword_share_says_so(tmp_path):
    """With superword_share 0.99 the warning says the merges stopped at their share, not that the
    text had no pair left to merge (the same text gives thousands at the default)."""
    from conftest import read_slice

    from wwho.errors import VocabSizeWarning

    corpus = tmp_path / "c.txt"
    corpus.write_text(read_slice(require_data(CORPORA / "si" / "news-bbcsinhala.txt"), 300_000), encoding="utf-8")
    with pytest.warns(VocabSizeWarning, match=r"the superword stage found words to join for only [\d,]+ of the "
                                              r"[\d,]+ ids kept for superwords \(superword_share 0.99\)"):
        train_sgpe(corpus, vocab_size=8000, superword_share=0.99, progress=False, workers=1)
    with pytest.warns(VocabSizeWarning, match="no pair of tokens left to merge"):  # the text's own limit
        train_sgpe(corpus, vocab_size=200_000, min_freq=1, superword_share=0.15, progress=False, workers=1)


def test_meta_training_on_a_corpus_without_indic_text_says_so(tmp_path):
    """Not 'the corpus has no text (1 file, 2 documents)', which contradicts itself."""
    corpus = tmp_path / "en.txt"
    corpus.write_text("hello world\nonly english here\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="the corpus has no sinhala text .*1 file, 2 documents"):
        train_sgpe(corpus, vocab_size=600, segments_only=True, progress=False, workers=1)
    # Text of another Indic script is not the script chosen: the message names the one chosen.
    corpus.write_text("శ్రీ తెలుగు\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="has no tamil text .*runs of the script chosen"):
        train_sgpe(corpus, vocab_size=600, script="tamil", segments_only=True, progress=False, workers=1)


def test_a_vocabulary_short_for_its_prune_freq_names_it(tmp_path):
    """With prune_freq far above any syllable's count the warning advises a lower prune_freq, not
    more text only: the same text reaches the size with the default."""
    import warnings

    from wwho.errors import VocabSizeWarning

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව කොළඹ නුවර ගාල්ල මාතර යාපනය\n" * 300, encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_sgpe(corpus, vocab_size=600, prune_freq=10**9, superword_share=0, progress=False, workers=1)
    said = [str(w.message) for w in caught if issubclass(w.category, VocabSizeWarning)]
    assert said and "lower prune_freq (--prune-freq)" in said[0]


@pytest.mark.parametrize("method", ["train_from_iterator", "train_from_counts"])
def test_a_misspelt_option_is_refused_before_any_text_is_read(method):
    """train_from_iterator(superword_shares=0.1) is refused before counting any document, naming no
    private function; train_from_counts refuses prefix_space with segments_only."""
    from wwho.errors import VocabError
    from wwho.sgpe import SGPETokenizer

    def texts():
        pytest.fail("the texts were read")
        yield ""

    source = texts() if method == "train_from_iterator" else {"ශ්‍රී": 3}
    train = getattr(SGPETokenizer, method)
    with pytest.raises(TypeError, match=rf"{method}\(\) got an unexpected keyword argument 'superword_shares' "
                                        r"\(did you mean 'superword_share'\?\)"):
        train(source, vocab_size=500, superword_shares=0.1)
    if method == "train_from_counts":
        with pytest.raises(VocabError, match="prefix_space cannot be used with segments_only"):
            train(source, vocab_size=500, prefix_space=True, segments_only=True)


def test_a_vocabulary_short_for_its_min_freq_names_it_not_the_superword_share(tmp_path):
    """With a high min_freq the base symbols take the merges' share and the superword stage finds
    nothing that frequent: the warning advised a smaller --superwords, which gave no more tokens."""
    from importlib import resources

    from wwho.errors import VocabSizeWarning

    sample = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8")
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(sample.splitlines()[:300]) + "\n", encoding="utf-8")
    with pytest.warns(VocabSizeWarning) as caught:
        train_sgpe(corpus, vocab_size=1000, min_freq=10**6, progress=False, workers=1)
    said = [str(w.message) for w in caught if issubclass(w.category, VocabSizeWarning)]
    assert len(said) == 1 and "lower --min-freq (now 1,000,000)" in said[0] and "smaller share" not in said[0]
