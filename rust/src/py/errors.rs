//! Errors for Python: wwho's own typed exceptions (`wwho.errors`), raised from the core.
//!
//! Every failure the core reports becomes a `WwhoError` subclass with a message naming what is
//! wrong (the id, the offset, the file); a Rust panic inside a core call becomes one too, never
//! a `PanicException`. The class follows the core's error type ([`Raised`], [`count_error`]),
//! the message its `Display`; a binding that knows more context (the symbol's Python repr, a
//! flag to pass) may still choose its own message with [`error`].

use crate::counting::CountError;
use crate::engine::EngineError;
use crate::errors::{SchemaError, VocabError};
use crate::memory::NoMemory;
use pyo3::prelude::*;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The `wwho.errors` exception classes the core raises.
#[derive(Clone, Copy)]
#[allow(dead_code)] // every kind wwho has, whether the core raises it yet or not
pub enum Kind {
    Schema,
    Corpus,
    Vocab,
    Tokenizer,
    Merge,
    Wwho,
}

/// A `wwho.errors` exception of `kind` with `message`.
pub fn error(py: Python<'_>, kind: Kind, message: impl fmt::Display) -> PyErr {
    let name = match kind {
        Kind::Schema => "SchemaError",
        Kind::Corpus => "CorpusError",
        Kind::Vocab => "VocabError",
        Kind::Tokenizer => "TokenizerError",
        Kind::Merge => "MergeError",
        Kind::Wwho => "WwhoError",
    };
    let message = message.to_string();
    match py.import("wwho.errors").and_then(|m| m.getattr(name)) {
        Ok(class) => match class.call1((message.clone(),)) {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        },
        Err(_) => pyo3::exceptions::PyValueError::new_err(message),
    }
}

/// The `wwho.errors` class each of the core's error types becomes, with its `Display` as message.
pub trait Raised: fmt::Display {
    const KIND: Kind;
}

impl Raised for SchemaError {
    const KIND: Kind = Kind::Schema;
}

impl Raised for VocabError {
    const KIND: Kind = Kind::Vocab;
}

impl Raised for EngineError {
    const KIND: Kind = Kind::Merge;
}

impl Raised for Panic {
    const KIND: Kind = Kind::Wwho;
}

/// `e` as the `wwho.errors` exception of its type.
/// A `MemoryError` for memory the core could not have while encoding a text (`texts[at]` of
/// a batch): a text too long for the memory left, which the caller can shorten.
pub fn no_memory_at(e: NoMemory, at: Option<usize>) -> PyErr {
    let place = at.map(|at| format!("texts[{at}]: ")).unwrap_or_default();
    pyo3::exceptions::PyMemoryError::new_err(format!("{place}out of memory: {e}"))
}

/// [`no_memory_at`] for a text alone.
pub fn no_memory(e: NoMemory) -> PyErr {
    no_memory_at(e, None)
}

pub fn raise<E: Raised>(py: Python<'_>, e: E) -> PyErr {
    error(py, E::KIND, e)
}

/// A counting error as Python sees it: a `CorpusError`, or a `MemoryError` where the memory for
/// a block could not be had; a bad line's message says how to skip such lines.
pub fn count_error(py: Python<'_>, e: CountError) -> PyErr {
    match e {
        CountError::BadLine(m) => error(
            py,
            Kind::Corpus,
            format!("{m} (use --skip-bad-lines to skip such lines)"),
        ),
        CountError::Memory(m) => pyo3::exceptions::PyMemoryError::new_err(m),
        other => error(py, Kind::Corpus, other),
    }
}

/// A panic inside a core call: a bug, reported as what was being done and the panic's message.
#[derive(Debug)]
pub struct Panic {
    what: String,
    detail: String,
}

impl fmt::Display for Panic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "internal error in the compiled core while {}: {} (please report this)",
            self.what, self.detail
        )
    }
}

impl std::error::Error for Panic {}

/// Run `f`, turning a panic into an `Err` naming what was being done.
pub fn guard<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, Panic> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Panic {
            what: what.to_string(),
            detail,
        }
    })
}

/// `data` as Python `bytes`, or a `MemoryError` where Python cannot allocate them: `PyBytes::new`
/// panics then, and a panic while memory is short can deadlock in the backtrace printer (with
/// `RUST_BACKTRACE` set) instead of raising. For outputs whose size comes from the input.
pub fn py_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    pyo3::types::PyBytes::new_with(py, data.len(), |buf| {
        buf.copy_from_slice(data);
        Ok(())
    })
}

// pyo3's `PyDict::new`, `PyList::new` and `PyTuple::new` panic where Python cannot allocate the
// object (and a panic while memory is short can deadlock in the backtrace printer, as
// `py_bytes` says). A loader makes one object per token or merge: these raise `MemoryError`.

/// A new empty `dict`, or a `MemoryError`.
pub fn py_dict(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    // SAFETY: PyDict_New returns a new reference or NULL with an exception set.
    unsafe { Ok(Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyDict_New())?.cast_into_unchecked()) }
}

/// The tuple `(a, b)`, or a `MemoryError`.
pub fn py_pair<'py>(
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    // SAFETY: PyTuple_Pack takes borrowed references (it adds its own) and returns a new
    // reference or NULL with an exception set.
    unsafe {
        let pair = pyo3::ffi::PyTuple_Pack(2, a.as_ptr(), b.as_ptr());
        Ok(Bound::from_owned_ptr_or_err(a.py(), pair)?.cast_into_unchecked())
    }
}

/// A `list` of `items` (None as Python's `None`), or a `MemoryError`.
pub fn py_list<'py, T>(
    py: Python<'py>,
    items: Vec<Option<Bound<'py, T>>>,
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    // SAFETY: PyList_New returns a new list of `len` NULL slots (or NULL with an exception set);
    // each slot is then set exactly once to a new reference (PyList_SET_ITEM steals it).
    unsafe {
        let list = pyo3::ffi::PyList_New(items.len() as pyo3::ffi::Py_ssize_t);
        let list = Bound::from_owned_ptr_or_err(py, list)?;
        for (i, item) in items.into_iter().enumerate() {
            let item = match item {
                Some(item) => item.into_any(),
                None => py.None().into_bound(py),
            };
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as pyo3::ffi::Py_ssize_t, item.into_ptr());
        }
        Ok(list.cast_into_unchecked())
    }
}
