//! What every `encode_batch` shares: texts encoded on several threads without the GIL, and each
//! result turned into its Python object on the calling thread, in input order, as soon as it is
//! ready, while the other threads go on encoding ([`crate::batch::ordered`]).
//!
//! Converting after all the encoding was done left one thread working alone at the end (about a
//! fifth of a batch's time); here the conversion overlaps the encoding, and the Python list of
//! results is built in place, at its final size. What a text's ids are (`work`) and what Python
//! object holds them (`convert`) are each tokenizer's own.

use crate::batch::ordered;
use crate::units::Text;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Threads for `num_threads`: None or 0 means one per core.
pub fn thread_count(num_threads: Option<usize>) -> usize {
    match num_threads {
        Some(n) if n > 0 => n,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// `[convert(work(t)) for t in texts]` as a Python list: `work` on `threads` threads without
/// the GIL, `convert` on the calling thread with it. The first text (in order) whose `convert`
/// fails stops the batch with that error; so does a signal's exception (KeyboardInterrupt).
pub fn encode_texts<'py, R, W, C>(
    py: Python<'py>,
    texts: &[Text<'_>],
    threads: usize,
    work: W,
    convert: C,
) -> PyResult<Bound<'py, PyList>>
where
    R: Send,
    W: Fn(&Text<'_>) -> R + Sync,
    C: Fn(Python<'_>, R) -> PyResult<Py<PyAny>> + Sync,
{
    // SAFETY: PyList_New gives a list of `texts.len()` empty slots. Each is filled exactly once
    // (`ordered` hands every result over once) with a new reference, before the list is returned;
    // on an error the list is dropped, and CPython's list dealloc skips the slots still empty.
    let list: Py<PyList> = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyList_New(texts.len() as ffi::Py_ssize_t))?
            .cast_into_unchecked::<PyList>()
            .unbind()
    };
    let (work, convert) = (&work, &convert);
    py.detach(|| {
        ordered(texts, threads, Text::len, work, |first, results| {
            Python::attach(|py| {
                // A Ctrl-C stops a long batch here (the threads stop taking chunks).
                py.check_signals()?;
                let list = list.bind(py);
                for (k, r) in results.into_iter().enumerate() {
                    let item = convert(py, r)?;
                    // SAFETY: as above; `first + k` is this result's own slot, still empty.
                    unsafe {
                        ffi::PyList_SET_ITEM(
                            list.as_ptr(),
                            (first + k) as ffi::Py_ssize_t,
                            item.into_ptr(),
                        );
                    }
                }
                Ok::<(), PyErr>(())
            })
        })
    })?;
    Ok(list.into_bound(py))
}
