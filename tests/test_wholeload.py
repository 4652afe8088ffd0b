"""A load that a save into the same directory overtakes is read again (wwho.wholeload): the loader
sees one save whole, the old or the new, never "files of different saves"."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest
from test_savedir import models  # noqa: F401  (the fixture: two SGPE models, A and B)

from wwho import load_tokenizer
from wwho.errors import VocabError
from wwho.sgpe import SGPETokenizer


@pytest.mark.parametrize("load", [SGPETokenizer.load, load_tokenizer])
def test_a_save_between_a_loads_reads_gives_the_new_save(models, tmp_path, monkeypatch, load):  # noqa: F811
    """Deterministic: the save of B runs just as the loader, having read A's vocab.json, reads the
    manifest (a probe saw it in 2 of 495 loads racing a saving process)."""
    import wwho.sgpe.vocabfile as vocabfile

    target = tmp_path / "x"
    shutil.copytree(models["A"], target)
    b = SGPETokenizer.load(models["B"])
    real, raced = vocabfile.check_saved, []

    def racing(directory, read, **options):  # vocab.json is read: now the save, then its check
        if not raced:
            raced.append(directory)
            b.save(target)
        return real(directory, read, **options)

    monkeypatch.setattr(vocabfile, "check_saved", racing)
    loaded = load(target)
    assert raced and loaded.vocab_size == b.vocab_size and loaded.get_vocab() == b.get_vocab()


def test_a_mix_that_no_save_explains_is_still_refused(models, tmp_path):  # noqa: F811
    target = tmp_path / "x"
    shutil.copytree(models["A"], target)
    shutil.copy(models["B"] / "vocab.json", target / "vocab.json")
    with pytest.raises(VocabError, match="files of different saves"):
        SGPETokenizer.load(target)


@pytest.mark.filterwarnings("error::wwho.errors.ChangedFileWarning")  # (a load overtaken warned of the next save)
def test_loads_while_another_process_saves_in_a_loop(models, tmp_path):  # noqa: F811
    target = tmp_path / "x"
    shutil.copytree(models["A"], target)
    saver = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from wwho.sgpe import SGPETokenizer
        a, b = SGPETokenizer.load({str(models["A"])!r}), SGPETokenizer.load({str(models["B"])!r})
        end, i = time.monotonic() + 2, 0
        while time.monotonic() < end:
            (a if i % 2 else b).save({str(target)!r}); i += 1
        print(i)
    """)], stdout=subprocess.PIPE, text=True)
    sizes = {SGPETokenizer.load(models[m]).vocab_size for m in "AB"}
    loads = 0
    while saver.poll() is None:
        assert SGPETokenizer.load(target).vocab_size in sizes
        loads += 1
    out, _ = saver.communicate()
    assert saver.returncode == 0 and int(out) > 10 and loads > 10
