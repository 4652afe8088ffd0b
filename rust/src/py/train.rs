//! Python types for training: `MergeEngine` (the merge loop).
//!
//! Inputs are checked here with the messages `wwho.bpe.engine` has always given (the word,
//! symbol or merge at fault), as `wwho.errors.MergeError`.

use super::errors::{error, guard, Kind};
use super::sgpe::{PyRouter, PyWordSplitter};
use crate::count::{absorb, count_document, count_files, CountError, Counts, FileOptions, Stats};
use crate::engine::{Engine, EngineError, UNK};
use crate::router::Router;
use crate::sgpe::Scope;
use crate::training::{collect_words, WordCounts};
use crate::units::{decode_wtf8_into, Text};
use crate::with_text;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyString};
use std::path::{Path, PathBuf};

/// Whether the symbols are `str` (code points) or `bytes` (byte values).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SymbolKind {
    Str,
    Bytes,
}

/// The merge engine (`wwho.bpe.engine.MergeEngine` wraps it).
#[pyclass(module = "wwho._core", name = "MergeEngine")]
pub struct PyMergeEngine {
    inner: Engine,
    kind: SymbolKind,
}

fn merge_error(py: Python<'_>, message: String) -> PyErr {
    error(py, Kind::Merge, message)
}

fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The units of one symbol, and its kind.
fn symbol_units(obj: &Bound<'_, PyAny>) -> Option<(Vec<u32>, SymbolKind)> {
    if let Ok(s) = obj.cast::<PyString>() {
        return super::text::code_points(s)
            .ok()
            .map(|cps| (cps, SymbolKind::Str));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Some((
            b.as_bytes().iter().map(|&x| u32::from(x)).collect(),
            SymbolKind::Bytes,
        ));
    }
    None
}

impl PyMergeEngine {
    fn symbol_object<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyAny>> {
        let units = &self.inner.symbols()[id as usize];
        Ok(match self.kind {
            SymbolKind::Str => super::text::from_code_points(py, units)?.into_any(),
            SymbolKind::Bytes => {
                let bytes: Vec<u8> = units.iter().map(|&b| b as u8).collect();
                PyBytes::new(py, &bytes).into_any()
            }
        })
    }
}

#[pymethods]
impl PyMergeEngine {
    #[new]
    fn new(
        py: Python<'_>,
        words: &Bound<'_, PyAny>,
        counts: &Bound<'_, PyAny>,
        symbols: &Bound<'_, PyAny>,
        greater: bool,
    ) -> PyResult<Self> {
        let err = |m: String| merge_error(py, m);
        let mut units = Vec::new();
        let mut kind = None;
        let mut kinds = std::collections::BTreeSet::new();
        for obj in symbols.try_iter()? {
            let obj = obj?;
            match symbol_units(&obj) {
                Some((u, k)) => {
                    kinds.insert(if k == SymbolKind::Str { "str" } else { "bytes" });
                    kind = Some(k);
                    units.push(u);
                }
                None => {
                    kinds.insert("other");
                }
            }
        }
        if kinds.len() > 1 || kinds.contains("other") {
            let names: Vec<String> = symbols
                .try_iter()?
                .filter_map(|o| {
                    o.ok()
                        .and_then(|o| o.get_type().name().ok().map(|n| n.to_string()))
                })
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            return Err(err(format!(
                "symbols must be all str or all bytes, not {names:?}"
            )));
        }
        let n = units.len() as i64;
        let (mut data, mut lengths) = (Vec::new(), Vec::new());
        for (i, word) in words.try_iter()?.enumerate() {
            let word = word?;
            let before = data.len();
            if let Ok(b) = word.cast::<PyBytes>() {
                // A bytes word: its byte values are the ids (byte-level training's words).
                if let Some(&bad) = b.as_bytes().iter().find(|&&x| i64::from(x) >= n) {
                    return Err(err(format!(
                        "word {i}: symbol id {bad} is neither UNK (-1) nor an id in [0, {n})"
                    )));
                }
                data.extend(b.as_bytes().iter().map(|&x| u32::from(x)));
                lengths.push(data.len() - before);
                continue;
            }
            for item in word.try_iter()? {
                let item = item?;
                let value = match item.extract::<i64>() {
                    Ok(v) => v,
                    Err(_) if item.is_instance_of::<PyInt>() => i64::MAX, // too large: out of range below
                    Err(_) => {
                        if item.call_method0("__index__").is_ok() {
                            i64::MAX
                        } else {
                            return Err(err(format!(
                                "word {i}: {} is not an integer",
                                repr(&item)
                            )));
                        }
                    }
                };
                if value == -1 {
                    data.push(UNK);
                } else if (0..n).contains(&value) {
                    data.push(value as u32);
                } else {
                    return Err(err(format!(
                        "word {i}: symbol id {} is neither UNK (-1) nor an id in [0, {n})",
                        repr(&item)
                    )));
                }
            }
            lengths.push(data.len() - before);
        }
        let mut count_values = Vec::new();
        for (i, c) in counts.try_iter()?.enumerate() {
            let c = c?;
            match c.extract::<i64>() {
                Ok(v) if v > 0 => count_values.push(v as u64),
                Ok(v) => return Err(err(format!("word {i}: count must be positive, not {v}"))),
                Err(_) if c.is_instance_of::<PyInt>() => {
                    let positive = c.gt(0).unwrap_or(false);
                    return Err(err(if positive {
                        "counts too large: pair frequencies must fit in 62 bits".to_string()
                    } else {
                        format!("word {i}: count must be positive, not {}", repr(&c))
                    }));
                }
                Err(_) => return Err(err(format!("counts: {} is not an integer", repr(&c)))),
            }
        }
        if count_values.len() != lengths.len() {
            return Err(err(format!(
                "words and counts differ in length: {} != {}",
                lengths.len(),
                count_values.len()
            )));
        }
        let inner = Engine::from_flat(data, &lengths, count_values, units, greater).map_err(
            |e| match e {
                EngineError::Duplicate(a, b) => {
                    let shown = symbols.get_item(a).map(|s| repr(&s)).unwrap_or_default();
                    err(format!(
                        "symbols {a} and {b} are both {shown}: symbols must be distinct"
                    ))
                }
                EngineError::Empty(i) => err(format!("symbol {i} is empty")),
                EngineError::BadId(i, id) => err(format!(
                    "word {i}: symbol id {id} is neither UNK (-1) nor an id in [0, {n})"
                )),
                EngineError::ZeroCount(i) => {
                    err(format!("word {i}: count must be positive, not 0"))
                }
                EngineError::Overflow => {
                    err("counts too large: pair frequencies must fit in 62 bits".into())
                }
                EngineError::ReplayId(_) | EngineError::ReplayAbsent(_) => {
                    err("unexpected replay error".into())
                }
            },
        )?;
        Ok(Self {
            inner,
            kind: kind.unwrap_or(SymbolKind::Str),
        })
    }

    /// Merge the best pair: `(left, right, new id, freq)`, or None.
    fn step(&mut self, min_freq: i64) -> Option<(u32, u32, u32, u64)> {
        self.inner.step(min_freq)
    }

    /// Merge until `max_symbols` symbols or no pair reaches `min_freq`; `after(left, right,
    /// new id, freq, merges so far, symbols so far)` is called after every `every`-th merge (an
    /// exception it raises stops the run). It must not call this engine (it is busy).
    #[pyo3(signature = (max_symbols, min_freq, after=None, every=1))]
    fn train(
        &mut self,
        py: Python<'_>,
        max_symbols: usize,
        min_freq: i64,
        after: Option<Py<PyAny>>,
        every: u64,
    ) -> PyResult<()> {
        let mut failure = None;
        let mut steps = 0u64;
        let every = every.max(1);
        self.inner
            .train(max_symbols, min_freq, |engine, (a, b, c, freq)| {
                steps += 1;
                let result = match &after {
                    Some(f) if steps % every == 0 => {
                        let sizes = (engine.merges().len(), engine.symbols().len());
                        f.call1(py, (a, b, c, freq, sizes.0, sizes.1)).map(|_| ())
                    }
                    _ if steps % 1024 == 0 => py.check_signals(),
                    _ => Ok(()),
                };
                match result {
                    Ok(()) => true,
                    Err(e) => {
                        failure = Some(e);
                        false
                    }
                }
            });
        failure.map_or(Ok(()), Err)
    }

    /// Apply known merges in order; returns the id each one produced.
    fn replay(&mut self, py: Python<'_>, merges: Vec<(i64, i64)>) -> PyResult<Vec<u32>> {
        let mut made = Vec::with_capacity(merges.len());
        for (a, b) in merges {
            let step = self.inner.merges().len() + 1;
            let n = self.inner.symbols().len() as i64;
            if !(0..n).contains(&a) || !(0..n).contains(&b) {
                return Err(merge_error(
                    py,
                    format!("merge {step}: ({a}, {b}) is not a pair of symbol ids in [0, {n})"),
                ));
            }
            match self.inner.replay_one(a as u32, b as u32) {
                Ok(c) => made.push(c),
                Err(_) => {
                    let (sa, sb) = (
                        self.symbol_object(py, a as u32)?,
                        self.symbol_object(py, b as u32)?,
                    );
                    return Err(merge_error(
                        py,
                        format!(
                            "merge {step}: pair ({}, {}) does not occur in the words at this point: these merges \
                             were not learned from these words",
                            repr(&sa),
                            repr(&sb)
                        ),
                    ));
                }
            }
        }
        Ok(made)
    }

    /// The merges from number `start` on.
    fn merges_from(&self, start: usize) -> Vec<(u32, u32)> {
        self.inner
            .merges()
            .get(start..)
            .unwrap_or_default()
            .to_vec()
    }

    /// The symbols from id `start` on, as `str` or `bytes`.
    fn symbols_from<'py>(&self, py: Python<'py>, start: usize) -> PyResult<Vec<Bound<'py, PyAny>>> {
        (start..self.inner.symbols().len())
            .map(|i| self.symbol_object(py, i as u32))
            .collect()
    }

    /// `{(left, right): freq}` for every pair present.
    fn pair_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (a, b, f) in self.inner.pair_counts() {
            d.set_item((a, b), f)?;
        }
        Ok(d)
    }

    /// The current words (UNK as -1) and their counts.
    fn words_and_counts(&self) -> (Vec<Vec<i64>>, Vec<u64>) {
        let words = (0..self.inner.num_words())
            .map(|i| {
                self.inner
                    .word(i)
                    .iter()
                    .map(|&x| if x == UNK { -1 } else { i64::from(x) })
                    .collect()
            })
            .collect();
        (words, self.inner.counts().to_vec())
    }

    fn symbol_frequencies(&self) -> Vec<u64> {
        self.inner.symbol_frequencies()
    }

    fn num_symbols(&self) -> usize {
        self.inner.symbols().len()
    }

    /// Bytes held by the engine (an estimate).
    fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMergeEngine>()?;
    m.add_class::<PyPieceCounter>()?;
    m.add_class::<PyWordCounts>()?;
    m.add_function(wrap_pyfunction!(building_merges, m)?)?;
    Ok(())
}

/// SGPE piece counts of a corpus (`wwho.bpe.count`, the `PIECES` pattern), held in the core.
#[pyclass(module = "wwho._core", name = "PieceCounter")]
pub struct PyPieceCounter {
    /// One table per thread until [`PyPieceCounter::total`] merges them.
    tables: Vec<Counts>,
    router: Option<Router>,
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
    /// `router`: count only the script runs of each document (the meta tokenizer's SGPE part).
    #[new]
    #[pyo3(signature = (router=None))]
    fn new(router: Option<PyRef<'_, PyRouter>>) -> Self {
        Self {
            tables: Vec::new(),
            router: router.map(|r| r.inner.clone()),
        }
    }

    /// Count every line of plain-text files on `threads` threads (0: all cores) without the GIL.
    /// `progress(bytes)` is called after each block. Returns `(files, documents, bytes,
    /// bad_lines, first_bad)`; a bad line without `skip_bad_lines` is a CorpusError.
    #[pyo3(signature = (paths, *, threads=0, skip_bad_lines=false, progress=None, block_bytes=8 << 20))]
    #[allow(clippy::type_complexity)]
    fn count_files(
        &mut self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        threads: usize,
        skip_bad_lines: bool,
        progress: Option<Py<PyAny>>,
        block_bytes: usize,
    ) -> PyResult<(u64, u64, u64, u64, Vec<String>)> {
        let threads = threads_or_all(threads);
        let files: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let mut stats = Stats::default();
        let tables = &mut self.tables;
        let router = self.router.as_ref();
        let result = py.detach(|| {
            guard("counting", || {
                let options = FileOptions {
                    threads,
                    skip_bad_lines,
                    router,
                    block_bytes,
                };
                count_files(
                    &files,
                    &options,
                    tables,
                    &mut stats,
                    |bytes| match &progress {
                        Some(f) => Python::attach(|py| {
                            f.call1(py, (bytes,)).map(|_| ()).map_err(|e| e.to_string())
                        }),
                        None => Python::attach(|py| py.check_signals().map_err(|e| e.to_string())),
                    },
                )
            })
        });
        match result {
            Ok(Ok(())) => Ok((
                stats.files,
                stats.documents,
                stats.bytes,
                stats.bad_lines,
                stats.first_bad,
            )),
            Ok(Err(CountError::BadLine(m))) => Err(error(
                py,
                Kind::Corpus,
                format!("{m} (use --skip-bad-lines to skip such lines)"),
            )),
            Ok(Err(CountError::Io(m))) => Err(error(py, Kind::Corpus, m)),
            Err(m) => Err(error(py, Kind::Wwho, m)),
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
        if self.tables.len() < threads {
            self.tables.resize_with(threads, Counts::default);
        }
        let router = self.router.as_ref();
        let tables = &mut self.tables[..threads];
        let chunk = views.len().div_ceil(threads).max(1);
        py.detach(|| {
            guard("counting", || {
                std::thread::scope(|s| {
                    for (docs, table) in views.chunks(chunk).zip(tables.iter_mut()) {
                        s.spawn(move || {
                            let mut buf = Vec::new();
                            for doc in docs {
                                with_text!(*doc, t => count_document(t, router, table, &mut buf));
                            }
                        });
                    }
                })
            })
        })
        .map_err(|e| error(py, Kind::Wwho, e))
    }

    /// How many distinct pieces.
    fn __len__(&mut self) -> usize {
        self.total().len()
    }

    /// The sum of all counts.
    fn total_count(&mut self) -> u64 {
        self.total().total()
    }

    /// Every `(piece, count)` (as Python objects: for callers that need a Counter).
    fn items<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyString>, u64)>> {
        let mut out = Vec::with_capacity(self.total().len());
        let mut cps = Vec::new();
        for (piece, n) in self.total().iter() {
            cps.clear();
            let _ = decode_wtf8_into(piece, &mut cps);
            out.push((super::text::from_code_points(py, &cps)?, n));
        }
        Ok(out)
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
        let scope = Scope::parse(scope).map_err(|e| error(py, Kind::Vocab, e))?;
        let splitter = splitter.inner.clone();
        let total = self.total();
        let inner = py
            .detach(|| {
                guard("collecting words", || {
                    collect_words(total, &splitter, scope, &reserved)
                })
            })
            .map_err(|e| error(py, Kind::Wwho, e))?;
        Ok(PyWordCounts { inner })
    }
}

/// Words, boundary tokens and syllables of a corpus, with their counts (held in the core).
#[pyclass(module = "wwho._core", name = "WordCounts")]
pub struct PyWordCounts {
    inner: WordCounts,
}

fn i64_bytes(values: impl Iterator<Item = i64>) -> Vec<u8> {
    values.flat_map(i64::to_ne_bytes).collect()
}

#[pymethods]
impl PyWordCounts {
    /// How many word types (mergeable spans).
    fn __len__(&self) -> usize {
        self.inner.words.len()
    }

    /// `{syllable: count}` for every syllable.
    fn syllable_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (&s, &n) in &self.inner.syllable_freq {
            d.set_item(
                super::text::from_code_points(py, self.inner.strings.get(s))?,
                n,
            )?;
        }
        Ok(d)
    }

    /// `{token: count}` for every lone boundary token.
    fn boundary_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (&s, &n) in &self.inner.boundary {
            d.set_item(
                super::text::from_code_points(py, self.inner.strings.get(s))?,
                n,
            )?;
        }
        Ok(d)
    }

    /// Every boundary token seen (lone or inside a span).
    fn boundary_symbols<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyString>>> {
        self.inner
            .boundary_symbols
            .keys()
            .map(|&s| super::text::from_code_points(py, self.inner.strings.get(s)))
            .collect()
    }

    /// The merge engine's input for `prune_freq`: `(symbols, engine, kept syllables, word
    /// lengths, word symbols, counts)`, the last three as native int64 arrays (for a checksum).
    #[allow(clippy::type_complexity)]
    fn engine_input<'py>(
        &self,
        py: Python<'py>,
        prune_freq: u64,
    ) -> PyResult<(
        Vec<Bound<'py, PyString>>,
        PyMergeEngine,
        usize,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
    )> {
        let input = py.detach(|| self.inner.engine_input(prune_freq));
        let symbols = input
            .symbols
            .iter()
            .map(|&s| super::text::from_code_points(py, self.inner.strings.get(s)))
            .collect::<PyResult<Vec<_>>>()?;
        let lengths = i64_bytes(input.lengths.iter().map(|&n| n as i64));
        let flat = i64_bytes(
            input
                .data
                .iter()
                .map(|&x| if x == UNK { -1 } else { i64::from(x) }),
        );
        let counts = i64_bytes(input.counts.iter().map(|&c| c as i64));
        let units: Vec<Vec<u32>> = input
            .symbols
            .iter()
            .map(|&s| self.inner.strings.get(s).to_vec())
            .collect();
        let engine = py
            .detach(|| Engine::from_flat(input.data, &input.lengths, input.counts, units, false))
            .map_err(|e| error(py, Kind::Merge, format!("{e:?}")))?;
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
        .map_err(|e| error(py, Kind::Wwho, e))?
        .map_err(|e| error(py, Kind::Vocab, e))?;
    let s = |cps: &[u32]| super::text::from_code_points(py, cps);
    let merges = merges
        .iter()
        .map(|(a, b)| Ok((s(a)?, s(b)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let pieces = pieces.iter().map(|p| s(p)).collect::<PyResult<Vec<_>>>()?;
    Ok((merges, pieces))
}
