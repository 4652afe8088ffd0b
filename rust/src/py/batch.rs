//! What every `encode_batch` shares: texts encoded on several threads without the GIL, and each
//! result turned into its Python object on the calling thread, in input order, as soon as it is
//! ready, while the other threads go on encoding ([`crate::batch::ordered`]).
//!
//! The list of results is filled while the GIL is released between chunks, so other threads run
//! Python meanwhile: it is kept out of the garbage collector's sight ([`Filling`]) until every
//! slot is filled, or `gc.get_objects()` in another thread would hand out a list with empty
//! (NULL) slots, and reading one crashes the interpreter.
//!
//! Converting after all the encoding was done left one thread working alone at the end; here
//! the conversion overlaps the encoding, and the Python list of results is built in place, at
//! its final size. What a text's ids are (`work`) and what Python object holds them (`convert`)
//! are each tokenizer's own.

use crate::batch::{ordered, ordered_chunks};
use crate::units::Text;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyList};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Threads for `num_threads`: None or 0 means one per core; never more than
/// [`MAX_THREADS`] (the Python layer refuses larger counts with a clear error first).
pub fn thread_count(num_threads: Option<usize>) -> usize {
    let n = match num_threads {
        Some(n) if n > 0 => n,
        _ => cores(),
    };
    n.min(MAX_THREADS)
}

/// The cores this process may use, asked once: `available_parallelism` reads the cgroup's CPU
/// quota files on Linux at every call, which costs more than a small batch takes to encode. (A process whose affinity or quota changes later keeps the first count; a count too
/// high costs only threads that wait.) Kept in an atomic, not a `OnceLock`: threads that ask at
/// once each work it out, and no lock is held while the files are read, which a `fork` from
/// another thread could copy held into the child.
fn cores() -> usize {
    static CORES: AtomicUsize = AtomicUsize::new(0);
    match CORES.load(Ordering::Relaxed) {
        0 => {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            CORES.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// The most threads one batch uses, whatever it asks for.
pub const MAX_THREADS: usize = 256;

/// A list under construction: untracked by the garbage collector, so no other thread can reach
/// it (through `gc.get_objects()`, `gc.get_referrers()`) while some slots are still empty.
pub struct Filling {
    list: Py<PyList>,
}

impl Filling {
    /// A list of `len` empty slots, invisible to the garbage collector.
    pub fn new(py: Python<'_>, len: usize) -> PyResult<Filling> {
        // SAFETY: PyList_New returns a new, tracked list (or NULL with an exception set);
        // untracking an object this code alone refers to is always allowed.
        let list = unsafe {
            let list = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len as ffi::Py_ssize_t))?;
            ffi::PyObject_GC_UnTrack(list.as_ptr().cast());
            list.cast_into_unchecked::<PyList>().unbind()
        };
        Ok(Filling { list })
    }

    /// Put `item` in slot `i`.
    ///
    /// # Safety
    /// `i` is below the list's length and its slot is still empty (each slot is set once).
    pub unsafe fn set(&self, py: Python<'_>, i: usize, item: Py<PyAny>) {
        // SAFETY: the caller's promise; the slot takes over the new reference.
        unsafe {
            ffi::PyList_SET_ITEM(
                self.list.bind(py).as_ptr(),
                i as ffi::Py_ssize_t,
                item.into_ptr(),
            )
        };
    }

    /// Put the items, in order, in the slots from `first` on; the first error stops it.
    ///
    /// # Safety
    /// Those slots are below the list's length and still empty.
    pub unsafe fn set_from(
        &self,
        py: Python<'_>,
        first: usize,
        items: impl IntoIterator<Item = PyResult<Py<PyAny>>>,
    ) -> PyResult<()> {
        for (k, item) in items.into_iter().enumerate() {
            // SAFETY: the caller's promise for slot `first + k`.
            unsafe { self.set(py, first + k, item?) };
        }
        Ok(())
    }

    /// The list, visible to the garbage collector again.
    ///
    /// # Safety
    /// Every slot has been set.
    pub unsafe fn finish(self, py: Python<'_>) -> Bound<'_, PyList> {
        let list = self.list.into_bound(py);
        // SAFETY: untracked since `new`; every slot holds an object (the caller's promise).
        unsafe { ffi::PyObject_GC_Track(list.as_ptr().cast()) };
        list
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
    // On an error the list is dropped unfinished: CPython's list dealloc skips empty slots.
    let list = Filling::new(py, texts.len())?;
    let (work, convert, filling) = (&work, &convert, &list);
    py.detach(|| {
        ordered(texts, threads, Text::len, work, |first, results| {
            Python::attach(|py| {
                // A Ctrl-C stops a long batch here (the threads stop taking chunks).
                py.check_signals()?;
                let items = results.into_iter().map(|r| convert(py, r));
                // SAFETY: `ordered` hands every result over once: the slots from `first` on are
                // these results' own, below `texts.len()` and still empty.
                unsafe { filling.set_from(py, first, items) }
            })
        })
    })?;
    // SAFETY: `ordered` returned Ok, so it handed over every result: every slot is set.
    Ok(unsafe { list.finish(py) })
}

/// [`encode_texts`] with a `work` that appends a text's ids to a vector: each chunk of texts
/// fills one vector, and `convert` makes each text's Python object from its slice of it. The
/// threads then allocate one vector per chunk instead of one per text, and the calling thread,
/// which frees them, returns far fewer blocks to the other threads' allocator arenas.
pub fn encode_texts_into<'py, E, W, C>(
    py: Python<'py>,
    texts: &[Text<'_>],
    threads: usize,
    work: W,
    convert: C,
    error: impl FnOnce(Python<'py>, usize, E) -> PyErr,
) -> PyResult<Bound<'py, PyList>>
where
    E: Send,
    W: Fn(&Text<'_>, &mut Vec<u32>) -> Result<(), E> + Sync,
    C: Fn(Python<'_>, &[u32]) -> PyResult<Py<PyAny>> + Sync,
{
    let list = Filling::new(py, texts.len())?;
    let chunk = |part: &[Text<'_>]| fill_chunk(part, &work);
    let (convert, filling) = (&convert, &list);
    let done = py.detach(|| {
        ordered_chunks(texts, threads, Text::len, chunk, |first, result| {
            let (out, ends) = result.map_err(|(k, e)| Stop::Text(first + k, e))?;
            Python::attach(|py| {
                // A Ctrl-C stops a long batch here (the threads stop taking chunks).
                py.check_signals().map_err(Stop::Python)?;
                let items = ends.iter().scan(0, |start, &end| {
                    let ids = &out[std::mem::replace(start, end)..end];
                    Some(convert(py, ids))
                });
                // SAFETY: `ordered_chunks` hands every chunk over once: the slots from `first`
                // on are its texts' own, below `texts.len()` and still empty.
                unsafe { filling.set_from(py, first, items) }.map_err(Stop::Python)
            })
        })
    });
    match done {
        // SAFETY: every chunk was handed over and every text's slot set.
        Ok(()) => Ok(unsafe { list.finish(py) }),
        Err(Stop::Text(at, e)) => Err(error(py, at, e)),
        Err(Stop::Python(e)) => Err(e),
    }
}

/// A chunk's ids in one vector, and where each of its texts' ids end in it; on a text's error,
/// that text's place in the chunk with the error.
fn fill_chunk<E>(
    part: &[Text<'_>],
    work: &impl Fn(&Text<'_>, &mut Vec<u32>) -> Result<(), E>,
) -> Result<(Vec<u32>, Vec<usize>), (usize, E)> {
    // A guess at the ids: the work grows the vector where it was wrong, and says so where memory
    // runs out (so a guess that cannot be had is no error of its own).
    let mut out = Vec::new();
    let _ = out.try_reserve(part.iter().map(Text::len).sum::<usize>() / 3 + 16);
    let mut ends = Vec::with_capacity(part.len());
    for (k, t) in part.iter().enumerate() {
        work(t, &mut out).map_err(|e| (k, e))?;
        ends.push(out.len());
    }
    Ok((out, ends))
}

/// What stops a chunked batch: a text's own error, or a Python exception (a signal's, or one
/// raised while making a text's object).
enum Stop<E> {
    /// The failing text's place in the batch, and its error.
    Text(usize, E),
    Python(PyErr),
}

/// Every text's ids in one array and where each text's ids start: `(ids, offsets)` as two
/// `bytearray`s holding native-endian `u32` ids and `len(texts) + 1` `i64` offsets (numpy reads
/// them without a copy). The flat form of a batch: no Python object is made per text or per id,
/// so the calling thread only records where each text's ids start while the others encode, and
/// no GIL is held but for a signal check per chunk. `work` appends a text's ids to its chunk's
/// vector (one vector per chunk, not per text). The first text (in order) whose `work` fails
/// stops the batch.
pub fn encode_flat<'py, E, W>(
    py: Python<'py>,
    texts: &[Text<'_>],
    threads: usize,
    work: W,
    error: impl FnOnce(Python<'py>, usize, E) -> PyErr,
) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)>
where
    E: Send,
    W: Fn(&Text<'_>, &mut Vec<u32>) -> Result<(), E> + Sync,
{
    // Each chunk's ids stay where its thread put them; the caller only records where each
    // text's ids will start, and they are gathered into the result once, on all the threads.
    let mut parts: Vec<Vec<u32>> = Vec::new();
    let mut total = 0;
    let mut offsets: Vec<i64> = Vec::with_capacity(texts.len() + 1);
    offsets.push(0);
    let chunk = |part: &[Text<'_>]| fill_chunk(part, &work);
    let done = py.detach(|| {
        ordered_chunks(texts, threads, Text::len, chunk, |first, result| {
            let (out, ends) = result.map_err(|(k, e)| Stop::Text(first + k, e))?;
            offsets.extend(ends.iter().map(|&end| (total + end) as i64));
            total += out.len();
            parts.push(out);
            // A Ctrl-C stops a long batch here (the threads stop taking chunks).
            Python::attach(|py| py.check_signals()).map_err(Stop::Python)
        })
    });
    match done {
        Ok(()) => Ok((
            gathered(py, &parts, total, threads)?,
            native_bytes(py, &offsets)?,
        )),
        Err(Stop::Text(at, e)) => Err(error(py, at, e)),
        Err(Stop::Python(e)) => Err(e),
    }
}

/// `parts` one after another as a `bytearray` of native-endian `u32`s, filled on up to
/// `threads` threads without the GIL ([`crate::batch::gather`]).
fn gathered<'py>(
    py: Python<'py>,
    parts: &[Vec<u32>],
    total: usize,
    threads: usize,
) -> PyResult<Bound<'py, PyByteArray>> {
    let size = total
        .checked_mul(4)
        .and_then(|n| ffi::Py_ssize_t::try_from(n).ok())
        .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("too many ids for one array"))?;
    // SAFETY: a bytearray of `size` unwritten bytes; no other code holds it until it is
    // returned, so writing its buffer without the GIL is safe, and `gather` writes every one of
    // its bytes (it checks the total) before it is returned.
    unsafe {
        let array = unwritten_bytearray(py, size)?;
        if total > 0 {
            let start = ffi::PyByteArray_AsString(array.as_ptr()).cast::<u8>();
            let dest = Dest(start);
            py.detach(move || {
                let dest = dest;
                // The buffer from the allocator may sit at any address: copy as bytes.
                let bytes = std::slice::from_raw_parts_mut(dest.0, total * 4);
                let parts_bytes: Vec<&[u8]> = parts
                    .iter()
                    .map(|p| std::slice::from_raw_parts(p.as_ptr().cast::<u8>(), p.len() * 4))
                    .collect();
                crate::batch::gather(&parts_bytes, bytes, threads);
            });
        }
        Ok(array)
    }
}

/// The start of a buffer that one thread hands to others for the length of one call.
#[derive(Clone, Copy)]
struct Dest(*mut u8);
// SAFETY: the buffer outlives the call that shares it, and `gather` gives each thread its own
// part of it.
unsafe impl Send for Dest {}

/// One text's ids as a numpy `uint32` array, made through numpy's C API (`numpy.frombuffer`
/// over a `bytearray` would be a call through Python's machinery per text), from `ids`, the
/// vector the thread keeps for its calls (`ints::with_ids`). Many ids are handed over in their
/// vector, which the array then owns (an empty one left in its place): a copy would write them
/// all again to new memory, whose pages the kernel must first hand out and zero. A few are
/// copied and the vector kept: an array over a vector is one more Python object to make.
pub fn ids_array_from<'py>(py: Python<'py>, ids: &mut Vec<u32>) -> PyResult<Bound<'py, PyAny>> {
    ready_numpy(py)?;
    if ids.len() < HANDED_OVER {
        return Ok(numpy::PyArray1::from_slice(py, ids).into_any());
    }
    let mut ids = std::mem::take(ids);
    // (its spare capacity would be held as long as the array: given back in place)
    ids.shrink_to_fit();
    Ok(numpy::PyArray1::from_vec(py, ids).into_any())
}

/// Ids from which [`ids_array_from`] hands its vector over rather than copying it.
const HANDED_OVER: usize = 1 << 14;

/// Import numpy if it is not yet, and have the binding find its C API, once per process. Every
/// tokenizer kind calls this when it is made in a process that has imported numpy already
/// (`wwho.ids.prepare_arrays`), so that its first array costs what a later one does: finding
/// the API runs Python code on a thread of its own (about a millisecond of wall time). True if
/// this call found it, false if an earlier one had.
#[pyfunction]
pub fn ready_numpy(py: Python<'_>) -> PyResult<bool> {
    // The binding finds numpy's C API on its first use, and panics if numpy is missing:
    // importing numpy first makes that the ImportError a caller expects. (A flag, not a
    // once-cell: the import runs Python code, and a once-cell held meanwhile would be copied
    // held into a child forked by another thread. Two threads may both import; Python's import
    // system makes that one import.)
    static NUMPY: AtomicBool = AtomicBool::new(false);
    if !NUMPY.load(Ordering::Acquire) {
        // Through wwho.imports, whose lock a fork waits for: numpy's first import takes long, and
        // a child forked meanwhile by another thread would inherit its import lock held.
        py.import("wwho.imports")?
            .call_method1("import_module", ("numpy",))?;
        find_array_api(py)?;
        // and one array of each kind made here: a process's first array costs more than later
        // ones, and an array over a vector first makes the type of the object that owns it
        let _ = numpy::PyArray1::from_slice(py, &[0u32]);
        let _ = numpy::PyArray1::from_vec(py, vec![0u32]);
        NUMPY.store(true, Ordering::Release);
        return Ok(true);
    }
    Ok(false)
}

/// Have the binding find numpy's C API, on a thread of its own. Finding it runs Python code
/// (numpy's version check); on the calling thread, a Ctrl-C arriving meanwhile was raised inside
/// it, and the binding turned that into a panic, not a `KeyboardInterrupt`. Python runs signal
/// handlers on the main thread only: on another thread the interrupt waits for the caller's next
/// step, and is raised there as usual.
fn find_array_api(py: Python<'_>) -> PyResult<()> {
    // (a Builder: a thread the system refuses is an error here, where `spawn` would panic)
    let found = py.detach(|| {
        std::thread::Builder::new()
            .name("wwho-numpy".into())
            .spawn(|| {
                Python::attach(|py| {
                    let _ = numpy::PyArray1::<u32>::zeros(py, 0, false);
                })
            })
            .map(|thread| thread.join().is_ok())
    });
    match found {
        Ok(true) => Ok(()),
        Ok(false) => Err(super::errors::error(
            py,
            super::errors::Kind::Wwho,
            "numpy's C API could not be found (the reason is printed above)",
        )),
        Err(e) => Err(super::errors::error(
            py,
            super::errors::Kind::Wwho,
            format!("no thread to find numpy's C API on: {e}"),
        )),
    }
}

/// A `bytearray` of `size` bytes, their values unwritten (`MemoryError` where they cannot be
/// had). Made empty, then resized: where `PyByteArray_FromStringAndSize` cannot allocate the
/// bytes, CPython (3.11 here) frees the new object before it has set its count of exported
/// buffers and prints `SystemError: deallocated bytearray object has exported buffers` beside
/// the `MemoryError`; a resize that fails leaves a whole, empty object.
///
/// # Safety
/// The caller holds the GIL (`py`) and writes every byte before Python sees the object.
unsafe fn unwritten_bytearray(
    py: Python<'_>,
    size: ffi::Py_ssize_t,
) -> PyResult<Bound<'_, PyByteArray>> {
    let array =
        Bound::from_owned_ptr_or_err(py, ffi::PyByteArray_FromStringAndSize(std::ptr::null(), 0))?;
    if ffi::PyByteArray_Resize(array.as_ptr(), size) != 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(array.cast_into_unchecked::<PyByteArray>())
}

/// Numbers as a `bytearray` of their native-endian bytes.
fn native_bytes<'py, T: Copy + NativeBytes>(
    py: Python<'py>,
    values: &[T],
) -> PyResult<Bound<'py, PyByteArray>> {
    let width = std::mem::size_of::<T>();
    let size = ffi::Py_ssize_t::try_from(std::mem::size_of_val(values))
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("too many numbers for one array"))?;
    // SAFETY: the GIL is held, and every byte is written below before the array is returned.
    unsafe {
        let array = unwritten_bytearray(py, size)?;
        let start = ffi::PyByteArray_AsString(array.as_ptr()).cast::<u8>();
        let buf = std::slice::from_raw_parts_mut(start, std::mem::size_of_val(values));
        for (out, v) in buf.chunks_exact_mut(width).zip(values) {
            out.copy_from_slice((*v).native().as_ref());
        }
        Ok(array)
    }
}

/// A number's native-endian bytes.
trait NativeBytes {
    type Bytes: AsRef<[u8]>;
    fn native(self) -> Self::Bytes;
}

impl NativeBytes for u32 {
    type Bytes = [u8; 4];
    fn native(self) -> [u8; 4] {
        self.to_ne_bytes()
    }
}

impl NativeBytes for i64 {
    type Bytes = [u8; 8];
    fn native(self) -> [u8; 8] {
        self.to_ne_bytes()
    }
}
