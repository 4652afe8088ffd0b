"""The checkpoints of one SGPE training run: what binds a checkpoint to its training, the replay of
its merges on resume, and when checkpoints are written during the merges.

A checkpoint is bound to the engine's input and the options (:func:`checkpoint_options`,
:func:`training_fingerprint`): a resume with another corpus or other options is refused, and the
options by name let the refusal say which one changed. :func:`resume_from_checkpoint` replays the
merges as the ids this training gives their strings; :func:`train_with_checkpoints` runs the merge
loop, writing the merges so far every ``checkpoint_every`` merges (past
:data:`CHECKPOINT_SPACING` of those, a tenth of the merges so far apart) and once at the end.
Merge selection depends only on counts and the tie-break, so a resumed run gives the same file as
an uninterrupted one.

This module does not read, write, validate or lock checkpoint files (:mod:`wwho.sgpe.checkpoints`
does), and does not choose merges (:class:`wwho.bpe.MergeEngine` does).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from wwho.bpe import MergeEngine
from wwho.bpe.engine import MergeError
from wwho.errors import VocabError, WwhoWarning, brief
from wwho.notices import warn
from wwho.sgpe import checkpoints
from wwho.sgpe.vocabfile import SPECIAL_TOKENS

#: Past ``checkpoint_every`` times this many merges, checkpoints are the merges so far divided
#: by this apart (see ``checkpoint_due`` in :func:`train_with_checkpoints`).
CHECKPOINT_SPACING = 10


def checkpoint_options(*, script: str, min_freq: int, prune_freq: int, auto: bool, vocab_size: int,
                       segments_only: bool, merge_scope: str, prefix_space: bool, superword_share: float,
                       script_characters: bool, bare_syllables: bool, split_punctuation: bool,
                       special_tokens: tuple[str, ...]) -> tuple[list[Any], dict[str, Any]]:
    """The options a checkpoint is bound to: as the list its fingerprint hashes, and by name.
    ``prune_freq``: the threshold used (chosen, where ``auto``)."""
    options = [script, min_freq, f"auto:{prune_freq}" if auto else prune_freq, vocab_size, segments_only]
    if (merge_scope, prefix_space, superword_share) != ("words", False, 0):  # format-1 checkpoints stay valid
        options += [merge_scope, prefix_space, superword_share]
    if auto and script_characters:  # earlier checkpoints stay valid without it
        options += ["script_characters"]
    if bare_syllables:
        options += ["bare_syllables"]
    if split_punctuation:
        options += ["split_punctuation"]
    # By name, so that a refused resume can say which option changed.
    named = {"script": script, "min_freq": min_freq, "prune_freq": "auto" if auto else prune_freq,
             "vocab_size": vocab_size, "segments_only": segments_only, "merge_scope": merge_scope,
             "prefix_space": prefix_space, "superword_share": superword_share, "script_characters": bool(auto and script_characters),
             "bare_syllables": bare_syllables, "split_punctuation": split_punctuation}
    if tuple(special_tokens) != SPECIAL_TOKENS:  # (earlier checkpoints, of the default ones, stay valid)
        # Their count sets how many ids the merges get: a resume with others would give another
        # vocabulary than a training from the start with them.
        options += [["special_tokens", *special_tokens]]
        named["special_tokens"] = list(special_tokens)
    return options, named


def training_fingerprint(engine_arrays, symbols, *options) -> tuple[str, str]:
    """sha256 of the engine's input and the options, which decides that a checkpoint resumes the same
    training, and sha256 of the input alone, which only tells a changed corpus from changed options.

    ``engine_arrays``: the word lengths, the words' symbol ids and the counts, as native int64
    arrays (``array("q", ...).tobytes()`` of each, as earlier versions hashed them).
    """
    h, inputs = hashlib.sha256(), hashlib.sha256()
    h.update(json.dumps([symbols, list(options)], ensure_ascii=False).encode())
    inputs.update(json.dumps(symbols, ensure_ascii=False).encode())
    for data in engine_arrays:
        h.update(data)
        inputs.update(data)
    return h.hexdigest(), inputs.hexdigest()


def resume_from_checkpoint(engine: MergeEngine, index: dict[str, int], checkpoint_dir: str | Path | None,
                           fingerprint: str, *, options: dict[str, Any], input_sha256: str, say) -> None:
    """Replay the merges of ``checkpoint_dir``'s checkpoint on ``engine`` (``index``: the id of each
    symbol), after checking that it is of this training; a warning where there is none."""
    if checkpoint_dir is not None and (Path(checkpoint_dir) / checkpoints.FILE).exists():
        checkpoint = Path(checkpoint_dir) / checkpoints.FILE
        done = checkpoints.load(Path(checkpoint_dir), fingerprint, options=options, input_sha256=input_sha256)
        ids: dict[str, int] = dict(index)
        replay = []
        for k, (a, b) in enumerate(done):  # the ids these merges got: a new string is appended, a known one reused
            if a not in ids or b not in ids:
                raise VocabError(f"{checkpoint}: merge {k} ({brief(a)}, {brief(b)}) is not of symbols of this training; "
                                 "delete the checkpoint to start over")
            replay.append((ids[a], ids[b]))
            ids.setdefault(a + b, len(ids))
        try:
            engine.replay(replay)
        except MergeError as exc:
            raise VocabError(f"{checkpoint}: {exc}; delete the checkpoint to start over") from None
        say(f"resumed from {checkpoint}: {len(done):,} merges replayed")
    else:  # a mistyped folder would redo hours of work without a word: said even with --quiet
        warn(f"resume: no checkpoint in {checkpoint_dir}; training from the start", WwhoWarning)


def train_with_checkpoints(engine: MergeEngine, *, max_symbols: int, min_freq: int, progress: bool,
                           checkpoint_dir: str | Path | None, checkpoint_every: int, fingerprint: str,
                           options: dict[str, Any], input_sha256: str, started: float) -> None:
    """``engine.train``, writing a checkpoint of every merge so far while it runs and once after it,
    where ``checkpoint_dir`` is given and ``checkpoint_every`` is not 0. ``started``: when the merges
    (after any replayed ones) began, for the checkpoint's elapsed time."""

    def save_checkpoint() -> None:
        merges = [(engine.symbols[a], engine.symbols[b]) for a, b in engine.merges]
        checkpoints.save(Path(checkpoint_dir), merges=merges, fingerprint=fingerprint,
                         elapsed=time.perf_counter() - started, options=options, input_sha256=input_sha256)

    saved = len(engine.merges)  # the merges the last checkpoint holds (the replayed ones, resuming)

    def checkpoint_due(step: int) -> None:
        nonlocal saved
        # Each checkpoint holds every merge so far, so one every few merges would make training
        # quadratic in its merges; past ten intervals they are a tenth of the merges so far apart,
        # which bounds the merges written in all to about ten times the vocabulary and what a crash
        # can cost to a tenth of the merges done.
        if step - saved >= max(checkpoint_every, saved // CHECKPOINT_SPACING):
            save_checkpoint()
            saved = step

    checkpointing = checkpoint_dir is not None and checkpoint_every > 0
    engine.train(max_symbols=max_symbols, min_freq=min_freq, progress=progress,
                 on_merge=checkpoint_due if checkpointing else None,
                 on_merge_every=checkpoint_every if checkpointing else 1)
    if checkpointing:  # the merges whole, for a resume during the stages after them (0: no checkpoints)
        save_checkpoint()
