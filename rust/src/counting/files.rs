//! Counting plain-text files: blocks cut at line ends, each block's lines shared among threads
//! that keep one table each, bad lines (not UTF-8, or longer than the limit) reported as
//! `file:line` or skipped and counted, a byte range of a file counted as a shard with the
//! file's line numbers. It does not read other formats (`wwho.corpus` does) or merge the
//! threads' tables (the caller does, with [`absorb`](super::absorb)).

use super::{count_document, CountError, Cut, Tally};
use crate::router::Router;
use crate::spans::span_end_utf8;
use std::io::Read;
use std::path::Path;

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

/// [`count_utf8`](super::count_utf8) for one line (no `\n` inside): runs of non-whitespace found with memchr.
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
/// thread (merge them with [`absorb`](super::absorb)); `progress(bytes)` runs after each block and may stop
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
                    "{}: the line is longer than {} bytes (its line end included), the limit \
                     that bounds memory (raise it with --max-line-bytes, or max_line_bytes=)",
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
    use crate::counting::tests::sorted;
    use crate::counting::{absorb, count_utf8, Counts};

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
