//! Python types for SGPE training's data after counting: `WordCounts` (pieces -> words,
//! syllables, the engine's input, the superword stage's engine), `CoreCounts` and
//! `building_merges`. The counts stay in the core; Python gets back only what it writes to
//! `vocab.json`. It does not count corpora (`counting`'s `PieceCounter` does).

use super::counting::PyPieceCounter;
use super::engine::{PyMergeEngine, SymbolKind};
use super::errors::{error, guard, raise, Kind};
use super::sgpe::PyWordSplitter;
use crate::engine::{Engine, UNK};
use crate::superwords::{self, Failure, Grouping, Input, Preparation};
use crate::training::{WordCounts, MAX_SYMBOL_UNITS};
use crate::words::Scope;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use rustc_hash::FxHashMap;
use std::sync::Arc;

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
    /// The word counts `PieceCounter.words` collected: no symbols numbered, nothing prepared.
    pub(super) fn collected(words: WordCounts) -> Self {
        PyWordCounts {
            inner: Arc::new(words),
            symbol_ids: Vec::new(),
            prepared: None,
        }
    }

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
    /// its pieces becomes (`rust/src/superwords/`, `prepare`). The word-level training then
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
    m.add_class::<PyWordCounts>()?;
    m.add_class::<PyCoreCounts>()?;
    m.add("MAX_SYMBOL_UNITS", MAX_SYMBOL_UNITS)?;
    m.add_function(wrap_pyfunction!(building_merges, m)?)?;
    Ok(())
}
