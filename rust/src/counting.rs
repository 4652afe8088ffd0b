//! Counting a corpus: documents -> SGPE piece frequencies (`wwho.bpe.count` for `PIECES`).
//!
//! A piece is a whitespace-free chunk with the one space before it, or one whitespace
//! character (` ?[^ \t\n\r]+|[ \t\n\r]`). The whitespace is ASCII, so pieces are cut straight
//! from UTF-8 bytes, and a piece is counted by its UTF-8 bytes (lone surrogates from Python in
//! their 3-byte form). Counts are 64-bit.
//!
//! Plain-text files are read here, in blocks cut at line ends, each block's lines shared among
//! threads that keep one count table each (merged once at the end). A document is a line
//! without its line end (trailing `\r` and `\n` removed); empty lines are no documents; a line
//! that is not UTF-8 is an error naming `file:line` and the byte, or is skipped and counted.
//! Other formats (JSONL, compressed) are read by `wwho.corpus` and their documents handed over
//! as text. With a router, only each document's script runs are counted (with their leading
//! space): the meta tokenizer's SGPE part. Counting adds to a [`Tally`]: piece counts
//! ([`Counts`]) or, for superword spans, a [`crate::superwords::SpanTable`]. This module knows
//! nothing of syllables.

use crate::router::{Router, Run};
use crate::spans::{span_end, span_end_utf8, Breaks};
use crate::units::{push_utf8, Unit};
use crate::words::piece_end_utf8;
use std::io::Read;
use std::path::Path;

/// Piece (UTF-8 bytes) -> count: an open-addressing table whose slots hold short pieces
/// themselves (one cache line probed per lookup; a general map keeps each key in its own
/// allocation, a second and third miss). Longer pieces live in an arena.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    slots: Vec<Slot>,
    len: usize,
    arena: Vec<u8>,
}

const INLINE: usize = 32;

/// What counting adds to: piece counts ([`Counts`]) or span counts held as piece ids
/// ([`crate::superwords::SpanTable`]). `key` is a piece or span, UTF-8 (WTF-8 for lone surrogates).
pub trait Tally: Default + Send {
    fn add(&mut self, key: &[u8], n: u64);

    /// [`Tally::add`] unless a count would pass `u64::MAX` (then `false`).
    fn try_add(&mut self, key: &[u8], n: u64) -> bool;

    /// Add every count of a [`Counts::to_bytes`] buffer (piece or span texts). On an error
    /// nothing may be assumed about what was added.
    fn add_bytes(&mut self, data: &[u8]) -> Result<(), CountError> {
        for_each_entry(data, |key, n| {
            if self.try_add(key, n) {
                Ok(())
            } else {
                Err(CountError::Overflow(key.to_vec()))
            }
        })
    }
}

impl Tally for Counts {
    #[inline]
    fn add(&mut self, key: &[u8], n: u64) {
        Counts::add(self, key, n);
    }

    fn try_add(&mut self, key: &[u8], n: u64) -> bool {
        Counts::try_add(self, key, n)
    }
}

/// The header of [`Counts::to_bytes`].
const MAGIC: &[u8] = b"WWHOCNT1";

#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u32,
    /// Piece length; the slot is empty when `count == 0`.
    len: u32,
    count: u64,
    /// The piece, or (longer than [`INLINE`]) its offset in the arena as 8 bytes.
    key: [u8; INLINE],
}

const EMPTY: Slot = Slot {
    hash: 0,
    len: 0,
    count: 0,
    key: [0; INLINE],
};

#[inline]
fn hash_bytes(piece: &[u8]) -> u32 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(piece);
    let h = h.finish();
    ((h >> 32) ^ h) as u32
}

impl Counts {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn key_of<'a>(&'a self, slot: &'a Slot) -> &'a [u8] {
        let len = slot.len as usize;
        if len <= INLINE {
            &slot.key[..len]
        } else {
            let mut offset = [0u8; 8];
            offset.copy_from_slice(&slot.key[..8]);
            let start = u64::from_le_bytes(offset) as usize;
            &self.arena[start..start + len]
        }
    }

    /// Add `n` to the count of `piece`.
    #[inline]
    pub fn add(&mut self, piece: &[u8], n: u64) {
        self.add_hashed(piece, hash_bytes(piece), n);
    }

    fn add_hashed(&mut self, piece: &[u8], hash: u32, n: u64) {
        if (self.len + 1) * 10 > self.slots.len() * 7 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        let short = piece.len() <= INLINE;
        // A short piece compares as one zero-padded array (a few vector instructions).
        let mut key = [0u8; INLINE];
        if short {
            key[..piece.len()].copy_from_slice(piece);
        }
        loop {
            let slot = &self.slots[i];
            if slot.count == 0 {
                break;
            }
            if slot.hash == hash
                && slot.len as usize == piece.len()
                && if short {
                    slot.key == key
                } else {
                    self.key_of(slot) == piece
                }
            {
                self.slots[i].count += n;
                return;
            }
            i = (i + 1) & mask;
        }
        if !short {
            key[..8].copy_from_slice(&(self.arena.len() as u64).to_le_bytes());
            self.arena.extend_from_slice(piece);
        }
        self.slots[i] = Slot {
            hash,
            len: piece.len() as u32,
            count: n,
            key,
        };
        self.len += 1;
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        let mask = size - 1;
        for slot in old.into_iter().filter(|s| s.count != 0) {
            let mut i = slot.hash as usize & mask;
            while self.slots[i].count != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    /// Add `n` to the count of `piece` unless the sum would pass `u64::MAX` (then `false`,
    /// nothing changed). A zero `n` adds nothing (a zero count marks an empty slot).
    pub fn try_add(&mut self, piece: &[u8], n: u64) -> bool {
        if self.get(piece).checked_add(n).is_none() {
            return false;
        }
        if n != 0 {
            self.add(piece, n);
        }
        true
    }

    /// The table as bytes: `MAGIC`, then per piece its length (u32 LE), its bytes and its count
    /// (u64 LE), in no particular order. For shipping partial counts between processes.
    pub fn to_bytes(&self) -> Vec<u8> {
        entries_to_bytes(self.iter(), self.len * 16 + self.arena.len())
    }

    /// The count of `piece` (0 if absent).
    pub fn get(&self, piece: &[u8]) -> u64 {
        if self.slots.is_empty() {
            return 0;
        }
        let hash = hash_bytes(piece);
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = &self.slots[i];
            if slot.count == 0 {
                return 0;
            }
            if slot.hash == hash && slot.len as usize == piece.len() && self.key_of(slot) == piece {
                return slot.count;
            }
            i = (i + 1) & mask;
        }
    }

    /// Every `(piece, count)`, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.count != 0)
            .map(|s| (self.key_of(s), s.count))
    }

    /// The sum of all counts (at most `u64::MAX`: counts given by a caller may add up past it).
    pub fn total(&self) -> u64 {
        self.iter().fold(0, |sum, (_, n)| sum.saturating_add(n))
    }

    /// Bytes held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.arena.capacity()
    }
}

/// `(key, count)` entries in the format of [`Counts::to_bytes`].
pub fn entries_to_bytes<'a>(
    entries: impl Iterator<Item = (&'a [u8], u64)>,
    hint: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + hint);
    out.extend_from_slice(MAGIC);
    for (piece, n) in entries {
        out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(&n.to_le_bytes());
    }
    out
}

/// `f(key, count)` for every entry of a [`Counts::to_bytes`] buffer, stopping at the first error.
pub fn for_each_entry(
    mut data: &[u8],
    mut f: impl FnMut(&[u8], u64) -> Result<(), CountError>,
) -> Result<(), CountError> {
    data = data.strip_prefix(MAGIC).ok_or(CountError::NoHeader)?;
    while !data.is_empty() {
        let bad = CountError::Truncated;
        let len = u32::from_le_bytes(data.get(..4).ok_or(bad)?.try_into().unwrap()) as usize;
        let piece = data.get(4..4 + len).ok_or(CountError::Truncated)?;
        // Counts are of text: a piece that is not UTF-8 (nor WTF-8, for lone surrogates) would be
        // read back as something else, or merged with another such piece.
        if simdutf8::basic::from_utf8(piece).is_err() && crate::units::decode_wtf8(piece).is_err() {
            return Err(CountError::NotText);
        }
        let n = u64::from_le_bytes(
            data.get(4 + len..12 + len)
                .ok_or(CountError::Truncated)?
                .try_into()
                .unwrap(),
        );
        f(piece, n)?;
        data = &data[12 + len..];
    }
    Ok(())
}

/// Count the pieces of UTF-8 `text` into `counts`.
pub fn count_utf8(text: &[u8], counts: &mut impl Tally) {
    let mut pos = 0;
    while pos < text.len() {
        let end = piece_end_utf8(text, pos);
        counts.add(&text[pos..end], 1);
        pos = end;
    }
}

/// Count the pieces of a text given as code points (`buf` is scratch space).
pub fn count_units<U: Unit>(text: &[U], counts: &mut impl Tally, buf: &mut Vec<u8>) {
    let mut pos = 0;
    while pos < text.len() {
        let end = crate::words::piece_end(text, pos);
        buf.clear();
        for &u in &text[pos..end] {
            push_utf8(u.cp(), buf);
        }
        counts.add(buf, 1);
        pos = end;
    }
}

/// How a document is cut for counting: SGPE pieces (the default) or superword spans
/// ([`crate::spans`]), each with or without the dummy space before the document.
#[derive(Clone, Debug, Default)]
pub struct Cut {
    pub prefix_space: bool,
    pub spans: Option<Breaks>,
}

impl Cut {
    fn is_plain(&self) -> bool {
        !self.prefix_space && self.spans.is_none()
    }
}

/// Count the pieces or spans of `text` as `cut` says, the dummy space left to the caller.
fn count_cut_units<U: Unit>(
    text: &[U],
    spans: Option<&Breaks>,
    counts: &mut impl Tally,
    buf: &mut Vec<u8>,
) {
    let Some(breaks) = spans else {
        return count_units(text, counts, buf);
    };
    let mut pos = 0;
    while pos < text.len() {
        let end = span_end(text, pos, breaks);
        buf.clear();
        for &u in &text[pos..end] {
            push_utf8(u.cp(), buf);
        }
        counts.add(buf, 1);
        pos = end;
    }
}

/// Count one text as `cut` says.
fn count_cut<U: Unit>(text: &[U], cut: &Cut, counts: &mut impl Tally, buf: &mut Vec<u8>) {
    if cut.prefix_space && !text.is_empty() {
        let prefixed: Vec<u32> = std::iter::once(0x20)
            .chain(text.iter().map(|u| u.cp()))
            .collect();
        return count_cut_units(&prefixed, cut.spans.as_ref(), counts, buf);
    }
    count_cut_units(text, cut.spans.as_ref(), counts, buf)
}

/// Count `text`, or with a router only its script runs (each with its leading space), cut
/// as `cut` says.
pub fn count_document<U: Unit>(
    text: &[U],
    router: Option<&Router>,
    cut: &Cut,
    counts: &mut impl Tally,
    buf: &mut Vec<u8>,
) {
    let Some(router) = router else {
        return count_cut(text, cut, counts, buf);
    };
    let mut runs: Vec<Run> = Vec::new();
    router.segment(text, &mut runs);
    for run in runs.iter().filter(|r| r.script.is_some()) {
        count_cut(&text[run.start..run.end], cut, counts, buf);
    }
}

/// Add `other` into `into`.
pub fn absorb(into: &mut Counts, other: Counts) {
    if into.is_empty() {
        *into = other;
        return;
    }
    for slot in other.slots.iter().filter(|s| s.count != 0) {
        into.add_hashed(other.key_of(slot), slot.hash, slot.count);
    }
}

/// What a pass over files saw (`wwho.corpus.CorpusStats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub files: u64,
    pub documents: u64,
    pub bytes: u64,
    pub bad_lines: u64,
    /// The first bad lines: `file:line: what`.
    pub first_bad: Vec<String>,
}

/// Why counting stopped: a file that cannot be read or counted, or a count buffer that cannot
/// be added (`wwho.errors.CorpusError`, except `Memory`: a `MemoryError`).
#[derive(Debug, PartialEq, Eq)]
pub enum CountError {
    /// `file:line: what` (a line that is not UTF-8, without `skip_bad_lines`).
    BadLine(String),
    /// `file: what` (cannot open or read).
    Io(String),
    /// `file:line: what` (the memory for a block or a long line could not be had).
    Memory(String),
    /// The progress callback stopped the work, with this message.
    Stopped(String),
    /// A buffer that does not start as [`Counts::to_bytes`] makes it.
    NoHeader,
    /// A buffer that ends inside an entry.
    Truncated,
    /// A buffer holding a piece that is not text (UTF-8, WTF-8 for lone surrogates).
    NotText,
    /// The count of this key (UTF-8, WTF-8 for lone surrogates) would pass `u64::MAX`.
    Overflow(Vec<u8>),
}

impl std::fmt::Display for CountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CountError::BadLine(m)
            | CountError::Io(m)
            | CountError::Memory(m)
            | CountError::Stopped(m) => f.write_str(m),
            CountError::NoHeader => f.write_str("not a piece-count buffer (no header)"),
            CountError::Truncated => f.write_str("a truncated piece-count buffer"),
            CountError::NotText => {
                f.write_str("a piece-count buffer holding a piece that is not UTF-8 text")
            }
            CountError::Overflow(key) => write!(
                f,
                "the count of {:?} passes 2**64 - 1",
                String::from_utf8_lossy(key)
            ),
        }
    }
}

impl std::error::Error for CountError {}

/// Room for `more` bytes in `buf`, or a [`CountError::Memory`] naming the place.
fn reserve(
    buf: &mut Vec<u8>,
    more: usize,
    place: &mut Place<'_>,
    line: u64,
) -> Result<(), CountError> {
    buf.try_reserve(more).map_err(|_| {
        CountError::Memory(format!(
            "{}: cannot hold {} bytes of the file in memory (a block or one long line; \
             lower --max-line-bytes or max_line_bytes=)",
            place.at(line),
            thousands(buf.len().saturating_add(more) as u64)
        ))
    })
}

/// Options of [`count_files`].
pub struct FileOptions<'a> {
    pub threads: usize,
    pub skip_bad_lines: bool,
    pub router: Option<&'a Router>,
    /// Pieces or spans, with or without the dummy space.
    pub cut: Cut,
    /// Bytes read per block (a block's lines are shared among the threads).
    pub block_bytes: usize,
    /// The longest line, its line end included: a longer one is a bad line, found after
    /// reading about this many bytes of it (memory stays bounded on a file without newlines).
    pub max_line_bytes: u64,
    /// Only the bytes `[start, end)` of each file: a shard of a larger file (`wwho.scale`).
    /// `start` must be 0 or just after a line end, `end` just after one or at the end of the
    /// file, so the shard's lines are exactly the file's; line numbers in messages stay the
    /// file's (the lines before `start` are counted only when a message needs them).
    pub range: Option<(u64, u64)>,
}

/// `file:line` for messages, where line `rel` (0-based) counts from the start of the range.
struct Place<'a> {
    path: &'a Path,
    start: u64,
    before: Option<Option<u64>>,
}

impl Place<'_> {
    fn at(&mut self, rel: u64) -> String {
        let shown = self.path.display();
        if self.start == 0 {
            return format!("{shown}:{}", rel + 1);
        }
        let (path, start) = (self.path, self.start);
        match *self.before.get_or_insert_with(|| lines_before(path, start)) {
            Some(before) => format!("{shown}:{}", before + rel + 1),
            None => format!("{shown} (line {} after byte {start})", rel + 1),
        }
    }
}

/// `path` opened for reading when it is a regular file. Opened without blocking: a FIFO put in
/// place of a corpus file after its paths were checked would otherwise wait for a writer in
/// `open`, where neither Ctrl-C nor a kill is seen; it is refused instead, as a device is.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK); // no effect on a regular file's reads
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a FIFO, a socket or a device)",
        ));
    }
    Ok(file)
}

/// How many line ends come before byte `start` of the file (`None` if it cannot be read).
fn lines_before(path: &Path, start: u64) -> Option<u64> {
    let mut file = open_regular(path).ok()?.take(start);
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 0u64;
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Some(lines),
            Ok(n) => lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// A bad line inside a block: line index in the block, and the byte offset in the line.
type Bad = (u64, usize);

/// Count the lines of `block` (whole lines), returning documents and the bad lines.
fn count_lines(
    block: &[u8],
    router: Option<&Router>,
    cut: &Cut,
    counts: &mut impl Tally,
) -> (u64, Vec<Bad>) {
    // One fast validation of the whole block; line by line only when it fails.
    let all_valid = simdutf8::basic::from_utf8(block).is_ok();
    let mut documents = 0;
    let mut bad = Vec::new();
    let mut units: Vec<u32> = Vec::new();
    let mut buf = Vec::new();
    for (index, raw) in block.split_inclusive(|&b| b == b'\n').enumerate() {
        let mut line = raw;
        while let [rest @ .., b'\r' | b'\n'] = line {
            line = rest;
        }
        if !all_valid {
            if let Err(e) = std::str::from_utf8(line) {
                bad.push((index as u64, e.valid_up_to()));
                continue;
            }
        }
        if line.is_empty() {
            continue;
        }
        documents += 1;
        if router.is_none() && cut.is_plain() {
            count_line(line, counts);
        } else if let (None, false, Some(breaks)) = (router, cut.prefix_space, &cut.spans) {
            // Spans cut from the UTF-8 line itself: no decoding to code points and back.
            let mut pos = 0;
            while pos < line.len() {
                let end = span_end_utf8(line, pos, breaks);
                counts.add(&line[pos..end], 1);
                pos = end;
            }
        } else {
            units.clear();
            // Valid UTF-8 (checked above): decoding cannot fail.
            let _ = crate::units::decode_wtf8_into(line, &mut units);
            count_document(&units, router, cut, counts, &mut buf);
        }
    }
    (documents, bad)
}

/// [`count_utf8`] for one line (no `\n` inside): runs of non-whitespace found with memchr.
fn count_line(line: &[u8], counts: &mut impl Tally) {
    let n = line.len();
    let mut pos = 0;
    while pos < n {
        let b = line[pos];
        let start = pos;
        if matches!(b, b' ' | b'\t' | b'\r') {
            // A space glued to the run after it; any other whitespace alone.
            if b != b' ' || pos + 1 == n || matches!(line[pos + 1], b' ' | b'\t' | b'\r') {
                counts.add(&line[pos..pos + 1], 1);
                pos += 1;
                continue;
            }
            pos += 1;
        }
        let end = memchr::memchr3(b' ', b'\t', b'\r', &line[pos..]).map_or(n, |i| pos + i);
        counts.add(&line[start..end], 1);
        pos = end;
    }
}

/// `n` with thousands separators (`65,536`), as Python's `f"{n:,}"` writes it in messages.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Cut `block` into about `parts` pieces at line ends.
fn split_at_lines(block: &[u8], parts: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..parts {
        let target = (block.len() * k / parts).max(start);
        let cut = match memchr::memchr(b'\n', &block[target.min(block.len())..]) {
            Some(i) => target + i + 1,
            None => block.len(),
        };
        out.push(&block[start..cut]);
        start = cut;
    }
    out.push(&block[start..]);
    out
}

/// Count every line of plain-text `files` (see the module docs). `counts` holds one table per
/// thread (merge them with [`absorb`]); `progress(bytes)` runs after each block and may stop
/// the work by returning an error ([`CountError::Stopped`], most often).
pub fn count_files<T: Tally>(
    files: &[&Path],
    options: &FileOptions<'_>,
    counts: &mut Vec<T>,
    stats: &mut Stats,
    mut progress: impl FnMut(u64) -> Result<(), CountError>,
) -> Result<(), CountError> {
    let threads = options.threads.max(1);
    counts.resize_with(threads.max(counts.len()), T::default);
    let block_bytes = options.block_bytes.max(1 << 16);
    for path in files {
        let shown = path.display();
        let mut file =
            open_regular(path).map_err(|e| CountError::Io(format!("{shown}: cannot open: {e}")))?;
        let (start, mut remaining) = match options.range {
            Some((start, end)) => {
                use std::io::Seek;
                file.seek(std::io::SeekFrom::Start(start)).map_err(|e| {
                    CountError::Io(format!("{shown}: cannot seek to byte {start}: {e}"))
                })?;
                (start, end.saturating_sub(start))
            }
            None => (0, u64::MAX),
        };
        let mut place = Place {
            path,
            start,
            before: None,
        };
        stats.files += 1;
        let mut buf: Vec<u8> = Vec::new();
        // Both sizes come from the caller (`block_bytes`, `max_line_bytes`): memory that cannot
        // be had is an error, not the abort Rust's allocation failure would be.
        reserve(&mut buf, block_bytes.saturating_add(1 << 16), &mut place, 0)?;
        let mut line_base: u64 = 0; // line number (0-based) of the block's first line
        let mut target = block_bytes;
        let mut eof = false;
        let mut skipping = false; // inside an over-long line that is being skipped
        let mut at_file_start = start == 0; // a UTF-8 byte order mark there is no text
        loop {
            // Fill up to `target` bytes, then cut after the last line end (the rest waits).
            while !eof && buf.len() < target {
                let want = ((target - buf.len()) as u64).min(remaining);
                if want == 0 {
                    eof = true;
                    break;
                }
                reserve(&mut buf, want as usize, &mut place, line_base)?;
                match (&mut file).take(want).read_to_end(&mut buf) {
                    Ok(0) => eof = true,
                    Ok(n) => remaining -= n as u64,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(CountError::Io(format!(
                            "{}: cannot read: {e}",
                            place.at(line_base)
                        )));
                    }
                }
            }
            if at_file_start && (buf.len() >= 3 || eof) {
                at_file_start = false;
                if buf.starts_with(b"\xEF\xBB\xBF") {
                    stats.bytes += 3;
                    progress(3)?;
                    buf.drain(..3);
                }
            }
            if skipping {
                // Drop the rest of an over-long bad line, up to and including its line end.
                match memchr::memchr(b'\n', &buf) {
                    Some(i) => {
                        stats.bytes += (i + 1) as u64;
                        progress((i + 1) as u64)?;
                        buf.drain(..=i);
                        line_base += 1;
                        skipping = false;
                    }
                    None => {
                        stats.bytes += buf.len() as u64;
                        progress(buf.len() as u64)?;
                        buf.clear();
                        if eof {
                            break;
                        }
                        continue;
                    }
                }
            }
            // The first line of the buffer, line end included (its bytes so far when unended).
            let first_line = memchr::memchr(b'\n', &buf).map_or(buf.len(), |i| i + 1) as u64;
            if first_line > options.max_line_bytes {
                let where_ = format!(
                    "{}: the line is longer than {} bytes, the limit that bounds memory \
                     (raise it with --max-line-bytes, or max_line_bytes=)",
                    place.at(line_base),
                    thousands(options.max_line_bytes)
                );
                if !options.skip_bad_lines {
                    return Err(CountError::BadLine(where_));
                }
                stats.bad_lines += 1;
                if stats.first_bad.len() < 5 {
                    stats.first_bad.push(where_);
                }
                skipping = true;
                target = block_bytes;
                continue;
            }
            let cut = if eof {
                buf.len()
            } else {
                match memchr::memrchr(b'\n', &buf) {
                    Some(i) => i + 1,
                    None => {
                        // One line longer than a block: read on (up to `max_line_bytes`).
                        target += block_bytes;
                        continue;
                    }
                }
            };
            if cut == 0 {
                break;
            }
            let block = &buf[..cut];
            let parts = split_at_lines(block, threads);
            let results: Vec<Option<(u64, Vec<Bad>)>> = std::thread::scope(|s| {
                let handles: Vec<_> = parts
                    .iter()
                    .zip(counts.iter_mut())
                    .map(|(&part, table)| {
                        s.spawn(move || count_lines(part, options.router, &options.cut, table))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().ok()).collect()
            });
            // Lines of earlier parts come first; report bad lines in file order.
            let mut base = line_base;
            for (part, result) in parts.iter().zip(results) {
                let (documents, bad) = result.ok_or_else(|| {
                    CountError::Io(format!(
                        "{}: internal error while counting",
                        place.at(line_base)
                    ))
                })?;
                stats.documents += documents;
                for (index, byte) in bad {
                    let where_ =
                        format!("{}: invalid UTF-8 at byte {byte}", place.at(base + index));
                    if !options.skip_bad_lines {
                        return Err(CountError::BadLine(where_));
                    }
                    stats.bad_lines += 1;
                    if stats.first_bad.len() < 5 {
                        stats.first_bad.push(where_);
                    }
                }
                base += memchr::memchr_iter(b'\n', part).count() as u64;
            }
            line_base = base;
            stats.bytes += cut as u64;
            progress(cut as u64)?;
            buf.drain(..cut);
            target = block_bytes;
            if eof && buf.is_empty() {
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(c: &Counts) -> Vec<(String, u64)> {
        let mut v: Vec<_> = c
            .iter()
            .map(|(k, n)| (String::from_utf8_lossy(k).into_owned(), n))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn pieces_from_bytes_and_from_code_points_agree() {
        let text = " ශ්‍රී ලංකාව  a\tb\r\n x ";
        let mut a = Counts::default();
        count_utf8(text.as_bytes(), &mut a);
        let mut b = Counts::default();
        let cps: Vec<u32> = text.chars().map(u32::from).collect();
        count_units(&cps, &mut b, &mut Vec::new());
        assert_eq!(sorted(&a), sorted(&b));
        assert_eq!(a.get(" ලංකාව".as_bytes()), 1);
        assert_eq!(a.get(b" "), 2);
        assert_eq!(a.get(b" x"), 1);
        assert_eq!(a.get(b"absent"), 0);
    }

    #[test]
    fn lines_are_cut_like_the_general_scanner() {
        for line in [
            "",
            " ",
            "  ",
            "a",
            " a",
            "a ",
            " a  b\t c\r",
            "\t\t x",
            "ශ්‍රී ලංකාව",
            "x\r\r y",
        ] {
            let (mut a, mut b) = (Counts::default(), Counts::default());
            count_line(line.as_bytes(), &mut a);
            count_utf8(line.as_bytes(), &mut b);
            assert_eq!(sorted(&a), sorted(&b), "{line:?}");
        }
    }

    #[test]
    fn long_pieces_and_growth() {
        let mut c = Counts::default();
        let long = "x".repeat(100);
        for i in 0..5000u64 {
            c.add(format!("{long}{i}").as_bytes(), i + 1);
            c.add(format!("{i}").as_bytes(), 1);
        }
        c.add(format!("{long}7").as_bytes(), 10);
        assert_eq!(c.len(), 10_000);
        assert_eq!(c.get(format!("{long}7").as_bytes()), 18);
        assert_eq!(c.get(b"4999"), 1);
        let mut d = Counts::default();
        d.add(b"4999", 2);
        absorb(&mut d, c.clone());
        assert_eq!(d.get(b"4999"), 3);
        assert_eq!(d.total(), c.total() + 2);
    }

    #[test]
    fn bytes_round_trip_and_overflow() {
        let mut c = Counts::default();
        let long = "ක".repeat(40);
        for (p, n) in [("a", 3u64), (" b", 1), (long.as_str(), 7)] {
            c.add(p.as_bytes(), n);
        }
        let mut d = Counts::default();
        d.add(b"a", 1);
        d.add_bytes(&c.to_bytes()).unwrap();
        assert_eq!(d.get(b"a"), 4);
        assert_eq!(d.get(long.as_bytes()), 7);
        assert_eq!(d.len(), 3);
        assert!(d.add_bytes(b"nonsense").is_err());
        assert!(d.add_bytes(&c.to_bytes()[..12]).is_err());
        let mut big = Counts::default();
        big.add(b"a", u64::MAX - 3);
        assert!(big.add_bytes(&c.to_bytes()).is_ok()); // exactly u64::MAX
        assert!(!big.try_add(b"a", 1));
        assert_eq!(big.get(b"a"), u64::MAX);
        assert!(big.try_add(b"z", 0) && big.get(b"z") == 0 && big.len() == 3);
    }

    #[test]
    fn files_blocks_threads_and_bad_lines() {
        let dir = std::env::temp_dir().join(format!("wwho-count-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        let mut content = Vec::new();
        for i in 0..5000 {
            content.extend_from_slice(format!("line {i} ශ්‍රී  x\r\n\n").as_bytes());
        }
        content.extend_from_slice(b"bad \xff here\nlast line");
        std::fs::write(&path, &content).unwrap();
        let mut want = Counts::default();
        for line in content.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if std::str::from_utf8(line).is_ok() {
                count_utf8(line, &mut want);
            }
        }
        for threads in [1, 3] {
            let options = FileOptions {
                threads,
                skip_bad_lines: true,
                router: None,
                cut: Cut::default(),
                block_bytes: 1 << 16,
                max_line_bytes: u64::MAX,
                range: None,
            };
            let (mut counts, mut stats) = (Vec::new(), Stats::default());
            count_files(&[path.as_path()], &options, &mut counts, &mut stats, |_| {
                Ok(())
            })
            .unwrap();
            let mut total = Counts::default();
            for c in counts {
                absorb(&mut total, c);
            }
            assert_eq!(sorted(&total), sorted(&want));
            assert_eq!(stats.documents, 5001);
            assert_eq!(stats.bad_lines, 1);
            assert_eq!(stats.bytes, content.len() as u64);
            assert_eq!(
                stats.first_bad,
                [format!("{}:10001: invalid UTF-8 at byte 4", path.display())]
            );
            let strict = FileOptions {
                skip_bad_lines: false,
                ..options
            };
            let err = count_files(
                &[path.as_path()],
                &strict,
                &mut Vec::<Counts>::new(),
                &mut Stats::default(),
                |_| Ok(()),
            );
            assert_eq!(
                err,
                Err(CountError::BadLine(format!(
                    "{}:10001: invalid UTF-8 at byte 4",
                    path.display()
                )))
            );
        }
        // Two ranges cut at a line end count what the whole file counts; a bad line in the
        // second range keeps its line number in the file.
        let cut = content.len() / 3;
        let cut = (cut + content[cut..].iter().position(|&b| b == b'\n').unwrap() + 1) as u64;
        let mut total = Counts::default();
        let mut stats = Stats::default();
        for range in [(0, cut), (cut, content.len() as u64)] {
            let options = FileOptions {
                threads: 2,
                skip_bad_lines: true,
                router: None,
                cut: Cut::default(),
                block_bytes: 1 << 16,
                max_line_bytes: u64::MAX,
                range: Some(range),
            };
            let mut counts = Vec::new();
            count_files(&[path.as_path()], &options, &mut counts, &mut stats, |_| {
                Ok(())
            })
            .unwrap();
            for c in counts {
                absorb(&mut total, c);
            }
        }
        assert_eq!(sorted(&total), sorted(&want));
        assert_eq!(stats.documents, 5001);
        assert_eq!(stats.bytes, content.len() as u64);
        assert_eq!(
            stats.first_bad,
            [format!("{}:10001: invalid UTF-8 at byte 4", path.display())]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
