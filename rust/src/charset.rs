//! Code point -> small value tables: character classes of a schema, sets of script characters.
//!
//! A two-level table over all of Unicode: the code point's high bits pick a 256-entry page,
//! the low byte the entry. Identical pages are stored once, so a schema's table is a few
//! kilobytes (most pages are all "other") and a lookup is two loads, astral code points
//! included. Built from code point ranges that Python hands over; it does not know scripts.

use crate::errors::SchemaError;
use rustc_hash::FxHashMap;

/// Inclusive code point ranges `(first, last)`.
pub type Ranges = Vec<(u32, u32)>;

const PAGES: usize = 0x110000 >> 8;

/// A map from every code point to a `u8` (0 where no range says otherwise).
#[derive(Clone, Debug)]
pub struct CharMap {
    index: Vec<u16>,
    pages: Vec<[u8; 256]>,
}

impl CharMap {
    /// Build from `(first, last, value)` ranges (inclusive). Later ranges overwrite earlier ones;
    /// a code point beyond U+10FFFF or a range with `first > last` is an error.
    pub fn from_ranges(ranges: &[(u32, u32, u8)]) -> Result<Self, SchemaError> {
        let mut flat = vec![0u8; 0x110000];
        for &(first, last, value) in ranges {
            check_range(first, last)?;
            flat[first as usize..=last as usize].fill(value);
        }
        Ok(Self::from_flat(&flat))
    }

    /// Build from one value per code point (`flat.len() == 0x110000`).
    pub fn from_flat(flat: &[u8]) -> Self {
        debug_assert_eq!(flat.len(), 0x110000);
        let mut seen: FxHashMap<[u8; 256], u16> = FxHashMap::default();
        let mut pages = Vec::new();
        let mut index = Vec::with_capacity(PAGES);
        for chunk in flat.chunks_exact(256) {
            let mut page = [0u8; 256];
            page.copy_from_slice(chunk);
            let id = *seen.entry(page).or_insert_with(|| {
                pages.push(page);
                (pages.len() - 1) as u16
            });
            index.push(id);
        }
        Self { index, pages }
    }

    /// The value of `cp` (0 for anything above U+10FFFF).
    #[inline(always)]
    pub fn get(&self, cp: u32) -> u8 {
        match self.index.get((cp >> 8) as usize) {
            Some(&page) => self.pages[page as usize][(cp & 0xFF) as usize],
            None => 0,
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.index.len() * 2 + self.pages.len() * 256
    }
}

/// An error unless `first..=last` is a valid range of code points.
pub fn check_range(first: u32, last: u32) -> Result<(), SchemaError> {
    if first > last || last > 0x10FFFF {
        return Err(SchemaError::Range { first, last });
    }
    Ok(())
}

/// A set of code points.
#[derive(Clone, Debug)]
pub struct CharSet(CharMap);

impl CharSet {
    pub fn from_ranges(ranges: &[(u32, u32)]) -> Result<Self, SchemaError> {
        let tagged: Vec<(u32, u32, u8)> = ranges.iter().map(|&(a, b)| (a, b, 1)).collect();
        Ok(Self(CharMap::from_ranges(&tagged)?))
    }

    #[inline(always)]
    pub fn contains(&self, cp: u32) -> bool {
        self.0.get(cp) != 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

/// The whitespace of the leading-space rule and of SGPE pieces: `' '`, `'\t'`, `'\n'`, `'\r'`.
#[inline(always)]
pub fn is_ws(cp: u32) -> bool {
    cp <= 0x20 && (cp == 0x20 || cp == 0x09 || cp == 0x0A || cp == 0x0D)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_pages() {
        let map = CharMap::from_ranges(&[
            (0x0D9A, 0x0DC6, 1),
            (0x200D, 0x200D, 2),
            (0x1F600, 0x1F64F, 3),
        ])
        .unwrap();
        assert_eq!(map.get(0x0D99), 0);
        assert_eq!(map.get(0x0D9A), 1);
        assert_eq!(map.get(0x0DC6), 1);
        assert_eq!(map.get(0x200D), 2);
        assert_eq!(map.get(0x1F642), 3);
        assert_eq!(map.get(0x10FFFF), 0);
        assert_eq!(map.get(0x110000), 0);
        assert_eq!(map.get(u32::MAX), 0);
        assert!(map.pages.len() <= 5, "identical pages are shared");
        assert!(CharMap::from_ranges(&[(5, 4, 1)]).is_err());
        assert!(CharMap::from_ranges(&[(0, 0x110000, 1)]).is_err());
    }

    #[test]
    fn whitespace() {
        for cp in 0..0x3000u32 {
            assert_eq!(is_ws(cp), matches!(cp, 0x20 | 0x09 | 0x0A | 0x0D));
        }
    }
}
