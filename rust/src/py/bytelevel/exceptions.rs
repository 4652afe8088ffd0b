//! The byte-level bindings' exceptions (`CoreError` and its kinds, raised to
//! `wwho.bytelevel`, which turns them into typed `wwho` errors) and the mapping of the core's
//! [`Error`] onto them; a panic in a core call caught as a `CoreError` (`guard`). It does not
//! word messages (each error's `Display` does) or convert arguments.

use crate::bytelevel::Error;
use crate::pretokenize::general::RegexError;
use crate::py::errors::no_memory;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    _core,
    CoreError,
    PyValueError,
    "An error from the compiled core."
);
create_exception!(
    _core,
    CoreVocabError,
    CoreError,
    "An inconsistent vocabulary or a bad regex."
);
create_exception!(
    _core,
    DisallowedSpecial,
    CoreError,
    "args: (token, character offset)."
);
create_exception!(_core, UnknownId, CoreError, "args: (id, position).");
create_exception!(
    _core,
    CoreMergeError,
    CoreError,
    "args: (\"no_space\" or \"shape\", index of the merge)."
);
create_exception!(
    _core,
    UnknownSpecial,
    CoreError,
    "args: (sorted unknown names,)."
);

pub(super) fn to_py(err: Error) -> PyErr {
    match err {
        Error::Vocab(msg) | Error::Regex(msg) => CoreVocabError::new_err(msg),
        Error::Disallowed { token, offset } => DisallowedSpecial::new_err((token, offset)),
        Error::UnknownId { id, position } => UnknownId::new_err((id, position)),
        Error::UnknownSpecial(names) => UnknownSpecial::new_err((names,)),
        other @ Error::NoToken { .. } => CoreError::new_err(other.to_string()),
        Error::NoMemory(e) => no_memory(e),
    }
}

/// Run core code, turning a panic (a bug: no input should cause one) into a `CoreError` instead of
/// pyo3's `PanicException`, so that callers see the same typed error as for bad input.
pub(super) fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(CoreError::new_err(format!(
            "internal error in wwho's core (please report it): {what}"
        )))
    })
}

pub(super) fn regex_err(err: RegexError) -> PyErr {
    CoreVocabError::new_err(err.0)
}

/// A batch's error: the failing text's own, with its place in the batch as `text_index` (the
/// Python layer names it in the message).
pub(super) fn batch_error(py: Python<'_>, at: usize, e: Error) -> PyErr {
    let err = to_py(e);
    // An exception that takes no attribute still says what went wrong, only not where.
    let _ = err.value(py).setattr("text_index", at);
    err
}
