//! Python type for the merge engine: `MergeEngine` (`wwho.bpe.engine.MergeEngine` wraps it).
//!
//! Inputs are checked here with the messages `wwho.bpe.engine` has always given (the word,
//! symbol or merge at fault), as `wwho.errors.MergeError`.

use super::errors::{error, guard, raise, Kind};
use crate::engine::{Engine, EngineError, UNK};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyString};

/// Whether the symbols are `str` (code points) or `bytes` (byte values).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SymbolKind {
    Str,
    Bytes,
}

/// The merge engine (`wwho.bpe.engine.MergeEngine` wraps it).
#[pyclass(module = "wwho._core", name = "MergeEngine")]
pub struct PyMergeEngine {
    pub(super) inner: Engine,
    pub(super) kind: SymbolKind,
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
                EngineError::ReplayId(_)
                | EngineError::ReplayAbsent(_)
                | EngineError::TooManyWords => err(format!("unexpected engine error: {e}")),
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

    /// Up to `n` merges, each as `step` makes it; fewer once no pair reaches `min_freq`.
    fn steps(
        &mut self,
        py: Python<'_>,
        n: usize,
        min_freq: i64,
    ) -> PyResult<Vec<(u32, u32, u32, u64)>> {
        let mut done = Vec::with_capacity(n.min(1 << 20));
        while done.len() < n {
            match self.inner.step(min_freq) {
                Some(merge) => done.push(merge),
                None => break,
            }
            if done.len() % 4096 == 0 {
                py.check_signals()?;
            }
        }
        Ok(done)
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

    /// Apply merges learned elsewhere in order, wherever their pair occurs (see
    /// `Engine::apply`); returns the id each one produced, `None` for one left out.
    fn apply(&mut self, py: Python<'_>, merges: Vec<(i64, i64)>) -> PyResult<Vec<Option<u32>>> {
        let n = self.inner.symbols().len() as i64;
        let mut pairs = Vec::with_capacity(merges.len());
        for (k, (a, b)) in merges.into_iter().enumerate() {
            if !(0..n).contains(&a) || !(0..n).contains(&b) {
                return Err(merge_error(
                    py,
                    format!(
                        "merge {}: ({a}, {b}) is not a pair of symbol ids in [0, {n})",
                        k + 1
                    ),
                ));
            }
            pairs.push((a as u32, b as u32));
        }
        let inner = &mut self.inner;
        py.detach(|| guard("applying merges", || inner.apply(&pairs)))
            .map_err(|panic| raise(py, panic))?
            .map_err(|e| merge_error(py, e.to_string()))
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
    fn pair_counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
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
    Ok(())
}
