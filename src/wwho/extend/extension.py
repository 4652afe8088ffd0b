"""Extend a byte-level BPE tokenizer with the syllables of Indic scripts: :func:`extend_tokenizer`.

The result (:class:`Extension`) is one byte-level BPE with the merges rule:

* **vocabulary**: every base token keeps its id and bytes (special, added and decode-only tokens
  included); the new tokens get the ids from the base's ``n_vocab`` on, in order of creation;
  every id below the last one has a token: the base's holes (o200k_base has none at 199,998 and
  200,000..200,017) become special ``<|reserved_ID|>`` tokens, as o200k-based models fill them, so
  ``len(tokenizer)`` is the row count of the embedding matrix; ``pad_to_multiple_of`` adds more of
  them up to a multiple (64, 128) of it;
* **pre-tokenizer**: script words cut out whole, the base's regexes elsewhere
  (:mod:`wwho.extend.pretokenizer`);
* **merges**: the new merges (:mod:`wwho.extend.building`, :mod:`wwho.extend.learn`), then the
  base's in their own order (a tiktoken base's ranks become "every split of every token, by rank",
  as in :func:`wwho.bytelevel.hf_files.tiktoken_merges`). A base merge that is also a new one is kept
  only at its new place; such a pair is exclusive to the scripts, so this changes nothing elsewhere.
  ``ignore_merges`` is the base's (always on for tiktoken bases).

Text with no code point of the scripts' blocks therefore gets exactly the base's ids: no new
merge can fire on it, the base merges keep their relative order, and the pre-tokenizer splits it
as the base does. The tests check it against the base (and tiktoken) on corpora and fuzzed text.

Not here: the result's record (:mod:`wwho.extend.model`), the files (:mod:`wwho.extend.files`), the
checks (:mod:`wwho.extend.verify`).
"""

from __future__ import annotations

import math
import os
import stat
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.files import TIKTOKEN_ENCODINGS
from wwho.bytelevel.hf_files import reserved_tokens, tiktoken_merges
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.bytelevel.train import count_bytelevel
from wwho.corpus import MAX_LINE_BYTES, CorpusStats, check_max_line_bytes, iter_documents
from wwho.corpus_files import resolve_paths
from wwho.errors import CorpusError, VocabError, WwhoWarning, brief
from wwho.extend.building import NewMerges
from wwho.extend.files import EXTRA_ROLE, NAMED_EXTRA_ROLE, ROLES
from wwho.extend.learn import learn
from wwho.extend.model import Extension
from wwho.extend.pretokenizer import NotExtendable, extend_pretokenizer
from wwho.extend.scripts import ScriptSet
from wwho.fileio import file_type
from wwho.notices import warn
from wwho.sizes import MAX_COUNT, check_range, check_vocab_size, check_workers


def load_base(
    base: str | os.PathLike | ByteBPE,
    *,
    tiktoken_file: str | os.PathLike | None = None,
    pattern: str | None = None,
) -> tuple[ByteBPE, dict]:
    """The base tokenizer and the ``transformers`` settings to carry over (chat template ...).

    ``base``: a ``ByteBPE``; ``tiktoken:NAME`` or a known tiktoken name (offline: ``tiktoken_file``,
    ``$WWHO_TIKTOKEN_FILE`` or tiktoken's cache); a ``.tiktoken`` or ``.gguf`` file; a Hugging Face
    ``tokenizer.json`` (or its directory); a wwho byte-level directory. ``pattern``: the
    pre-tokenizer of a ``.tiktoken`` file that is not a known encoding (a regex, or ``gpt2``,
    ``gpt4``, ``o200k``); every other base carries its own.
    """
    if pattern is not None and not (isinstance(base, (str, os.PathLike))
                                    and str(base).lower().endswith((".tiktoken", ".gguf"))):
        raise VocabError("pattern= (--pattern) is for a .tiktoken base, or a .gguf one without tokenizer.ggml.pre; "
                         "every other base carries its own")
    if isinstance(base, ByteBPE):
        return base, {}
    if not isinstance(base, (str, os.PathLike)):
        raise VocabError(f"base must be a ByteBPE, a path or a tiktoken name, not {type(base).__name__}")
    spec = os.fspath(base)
    name = spec.removeprefix("tiktoken:")
    if spec.startswith("tiktoken:") or (name in TIKTOKEN_ENCODINGS and not Path(spec).exists()):
        return ByteBPE.from_tiktoken(name, tiktoken_file=tiktoken_file), {}  # or WWHO_TIKTOKEN_FILE
    path = Path(spec)
    if not path.exists():
        raise VocabError(
            f"{path}: no such file or directory (BASE is a tokenizer.json, .gguf, .tiktoken, "
            "a directory holding one, or tiktoken:NAME)"
        )
    try:
        return _load_file(path, pattern)
    except RecursionError:  # a regex or a JSON value nested thousands deep, parsed recursively
        raise VocabError(f"{path}: nested too deeply to be read (a regex or a JSON value)") from None
    except VocabError as exc:
        # A loader's message that does not say which file (a bad regex, an empty pre-tokenizer) is
        # given it: BASE may be a directory, and the error must name what to fix.
        if len(exc.args) == 1 and str(path) not in str(exc):
            exc.args = (f"{path}: {exc}",)
        raise


def _load_file(path: Path, pattern: str | None) -> tuple[ByteBPE, dict]:
    """:func:`load_base` of a file or directory that exists."""
    if path.is_dir():
        if (path / "tokenizer.json").is_file():
            return load_base(path / "tokenizer.json")
        if (path / "bytelevel.json").is_file():
            return ByteBPE.load(path), {}
        raise VocabError(f"{path}: no tokenizer.json or bytelevel.json here")
    suffix = path.suffix.lower()
    if suffix == ".gguf":
        from wwho.bytelevel.gguf import command_line_pretokenizer
        from wwho.bytelevel.gguf_metadata import read_metadata

        template = read_metadata(path).get("tokenizer.chat_template")
        tok = ByteBPE.from_gguf(path, pretokenizer=command_line_pretokenizer(path, pattern))
        return tok, ({"chat_template": template} if isinstance(template, str) else {})
    if suffix == ".tiktoken":
        return ByteBPE.from_tiktoken(path, pattern=pattern), {}
    if path.name == "bytelevel.json":
        return ByteBPE.load(path.parent), {}
    if suffix == ".json":
        tok = ByteBPE.from_hf(path)
        return tok, _hf_config(path.parent, tok)
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):  # a FIFO or a device named like no vocabulary: say what it is
        raise VocabError(f"{path}: is {file_type(mode)}; the base must be a regular file (tokenizer.json, .gguf, "
                         ".tiktoken) or a directory holding one")
    raise VocabError(f"{path}: not a byte-level BPE file wwho reads (tokenizer.json, .gguf, .tiktoken)")


#: The largest ``pad_to_multiple_of``: far above the 64 or 128 GPU kernels want, and what stays quick
#: (every padding id is a special token, and the checks encode with every special token allowed).
MAX_PAD_MULTIPLE = 1 << 16
#: transformers settings of a base tokenizer_config.json that still hold for the extension.
CARRIED_CONFIG = ("chat_template", "model_max_length", "padding_side", "model_input_names")


def _hf_config(folder: Path, tok: ByteBPE) -> dict:
    """The settings and roles of a base folder's transformers files that hold for the extension; a
    role is kept only if its token is one of the base's (every base id stays in the extension)."""
    from wwho.fileio import read_json

    def read(name: str) -> dict:
        path = folder / name
        data = read_json(path, error=VocabError, what=name) if path.is_file() else {}
        return data if isinstance(data, dict) else {}

    config, roles = read("tokenizer_config.json"), read("special_tokens_map.json")
    templates = _template_files(folder)
    if templates is not None:  # (transformers' own order: these files before the config's template)
        config["chat_template"] = templates
    carried = {}
    for key in (k for k in CARRIED_CONFIG if k in config):
        if _valid_setting(key, config[key]):
            carried[key] = config[key]
        else:  # written as it is, a NaN would be no JSON a strict reader takes, a 7 no padding side
            warn(f"{folder}: the base's {key} {brief(config[key])} is not one transformers takes, so the "
                 "extension leaves it out", WwhoWarning)
    for role in ROLES:
        value = roles.get(role, config.get(role))  # special_tokens_map.json first, as transformers reads them
        text = value.get("content") if isinstance(value, dict) else value
        if isinstance(text, str) and text in tok.get_vocab():
            carried[role] = text
        elif isinstance(text, str):  # transformers would add it as a new token; the extension keeps base ids
            warn(f"{folder}: the base's {role} {text!r} is no token of its vocabulary, so the extension "
                 f"has no {role} (set one, e.g. tokenizer.{role} = ..., after loading it)", WwhoWarning)
    # A chat model's <|im_start|>, <|im_end|> ...; transformers 5 writes that list as extra_special_tokens,
    # which transformers 4 reads as a dict of tokens with roles of their own (image_token ...).
    extra, named = roles.get(EXTRA_ROLE, config.get(EXTRA_ROLE)), config.get(NAMED_EXTRA_ROLE)
    if extra is None and isinstance(named, list):
        extra, named = named, None
    if isinstance(named, dict):
        kept_named = {role: text for role, text in named.items() if isinstance(text, str) and text in tok.get_vocab()}
        if kept_named:
            carried[NAMED_EXTRA_ROLE] = kept_named
        missing = [text for role, text in named.items() if role not in kept_named]
        if missing:
            warn(f"{folder}: the base's {NAMED_EXTRA_ROLE} {', '.join(map(brief, missing))} are no tokens of its "
                 "vocabulary, so the extension leaves them out", WwhoWarning)
    if isinstance(extra, list):
        texts = [t.get("content") if isinstance(t, dict) else t for t in extra]
        texts = [t for t in texts if isinstance(t, str)]
        kept = [t for t in texts if t in tok.get_vocab()]
        if kept:
            carried[EXTRA_ROLE] = kept
        missing = [t for t in texts if t not in kept]
        if missing:
            warn(f"{folder}: the base's {EXTRA_ROLE} {', '.join(map(repr, missing))} are no tokens of its "
                 "vocabulary, so the extension leaves them out", WwhoWarning)
    return carried


#: transformers' files of a folder's chat templates (from 4.43; the only place transformers 5 writes
#: them): the default one, and a folder of named ones.
TEMPLATE_FILE, TEMPLATE_FOLDER = "chat_template.jinja", "additional_chat_templates"


def _template_files(folder: Path) -> str | list[dict] | None:
    """The chat templates of a folder's template files, as ``tokenizer_config.json`` holds them (one
    template, or named ones), or None where it has none."""
    found = {}
    if (folder / TEMPLATE_FILE).is_file():
        found["default"] = folder / TEMPLATE_FILE
    if (folder / TEMPLATE_FOLDER).is_dir():
        found.update((path.stem, path) for path in sorted((folder / TEMPLATE_FOLDER).glob("*.jinja")))
    texts = {}
    for name, path in found.items():
        try:
            texts[name] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise VocabError(f"{path}: cannot read the base's chat template: {exc}") from None
    if not texts:
        return None
    if list(texts) == ["default"]:
        return texts["default"]
    return [{"name": name, "template": text} for name, text in texts.items()]


def _valid_setting(key: str, value: object) -> bool:
    """Whether ``value`` is one transformers takes for the ``tokenizer_config.json`` setting ``key``."""
    if key == "chat_template":  # one template, or named ones
        return isinstance(value, str) or (isinstance(value, list) and all(
            isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("template"), str)
            for t in value))
    if key == "model_max_length":
        return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value > 0
    if key == "padding_side":
        return value in ("left", "right")
    return isinstance(value, list) and all(isinstance(name, str) for name in value)  # model_input_names


def check_byte_tokens(tok: ByteBPE, scripts: ScriptSet, base: object = None) -> None:
    """Refuse (:class:`NotExtendable`) a base without a token for a byte of the scripts' characters,
    or for the space. New tokens are built from single bytes, the space is a word's first unit,
    and a byte-level BPE can join only tokens it has: a merge of a missing byte would be written
    into a ``tokenizer.json`` that Hugging Face refuses to load."""
    needed = {0x20}
    for script in scripts.scripts:
        for cp in script.chars:
            if not 0xD800 <= cp <= 0xDFFF:
                needed.update(chr(cp).encode("utf-8"))
    ranks = tok.ranks
    missing = sorted(b for b in needed if bytes([b]) not in ranks)
    if missing:
        shown = ", ".join(f"0x{b:02X}" for b in missing[:8]) + (", ..." if len(missing) > 8 else "")
        name = os.fspath(base) if isinstance(base, (str, os.PathLike)) else tok.name or "the base"
        raise NotExtendable(
            f"{name}: the base has no token for {len(missing)} byte(s) ({shown}) of which the space or the "
            f"characters of {scripts.label} are made; a byte-level BPE can only build new tokens from "
            "the tokens it has, so none of them can be added"
        )


def check_added_tokens(tok: ByteBPE, scripts: ScriptSet, base: object = None) -> None:
    """Refuse (:class:`NotExtendable`) a base with an added token (not special) that holds a character
    of the scripts' blocks, as ``tokenizer.add_tokens(["भारत"])`` makes one: Hugging Face cuts an
    added token out of any text before the pre-tokenizer runs, so it would cut the script's words
    and syllables wherever it occurs (``भारतीय`` as ``भारत`` + ``ीय``), and a new token equal to it
    would never be used. Special tokens are left to the rule of all special-token text."""
    held = sorted((i, text) for text, i in tok.added_tokens.items() if scripts.has_block_char(text))
    if held:
        shown = ", ".join(f"{brief(text)} (id {i:,})" for i, text in held[:5]) + (", ..." if len(held) > 5 else "")
        name = os.fspath(base) if isinstance(base, (str, os.PathLike)) else tok.name or "the base"
        raise NotExtendable(
            f"{name}: {len(held):,} added token(s) of the base hold characters of {scripts.label}: {shown}; an added "
            "token is cut out of the text before the pre-tokenizer runs, wherever it occurs, so it would cut the "
            "script's syllables and no new token could equal it: extend a base without them (remove them from its "
            "tokenizer.json's added_tokens)"
        )


def extend_tokenizer(
    base: str | os.PathLike | ByteBPE,
    corpus: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    add: int,
    scripts: Sequence[str] | str = ("sinhala",),
    min_syllable_freq: int | None = None,
    syllable_share: float = 0.5,
    min_freq: int = 2,
    workers: int | None = None,
    text_field: str = "text",
    skip_bad_lines: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    stats: CorpusStats | None = None,
    tiktoken_file: str | os.PathLike | None = None,
    pattern: str | None = None,
    word_counts: Counter[str] | None = None,
    verify: bool = True,
    progress: bool = True,
    pad_to_multiple_of: int | None = None,
    balance: float | None = None,
    balance_seed: int = 0,
) -> Extension:
    """Learn ``add`` new tokens over the syllables of ``scripts`` on ``corpus`` and extend ``base``.

    See the package docstring and ``docs/extend.md``. Raises :class:`~wwho.extend.NotExtendable`
    (before reading the corpus) when the base's pre-tokenizer cannot be extended exactly.
    ``verify`` runs :func:`wwho.extend.verify.check_extension` on the first lines of the corpus.
    ``word_counts``: the corpus's script words as :func:`count_words` gives them, to skip counting
    when extending several bases or sizes from one corpus. ``pad_to_multiple_of``: reserved tokens
    after the new ones until the vocabulary is a multiple of it (64 or 128 suit GPU kernels).
    ``balance=alpha``: ``corpus`` is several corpora (one per language: a file or a folder each),
    counted as one stream sampled with temperature ``alpha`` (:mod:`wwho.balance`, as
    ``train_sgpe``'s), seeded by ``balance_seed``: an extension for several languages of a script
    learns from each, not from the largest only.
    """
    check_vocab_size(add, "add")
    if isinstance(syllable_share, bool) or not isinstance(syllable_share, (int, float)) or not (
        0 < syllable_share <= 1
    ):
        raise VocabError(f"syllable_share must be a number in (0, 1], not {syllable_share!r}")
    if min_syllable_freq is not None:
        check_range(min_syllable_freq, "min_syllable_freq", 1, MAX_COUNT)
    check_range(min_freq, "min_freq", 1, MAX_COUNT)
    check_workers(workers)
    check_max_line_bytes(max_line_bytes)
    if pad_to_multiple_of is not None:
        check_range(pad_to_multiple_of, "pad_to_multiple_of", 1, MAX_PAD_MULTIPLE)
    script_set = ScriptSet([scripts] if isinstance(scripts, str) else list(scripts))
    tok, base_config = load_base(base, tiktoken_file=tiktoken_file, pattern=pattern)
    pretokenizer = extend_pretokenizer(tok.pretokenizer, script_set)  # refuses before any work is done
    check_byte_tokens(tok, script_set, base)
    check_added_tokens(tok, script_set, base)
    paths = resolve_paths(corpus)
    if balance is not None and word_counts is not None:
        raise VocabError("balance samples the corpus as it counts its words: give it or word_counts, not both")
    if balance is not None:
        from wwho import balance as balancing

        words = count_script_words(
            balancing.stream(corpus, balance, seed=balance_seed, text_field=text_field,
                             skip_bad_lines=skip_bad_lines, max_line_bytes=max_line_bytes,
                             stats=stats if stats is not None else CorpusStats(), progress=progress),
            script_set,
            workers=workers,
            progress=progress,
        )
    elif word_counts is None:
        words = count_words(
            paths,
            script_set,
            workers=workers,
            text_field=text_field,
            skip_bad_lines=skip_bad_lines,
            max_line_bytes=max_line_bytes,
            stats=stats,
            progress=progress,
        )
    else:
        words = word_counts
    present = {script_set.script_of(word).name for word in words}
    missing = [name for name in script_set.names if name not in present]
    if missing:
        # (one script of several without text would get no token, yet its text a changed pre-tokenizer)
        named = ", ".join(os.fspath(p) for p in paths[:3]) + (f" and {len(paths) - 3:,} more" if len(paths) > 3 else "")
        what = script_set.label if not present else "+".join(missing)
        raise CorpusError(f"the corpus ({named}) holds no {what} text; give text of each script to extend for"
                          + ("" if not present else f", or leave {'+'.join(missing)} out of the scripts"))
    merges = NewMerges(tok.ranks, tok.n_vocab, script_set)
    known, learn_stats = learn(
        words,
        script_set,
        merges,
        add=add,
        min_syllable_freq=min_syllable_freq,
        syllable_share=syllable_share,
        min_freq=min_freq,
        progress=progress,
    )
    options = {
        "add": add,
        "scripts": list(script_set.names),
        "min_syllable_freq": min_syllable_freq,
        "syllable_share": syllable_share,
        "min_freq": min_freq,
    }
    if pad_to_multiple_of is not None:
        options["pad_to_multiple_of"] = pad_to_multiple_of
    if balance is not None:
        options["balance"], options["balance_seed"] = balance, balance_seed
    ext = Extension(
        tok,
        assemble(tok.model, merges, pretokenizer, script_set, pad_to_multiple_of=pad_to_multiple_of),
        script_set,
        tok.n_vocab,
        list(merges.tokens),
        list(merges.merges),
        known,
        learn_stats,
        options,
        base_config,
    )
    if verify:
        from wwho.extend.verify import check_extension

        check_extension(ext, _sample_lines(paths, text_field, max_line_bytes))
    return ext


def count_words(
    corpus: str | os.PathLike | Iterable[str | os.PathLike],
    scripts: ScriptSet | Sequence[str] | str,
    *,
    workers: int | None = None,
    text_field: str = "text",
    skip_bad_lines: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    stats: CorpusStats | None = None,
    progress: bool = True,
) -> Counter[str]:
    """Script word -> count over the corpus files (:func:`count_script_words` of their documents)."""
    docs = iter_documents(
        resolve_paths(corpus),
        text_field=text_field,
        skip_bad_lines=skip_bad_lines,
        stats=stats if stats is not None else CorpusStats(),
        max_line_bytes=max_line_bytes,
    )
    return count_script_words(docs, scripts, workers=workers, progress=progress)


def count_script_words(
    documents: Iterable[str],
    scripts: ScriptSet | Sequence[str] | str,
    *,
    workers: int | None = None,
    progress: bool = True,
) -> Counter[str]:
    """Script word -> count over ``documents``, as the extended pre-tokenizer's first step cuts them.

    The compiled core cuts and counts them on ``workers`` threads (default: all cores), as
    byte-level training counts its pieces (:func:`wwho.bytelevel.train.count_bytelevel`). Its
    pre-tokenizer hands on the text between two matches too, so the pattern is the script-word
    regex or else any one character: a word is found exactly where the word regex alone finds it
    (the regex has no lookaround, so where it fails the scan moves on by one character, as
    ``findall`` does), and the single characters that are not words (the only other keys, so the
    table stays small on text of other scripts) are dropped. Lone surrogates are replaced by
    U+FFFD first; neither is a word character, so no word changes. The counts equal ``findall``
    of the word regex, the tests' reference (``tests/reference/counting.py``).
    """
    if not isinstance(scripts, ScriptSet):
        scripts = ScriptSet([scripts] if isinstance(scripts, str) else list(scripts))
    pattern = Pretokenizer((f"{scripts.word_source()}|(?s:.)",))
    counts = count_bytelevel(documents, pattern=pattern, specials=[], workers=workers, progress=progress)
    is_word = scripts.word_regex.fullmatch
    return Counter({piece: n for piece, n in counts.items() if is_word(piece)})


def assemble(
    base: ByteLevelModel, merges: NewMerges, pattern: Pretokenizer, scripts: ScriptSet, *,
    pad_to_multiple_of: int | None = None,
) -> ByteLevelModel:
    """The extended model: base vocabulary + new tokens, new merges then the base's, every id up to
    the last (and to ``pad_to_multiple_of``) holding a token (see above)."""
    base_merges = base.merges if base.merges is not None else tiktoken_merges(base.ranks)
    kept = [pair for pair in base_merges if pair not in merges.ranks]
    ranks = dict(base.ranks)
    ranks.update(merges.ids)
    specials = dict(base.special_tokens)
    used = {*ranks.values(), *specials.values(), *base.added_tokens.values(), *base.extra_tokens}
    size = max(used) + 1
    if pad_to_multiple_of:
        size = -(-size // pad_to_multiple_of) * pad_to_multiple_of
    specials.update(reserved_tokens(used, size, {*specials, *base.added_tokens}))
    return ByteLevelModel(
        ranks,
        pattern,
        special_tokens=specials,
        merges=list(merges.merges) + kept,
        ignore_merges=base.ignore_merges,
        added_tokens=dict(base.added_tokens),
        extra_tokens=dict(base.extra_tokens),
        bos_id=base.bos_id,
        eos_id=base.eos_id,
        pad_id=base.pad_id,
        add_bos=base.add_bos,
        add_eos=base.add_eos,
        name=f"{base.name or 'base'}+{scripts.label}",
    )


#: The checks before writing read the corpus's first lines, at most this many ...
SAMPLE_LINES = 2000
#: ... and at most this many characters of them in all: a corpus of long documents (a JSONL file of
#: whole articles, a file without line ends) is checked on its beginning, not held whole in memory.
SAMPLE_CHARS = 1 << 20


def _sample_lines(paths: list[Path], text_field: str, max_line_bytes: int, *, limit: int = SAMPLE_LINES,
                  chars: int = SAMPLE_CHARS) -> list[str]:
    """The corpus's first ``limit`` documents, the last one cut so that they hold at most ``chars``
    characters (every promise holds on any text, a cut one included)."""
    lines = []
    for doc in iter_documents(paths, text_field=text_field, skip_bad_lines=True, max_line_bytes=max_line_bytes):
        lines.append(doc[:chars])
        chars -= len(lines[-1])
        if len(lines) >= limit or chars <= 0:
            break
    return lines
