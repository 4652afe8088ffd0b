//! The byte-level constructor's and encoders' arguments read from Python: token ids and
//! `str -> int` token dicts checked with the message that names the argument, the special-token
//! sets of an encode, a batch's strings. It does not encode or build a tokenizer.

use super::exceptions::{to_py, CoreVocabError};
use crate::bytelevel::specials::SpecialSet;
use crate::bytelevel::{ByteLevel as Core, MAX_ID};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// A token id given by Python: a non-negative int (not a bool) that fits.
pub(super) fn token_id(
    label: &str,
    value: &Bound<'_, PyAny>,
    what: &dyn Fn() -> String,
) -> PyResult<u32> {
    let bad = || {
        let shown = value.repr().map(|r| r.to_string()).unwrap_or_default();
        CoreVocabError::new_err(format!(
            "{label}: token id {shown} for {} is not a non-negative int",
            what()
        ))
    };
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad());
    }
    let id: u64 = value.extract().map_err(|_| bad())?;
    if id > u64::from(MAX_ID) {
        return Err(CoreVocabError::new_err(format!(
            "{label}: token id {id} for {} is too large (at most {MAX_ID})",
            what()
        )));
    }
    Ok(id as u32)
}

/// (text, id) of every entry of a `str -> int` dict.
pub(super) fn texts<'py>(
    label: &str,
    d: &Bound<'py, PyDict>,
) -> PyResult<Vec<(Bound<'py, PyString>, u32)>> {
    let mut out = Vec::with_capacity(d.len());
    for (key, value) in d.iter() {
        let text = key.cast_into::<PyString>().map_err(|e| {
            CoreVocabError::new_err(format!("{label}: token {} is not a str", e.into_inner()))
        })?;
        let id = token_id(label, &value, &|| {
            text.repr().map(|r| r.to_string()).unwrap_or_default()
        })?;
        out.push((text, id));
    }
    Ok(out)
}

/// The (allowed, disallowed) special tokens of an encode, each `'all'`, None or names, with
/// tiktoken's reading of a disallowed `'all'`: every special token that `allowed` does not
/// name. That set is made here from indices: passed as the others' names, it was read name by
/// name on every call (most of the time of a short encode with a few tokens allowed).
pub(super) fn special_pair(
    core: &Core,
    allowed: &Bound<'_, PyAny>,
    disallowed: &Bound<'_, PyAny>,
) -> PyResult<(SpecialSet, SpecialSet)> {
    let allowed = specials_arg(core, allowed)?;
    let disallowed = match specials_arg(core, disallowed)? {
        SpecialSet::All => match &allowed {
            SpecialSet::None => SpecialSet::All,
            SpecialSet::All => SpecialSet::None,
            SpecialSet::Some(named) => {
                // (`named` is sorted: see `Specials::resolve`.)
                let rest: Vec<usize> = (0..core.specials().n_special())
                    .filter(|i| named.binary_search(i).is_err())
                    .collect();
                if rest.is_empty() {
                    SpecialSet::None
                } else {
                    SpecialSet::Some(rest)
                }
            }
        },
        other => other,
    };
    Ok((allowed, disallowed))
}

fn specials_arg(core: &Core, value: &Bound<'_, PyAny>) -> PyResult<SpecialSet> {
    if value.is_none() {
        return Ok(SpecialSet::None);
    }
    if let Ok(s) = value.cast::<PyString>() {
        if s.to_str()? == "all" {
            return Ok(SpecialSet::All);
        }
        return Err(PyTypeError::new_err(
            "special-token sets must be 'all' or a collection of strings",
        ));
    }
    let names: Vec<String> = value
        .try_iter()?
        .map(|x| x?.extract())
        .collect::<PyResult<_>>()?;
    if names.is_empty() {
        return Ok(SpecialSet::None);
    }
    core.specials()
        .resolve(&names)
        .map(SpecialSet::Some)
        .map_err(to_py)
}

/// The strings of a batch (a TypeError for the first item that is not one).
pub(super) fn batch_strings<'py>(
    texts: &Bound<'py, PyAny>,
    num_threads: Option<usize>,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    if num_threads == Some(0) {
        return Err(PyValueError::new_err("num_threads must be at least 1"));
    }
    texts
        .try_iter()?
        .map(|t| {
            t?.cast_into::<PyString>().map_err(|e| {
                PyTypeError::new_err(format!("expected str, got {}", e.into_inner().get_type()))
            })
        })
        .collect()
}
