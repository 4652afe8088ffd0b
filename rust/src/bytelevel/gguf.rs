//! The tokenizer arrays of a GGUF file (llama.cpp's format), read from bytes: the length-prefixed
//! string arrays, and `tokenizer.ggml.{tokens, token_type, merges}` turned into what a byte-level
//! model is made of.
//!
//! The Python reader (`wwho.bytelevel.gguf`) walks the header and every other key; a 128k-token
//! vocabulary's two arrays hold 400k strings, which cost most of loading in Python. The rules
//! are `load_gguf`'s (its Python loop stays as the reference the tests compare with): CONTROL and
//! UNKNOWN tokens are special, USER_DEFINED ones added (both only when not empty), UNUSED tokens,
//! text that is not GPT-2 byte-level and repeated byte strings decode only; a merge is `"a b"`
//! (the space found after the first character) whose parts and result are tokens, kept when both
//! parts are byte-level tokens. This module reads no files and knows no Python.

use super::vocab::MergeProblem;
use crate::pretokenize::gpt2_to_bytes;
use rustc_hash::{FxHashMap, FxHashSet};

/// GGUF token types (llama.cpp's `llama_token_type`).
const UNKNOWN: i64 = 2;
const CONTROL: i64 = 3;
const USER_DEFINED: i64 = 4;
const UNUSED: i64 = 5;
/// A token text that is not a byte-level (ranked) token.
const NOT_RANKED: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// String `index` of an array of `count` runs past the end of the data (at byte `offset`).
    Truncated {
        index: u64,
        count: u64,
        offset: usize,
    },
    /// String `index` (at byte `offset`) is not UTF-8.
    NotUtf8 { index: u64, offset: usize },
    /// Tokens `first` and `second` have the same special or added text.
    Twice {
        text: String,
        first: u32,
        second: u32,
    },
    /// Merge `rank` has no space after its first character.
    NoSpace { rank: usize, line: String },
    /// `part` of merge `rank` (left, right or both joined) is not a token.
    NotToken {
        rank: usize,
        line: String,
        part: String,
    },
    /// A value being skipped runs past the end of the data (the value or item at `offset`).
    Past { offset: usize },
    /// A value being skipped has a type (`kind`, at `offset`) that GGUF does not define.
    UnknownType { kind: u32, offset: usize },
    /// An array at `offset` lies inside `depth` arrays, the most [`skip`] was allowed.
    TooDeep { depth: usize, offset: usize },
}

/// GGUF value types (the `gguf` package's `GGUFValueType`) that [`skip`] names.
const TYPE_STRING: u32 = 8;
const TYPE_ARRAY: u32 = 9;

/// The size of a GGUF scalar of type `kind`; None for strings, arrays and undefined types.
fn scalar_size(kind: u32) -> Option<u64> {
    match kind {
        0 | 1 | 7 => Some(1), // uint8, int8, bool
        2 | 3 => Some(2),     // uint16, int16
        4..=6 => Some(4),     // uint32, int32, float32
        10..=12 => Some(8),   // uint64, int64, float64
        _ => None,
    }
}

/// `N` bytes at `at` as a little- or big-endian integer's bytes, or [`Error::Past`].
fn field<const N: usize>(buf: &[u8], at: usize) -> Result<[u8; N], Error> {
    buf.get(at..at.saturating_add(N))
        .map(|b| b.try_into().expect("N bytes"))
        .ok_or(Error::Past { offset: at })
}

/// The offset after the value of type `kind` that starts at `pos`, found without reading it:
/// what a reader does with metadata it does not need. Arrays are walked with a stack of at most
/// `max_depth` enclosing arrays, not by recursion; an array of scalars is one step, and every
/// other item takes at least 8 bytes of the data, so the walk is linear in the bytes it passes
/// and allocates nothing but that stack.
pub fn skip(
    buf: &[u8],
    pos: usize,
    kind: u32,
    big_endian: bool,
    max_depth: usize,
) -> Result<usize, Error> {
    let u32_at = |at: usize| -> Result<u32, Error> {
        let b = field::<4>(buf, at)?;
        Ok(if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let u64_at = |at: usize| -> Result<u64, Error> {
        let b = field::<8>(buf, at)?;
        Ok(if big_endian {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    };
    // `n` bytes from `at`: the offset after them, or Past (naming `start`, the value's offset).
    let advance = |at: usize, n: u64, start: usize| -> Result<usize, Error> {
        usize::try_from(n)
            .ok()
            .and_then(|n| at.checked_add(n))
            .filter(|&end| end <= buf.len())
            .ok_or(Error::Past { offset: start })
    };
    // The arrays being walked: the type of their items and how many are left.
    let mut open: Vec<(u32, u64)> = Vec::with_capacity(max_depth);
    let (mut kind, mut at) = (kind, pos);
    loop {
        let start = at;
        if let Some(size) = scalar_size(kind) {
            at = advance(at, size, start)?;
        } else if kind == TYPE_STRING {
            let n = u64_at(at)?;
            at = advance(at + 8, n, start)?;
        } else if kind == TYPE_ARRAY {
            if open.len() >= max_depth {
                return Err(Error::TooDeep {
                    depth: max_depth,
                    offset: start,
                });
            }
            let item = u32_at(at)?;
            let count = u64_at(at + 4)?;
            at += 12;
            if let Some(size) = scalar_size(item) {
                let bytes = count.saturating_mul(size);
                at = advance(at, bytes, start)?;
            } else if item == TYPE_STRING || item == TYPE_ARRAY {
                if count > 0 {
                    open.push((item, count));
                }
            } else {
                return Err(Error::UnknownType {
                    kind: item,
                    offset: start,
                });
            }
        } else {
            return Err(Error::UnknownType {
                kind,
                offset: start,
            });
        }
        // The next item of the innermost array that has one left; none: the value ends here.
        loop {
            match open.last_mut() {
                None => return Ok(at),
                Some((_, 0)) => {
                    open.pop();
                }
                Some((item, left)) => {
                    *left -= 1;
                    kind = *item;
                    break;
                }
            }
        }
    }
}

/// `count` length-prefixed strings (u64 length, then the bytes) from `pos`: the byte ranges of
/// each, and the end of the last.
pub fn strings(
    buf: &[u8],
    pos: usize,
    count: u64,
    big_endian: bool,
) -> Result<(Vec<(usize, usize)>, usize), Error> {
    // Each string takes at least its 8-byte length: a count beyond that is a truncated file,
    // found before reserving memory for it.
    let room = (buf.len().saturating_sub(pos) / 8) as u64;
    let mut spans = Vec::with_capacity(count.min(room) as usize);
    let mut at = pos;
    for index in 0..count {
        let truncated = Error::Truncated {
            index,
            count,
            offset: at,
        };
        let Some(head) = buf.get(at..at.saturating_add(8)) else {
            return Err(truncated);
        };
        let head: [u8; 8] = head.try_into().expect("eight bytes");
        let n = if big_endian {
            u64::from_be_bytes(head)
        } else {
            u64::from_le_bytes(head)
        };
        let start = at + 8;
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| start.checked_add(n))
            .filter(|&end| end <= buf.len())
            .ok_or(truncated)?;
        spans.push((start, end));
        at = end;
    }
    Ok((spans, at))
}

/// The UTF-8 text of string `index` at `span`.
pub fn text(buf: &[u8], span: (usize, usize), index: usize) -> Result<&str, Error> {
    std::str::from_utf8(&buf[span.0..span.1]).map_err(|_| Error::NotUtf8 {
        index: index as u64,
        offset: span.0,
    })
}

/// What `tokenizer.ggml.*` says, by token index.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Vocab {
    /// Byte-level tokens in id order: (bytes, id); the first of equal byte strings.
    pub ranks: Vec<(Vec<u8>, u32)>,
    pub special: Vec<(String, u32)>,
    pub added: Vec<(String, u32)>,
    /// Tokens that decode as `bytes` but are never produced by encoding.
    pub extra: Vec<(u32, Vec<u8>)>,
    /// The merges that apply to text, in order: indices into `ranks` of the two parts.
    pub merges: Vec<(u32, u32)>,
    /// What [`check_merges`](super::vocab::check_merges) would find wrong with `merges`, found
    /// on the way (a GGUF loader need not ask again).
    pub problem: Option<MergeProblem>,
}

/// The model of `tokens` (their `types`: at least as many) and `merges`, all UTF-8 already.
pub fn vocab(tokens: &[&str], types: &[i64], merges: &[&str]) -> Result<Vocab, Error> {
    let mut out = Vocab::default();
    let mut named: FxHashMap<&str, u32> = FxHashMap::default();
    // Text of a byte-level token -> its index in `out.ranks`. The mapping is one to one, so a
    // text seen before is also a byte string seen before.
    let mut known: FxHashMap<&str, u32> = FxHashMap::default();
    known.reserve(tokens.len());
    for (i, (&text, &kind)) in tokens.iter().zip(types).enumerate() {
        let id = i as u32;
        let special = matches!(kind, CONTROL | UNKNOWN) && !text.is_empty();
        if special || (kind == USER_DEFINED && !text.is_empty()) {
            if let Some(&first) = named.get(text) {
                return Err(Error::Twice {
                    text: text.to_string(),
                    first,
                    second: id,
                });
            }
            named.insert(text, id);
            let list = if special {
                &mut out.special
            } else {
                &mut out.added
            };
            list.push((text.to_string(), id));
            continue;
        }
        let data = if kind == UNUSED {
            None
        } else {
            gpt2_to_bytes(text)
        };
        match data {
            Some(data) if !data.is_empty() && !known.contains_key(text) => {
                known.insert(text, out.ranks.len() as u32);
                out.ranks.push((data, id));
            }
            _ => out.extra.push((id, text.as_bytes().to_vec())),
        }
    }
    // Every token's text -> its index in `out.ranks`, or NOT_RANKED: one lookup per part.
    let mut texts: FxHashMap<&str, u32> = FxHashMap::default();
    texts.reserve(tokens.len());
    for &text in tokens {
        texts.insert(text, NOT_RANKED);
    }
    texts.extend(known);
    out.merges.reserve(merges.len());
    let mut produced = vec![false; out.ranks.len()];
    let mut seen: FxHashSet<(u32, u32)> = FxHashSet::default();
    seen.reserve(merges.len());
    let mut joined = String::new();
    for (rank, &line) in merges.iter().enumerate() {
        // Python's `line.find(" ", 1)`: the space after the first character.
        let first = line.chars().next().map_or(0, char::len_utf8);
        let Some(cut) = line.get(first..).and_then(|rest| rest.find(' ')) else {
            return Err(Error::NoSpace {
                rank,
                line: line.to_string(),
            });
        };
        let (left, right) = (&line[..first + cut], &line[first + cut + 1..]);
        joined.clear();
        joined.push_str(left);
        joined.push_str(right);
        let mut found = [NOT_RANKED; 3];
        for (slot, part) in found.iter_mut().zip([left, right, joined.as_str()]) {
            *slot = *texts.get(part).ok_or_else(|| Error::NotToken {
                rank,
                line: line.to_string(),
                part: part.to_string(),
            })?;
        }
        let [a, b, result] = found;
        if a == NOT_RANKED || b == NOT_RANKED {
            continue; // a merge of special or decode-only tokens: never applies to text
        }
        if !seen.insert((a, b)) {
            // A merge listed again keeps its first place (llama.cpp's rule); dropped here, so that
            // the list given on (an export, a save) means the same to a reader taking the last.
            continue;
        }
        if result == NOT_RANKED {
            // The joined bytes are not a byte-level token (the text is another kind's).
            out.problem.get_or_insert(MergeProblem::NotToken {
                index: out.merges.len(),
                part: [&out.ranks[a as usize].0[..], &out.ranks[b as usize].0[..]].concat(),
            });
        } else {
            produced[result as usize] = true;
        }
        out.merges.push((a, b));
    }
    if out.problem.is_none() {
        out.problem = super::vocab::lost(&out.ranks, &produced);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(strings: &[&str], big: bool) -> Vec<u8> {
        let mut buf = vec![0xAA; 3]; // not at offset 0
        for s in strings {
            let n = s.len() as u64;
            buf.extend(if big {
                n.to_be_bytes()
            } else {
                n.to_le_bytes()
            });
            buf.extend(s.as_bytes());
        }
        buf
    }

    #[test]
    fn string_arrays_and_their_errors() {
        for big in [false, true] {
            let buf = encode(&["ab", "", "Ġx"], big);
            let (spans, end) = strings(&buf, 3, 3, big).unwrap();
            assert_eq!(end, buf.len());
            let got: Vec<&str> = spans
                .iter()
                .enumerate()
                .map(|(i, &s)| text(&buf, s, i).unwrap())
                .collect();
            assert_eq!(got, ["ab", "", "Ġx"]);
            for cut in 3..buf.len() {
                let Err(Error::Truncated { index, count, .. }) = strings(&buf[..cut], 3, 3, big)
                else {
                    panic!("a file cut at {cut} read")
                };
                assert!(index < 3 && count == 3);
            }
        }
        // A huge count or length is a truncated file, not an allocation.
        assert!(matches!(
            strings(&encode(&["a"], false), 3, u64::MAX, false),
            Err(Error::Truncated { index: 1, .. })
        ));
        let mut buf = encode(&["a"], false);
        buf[3..11].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            strings(&buf, 3, 1, false),
            Err(Error::Truncated {
                index: 0,
                offset: 3,
                ..
            })
        ));
        let buf = encode(&["ok", "\u{e9}"], false);
        let mut bad = buf.clone();
        let last = bad.len() - 1;
        bad[last] = 0xFF;
        let (spans, _) = strings(&bad, 3, 2, false).unwrap();
        assert_eq!(
            text(&bad, spans[1], 1),
            Err(Error::NotUtf8 {
                index: 1,
                offset: spans[1].0
            })
        );
    }

    /// An array (type 9) header: item type and count, in either byte order.
    fn array(item: u32, count: u64, big: bool) -> Vec<u8> {
        if big {
            [&item.to_be_bytes()[..], &count.to_be_bytes()].concat()
        } else {
            [&item.to_le_bytes()[..], &count.to_le_bytes()].concat()
        }
    }

    #[test]
    fn skipping_values() {
        for big in [false, true] {
            // An array of three arrays: of two u16, of one string "ab", of nothing (arrays).
            let mut value = array(TYPE_ARRAY, 3, big);
            value.extend(array(2, 2, big));
            value.extend([1, 2, 3, 4]);
            value.extend(array(TYPE_STRING, 1, big));
            value.extend(&encode(&["ab"], big)[3..]);
            value.extend(array(TYPE_ARRAY, 0, big));
            let mut buf = vec![0xAA; 3];
            buf.extend(&value);
            buf.extend([0xBB; 5]); // what follows the value
            assert_eq!(skip(&buf, 3, TYPE_ARRAY, big, 8), Ok(3 + value.len()));
            for cut in 3..3 + value.len() {
                assert!(
                    matches!(
                        skip(&buf[..cut], 3, TYPE_ARRAY, big, 8),
                        Err(Error::Past { .. })
                    ),
                    "cut at {cut}"
                );
            }
            assert_eq!(
                skip(&buf, 3, TYPE_ARRAY, big, 1),
                Err(Error::TooDeep {
                    depth: 1,
                    offset: 15
                })
            );
            let n = encode(&["xyz"], big);
            assert_eq!(skip(&n, 3, TYPE_STRING, big, 8), Ok(n.len()));
            assert_eq!(skip(&n, 3, 12, big, 8), Ok(11)); // a float64
            assert_eq!(
                skip(&n, 3, 13, big, 8),
                Err(Error::UnknownType {
                    kind: 13,
                    offset: 3
                })
            );
        }
        // Counts and lengths that overflow are the end of the data, not an allocation.
        let huge = array(12, u64::MAX, false);
        assert_eq!(
            skip(&huge, 0, TYPE_ARRAY, false, 8),
            Err(Error::Past { offset: 0 })
        );
        let many = array(TYPE_ARRAY, u64::MAX, false);
        assert!(matches!(
            skip(&many, 0, TYPE_ARRAY, false, 8),
            Err(Error::Past { .. })
        ));
        let odd = [array(TYPE_ARRAY, 1, false), array(14, 0, false)].concat();
        assert_eq!(
            skip(&odd, 0, TYPE_ARRAY, false, 8),
            Err(Error::UnknownType {
                kind: 14,
                offset: 12
            })
        );
        // Four million empty arrays: a linear walk.
        let mut big = array(TYPE_ARRAY, 4_000_000, false);
        for _ in 0..4_000_000 {
            big.extend(array(0, 0, false));
        }
        assert_eq!(skip(&big, 0, TYPE_ARRAY, false, 8), Ok(big.len()));
    }

    #[test]
    fn token_kinds_and_merges() {
        let tokens = [
            "a", "b", "ab", "<s>", "", "x y", "a", "<u>", "Ġ", "\u{3000}", "c",
        ];
        // NORMAL, NORMAL, NORMAL, CONTROL, CONTROL (empty), NORMAL (not byte-level: a space),
        // NORMAL (a repeat), USER_DEFINED, NORMAL, NORMAL (outside the map), UNUSED
        let types = [1, 1, 1, 3, 3, 1, 1, 4, 1, 1, 5];
        let merges = ["a b", "Ġ a", "<s> a"];
        let v = vocab(&tokens, &types, &merges[..1]).unwrap();
        assert_eq!(v.merges, vec![(0, 1)]);
        // A merge listed again keeps its first place only.
        let again = vocab(&tokens, &types, &["a b", "a b"]).unwrap();
        assert_eq!(again.merges, vec![(0, 1)]);
        assert_eq!(
            v.ranks,
            vec![
                (b"a".to_vec(), 0),
                (b"b".to_vec(), 1),
                (b"ab".to_vec(), 2),
                (b" ".to_vec(), 8)
            ]
        );
        assert_eq!(v.special, vec![("<s>".to_string(), 3)]);
        assert_eq!(v.added, vec![("<u>".to_string(), 7)]);
        assert_eq!(
            v.extra,
            vec![
                (4, vec![]),
                (5, b"x y".to_vec()),
                (6, b"a".to_vec()),
                (9, "\u{3000}".as_bytes().to_vec()),
                (10, b"c".to_vec())
            ]
        );
        // "Ġ a" joins to "Ġa", which is no token.
        assert_eq!(
            vocab(&tokens, &types, &merges),
            Err(Error::NotToken {
                rank: 1,
                line: "Ġ a".into(),
                part: "Ġa".into()
            })
        );
        let mut tokens2 = tokens.to_vec();
        tokens2.push("Ġa");
        tokens2.push("<s>a");
        let mut types2 = types.to_vec();
        types2.extend([1, 1]);
        let v = vocab(&tokens2, &types2, &merges).unwrap();
        assert_eq!(v.merges, vec![(0, 1), (3, 0)]); // the special token's merge never applies
                                                    // "<s>a" is ordinary byte-level text that no merge makes: the list looks cut short.
        assert_eq!(
            v.problem,
            Some(MergeProblem::Lost {
                count: 1,
                first: b"<s>a".to_vec(),
                id: 12
            })
        );
        assert_eq!(vocab(&tokens, &types, &merges[..1]).unwrap().problem, None);
        // A merge whose result is a special token's text: no byte-level token.
        let v = vocab(&["a", "b", "ab"], &[1, 1, 3], &["a b"]).unwrap();
        assert_eq!(
            v.problem,
            Some(MergeProblem::NotToken {
                index: 0,
                part: b"ab".to_vec()
            })
        );
        assert_eq!(
            vocab(&tokens2, &types2, &["ab"]),
            Err(Error::NoSpace {
                rank: 0,
                line: "ab".into()
            })
        );
        // The space is looked for after the first character: " x" splits nowhere.
        assert!(matches!(
            vocab(&tokens2, &types2, &[" a"]),
            Err(Error::NoSpace { .. })
        ));
        let dup = vocab(&["<s>", "<s>"], &[3, 4], &[]);
        assert_eq!(
            dup,
            Err(Error::Twice {
                text: "<s>".into(),
                first: 0,
                second: 1
            })
        );
    }
}
