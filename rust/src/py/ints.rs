//! Python ints for token ids, each made on first use and kept: a list of ids is then built by
//! reference counting, not by allocating an int per id.
//!
//! Made on first use, the ints lie in memory in the order text first asks for them, so those of
//! everyday tokens sit together instead of one per cache line across the int objects of the whole
//! vocabulary. Building a list increments each int's reference count, freeing it decrements it, and
//! Python's garbage collector reads each one whenever it walks the list: all of that touches far
//! fewer cache lines. It also spares building an int per id when a tokenizer is loaded. Nothing
//! here changes a value: an int is an int.

use pyo3::buffer::{Element, PyBuffer};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::ffi::CStr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Ids at or above this get a fresh int each time (a vocabulary this large is not real).
const MAX_KEPT: usize = 1 << 22;

/// Ids per block of [`IdInts::list`]: the int objects of a block are asked for before any is used.
const BLOCK: usize = 64;

/// A hint to load the cache line at `p`; never faults, whatever `p` is (null included).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The per-thread buffer of [`with_ids`] is released when a text needed more ids than this
/// (a mebibyte).
const KEEP_IDS: usize = 1 << 18;

thread_local! {
    static IDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `f` on an empty vector for a text's ids that this thread keeps between calls (a list is made
/// from them, then they are dropped): a call then allocates and frees no vector of its own,
/// a fixed cost that weighs most on short texts. Kept up to [`KEEP_IDS`]; a call that finds the
/// buffer in use or gone gets a new vector: the ints of a list are Python objects, so the garbage
/// collector may run while one is made, and a finalizer it runs may encode on this thread; and a
/// thread's storage is gone while the thread ends.
pub fn with_ids<R>(f: impl FnOnce(&mut Vec<u32>) -> R) -> R {
    let mut f = Some(f);
    let kept = IDS.try_with(|cell| {
        let mut ids = cell.try_borrow_mut().ok()?;
        ids.clear();
        let out = (f.take()?)(&mut ids);
        if ids.capacity() > KEEP_IDS {
            *ids = Vec::new();
        }
        Some(out)
    });
    match kept {
        Ok(Some(out)) => out,
        // The buffer in use or gone: `f` has not run.
        _ => (f.take().expect("f has not run"))(&mut Vec::new()),
    }
}

pub struct IdInts {
    /// One slot per id below the vocabulary size (at most [`MAX_KEPT`]): null until made.
    slots: Box<[AtomicPtr<ffi::PyObject>]>,
}

impl IdInts {
    /// Room for ids below `n`; a `MemoryError` where even that cannot be had.
    pub fn new(n: u64) -> PyResult<IdInts> {
        let n = usize::try_from(n).unwrap_or(MAX_KEPT).min(MAX_KEPT);
        let slots = crate::memory::made_by(n, || AtomicPtr::new(std::ptr::null_mut()))
            .map_err(super::errors::no_memory)?;
        Ok(IdInts { slots })
    }

    /// A new reference to the int `id`, or null with a Python exception set.
    #[inline(always)]
    fn int(&self, slot: Option<&AtomicPtr<ffi::PyObject>>, id: u32) -> *mut ffi::PyObject {
        // SAFETY: called with the thread attached to Python (every caller holds a `Python`);
        // a slot holds null or a strong reference owned by `self`, which is never replaced.
        unsafe {
            let Some(slot) = slot else {
                return ffi::PyLong_FromUnsignedLong(std::os::raw::c_ulong::from(id));
            };
            let held = slot.load(Ordering::Acquire);
            if !held.is_null() {
                ffi::Py_INCREF(held);
                return held;
            }
            let made = ffi::PyLong_FromUnsignedLong(std::os::raw::c_ulong::from(id));
            if made.is_null() {
                return made;
            }
            // Another thread (free-threaded Python) may have made it first: keep theirs.
            match slot.compare_exchange(
                std::ptr::null_mut(),
                made,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    ffi::Py_INCREF(made); // one reference kept here, one returned
                    made
                }
                Err(theirs) => {
                    ffi::Py_DECREF(made);
                    ffi::Py_INCREF(theirs);
                    theirs
                }
            }
        }
    }

    /// A Python list of the ints of `ids`.
    pub fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        // SAFETY: PyList_New returns a new list with `len` NULL slots (or NULL and an exception);
        // every slot is filled exactly once with a new (strong) reference before the list is
        // used, and on an error the list is released (CPython's list dealloc skips NULL slots).
        unsafe {
            let list = ffi::PyList_New(ids.len() as ffi::Py_ssize_t);
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            for (b, block) in ids.chunks(BLOCK).enumerate() {
                // Ask for the cache lines of a block's ints before touching any of them: the
                // loads overlap instead of waiting one after the other.
                for &id in block {
                    if let Some(slot) = self.slots.get(id as usize) {
                        prefetch(slot.load(Ordering::Relaxed) as *const u8);
                    }
                }
                for (k, &id) in block.iter().enumerate() {
                    let item = self.int(self.slots.get(id as usize), id);
                    if item.is_null() {
                        ffi::Py_DECREF(list);
                        return Err(PyErr::fetch(py));
                    }
                    ffi::PyList_SET_ITEM(list, (b * BLOCK + k) as ffi::Py_ssize_t, item);
                }
            }
            Ok(Bound::from_owned_ptr(py, list).cast_into_unchecked())
        }
    }
}

/// `ids` as token ids when it is a list of plain ints (not bools or other subclasses of int,
/// not numpy integers) each below 2^32, or a one-dimensional buffer of them ([`buffer_ids`]): the
/// per-call fast path of a decode. None for anything else, which the Python layer then checks and
/// names (`wwho.ids.token_ids`).
pub fn plain_ids(ids: &Bound<'_, PyAny>) -> Option<Vec<u32>> {
    let Ok(list) = ids.cast_exact::<PyList>() else {
        return buffer_ids(ids);
    };
    let mut out = Vec::new();
    out.try_reserve_exact(list.len()).ok()?; // (no memory: the checking path says so)
    for item in list.iter() {
        // SAFETY: a type test on a live object (the list holds it, and so does `item`).
        if unsafe { ffi::PyLong_CheckExact(item.as_ptr()) } == 0 {
            return None;
        }
        out.push(item.extract::<u32>().ok()?);
    }
    Some(out)
}

/// The types whose buffer is all there is to their ids. A subclass may mean more than its
/// buffer says (a numpy masked array's buffer holds the ids it masks out too): it takes the
/// checking path.
const BUFFER_TYPES: [&CStr; 3] = [c"numpy.ndarray", c"array.array", c"memoryview"];

/// Whether `ids` is a `numpy.memmap` (`np.load(..., mmap_mode="r")`: ids kept on disk, as
/// pipelines keep them), a subclass of `numpy.ndarray` that adds nothing to its buffer's meaning.
/// A class defined in Python, whose `tp_name` is its bare name: its module is asked too.
fn is_memmap(ids: &Bound<'_, PyAny>, name: &CStr) -> bool {
    name == c"memmap"
        && ids
            .get_type()
            .module()
            .is_ok_and(|module| module.to_str().is_ok_and(|m| m == "numpy"))
}

/// `ids` as token ids when it is a one-dimensional buffer of native-endian integers of any width
/// (a numpy array as `encode_to_numpy` returns it, of uint16 as `wwho encode --npy` writes small
/// vocabularies' ids, or of int64 as other libraries hold ids; a memory-mapped one; an
/// `array.array`, a `memoryview` of integers wider than a byte), each in [0, 2^32): read as one
/// block, with no int object per id. None for anything else (other types and layouts, bools,
/// floats, an id out of range), which takes the checking path.
pub fn buffer_ids(ids: &Bound<'_, PyAny>) -> Option<Vec<u32>> {
    // SAFETY: a read of a live object's type name, and a test of its type slots; `ids` keeps the
    // object, and so its type, alive.
    let name = unsafe { CStr::from_ptr((*ffi::Py_TYPE(ids.as_ptr())).tp_name) };
    let known = BUFFER_TYPES.contains(&name) || is_memmap(ids, name);
    if !known || unsafe { ffi::PyObject_CheckBuffer(ids.as_ptr()) } == 0 {
        return None;
    }
    fn read<T: Element + Copy + Default + TryInto<u32>>(
        ids: &Bound<'_, PyAny>,
    ) -> Option<Option<Vec<u32>>> {
        let buffer = PyBuffer::<T>::get(ids).ok()?; // another item type: try the next
        if buffer.dimensions() != 1 {
            return Some(None);
        }
        // Both vectors are asked for fallibly: an infallible one aborted the process where memory
        // was short (no memory: the checking path says so as a MemoryError).
        let n = buffer.item_count();
        let (mut values, mut out) = (Vec::<T>::new(), Vec::<u32>::new());
        if values.try_reserve_exact(n).is_err() || out.try_reserve_exact(n).is_err() {
            return Some(None);
        }
        values.resize(n, T::default()); // (within the capacity: no allocation)
        buffer.copy_to_slice(ids.py(), &mut values).ok()?;
        for value in values {
            let Ok(id) = value.try_into() else {
                return Some(None);
            };
            out.push(id);
        }
        Some(Some(out))
    }
    // Ids of one byte from an array only: a memoryview of bytes is refused as bytes are (the
    // checking path says so).
    let arrays = name != c"memoryview";
    read::<u32>(ids)
        .or_else(|| read::<i64>(ids))
        .or_else(|| read::<u16>(ids))
        .or_else(|| read::<u64>(ids))
        .or_else(|| read::<i32>(ids))
        .or_else(|| read::<i16>(ids))
        .or_else(|| arrays.then(|| read::<u8>(ids)).flatten())
        .or_else(|| arrays.then(|| read::<i8>(ids)).flatten())
        .flatten()
}

/// The bytes `decode` makes of `ids` as a `bytes` object when `ids` is a list of plain ints
/// ([`plain_ids`]) that `decode` takes (None where an id has no token): a decode's fast path,
/// shared by the tokenizer kinds whose core decodes a slice of ids.
pub fn decode_plain<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    decode: impl FnOnce(&[u32]) -> Option<Vec<u8>>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    match plain_ids(ids).and_then(|ids| decode(&ids)) {
        Some(data) => super::errors::py_bytes(py, &data).map(Some),
        None => Ok(None),
    }
}

impl Drop for IdInts {
    fn drop(&mut self) {
        let held: Vec<*mut ffi::PyObject> = self
            .slots
            .iter()
            .map(|s| s.load(Ordering::Acquire))
            .filter(|p| !p.is_null())
            .collect();
        if held.is_empty() {
            return;
        }
        Python::attach(|_| {
            for p in held {
                // SAFETY: each is a strong reference owned by `self`, released once.
                unsafe { ffi::Py_DECREF(p) };
            }
        });
    }
}
