//! Where encoding a text spends its time, stage by stage (pieces, whole-piece lookups, units,
//! the whole encoding), for benchmarks. It changes no encoding.

use super::scratch::Scratch;
use super::Encoder;
use crate::spans::goes_on;
use crate::units::Unit;
use crate::words::piece_end;

impl Encoder {
    /// Where encoding `text` spends its time: seconds for the pieces and spans alone; then
    /// also the whole-piece lookups; then also the words, syllables and units (vocabulary
    /// lookups) of the pieces that are not one token; then the whole encoding (the merges and
    /// the superword pass too). Each stage includes the ones before it. For benchmarks.
    pub fn stage_seconds<U: Unit>(&self, text: &[U]) -> [f64; 4] {
        let time = |f: &mut dyn FnMut()| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        };
        let mut scratch = Scratch::default();
        let mut sink = 0usize;
        // Every piece of `text`, and whether a span goes on after it.
        let mut walk = |f: &mut dyn FnMut(&[U])| {
            let mut pos = 0;
            while pos < text.len() {
                let end = piece_end(text, pos);
                f(&text[pos..end]);
                sink += usize::from(goes_on(text, end, &self.breaks));
                pos = end;
            }
        };
        let pieces = time(&mut || walk(&mut |_| {}));
        let wholes = time(&mut || {
            walk(&mut |piece| {
                std::hint::black_box(self.whole_piece(piece));
            })
        });
        let units = time(&mut || {
            walk(&mut |piece| {
                if self.whole_piece(piece).is_some() {
                    return;
                }
                scratch.parts.clear();
                self.splitter.split(piece, &mut scratch.parts);
                let mut start = 0;
                for &e in &scratch.parts.ends {
                    scratch.units.clear();
                    let pushed =
                        self.push_units(&piece[start..e], &mut scratch.units, &mut scratch.utf8);
                    std::hint::black_box(pushed.is_ok());
                    std::hint::black_box(&scratch.units);
                    start = e;
                }
            })
        });
        let mut out = Vec::new();
        let all = time(&mut || {
            out.clear();
            let encoded = self.encode_into(text, &mut scratch, &mut out);
            std::hint::black_box(encoded.is_ok());
        });
        std::hint::black_box(sink);
        [pieces, wholes, units, all]
    }
}
