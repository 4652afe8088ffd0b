//! A script schema's automaton, compiled to flat tables.
//!
//! Python validates the schema's JSON (`wwho.schema`) and hands over what the engine needs:
//! each class's code point ranges, the transitions by class and state index, the start state
//! and the accept and emit states. Nothing about any script is written here, so a user's own
//! schema runs exactly as fast as a bundled one. The walk itself is in `syllables`.

use crate::charset::{check_range, CharMap};
use crate::errors::{SchemaError, MAX_STATES};
use crate::graphemes::Graphemes;

/// No transition.
pub const NONE: u16 = u16::MAX;
/// A transition entry is the target state with these flags of the target.
const ACCEPT: u16 = 0x4000;
const EMIT: u16 = 0x8000;
const STATE: u16 = 0x3FFF;
// A target's index and its two flags share 16 bits, and index 0x3FFF with both flags would read
// as NONE: the most states an automaton holds (`MAX_STATES`, named in the error) is 0x3FFF.
const _: () = assert!(MAX_STATES == STATE as usize);

/// The tables of one schema. Class 0 is `O` (every code point no class lists).
#[derive(Clone, Debug)]
pub struct Automaton {
    classes: CharMap,
    width: usize,
    /// `next[state * width + class]`: the target state and its flags, or [`NONE`].
    next: Vec<u16>,
    start: u16,
    /// Set when the schema keeps extended grapheme clusters whole (`keep_clusters`).
    graphemes: Option<Graphemes>,
}

impl Automaton {
    /// Compile a schema.
    ///
    /// * `classes[k]`: the ranges of class `k + 1` (class 0 is `O`); classes must not overlap;
    /// * `transitions[s]`: the `(class, next state)` edges of state `s`;
    /// * `accept`, `emit`: state indices; emit states must accept; the start state must not.
    pub fn new(
        classes: &[Vec<(u32, u32)>],
        transitions: &[Vec<(usize, usize)>],
        start: usize,
        accept: &[usize],
        emit: &[usize],
    ) -> Result<Self, SchemaError> {
        if classes.len() > 254 {
            return Err(SchemaError::Classes(classes.len()));
        }
        let states = transitions.len();
        if states == 0 || states > MAX_STATES {
            return Err(SchemaError::States(states));
        }
        let width = classes.len() + 1;
        let mut flat = vec![0u8; 0x110000];
        for (k, class) in classes.iter().enumerate() {
            let label = (k + 1) as u8;
            for &(first, last) in class {
                check_range(first, last)?;
                for (cp, slot) in flat[first as usize..=last as usize].iter_mut().enumerate() {
                    if *slot != 0 && *slot != label {
                        let cp = first as usize + cp;
                        return Err(SchemaError::Overlap {
                            cp: cp as u32,
                            first: *slot,
                            second: label,
                        });
                    }
                    *slot = label;
                }
            }
        }
        let owner = CharMap::from_flat(&flat);
        if start >= states {
            return Err(SchemaError::Start(start));
        }
        let mut flags = vec![0u16; states];
        for &s in accept {
            *flags.get_mut(s).ok_or(SchemaError::Accept(s))? |= ACCEPT;
        }
        for &s in emit {
            let f = flags.get_mut(s).ok_or(SchemaError::Emit(s))?;
            if *f & ACCEPT == 0 {
                return Err(SchemaError::EmitNotAccepting(s));
            }
            *f |= EMIT;
        }
        if flags[start] & ACCEPT != 0 {
            return Err(SchemaError::StartAccepts);
        }
        let mut next = vec![NONE; states * width];
        for (s, edges) in transitions.iter().enumerate() {
            for &(class, target) in edges {
                if class >= width || target >= states {
                    return Err(SchemaError::Edge {
                        state: s,
                        class,
                        target,
                    });
                }
                next[s * width + class] = target as u16 | flags[target];
            }
        }
        Ok(Self {
            classes: owner,
            width,
            next,
            start: start as u16,
            graphemes: None,
        })
    }

    /// The same automaton, whose tokens never end inside an extended grapheme cluster: a
    /// syllable that would is extended to the cluster's end (see `syllables`).
    pub fn with_graphemes(mut self, graphemes: Graphemes) -> Self {
        self.graphemes = Some(graphemes);
        self
    }

    #[inline(always)]
    pub fn graphemes(&self) -> Option<&Graphemes> {
        self.graphemes.as_ref()
    }

    #[inline(always)]
    pub fn class(&self, cp: u32) -> usize {
        usize::from(self.classes.get(cp))
    }

    #[inline(always)]
    pub fn start(&self) -> u16 {
        self.start
    }

    /// The transition entry from `state` (an entry or the start state) on a character of
    /// `class`: [`NONE`], or the target with its flags ([`Automaton::accepts`], ...).
    #[inline(always)]
    pub fn step(&self, state: u16, class: usize) -> u16 {
        self.next[usize::from(state & STATE) * self.width + class]
    }

    #[inline(always)]
    pub fn accepts(&self, entry: u16) -> bool {
        entry & ACCEPT != 0
    }

    #[inline(always)]
    pub fn emits(&self, entry: u16) -> bool {
        entry & EMIT != 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.classes.heap_bytes()
            + self.next.len() * 2
            + self.graphemes.as_ref().map_or(0, Graphemes::heap_bytes)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Sinhala as in src/wwho/schemas/sinhala.json (classes C V P H M Z = 1..6).
    pub fn sinhala() -> Automaton {
        let classes = vec![
            vec![(0x0D9A, 0x0DC6)],
            vec![(0x0D85, 0x0D96)],
            vec![(0x0DCF, 0x0DDF), (0x0DF2, 0x0DF3)],
            vec![(0x0DCA, 0x0DCA)],
            vec![(0x0D82, 0x0D83)],
            vec![(0x200D, 0x200D)],
        ];
        let (c, v, p, h, m, z) = (1, 2, 3, 4, 5, 6);
        // START CONS CONS_HAL CONS_HAL_ZWJ SIGN VOWEL DONE ORPHAN
        let t = vec![
            vec![(c, 1), (v, 5), (m, 7), (h, 7), (p, 7)],
            vec![(h, 2), (p, 4), (m, 6)],
            vec![(z, 3), (c, 1), (m, 6)],
            vec![(c, 1), (p, 4), (h, 4), (m, 6)],
            vec![(m, 6)],
            vec![(m, 6)],
            vec![],
            vec![],
        ];
        Automaton::new(&classes, &t, 0, &[1, 2, 3, 4, 5, 6, 7], &[6, 7]).unwrap()
    }

    #[test]
    fn tables() {
        let a = sinhala();
        assert_eq!(a.class(0x0D9A), 1);
        assert_eq!(a.class(0x200D), 6);
        assert_eq!(a.class(0x41), 0);
        let s = a.step(a.start(), 1);
        assert!(a.accepts(s) && !a.emits(s));
        assert_eq!(a.step(a.start(), 0), NONE);
    }

    #[test]
    fn invalid_tables_are_errors() {
        let one = vec![vec![(0x41, 0x5A)]];
        assert!(Automaton::new(&one, &[vec![(1, 1)], vec![]], 0, &[1], &[]).is_ok());
        assert!(Automaton::new(&one, &[vec![(2, 1)], vec![]], 0, &[1], &[]).is_err());
        assert!(Automaton::new(&one, &[vec![(1, 5)], vec![]], 0, &[1], &[]).is_err());
        assert!(Automaton::new(&one, &[vec![(1, 1)], vec![]], 0, &[0], &[]).is_err());
        assert!(Automaton::new(&one, &[vec![(1, 1)], vec![]], 0, &[1], &[0]).is_err());
        assert!(Automaton::new(&one, &[vec![(1, 1)], vec![]], 7, &[1], &[]).is_err());
        let overlap = vec![vec![(0x41, 0x5A)], vec![(0x5A, 0x60)]];
        assert!(Automaton::new(&overlap, &[vec![]], 0, &[], &[]).is_err());
    }
}
