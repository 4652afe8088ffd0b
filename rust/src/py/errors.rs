//! Errors for Python: wwho's own typed exceptions (`wwho.errors`), raised from the core.
//!
//! Every failure the core reports becomes a `WwhoError` subclass with a message naming what is
//! wrong (the id, the offset, the file); a Rust panic inside a core call becomes one too, never
//! a `PanicException`.

use pyo3::prelude::*;
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
pub fn error(py: Python<'_>, kind: Kind, message: impl Into<String>) -> PyErr {
    let name = match kind {
        Kind::Schema => "SchemaError",
        Kind::Corpus => "CorpusError",
        Kind::Vocab => "VocabError",
        Kind::Tokenizer => "TokenizerError",
        Kind::Merge => "MergeError",
        Kind::Wwho => "WwhoError",
    };
    let message = message.into();
    match py.import("wwho.errors").and_then(|m| m.getattr(name)) {
        Ok(class) => match class.call1((message.clone(),)) {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        },
        Err(_) => pyo3::exceptions::PyValueError::new_err(message),
    }
}

/// Run `f`, turning a panic into an `Err` naming what was being done.
pub fn guard<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!("internal error in the compiled core while {what}: {detail} (please report this)")
    })
}
