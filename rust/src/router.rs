//! The code-switch router: the runs of each script in a text (`wwho.router` semantics).
//!
//! A run of script `s` starts at a character of one of its blocks and goes on through the
//! characters of its continuation set (its blocks, the joiners, the dandas, the characters its
//! schema keeps inside words; Python builds these sets). Where blocks overlap, the first script
//! in order wins, as in the alternation of `wwho.router.run_pattern`. Everything between runs
//! is "Latin"; a space right before a run belongs to the run (its leading space). This module
//! does not syllabify.

use crate::charset::{CharMap, CharSet, Ranges};
use crate::errors::SchemaError;
use crate::units::Unit;

/// One run of a text: `script` is `None` for Latin. `start..end` includes the leading space,
/// if any (`leading`), so that the run's text with its space is `text[start..end]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub start: usize,
    pub end: usize,
    pub script: Option<usize>,
    pub leading: bool,
}

#[derive(Clone, Debug)]
pub struct Router {
    /// Code point -> 1 + the first script whose blocks hold it (0: none).
    first: CharMap,
    cont: Vec<CharSet>,
}

impl Router {
    /// `scripts[i] = (block ranges, continuation ranges)`, in priority order (at most 254).
    pub fn new(scripts: &[(Ranges, Ranges)]) -> Result<Self, SchemaError> {
        if scripts.len() > 254 {
            return Err(SchemaError::Scripts(scripts.len()));
        }
        let mut ranges = Vec::new();
        // Later ranges overwrite earlier ones in a CharMap: list the scripts last to first.
        for (i, (blocks, _)) in scripts.iter().enumerate().rev() {
            ranges.extend(blocks.iter().map(|&(a, b)| (a, b, (i + 1) as u8)));
        }
        let first = CharMap::from_ranges(&ranges)?;
        let cont = scripts
            .iter()
            .map(|(blocks, more)| {
                let mut all = blocks.clone();
                all.extend_from_slice(more);
                CharSet::from_ranges(&all)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { first, cont })
    }

    /// The script run starting at or after `pos`: `(start, end, script)`, or `None`.
    #[inline]
    pub fn next_run<U: Unit>(&self, text: &[U], pos: usize) -> Option<(usize, usize, usize)> {
        let mut p = pos;
        while p < text.len() {
            let s = self.first.get(text[p].cp());
            if s != 0 {
                let script = usize::from(s - 1);
                let cont = &self.cont[script];
                let mut end = p + 1;
                while end < text.len() && cont.contains(text[end].cp()) {
                    end += 1;
                }
                return Some((p, end, script));
            }
            p += 1;
        }
        None
    }

    /// Every run of `text`, in order (`wwho.router.segment`).
    pub fn segment<U: Unit>(&self, text: &[U], out: &mut Vec<Run>) {
        let mut pos = 0;
        while let Some((start, end, script)) = self.next_run(text, pos) {
            let leading = start > pos && text[start - 1].cp() == 0x20;
            let latin_end = if leading { start - 1 } else { start };
            if latin_end > pos {
                out.push(Run {
                    start: pos,
                    end: latin_end,
                    script: None,
                    leading: false,
                });
            }
            out.push(Run {
                start: latin_end,
                end,
                script: Some(script),
                leading,
            });
            pos = end;
        }
        if pos < text.len() {
            out.push(Run {
                start: pos,
                end: text.len(),
                script: None,
                leading: false,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> Router {
        let joiners = vec![(0x200C, 0x200D), (0x0964, 0x0965)];
        Router::new(&[
            (vec![(0x0D80, 0x0DFF)], joiners.clone()),
            (vec![(0x0900, 0x097F)], joiners),
        ])
        .unwrap()
    }

    fn cps(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    #[test]
    fn runs_and_leading_spaces() {
        let text = cps("ab ලංකා\u{200d} नमस्ते।x ");
        let mut runs = Vec::new();
        router().segment(&text, &mut runs);
        let got: Vec<(usize, usize, Option<usize>, bool)> = runs
            .iter()
            .map(|r| (r.start, r.end, r.script, r.leading))
            .collect();
        assert_eq!(
            got,
            [
                (0, 2, None, false),
                (2, 8, Some(0), true),
                (8, 16, Some(1), true),
                (16, 18, None, false)
            ]
        );
    }

    #[test]
    fn only_a_space_before_a_run_disappears() {
        let mut runs = Vec::new();
        router().segment(&cps(" ක"), &mut runs);
        assert_eq!(
            runs,
            [Run {
                start: 0,
                end: 2,
                script: Some(0),
                leading: true
            }]
        );
        runs.clear();
        router().segment(&cps("\u{200d}"), &mut runs);
        assert_eq!(
            runs,
            [Run {
                start: 0,
                end: 1,
                script: None,
                leading: false
            }]
        );
    }
}
