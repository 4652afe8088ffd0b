//! Python types for SGPE training's data: `PieceCounter` (corpus -> piece counts), `WordCounts`
//! (pieces -> words, syllables, the engine's input) and `building_merges`. The counts stay in
//! the core; Python gets back only what it writes to `vocab.json`.

use super::bytelevel::Pretokenizer as PyPretokenizer;
use super::engine::{PyMergeEngine, SymbolKind};
use super::errors::{count_error, error, guard, raise, Kind};
use super::sgpe::{PyRouter, PyWordSplitter};
use crate::counting::{
    absorb, count_document, count_files, CountError, Counts, Cut, FileOptions, Stats, Tally,
};
use crate::engine::{Engine, UNK};
use crate::pretokenize::general::RegexError;
use crate::router::Router;
use crate::spans::Breaks;
use crate::superwords::{self, pieces_of, Failure, Grouping, Input, Preparation, SpanTable};
use crate::training::{collect_words, WordCounts, MAX_SYMBOL_UNITS};
use crate::units::{decode_wtf8_into, Text};
use crate::with_text;
use crate::words::Scope;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// SGPE piece counts of a corpus (`wwho.bpe.count`, the `PIECES` pattern), held in the core;
/// with `span_breaks`, superword span counts (as piece ids: `crate::superwords::SpanTable`).
#[pyclass(module = "wwho._core", name = "PieceCounter")]
pub struct PyPieceCounter {
    /// One table per thread until [`PyPieceCounter::total`] merges them.
    tables: Vec<Counts>,
    /// The same for span counts (a counter made with `span_breaks`).
    spans: Vec<SpanTable>,
    router: Option<Router>,
    cut: Cut,
}

impl PyPieceCounter {
    fn total(&mut self) -> &Counts {
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

    fn counts_spans(&self) -> bool {
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
        Ok(PyWordCounts {
            inner: Arc::new(inner),
            symbol_ids: Vec::new(),
            prepared: None,
        })
    }
}

/// Words held only inside pieces with punctuation (`WordCounts::cores`), and their syllables.
#[pyclass(frozen, module = "wwho._core", name = "CoreCounts")]
pub struct PyCoreCounts {
    strings: Vec<Vec<u32>>,
    cores: Vec<(Box<[u32]>, u64)>,
}

impl PyCoreCounts {
    /// `counts` (words as string ids of `words`), with the strings they use copied out and
    /// numbered anew: the table outlives the word counts.
    fn copied(words: &WordCounts, counts: &FxHashMap<Box<[u32]>, u64>) -> Self {
        let mut local: FxHashMap<u32, u32> = FxHashMap::default();
        let mut strings: Vec<Vec<u32>> = Vec::new();
        let cores = counts
            .iter()
            .map(|(word, &n)| {
                let ids: Box<[u32]> = word
                    .iter()
                    .map(|&s| {
                        *local.entry(s).or_insert_with(|| {
                            strings.push(words.strings.get(s).to_vec());
                            (strings.len() - 1) as u32
                        })
                    })
                    .collect();
                (ids, n)
            })
            .collect();
        PyCoreCounts { strings, cores }
    }
}

#[pymethods]
impl PyCoreCounts {
    fn __len__(&self) -> usize {
        self.cores.len()
    }

    /// `[(word, count)]`, each word a list of its syllables, sorted (as Python sorts them).
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Vec<Bound<'py, PyString>>, u64)>> {
        let mut cores: Vec<(Vec<&[u32]>, u64)> = self
            .cores
            .iter()
            .map(|(w, n)| {
                (
                    w.iter()
                        .map(|&s| self.strings[s as usize].as_slice())
                        .collect(),
                    *n,
                )
            })
            .collect();
        cores.sort_unstable();
        cores
            .into_iter()
            .map(|(w, n)| {
                let units = w
                    .into_iter()
                    .map(|u| super::text::from_code_points(py, u))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok((units, n))
            })
            .collect()
    }
}

/// Words, boundary tokens and syllables of a corpus, with their counts (held in the core).
#[pyclass(module = "wwho._core", name = "WordCounts")]
pub struct PyWordCounts {
    /// Shared with the thread of `prepare_superwords` while it runs.
    inner: Arc<WordCounts>,
    /// The superword stage's spans and piece items, being worked out (`prepare_superwords`).
    prepared: Option<Preparation>,
    /// String id -> symbol id, of the last `engine_input` (the superword stage's symbols).
    symbol_ids: Vec<u32>,
}

fn i64_bytes(values: impl Iterator<Item = i64>) -> Vec<u8> {
    values.flat_map(i64::to_ne_bytes).collect()
}

impl PyWordCounts {
    /// `{string: count}` from counts by string id.
    fn string_counts<'py>(
        &self,
        py: Python<'py>,
        counts: &FxHashMap<u32, u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (&s, &n) in counts {
            if self.inner.strings.get(s).len() > MAX_SYMBOL_UNITS {
                continue; // never a symbol (`may_be_symbol`): its building pieces would be many
            }
            d.set_item(
                super::text::from_code_points(py, self.inner.strings.get(s))?,
                n,
            )?;
        }
        Ok(d)
    }
}

#[pymethods]
impl PyWordCounts {
    /// How many word types (mergeable spans).
    fn __len__(&self) -> usize {
        self.inner.words.len()
    }

    /// `{syllable: count}` for every syllable that may be a symbol (of at most
    /// `MAX_SYMBOL_UNITS` code points; the same for the two below).
    fn syllable_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.string_counts(py, &self.inner.syllable_freq)
    }

    /// `{token: count}` for every lone boundary token.
    fn boundary_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.string_counts(py, &self.inner.boundary)
    }

    /// The words of pieces that hold more than a word, in scope `"pieces"` (see
    /// `WordCounts::cores`), copied out with their syllables' strings: a small table the trainer
    /// keeps through the merges, after these word counts are freed, and reads only if ids are left.
    fn cores(&self) -> PyCoreCounts {
        PyCoreCounts::copied(&self.inner, &self.inner.cores)
    }

    /// The word endings (`WordCounts::endings`). Built when asked: the trainer asks only where
    /// the merges ran out (`complete_endings`).
    fn suffixes(&self) -> PyCoreCounts {
        PyCoreCounts::copied(&self.inner, &self.inner.endings())
    }

    /// `{boundary token: occurrences}` for every boundary token, lone or inside a span.
    fn boundary_symbol_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.string_counts(py, &self.inner.boundary_symbols)
    }

    /// The merge engine's input for `prune_freq`: `(symbols, engine, kept syllables, word
    /// lengths, word symbols, counts)`, the last three as native int64 arrays (for a checksum;
    /// empty unless `arrays`).
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (prune_freq, *, arrays=true))]
    fn engine_input<'py>(
        &mut self,
        py: Python<'py>,
        prune_freq: u64,
        arrays: bool,
    ) -> PyResult<(
        Vec<Bound<'py, PyString>>,
        PyMergeEngine,
        usize,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
    )> {
        let inner = &self.inner;
        let mut input = py.detach(|| inner.engine_input(prune_freq));
        self.symbol_ids = std::mem::take(&mut input.symbol_ids);
        let symbols = input
            .symbols
            .iter()
            .map(|&s| super::text::from_code_points(py, self.inner.strings.get(s)))
            .collect::<PyResult<Vec<_>>>()?;
        let (lengths, flat, counts) = if arrays {
            (
                i64_bytes(input.lengths.iter().map(|&n| n as i64)),
                i64_bytes(
                    input
                        .data
                        .iter()
                        .map(|&x| if x == UNK { -1 } else { i64::from(x) }),
                ),
                i64_bytes(input.counts.iter().map(|&c| c as i64)),
            )
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        let units: Vec<Vec<u32>> = input
            .symbols
            .iter()
            .map(|&s| self.inner.strings.get(s).to_vec())
            .collect();
        let engine = py
            .detach(|| Engine::from_flat(input.data, &input.lengths, input.counts, units, false))
            .map_err(|e| raise(py, e))?;
        Ok((
            symbols,
            PyMergeEngine {
                inner: engine,
                kind: SymbolKind::Str,
            },
            input.syllables,
            PyBytes::new(py, &lengths),
            PyBytes::new(py, &flat),
            PyBytes::new(py, &counts),
        ))
    }

    /// Start working out, on a thread of its own, what `superword_engine` needs before the
    /// word-level engine has run: `spans`'s counting threads' tables merged, and what each of
    /// its pieces becomes (`rust/src/superwords.rs`, `prepare`). The word-level training then
    /// runs beside it. `spans` is left without its span counts; `superword_engine` takes the
    /// result.
    /// Arguments as for `superword_engine`; a counter given span texts as such is left alone.
    #[pyo3(signature = (spans, splitter, *, scope, reserved=Vec::new()))]
    fn prepare_superwords(
        &mut self,
        py: Python<'_>,
        mut spans: PyRefMut<'_, PyPieceCounter>,
        splitter: PyRef<'_, PyWordSplitter>,
        scope: &str,
        reserved: Vec<String>,
    ) -> PyResult<()> {
        let scope = Scope::parse(scope).map_err(|e| raise(py, e))?;
        if !spans.counts_spans() || self.prepared.is_some() {
            return Ok(());
        }
        self.prepared = Some(superwords::prepare(
            std::mem::take(&mut spans.spans),
            splitter.inner.clone(),
            scope,
            reserved,
            Arc::clone(&self.inner),
        ));
        Ok(())
    }

    /// The superword stage's engine (`wwho.sgpe.superwords`): every span of `spans` (a counter
    /// made with `span_breaks`, whose pieces these words are) as the tokens the word-level
    /// `engine` (trained from the last `engine_input`) left its pieces, with the span's count.
    /// Its symbols are `engine`'s; `scope` and `reserved` as for `PieceCounter.words` (those of
    /// `prepare_superwords`, if it was called). What the stage no longer needs is freed before
    /// the new engine counts its pairs: `spans` and these word counts are left empty, and
    /// `engine`'s words are released (its symbols and merges stay). `min_freq`: the least
    /// frequency the new engine will be asked to merge; rarer pairs are left out of its index
    /// (see `rust/src/engine/mod.rs`, `from_flat_forgetting`; the results are the same). `letters`:
    /// superwords join only pieces that hold a letter (`superwords::Grouping::letters`).
    #[pyo3(signature = (spans, splitter, engine, *, scope, reserved=Vec::new(), min_freq=1, letters=true))]
    #[allow(clippy::too_many_arguments)]
    fn superword_engine(
        &mut self,
        py: Python<'_>,
        mut spans: PyRefMut<'_, PyPieceCounter>,
        splitter: PyRef<'_, PyWordSplitter>,
        mut engine: PyRefMut<'_, PyMergeEngine>,
        scope: &str,
        reserved: Vec<String>,
        min_freq: u64,
        letters: bool,
    ) -> PyResult<PyMergeEngine> {
        let scope = Scope::parse(scope).map_err(|e| raise(py, e))?;
        let input = match self.prepared.take() {
            Some(preparation) => Input::Prepared(preparation),
            None if spans.counts_spans() => {
                Input::Spans(superwords::Spans::Tables(std::mem::take(&mut spans.spans)))
            }
            None => {
                // Span texts given as such (e.g. added from shards counted elsewhere).
                spans.total();
                Input::Spans(superwords::Spans::Texts(
                    spans.tables.pop().unwrap_or_default(),
                ))
            }
        };
        let grouping = Grouping {
            splitter: &splitter.inner,
            scope,
            reserved: &reserved,
            letters,
        };
        let level = superwords::WordLevel {
            words: &mut self.inner,
            symbol_ids: &mut self.symbol_ids,
            engine: &mut engine.inner,
        };
        let built = py
            .detach(|| {
                guard("superword words", || {
                    superwords::engine(input, &grouping, level, min_freq)
                })
            })
            .map_err(|e| raise(py, e))?
            .map_err(|failure| match failure {
                // Reported as a panic inside a core call is (see `guard`).
                Failure::Panicked(panic) => {
                    match guard("preparing superword spans", || {
                        std::panic::resume_unwind(panic)
                    }) {
                        Err(panic) => raise(py, panic),
                        Ok(()) => error(py, Kind::Wwho, "the superword thread stopped"),
                    }
                }
                Failure::Refused(e) => raise(py, e),
            })?;
        Ok(PyMergeEngine {
            inner: built,
            kind: SymbolKind::Str,
        })
    }
}

/// `(merges, pieces)`: merges (string pairs) that rebuild each token from its code points, and
/// every piece they need, sorted by length then string (`wwho.sgpe.building`).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn building_merges<'py>(
    py: Python<'py>,
    tokens: Vec<Bound<'py, PyString>>,
) -> PyResult<(
    Vec<(Bound<'py, PyString>, Bound<'py, PyString>)>,
    Vec<Bound<'py, PyString>>,
)> {
    let tokens = tokens
        .iter()
        .map(super::text::code_points)
        .collect::<PyResult<Vec<_>>>()?;
    let (merges, pieces) = py
        .detach(|| {
            guard("building merges", || {
                crate::training::building_merges(&tokens)
            })
        })
        .map_err(|e| raise(py, e))?
        .map_err(|e| raise(py, e))?;
    let s = |cps: &[u32]| super::text::from_code_points(py, cps);
    let merges = merges
        .iter()
        .map(|(a, b)| Ok((s(a)?, s(b)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let pieces = pieces.iter().map(|p| s(p)).collect::<PyResult<Vec<_>>>()?;
    Ok((merges, pieces))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPieceCounter>()?;
    m.add_class::<PyWordCounts>()?;
    m.add_class::<PyCoreCounts>()?;
    m.add("MAX_SYMBOL_UNITS", MAX_SYMBOL_UNITS)?;
    m.add_function(wrap_pyfunction!(building_merges, m)?)?;
    Ok(())
}
