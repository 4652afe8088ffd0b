//! Python's `PieceCounter`: a corpus (files, shards, batches of documents, pre-tokenized
//! pieces, count buffers) to piece or superword span counts, held in the core. It does not
//! collect words (`training`'s `WordCounts` does, from its counts); Python gets back only what
//! it writes to `vocab.json` or ships between processes.

use super::bytelevel::pretokenizer::Pretokenizer as PyPretokenizer;
use super::errors::{count_error, error, guard, raise, Kind};
use super::sgpe::{PyRouter, PyWordSplitter};
use super::training::PyWordCounts;
use crate::counting::{
    absorb, count_document, count_files, CountError, Counts, Cut, FileOptions, Stats, Tally,
};

use crate::pretokenize::general::RegexError;
use crate::router::Router;
use crate::spans::Breaks;
use crate::superwords::{self, pieces_of, SpanTable};
use crate::training::collect_words;
use crate::units::{decode_wtf8_into, Text};
use crate::with_text;
use crate::words::Scope;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::path::{Path, PathBuf};

/// SGPE piece counts of a corpus (`wwho.counting.PIECES`), held in the core;
/// with `span_breaks`, superword span counts (as piece ids: `crate::superwords::SpanTable`).
#[pyclass(module = "wwho._core", name = "PieceCounter")]
pub struct PyPieceCounter {
    /// One table per thread until [`PyPieceCounter::total`] merges them.
    pub(super) tables: Vec<Counts>,
    /// The same for span counts (a counter made with `span_breaks`).
    pub(super) spans: Vec<SpanTable>,
    router: Option<Router>,
    cut: Cut,
}

impl PyPieceCounter {
    pub(super) fn total(&mut self) -> &Counts {
        if self.tables.len() != 1 {
            let mut total = Counts::default();
            for t in self.tables.drain(..) {
                absorb(&mut total, t);
            }
            self.tables = vec![total];
        }
        &self.tables[0]
    }

    fn span_total(&mut self) -> &mut SpanTable {
        if self.spans.len() != 1 {
            self.spans = vec![superwords::merged(self.spans.drain(..))];
        }
        &mut self.spans[0]
    }

    pub(super) fn counts_spans(&self) -> bool {
        self.cut.spans.is_some()
    }

    /// `f(key, count)` for every piece (span, for a span counter) as UTF-8 bytes.
    fn for_each(&mut self, mut f: impl FnMut(&[u8], u64)) {
        if self.counts_spans() {
            self.span_total().for_each_span(f);
        } else {
            for (key, n) in self.total().iter() {
                f(key, n);
            }
        }
    }

    fn plain(counts: Counts) -> Self {
        Self {
            tables: vec![counts],
            spans: Vec::new(),
            router: None,
            cut: Cut::default(),
        }
    }
}

/// The first `n` tables, adding empty ones if there are fewer.
fn first<T: Default>(tables: &mut Vec<T>, n: usize) -> &mut [T] {
    if tables.len() < n {
        tables.resize_with(n, T::default);
    }
    &mut tables[..n]
}

/// Count `views` in chunks of `chunk` documents, one thread and one table per chunk.
fn count_views<T: Tally>(
    views: &[Text<'_>],
    chunk: usize,
    router: Option<&Router>,
    cut: &Cut,
    tables: &mut [T],
) {
    std::thread::scope(|s| {
        for (docs, table) in views.chunks(chunk).zip(tables.iter_mut()) {
            s.spawn(move || {
                let mut buf = Vec::new();
                for doc in docs {
                    with_text!(*doc, t => count_document(t, router, cut, table, &mut buf));
                }
            });
        }
    })
}

fn threads_or_all(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    }
}

#[pymethods]
impl PyPieceCounter {
    /// `router`: count only the script runs of each document (the meta tokenizer's SGPE part);
    /// `prefix_space`: a space before each document (the dummy prefix); `span_breaks`: count
    /// superword spans (`rust/src/spans.rs`) ending after these characters instead of pieces.
    #[new]
    #[pyo3(signature = (router=None, *, prefix_space=false, span_breaks=None))]
    fn new(
        router: Option<PyRef<'_, PyRouter>>,
        prefix_space: bool,
        span_breaks: Option<Bound<'_, PyString>>,
    ) -> PyResult<Self> {
        let spans = span_breaks
            .as_ref()
            .map(super::text::code_points)
            .transpose()?
            .map(Breaks::new);
        Ok(Self {
            tables: Vec::new(),
            spans: Vec::new(),
            router: router.map(|r| r.inner.clone()),
            cut: Cut {
                prefix_space,
                spans,
            },
        })
    }

    /// The piece counts of these span counts (a counter made with `span_breaks`, or one that
    /// was given span texts, e.g. by `add_bytes`).
    fn pieces(&mut self) -> Self {
        if self.counts_spans() {
            return Self::plain(superwords::pieces(&self.spans));
        }
        Self::plain(pieces_of(self.total()))
    }

    /// Count every line of plain-text files on `threads` threads (0: all cores) without the GIL.
    /// `progress(bytes)` is called after each block. Returns `(files, documents, bytes,
    /// bad_lines, first_bad)`; a bad line without `skip_bad_lines` is a CorpusError.
    /// `start`/`end`: only those bytes of each file (a shard, cut at line ends; see
    /// `FileOptions::range`); line numbers in messages stay the file's.
    #[pyo3(signature = (paths, *, threads=0, skip_bad_lines=false, progress=None, block_bytes=8 << 20, max_line_bytes=u64::MAX, start=0, end=None))]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn count_files(
        &mut self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        threads: usize,
        skip_bad_lines: bool,
        progress: Option<Py<PyAny>>,
        block_bytes: usize,
        max_line_bytes: u64,
        start: u64,
        end: Option<u64>,
    ) -> PyResult<(u64, u64, u64, u64, Vec<String>)> {
        let range = match (start, end) {
            (0, None) => None,
            (start, end) => Some((start, end.unwrap_or(u64::MAX))),
        };
        let threads = threads_or_all(threads);
        let files: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let mut stats = Stats::default();
        let counts_spans = self.counts_spans();
        let (tables, spans) = (&mut self.tables, &mut self.spans);
        let router = self.router.as_ref();
        // The exception a progress call or a signal raised (KeyboardInterrupt, most often): raised
        // again as it is, not as a message.
        let mut raised: Option<PyErr> = None;
        let result = py.detach(|| {
            guard("counting", || {
                let options = FileOptions {
                    threads,
                    skip_bad_lines,
                    router,
                    cut: self.cut.clone(),
                    block_bytes,
                    max_line_bytes,
                    range,
                };
                let progress = |bytes| {
                    let done = Python::attach(|py| match &progress {
                        Some(f) => f.call1(py, (bytes,)).map(|_| ()),
                        None => py.check_signals(),
                    });
                    done.map_err(|e| {
                        let message = e.to_string();
                        raised = Some(e);
                        CountError::Stopped(message)
                    })
                };
                if counts_spans {
                    count_files(&files, &options, spans, &mut stats, progress)
                } else {
                    count_files(&files, &options, tables, &mut stats, progress)
                }
            })
        });
        if let Some(e) = raised {
            return Err(e);
        }
        match result {
            Ok(Ok(())) => Ok((
                stats.files,
                stats.documents,
                stats.bytes,
                stats.bad_lines,
                stats.first_bad,
            )),
            Ok(Err(e)) => Err(count_error(py, e)),
            Err(panic) => Err(raise(py, panic)),
        }
    }

    /// Count documents given as text, on `threads` threads (0: all cores) without the GIL.
    #[pyo3(signature = (texts, *, threads=0))]
    fn count_texts(
        &mut self,
        py: Python<'_>,
        texts: Vec<Bound<'_, PyString>>,
        threads: usize,
    ) -> PyResult<()> {
        let views = texts
            .iter()
            .map(super::text::text)
            .collect::<PyResult<Vec<Text<'_>>>>()?;
        let threads = threads_or_all(threads).min(views.len().max(1));
        let router = self.router.as_ref();
        let cut = &self.cut;
        let chunk = views.len().div_ceil(threads).max(1);
        let (tables, spans) = (&mut self.tables, &mut self.spans);
        let result = py.detach(|| {
            guard("counting", || match cut.spans {
                Some(_) => count_views(&views, chunk, router, cut, first(spans, threads)),
                None => count_views(&views, chunk, router, cut, first(tables, threads)),
            })
        });
        result.map_err(|e| raise(py, e))
    }

    /// Count the pieces of documents as `pretokenizer` cuts them (byte-level training), on
    /// `threads` threads (0: all cores) without the GIL. Keys are the pieces' UTF-8 bytes; a
    /// document with a lone surrogate is a `UnicodeEncodeError` (callers replace them first).
    #[pyo3(signature = (texts, pretokenizer, *, threads=0))]
    fn count_pretokenized(
        &mut self,
        py: Python<'_>,
        texts: Vec<Bound<'_, PyString>>,
        pretokenizer: PyRef<'_, PyPretokenizer>,
        threads: usize,
    ) -> PyResult<()> {
        let strs = texts
            .iter()
            .map(|t| t.to_str())
            .collect::<PyResult<Vec<&str>>>()?;
        let threads = threads_or_all(threads).min(strs.len().max(1));
        let tables = first(&mut self.tables, threads);
        let pre = &pretokenizer.inner;
        // Chunks of about equal bytes, not equal documents: documents vary a lot in length.
        let total: usize = strs.iter().map(|s| s.len()).sum();
        let share = total.div_ceil(threads).max(1);
        let mut parts: Vec<&[&str]> = Vec::with_capacity(threads);
        let (mut start, mut size) = (0, 0);
        for (i, s) in strs.iter().enumerate() {
            size += s.len();
            if size >= share && parts.len() + 1 < threads {
                parts.push(&strs[start..=i]);
                (start, size) = (i + 1, 0);
            }
        }
        parts.push(&strs[start..]);
        let result = py
            .detach(|| {
                guard("counting", || {
                    std::thread::scope(|s| {
                        let handles: Vec<_> = parts
                            .iter()
                            .zip(tables.iter_mut())
                            .map(|(docs, table)| {
                                s.spawn(move || {
                                    for doc in docs.iter() {
                                        pre.for_each_piece::<RegexError>(
                                            doc,
                                            &mut |p: &[u8]| {
                                                table.add(p, 1);
                                                Ok(())
                                            },
                                        )?;
                                    }
                                    Ok::<(), RegexError>(())
                                })
                            })
                            .collect();
                        handles
                            .into_iter()
                            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                            .collect::<Result<Vec<()>, RegexError>>()
                    })
                })
            })
            .map_err(|e| raise(py, e))?;
        result.map_err(|e| {
            error(
                py,
                Kind::Corpus,
                format!("the pre-tokenizer failed on the corpus: {}", e.0),
            )
        })?;
        Ok(())
    }

    /// Every `(piece bytes, count)`: the keys exactly as counted (byte-level training; spans'
    /// texts for a span counter).
    fn byte_items<'py>(&mut self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        let mut out = Vec::new();
        self.for_each(|key, n| out.push((PyBytes::new(py, key), n)));
        out
    }

    /// Add `counts[i]` to the count of `pieces[i]` (counts of 0 add nothing; spans for a span
    /// counter). A sum past 2**64 - 1 is a CorpusError naming the piece (the pieces before it
    /// are added).
    fn add(
        &mut self,
        py: Python<'_>,
        pieces: Vec<Bound<'_, PyString>>,
        counts: Vec<u64>,
    ) -> PyResult<()> {
        if pieces.len() != counts.len() {
            return Err(error(
                py,
                Kind::Wwho,
                "add: pieces and counts differ in length",
            ));
        }
        let counts_spans = self.counts_spans();
        if counts_spans {
            self.span_total();
        } else {
            self.total();
        }
        let mut buf = Vec::new();
        for (piece, &n) in pieces.iter().zip(&counts) {
            let text = super::text::text(piece)?;
            buf.clear();
            with_text!(text, t => for u in t { crate::units::push_utf8(crate::units::Unit::cp(*u), &mut buf) });
            let added = if counts_spans {
                self.spans[0].try_add(&buf, n)
            } else {
                self.tables[0].try_add(&buf, n)
            };
            if !added {
                return Err(count_error(py, CountError::Overflow(buf)));
            }
        }
        Ok(())
    }

    /// Every count as one `bytes` object (see `Counts::to_bytes`; span texts for a span
    /// counter): partial counts shipped between processes, added with
    /// [`PyPieceCounter::add_bytes`].
    // The Python name says what users get; `&mut` because the threads' partial counts are
    // folded into one table first.
    #[allow(clippy::wrong_self_convention)]
    fn to_bytes<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let data = if self.counts_spans() {
            self.span_total().to_bytes()
        } else {
            self.total().to_bytes()
        };
        PyBytes::new(py, &data)
    }

    /// Add every count of a `to_bytes` buffer (exactly: a sum past 2**64 - 1 is a CorpusError).
    fn add_bytes(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let result = if self.counts_spans() {
            let table = self.span_total();
            py.detach(|| table.add_bytes(data))
        } else {
            self.total();
            let table = &mut self.tables[0];
            py.detach(|| table.add_bytes(data))
        };
        result.map_err(|e| count_error(py, e))
    }

    /// How many distinct pieces (spans, for a span counter).
    fn __len__(&mut self) -> usize {
        if self.counts_spans() {
            return self.span_total().len();
        }
        self.total().len()
    }

    /// The sum of all counts.
    fn total_count(&mut self) -> u64 {
        if self.counts_spans() {
            return self.span_total().total();
        }
        self.total().total()
    }

    /// Every `(piece, count)` (as Python objects: for callers that need a Counter; spans for a
    /// span counter).
    fn items<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyString>, u64)>> {
        let mut keys: Vec<(Vec<u32>, u64)> = Vec::new();
        self.for_each(|key, n| {
            // Every piece is text: counted from text, or refused by `add_bytes` when it is not.
            let mut cps = Vec::new();
            let _ = decode_wtf8_into(key, &mut cps);
            keys.push((cps, n));
        });
        keys.into_iter()
            .map(|(cps, n)| Ok((super::text::from_code_points(py, &cps)?, n)))
            .collect()
    }

    /// The words of every distinct piece (see `rust/src/training.rs`).
    #[pyo3(signature = (splitter, *, scope="words", reserved=Vec::new()))]
    fn words(
        &mut self,
        py: Python<'_>,
        splitter: PyRef<'_, PyWordSplitter>,
        scope: &str,
        reserved: Vec<String>,
    ) -> PyResult<PyWordCounts> {
        let scope = Scope::parse(scope).map_err(|e| raise(py, e))?;
        let splitter = splitter.inner.clone();
        let derived; // a span counter's words are those of its pieces
        let total = if self.counts_spans() {
            derived = self.span_total().pieces();
            &derived
        } else {
            self.total()
        };
        let inner = py
            .detach(|| {
                guard("collecting words", || {
                    collect_words(total, &splitter, scope, &reserved)
                })
            })
            .map_err(|e| raise(py, e))?;
        Ok(PyWordCounts::collected(inner))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPieceCounter>()?;
    Ok(())
}
