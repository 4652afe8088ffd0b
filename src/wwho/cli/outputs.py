"""What ``-o``/``--out``/``--output``/``--plot`` may replace: nothing that exists, unless ``--force``.

Every verb that writes checks its output before doing any work, so a typo in a path never
costs an existing model (or a long training run that then cannot be saved). A file output
is refused if the path exists. A directory output is refused only if it already holds one
of the files the verb writes: an empty directory, or one with other files, is fine (the
new files are added beside them). With ``--force`` the files are replaced (each one
atomically, see :mod:`wwho.atomic_write`); nothing else in the directory is touched. An output that
could not be written (below a file, or in a folder without write permission) is refused first
too, whatever ``--force`` says.

An output that is a stream, not a file (``/dev/null``, a terminal, a FIFO, ``/dev/stdout``), cannot
be replaced by renaming a new file over it (as root that put a regular file in place of
``/dev/null``): :func:`open_output` writes into it as it is (through a copy of the descriptor when
the path leads to one of this process's own), with no ``--force`` needed since nothing is replaced,
and :func:`check_output_file` refuses it for the verbs that write a file by renaming. Standard output (:class:`StandardOutput`, :func:`printing`) is checked the same way: a
closed one (``>&-``) is an error before any work, and a failed write names it.

This module checks paths and opens the streams; the verbs write their own files.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from wwho.errors import CorpusError, WriteError, WwhoError, printable

FORCE_HELP = "replace existing output files (without --force an existing output is an error)"

#: The files each kind of directory output holds (what ``--force`` would replace).
SGPE_FILES = ("vocab.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
META_FILES = ("vocab.json", "meta_config.json", "tokenizer_meta.json")
BYTELEVEL_FILES = ("ranks.tiktoken", "merges.txt", "bytelevel.json", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json")
BYTELEVEL_HF_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")  # wwho export hf


def add_force(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)


def check_output_file(path: str | os.PathLike, *, force: bool, flag: str = "-o/--output", example: str = "out") -> Path:
    """Refuse an output file that exists (unless ``force``), is a directory, lies below a file, or
    whose nearest existing folder cannot be written: each would be found only after the work.
    ``example``: a file name the advice for a directory suggests inside it. A name ending with a
    slash names a directory too (``Path`` would drop the slash; the write refuses it, after the work)."""
    name = os.fsdecode(path)
    if name.endswith(("/", os.sep)):
        raise WwhoError(f"{printable(name)}: {flag} names a directory (it ends with {name[-1]!r}); give a file name "
                        f"such as {printable(name.rstrip('/' + os.sep) or '/' + example)}")
    p = Path(path)
    kind = stream_kind(p)
    if kind is not None:
        raise WwhoError(f"{p}: {flag} is {kind}, not a file: the output is written to a new file renamed over "
                        f"{p}, which would replace it; give a file name")
    _check_folder(p, p.absolute().parents, flag)
    if p.is_dir():
        raise WwhoError(f"{p}: {flag} is a directory; give a file name such as {p / example}")
    if (p.exists() or p.is_symlink()) and not force:
        raise WwhoError(f"{p} exists; pass --force to replace it, or choose another {flag}")
    return p


def refuse_output_among_inputs(output: str | os.PathLike, inputs: Iterable[str | os.PathLike], *,
                               flag: str) -> None:
    """An output that is one of the inputs (or a link to one; ``-``: standard input, ``< FILE``) would
    replace what the run reads."""
    for path in inputs:
        try:
            if path == "-":
                st, out = os.fstat(sys.stdin.fileno()), os.stat(output)
                same, path = (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino), "standard input"
            else:
                same = os.path.samefile(output, path)
        except (OSError, ValueError, AttributeError):  # one of them does not exist (or is no path, such as
            continue  # tiktoken:NAME; or standard input is closed): not the same file
        if same:
            raise WwhoError(f"{printable(os.fsdecode(output))}: {flag} is also an input "
                            f"({printable(os.fsdecode(path))}), which it would replace; choose another output")


def check_output_dir(path: str | os.PathLike, names: Iterable[str], *, force: bool, flag: str = "--out") -> Path:
    """Refuse an output directory that is a file, lies below a file, or cannot be written in (it,
    or the nearest folder above it that exists), or (unless ``force``) holds any of ``names``."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise WwhoError(f"{p}: {flag} must be a directory, but this is a file")
    _check_folder(p, (p.absolute(), *p.absolute().parents), flag)
    names = list(dict.fromkeys(names))
    if p.is_dir():  # with --force too: the file is not wwho's to remove
        from wwho.savedir import shadow_message, shadowing_files

        shadow = shadowing_files(p, names)
        if shadow:
            raise WwhoError(shadow_message(p, shadow[0]))
    if not force and p.is_dir():
        from wwho.errors import VocabError
        from wwho.manifest import MANIFEST, read_manifest, removed_by_save

        found = [name for name in names if (p / name).exists() or (p / name).is_symlink()]
        if MANIFEST not in names and os.path.lexists(p / MANIFEST):
            try:
                read_manifest(p / MANIFEST)
            except VocabError:  # a file of that name that is no manifest of wwho's: yours, which a save replaces
                found.append(MANIFEST)
        # A save drops the files of the tokenizer saved there before (wwho.savedir), so that no old
        # vocab.json is read with a new tokenizer.json: --force agrees to that, so they are named too.
        old = removed_by_save(p, names)
        if found or old:
            held = ", ".join(found)
            if old:
                held += (" and " if found else "") + f"a saved tokenizer's {', '.join(old)}, which the new save removes"
            raise WwhoError(f"{p} already holds {held}; pass --force to replace "
                            f"{'it' if len(found) + len(old) == 1 else 'them'}, or choose another {flag}")
    return p


def written_since(path: Path, names: Iterable[str]) -> WwhoError | None:
    """The refusal of :func:`check_output_dir` (without ``force``) for files that appeared in
    ``path`` while a command ran (another run that saved to the same output), or None: checked
    before the work too, and what appeared since is not replaced without --force either."""
    try:
        check_output_dir(path, names, force=False)
    except WwhoError as exc:
        return WwhoError(f"{exc} (written while this training ran)")
    return None


def _check_folder(p: Path, folders: Iterable[Path], flag: str) -> None:
    """Refuse ``p`` if, of ``folders`` (nearest first), one that exists before the first folder is a
    file, or that first folder cannot be written in: found only when the finished output is written
    otherwise."""
    for folder in folders:
        if folder.exists() and not folder.is_dir():
            raise WwhoError(f"{p}: {flag} cannot be written: {folder} is a file, not a directory")
        if folder.is_dir():
            if not os.access(folder, os.W_OK | os.X_OK):
                raise WwhoError(f"{p}: {flag} cannot be written: no permission to write in {folder}")
            # Tried too: for root, access() allows what a read-only mount or /proc still refuses. A
            # Ctrl-C waits until the folder made is gone again (never left in the user's folder).
            from wwho.atomic_write import temp_name
            from wwho.background import interrupts_held

            probe = temp_name(folder / "check", suffix="")
            with interrupts_held():
                try:
                    os.mkdir(probe)
                    os.rmdir(probe)
                except OSError as exc:
                    failed = exc
                else:
                    failed = None
            if failed is not None:
                raise WwhoError(f"{p}: {flag} cannot be written: nothing can be created in {folder} "
                                f"({failed.strerror or failed})")
            return


#: A path that names an open descriptor (``/dev/stdout`` is a link to ``/proc/self/fd/1``).
_DESCRIPTOR = re.compile(r"/(?:proc/(?:self|thread-self|\d+)|dev)/fd/\d+")

_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO (named pipe)",
          stat.S_IFSOCK: "a socket"}


def stream_kind(path: str | os.PathLike) -> str | None:
    """What ``path`` is when it is an existing output that is no regular file to replace: a device, a
    FIFO, a socket (symbolic links followed), or a link to an open descriptor (``/dev/stdout``, whatever
    it leads to); None for a regular file, a directory, or nothing."""
    if _names_descriptor(Path(path)):
        return "an open descriptor (such as /dev/stdout)"
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return _KINDS.get(stat.S_IFMT(mode))


def _names_descriptor(p: Path) -> bool:
    """Whether ``p``, or a symbolic link on the way from it, is ``/dev/fd/N`` or ``/proc/.../fd/N``."""
    return _descriptor_link(p) is not None


def _descriptor_link(p: Path) -> str | None:
    """The first ``/dev/fd/N`` or ``/proc/.../fd/N`` on the way from ``p`` through symbolic links."""
    where = os.path.abspath(p)
    for _ in range(40):  # (the kernel's own bound on links followed)
        if _DESCRIPTOR.fullmatch(where):
            return where
        try:
            target = os.readlink(where)
        except (OSError, ValueError):
            return None
        where = os.path.abspath(os.path.join(os.path.dirname(where), target))
    return None


def _own_descriptor(p: Path) -> int | None:
    """N, where ``p`` leads to ``/dev/fd/N`` or to this process's ``/proc/.../fd/N``."""
    link = _descriptor_link(p)
    found = link and re.fullmatch(r"/(?:dev|proc/(self|thread-self|\d+))/fd/(\d+)", link)
    if not found or found.group(1) not in (None, "self", "thread-self", str(os.getpid())):
        return None
    return int(found.group(2))


def open_output(path: str | os.PathLike, *, force: bool, flag: str = "-o/--output", example: str = "out"):
    """A context manager giving the binary file to write ``-o PATH`` to: a new file renamed over
    ``path`` at the end (:func:`wwho.atomic_write.atomic_open`, checked first by :func:`check_output_file`),
    or, for a stream (``/dev/null``, a FIFO, ``/dev/stdout``), the stream itself."""
    kind = stream_kind(path)
    if kind is None or kind in ("a block device", "a socket"):
        from wwho.atomic_write import atomic_open

        check_output_file(path, force=force, flag=flag, example=example)
        return atomic_open(path, "wb", encoding=None, replace=force)  # (one made meanwhile: kept)
    return _open_stream(Path(path), kind)


@contextlib.contextmanager
def _open_stream(path: Path, kind: str) -> Iterator[IO[bytes]]:
    own = _own_descriptor(path)
    try:
        if own is not None:
            # One of this process's descriptors (/dev/stdout): written through a copy of it, which
            # shares its file position, as writing to standard output does. Opening the link again
            # would start a new position: after `wwho ... -o /dev/stdout > FILE`, what the shell
            # writes next would land over wwho's output.
            fd = _copy_for_writing(own)
        else:
            # Appending: a descriptor link of another process leading to a regular file is written
            # after what it holds, never over it; a device or a FIFO does not care.
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise WriteError(f"{path}: cannot open {kind} for writing: {exc.strerror or exc}") from None
    if stat.S_ISREG(os.fstat(fd).st_mode) and not kind.startswith("an open descriptor"):
        os.close(fd)  # replaced by a regular file since it was looked at: not written without --force
        raise WriteError(f"{path}: changed while it was opened; run the command again")
    with writes_to(str(path)), os.fdopen(fd, "wb") as f:  # (closing flushes too: named as well)
        yield f


def _copy_for_writing(fd: int) -> int:
    """A copy of descriptor ``fd`` (an OSError if it is closed or not open for writing), after what
    Python's own streams on it hold is written out, so that the two come in the order written."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == fd:
                stream.flush()
        except (OSError, ValueError):  # (a stream replaced by one without a descriptor)
            pass
    if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE not in (os.O_WRONLY, os.O_RDWR):
        raise OSError(errno.EBADF, "the descriptor is not open for writing")
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 0)


@contextlib.contextmanager
def writes_to(where: str) -> Iterator[None]:
    """A failed write in the block (a full disk, ``/dev/full``) as one error naming ``where``; a reader
    that went away (``| head``) stays a ``BrokenPipeError``, which ends the command quietly."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        if isinstance(exc, WwhoError) or exc.filename is not None:
            raise
        raise WriteError(f"{where}: cannot write: {exc.strerror or exc} (errno {exc.errno})") from None


def results_output(args: argparse.Namespace, *, reads: Iterable[str] = ()):
    """Where a verb's results go (a binary file, as a context manager): ``-o PATH`` through
    :func:`open_output` (checked now, before any work; a stream is written into as it is), or
    standard output (``-o -`` or none; a closed one is an error now). ``reads``: the inputs the
    verb streams (paths, ``-`` for standard input), none of which may be where the results go
    (:func:`refuse_reading_own_output`). A file ``-o`` names may be none of the files the verb reads
    either (:func:`read_paths`), ``--force`` or not: the new file renamed over it would replace it."""
    if getattr(args, "output", None) and args.output != "-":
        if stream_kind(args.output) is not None:  # a regular file is written anew and renamed: no loop
            refuse_reading_own_output(args.output, reads)
        else:
            refuse_output_among_inputs(args.output, [*read_paths(args), *reads], flag="-o/--output")
            refuse_output_in_tokenizer(args.output, getattr(args, "tokenizer", None))
        # (--npy takes a name of that suffix only: the advice for a folder gives one)
        example = "out.npy" if getattr(args, "show", None) == "npy" else "out"
        return open_output(args.output, force=getattr(args, "force", False), example=example)
    output = StandardOutput()
    refuse_reading_own_output("-", reads)
    return output


def read_paths(args: argparse.Namespace) -> list[str]:
    """The files a verb of ``encode`` and ``decode`` reads besides what it streams: ``--file``,
    ``--npy``, the ranks file (``--tiktoken-file``, ``WWHO_TIKTOKEN_FILE``) and the tokenizer's file
    (a tokenizer folder: :func:`refuse_output_in_tokenizer`)."""
    paths = [getattr(args, name, None) for name in ("file", "npy", "tiktoken_file", "tokenizer")]
    paths += [value for name, value in os.environ.items() if name.startswith("WWHO_TIKTOKEN_FILE")]
    return [path for path in paths if path and path != "-"]


def refuse_output_in_tokenizer(output: str, tokenizer: str | None) -> None:
    """An output in the tokenizer folder that is one of its files (read whole by the loader), or has
    one of the names a tokenizer folder loads by (``-o TOK/vocab.json``), which would change what the
    folder loads as, or make it refused as a mix of two saves, even where no such file was there."""
    from wwho.manifest import MANIFEST
    from wwho.savedir import LOAD_ORDER

    names = {*LOAD_ORDER, *SGPE_FILES, *META_FILES, *BYTELEVEL_FILES, MANIFEST}
    if not tokenizer or not os.path.isdir(tokenizer):
        return
    if os.path.basename(output) not in names and not os.path.lexists(output):
        return
    try:
        inside = os.path.samefile(os.path.dirname(os.path.abspath(output)), tokenizer)
    except OSError:  # (the output's folder does not exist: said when the output is checked)
        return
    if inside:
        raise WwhoError(f"{printable(output)}: -o/--output is a file of the tokenizer folder "
                        f"{printable(tokenizer)}, which it would change; choose another output")


def refuse_reading_own_output(output: str, reads: Iterable[str]) -> None:
    """Refuse, as ``cat`` does, an input that is the regular file the results are appended to
    (``wwho encode --file F >> F``, ``-o /dev/stdin < F``): the verb would read its own results back
    and write on without end, until the disk is full. ``output`` and each input are a path or ``-``
    (standard output, standard input)."""
    def identity(path: str, stream) -> tuple[int, int] | None:
        try:
            st = os.fstat(stream.fileno()) if path == "-" else os.stat(path)
        except (OSError, ValueError, AttributeError):  # closed, replaced, absent: said elsewhere
            return None
        return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None

    out = identity(output, sys.stdout)
    if out is None:
        return
    for name in reads:
        if identity(name, sys.stdin) == out:
            what = "standard input" if name == "-" else name
            where = "standard output" if output == "-" else output
            raise WriteError(f"{what} is the file the results are written to ({where}): the command would read "
                             "its own results back without end; write them to another file")


CLOSED = ("standard output is closed (>&-): the results would go nowhere; leave it open, or redirect it "
          "(> FILE, > /dev/null)")


def require_stdout() -> None:
    """Refuse to work for nothing: with standard output closed Python's ``print`` writes nowhere and
    says nothing, and the command would end with success."""
    if sys.stdout is None:
        raise WriteError(CLOSED)


@contextlib.contextmanager
def printing() -> Iterator[None]:
    """Text printed in the block reaches standard output whole (flushed at its end), or the error
    names it: it is written through :class:`StandardOutput`, since Python's text stream loses what a
    non-blocking standard output (as some CI runners leave it) did not take, and says nothing."""
    require_stdout()
    original = sys.stdout
    original.flush()
    sys.stdout = _PrintedText(original)
    try:
        with writes_to("standard output"):
            yield
            sys.stdout.flush()
    finally:
        sys.stdout = original


class _PrintedText:
    """``sys.stdout`` inside :func:`printing`: text encoded as the stream encodes it, every byte
    written (:meth:`StandardOutput.write`)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._out = StandardOutput()
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.errors = getattr(stream, "errors", None) or "strict"

    def write(self, text: str) -> int:
        self._out.write(text.encode(self.encoding, self.errors))
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, buffer: the stream's own
        return getattr(self._stream, name)


class StandardOutput:
    """Standard output as the binary file a verb writes its results to (a context manager, like
    :func:`open_output`): a closed one is an error when this is made (before any work), and a failed
    write names standard output."""

    def __init__(self) -> None:
        require_stdout()
        self.stream = getattr(sys.stdout, "buffer", None)
        if self.stream is None:
            raise WriteError("standard output takes no bytes here (it was replaced by a text stream)")

    def __enter__(self) -> StandardOutput:
        sys.stdout.flush()  # what was printed before comes first
        return self

    def __exit__(self, *exc_info) -> None:
        if exc_info[0] is None:
            self.flush()

    def write(self, data: bytes) -> int:
        # With PYTHONUNBUFFERED (common in containers) the stream is the raw file, whose write may
        # take only part of the bytes (a disk filling up): the rest is written again, so that the
        # error that stopped it is raised, not lost.
        view = memoryview(data).cast("B")
        with writes_to("standard output"):
            done = 0
            while done < len(view):
                wrote = self.stream.write(view[done:])
                if not wrote:  # None: a non-blocking descriptor that is full; 0: nothing taken
                    raise OSError(errno.EAGAIN if wrote is None else errno.EIO,
                                  "the output took no more bytes")
                done += wrote
        return done

    def flush(self) -> None:
        with writes_to("standard output"):
            self.stream.flush()


#: What ``wwho decode`` asks for when its standard input is closed.
IDS_INSTEAD = "the ids as arguments, or pipe them in"


def standard_input(give: str = "the text as an argument, or pipe it in") -> IO[bytes]:
    """Standard input's bytes; a closed one (``<&-``) is an error naming it, not a traceback.
    ``give``: what the user may do instead, for that error (decode reads ids there)."""
    if sys.stdin is None:
        raise CorpusError(f"standard input is closed (<&-): give {give}")
    return sys.stdin.buffer


def names_a_file(text: str) -> bool:
    """Whether an argument meant as text (or ids) names an existing file: the user may have meant
    to read it."""
    if not text or "\n" in text or len(text) > 4096:  # (no path is a line of text or longer than PATH_MAX)
        return False
    try:
        return os.path.isfile(text)
    except (OSError, ValueError):  # a NUL, a name too long: no file
        return False
