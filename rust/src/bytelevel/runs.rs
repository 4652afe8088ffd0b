//! BPE of a long piece of one repeated byte (a run of spaces, newlines, dashes or one letter),
//! simulated on groups of equal parts instead of part by part; and of one repeated string of a few
//! bytes (a character of several bytes, `abab…`), whose copies merge alone first and then as one
//! byte's parts do (see [`ByteLevel::merge_repeated`]).
//!
//! Every part of such a piece is `b^k` for some length `k`, and (ranks rule) two adjacent
//! parts of lengths `i` and `j` merge if `b^(i+j)` is a token, whose id is the merge's rank.
//! So the state is a short list of groups, `(length, count)`, and the rule's next merge
//! (lowest rank, leftmost on ties) is either the first pair inside a group or the pair where
//! two groups meet. A group of
//! `c` equal parts merges pairwise left to right, all in one step, when no pair that those
//! merges create would rank lower in between (checked at each step; otherwise one merge is
//! done and the rule chooses again). A million spaces thus cost a few dozen steps, where the
//! general loop costs a few passes over a million parts.
//!
//! It never guesses: every step is the rule's own next merge (or several that the rule would
//! make one after the other). When the groups grow past [`MAX_GROUPS`] or the steps past
//! [`MAX_STEPS`] (a vocabulary whose ranks make runs merge in no regular order), it gives up
//! and the caller runs the general loop. Both merge rules: under a merges list (GGUF, Hugging
//! Face) the rank is the listed pair's, the rest is the same.

use super::{ByteLevel, Rule, NO_TOKEN};
use crate::memory::NoMemory;

/// Shorter runs take the general loop: there the table lookups below would cost more.
pub const MIN_RUN: usize = 256;
const MAX_GROUPS: usize = 64;
const MAX_STEPS: usize = 4096;

/// Longest token of a vocabulary whose repeated strings take the shortcuts here (the longest
/// tokens of o200k_base and of llama.cpp's BPE vocabularies are within it): the scan for the tokens
/// in a run looks up substrings up to that long from each byte of a copy, so a vocabulary of much
/// longer tokens would make it cost more than the merge it saves.
pub const MAX_LONGEST: usize = 512;

/// Bytes of substrings a scan of [`ByteLevel::tokens_in_run`] may look up for `run`: eight times
/// its length, so that the scan costs a small part of the merge it saves, whatever the
/// vocabulary (a hash of eight bytes, or a part of a lookup of a short key, a byte).
fn scan_budget(run: &[u8]) -> usize {
    8 * run.len()
}

/// Longest string whose repeats [`ByteLevel::merge_repeated`] takes.
pub const MAX_PERIOD: usize = 32;

/// The shortest `p` from 2 to [`MAX_PERIOD`] such that `piece` is its first `p` bytes repeated a
/// whole number of times (a comparison each, most of them ending at the first bytes), or None.
fn period(piece: &[u8]) -> Option<usize> {
    (2..=MAX_PERIOD.min(piece.len() / 2))
        .find(|&p| piece.len() % p == 0 && piece[p..] == piece[..piece.len() - p])
}

/// `count` adjacent parts of `len` bytes each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Group {
    len: usize,
    count: usize,
}

/// Drop empty groups and join neighbours of equal length.
fn normalize(groups: &mut Vec<Group>) {
    let mut out: Vec<Group> = Vec::with_capacity(groups.len());
    for g in groups.drain(..) {
        match out.last_mut() {
            _ if g.count == 0 => {}
            Some(last) if last.len == g.len => last.count += g.count,
            _ => out.push(g),
        }
    }
    *groups = out;
}

impl ByteLevel {
    /// The units of a long `piece` that is one string `u` of 2 to [`MAX_PERIOD`] bytes repeated
    /// (a character of several bytes, `abab…`, a word without spaces) after every merge, into
    /// `units`, under the ranks rule; Ok(false) (and `units` untouched) where it does not apply or
    /// gave up (where no token crosses a copy's end at all, [`Self::uncrossed_run`] cuts it).
    ///
    /// Every merge across a boundary between copies makes a token that spans it, a substring of
    /// `u u u …` crossing a copy's end; the lowest rank of those, the *limit*, is found by
    /// looking up each such substring (up to the longest token, and only as far as its three-
    /// and four-byte windows occur in some token). Where every token inside `u` ranks below the
    /// limit and `u` alone merges to one token, each copy first merges alone, as the tables of
    /// [`super::characters`] let a word's characters start merged: each copy's own next merge is
    /// always the lowest pair (leftmost first), and a pair across a boundary never is until no
    /// copy has one left. The rule thus
    /// passes through `u`'s token repeated, and from there two adjacent parts of `i` and `j`
    /// copies merge into the token of `u` repeated `i + j` times, the problem [`simulate`] solves
    /// for one repeated byte.
    pub(super) fn merge_repeated(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
    ) -> Result<bool, NoMemory> {
        // (the rule first: under the merges rule no piece needs the scan for a period)
        if !matches!(self.rule, Rule::Ranks) || self.longest > MAX_LONGEST || piece.len() < MIN_RUN
        {
            return Ok(false);
        }
        let Some(p) = period(piece) else {
            return Ok(false);
        };
        if piece.len() < p + self.longest {
            return Ok(false);
        }
        let (u, copies) = (&piece[..p], piece.len() / p);
        let mut own = Vec::new();
        // The highest rank of a token inside `u` (two bytes or more): `u`'s own merges are
        // among them.
        let inside = (0..p)
            .flat_map(|a| (a + 2..=p).map(move |b| (a, b)))
            .map(|(a, b)| self.rank_of(&u[a..b]))
            .filter(|&r| r != NO_TOKEN)
            .max();
        let Some(inside) = inside else {
            return Ok(false); // no merge inside `u`: it stays bytes, which are not one unit
        };
        self.try_merge_plain(u, &mut own)?;
        let [token] = own[..] else {
            return Ok(false);
        };
        match self.crossing_limit(piece, p) {
            Some(limit) if limit > inside => {}
            _ => return Ok(false),
        }
        // tokens[m]: the token of `u` repeated m times (m >= 1), or NO_TOKEN.
        let mut tokens = vec![NO_TOKEN, token];
        tokens.extend((2..=self.longest / p).map(|m| self.rank_of(&piece[..m * p])));
        let unit = |m: usize| tokens.get(m).copied().unwrap_or(NO_TOKEN);
        Ok(simulate(copies, &|i, j| unit(i + j), &unit, units))
    }

    /// `found(a, end, rank)` for each token `run[a..end]` starting in the first copy of `run` (a
    /// string of `p` bytes repeated, at least `p` plus the longest token long): every substring
    /// of the run is one of those, repeated. A substring holding a three- or four-byte window that
    /// no token holds is no token, nor is any longer one from the same start. False (the scan cut
    /// short) once the bytes looked up pass `budget`: a vocabulary of long tokens holding the
    /// run's windows would make the scan cost more than the merge it saves.
    fn tokens_in_run(
        &self,
        run: &[u8],
        p: usize,
        mut budget: usize,
        mut found: impl FnMut(usize, usize, u32),
    ) -> bool {
        for a in 0..p {
            for end in a + 2..=a + self.longest {
                if end - a >= 3 && !self.in_some_token3(&run[end - 3..end]) {
                    break;
                }
                if end - a >= 4 && !self.in_some_token4(&run[end - 4..end]) {
                    break;
                }
                let Some(left) = budget.checked_sub(end - a) else {
                    return false;
                };
                budget = left;
                let rank = self.rank_of(&run[a..end]);
                if rank != NO_TOKEN {
                    found(a, end, rank);
                }
            }
        }
        true
    }

    /// The lowest rank of a token that is a substring of `run` (see [`Self::tokens_in_run`])
    /// crossing a copy's end (NO_TOKEN: none), or None where the scan was cut short.
    pub(super) fn crossing_limit(&self, run: &[u8], p: usize) -> Option<u32> {
        let mut limit = NO_TOKEN;
        self.tokens_in_run(run, p, scan_budget(run), |_, end, rank| {
            if end > p {
                limit = limit.min(rank);
            }
        })
        .then_some(limit)
    }

    /// A place in each copy where no token spans (see [`Self::uncrossed_run`]): `r` such that no
    /// token that is a substring of `run` (see [`Self::tokens_in_run`]) holds both byte
    /// `r + j * p - 1` and byte `r + j * p` for any `j`; None where there is none or the scan
    /// was cut short.
    pub(super) fn uncut_phase(&self, run: &[u8], p: usize) -> Option<usize> {
        debug_assert!(p <= MAX_PERIOD);
        let mut spanned = [false; MAX_PERIOD];
        let whole = self.tokens_in_run(run, p, scan_budget(run), |a, end, _| {
            for x in a + 1..end {
                spanned[x % p] = true;
            }
        });
        whole.then(|| (0..p).find(|&r| !spanned[r])).flatten()
    }

    /// The units of `byte` repeated `n` times after every merge, into `units`; false (and
    /// `units` untouched) if it gave up. Either merge rule: under the ranks rule two parts
    /// merge by the rank of their concatenation, under the merges rule by the listed pair.
    pub(super) fn merge_run(&self, byte: u8, n: usize, units: &mut Vec<u32>) -> bool {
        // tokens[k]: the id of `byte` repeated k times (k >= 2), or NO_TOKEN.
        let tokens = &self.run_tokens[usize::from(byte)];
        let unit = |len: usize| match len {
            1 => self.byte_units[usize::from(byte)],
            _ => tokens.get(len).copied().unwrap_or(NO_TOKEN),
        };
        match &self.rule {
            Rule::Ranks => simulate(n, &|i, j| unit(i + j), &unit, units),
            Rule::Merges(table) => {
                let pair = |i: usize, j: usize| match (unit(i), unit(j)) {
                    (NO_TOKEN, _) | (_, NO_TOKEN) => NO_TOKEN,
                    (a, b) => table.get(a, b).map_or(NO_TOKEN, |m| m.rank),
                };
                simulate(n, &pair, &unit, units)
            }
        }
    }
}

/// The rule run on `n` parts of length 1: `rank(i, j)` is the rank of merging parts of
/// lengths `i` and `j` (NO_TOKEN: they do not merge), `unit(k)` the unit of a part of length
/// `k`. See the module docs; false if it gave up.
fn simulate(
    n: usize,
    rank: &dyn Fn(usize, usize) -> u32,
    unit: &dyn Fn(usize) -> u32,
    units: &mut Vec<u32>,
) -> bool {
    let mut groups = vec![Group { len: 1, count: n }];
    for _ in 0..MAX_STEPS {
        if groups.len() > MAX_GROUPS {
            return false;
        }
        // The rule's next merge. In position order the candidates are: group 0's first
        // inner pair, the pair where groups 0 and 1 meet, group 1's first inner pair, ...;
        // a strict `<` keeps the leftmost of equal ranks.
        let mut best = NO_TOKEN;
        let mut at: Option<(usize, bool)> = None; // (group, inner pair?)
        for (g, group) in groups.iter().enumerate() {
            if g > 0 {
                let r = rank(groups[g - 1].len, group.len);
                if r < best {
                    (best, at) = (r, Some((g, false)));
                }
            }
            if group.count >= 2 {
                let r = rank(group.len, group.len);
                if r < best {
                    (best, at) = (r, Some((g, true)));
                }
            }
        }
        match at {
            None => {
                units.clear();
                for group in &groups {
                    units.extend(std::iter::repeat_n(unit(group.len), group.count));
                }
                return true;
            }
            Some((g, false)) => {
                // Groups g - 1 and g meet: the last part of one and the first of the other
                // become one part.
                let joined = Group {
                    len: groups[g - 1].len + groups[g].len,
                    count: 1,
                };
                groups[g - 1].count -= 1;
                groups[g].count -= 1;
                groups.insert(g, joined);
            }
            Some((g, true)) => {
                let Group { len: k, count: c } = groups[g];
                // Merging pair after pair, left to right, stays the rule's order while every
                // pair the merges create in between ranks higher: (2k, k) after the merged
                // ones, (2k, 2k) among them, and (a, 2k) with the part `a` before the group.
                let pairs = c / 2;
                let higher = |i: usize, j: usize| rank(i, j) > best;
                let all = pairs < 2
                    || (higher(2 * k, k)
                        && (pairs < 3 || higher(2 * k, 2 * k))
                        && (g == 0 || higher(groups[g - 1].len, 2 * k)));
                let merged = if all { pairs } else { 1 };
                groups[g].count = c - 2 * merged;
                groups.insert(
                    g,
                    Group {
                        len: 2 * k,
                        count: merged,
                    },
                );
            }
        }
        normalize(&mut groups);
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::bytelevel::testing::generator;
    use crate::bytelevel::{ByteLevel, Model, RankPairs, Rule, NO_TOKEN};
    use crate::merge::merge_with;
    use crate::pretokenize::named;

    /// A vocabulary of every byte plus `b'a'` repeated `len` times for each (len, id).
    fn with_runs(runs: &[(usize, u32)]) -> ByteLevel {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .map(|b| (vec![b], 100_000 + u32::from(b)))
            .collect();
        ranks.extend(runs.iter().map(|&(len, id)| (vec![b'a'; len], id)));
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        ByteLevel::new(&model).unwrap()
    }

    fn general(tok: &ByteLevel, n: usize) -> Vec<u32> {
        let mut units = vec![tok.byte_units[usize::from(b'a')]; n];
        merge_with(&mut units, &RankPairs { tok });
        units
    }

    /// The run simulation against the general loop, on random vocabularies of runs (ranks in
    /// any order, so merges of longer runs may come first) and many lengths: the same units
    /// whenever it does not give up, and it does not give up on the orderly ones.
    #[test]
    fn equals_the_general_loop() {
        let mut next = generator(0x9E37_79B9_7F4A_7C15);
        let mut gave_up = 0;
        for round in 0..300 {
            let orderly = round % 3 == 0; // ranks grow with length, as in a learned vocabulary
            let mut runs: Vec<(usize, u32)> = Vec::new();
            let longest = 2 + next(40) as usize;
            for len in 2..=longest {
                if len == 2 || next(3) > 0 {
                    let id = if orderly {
                        len as u32 * 10
                    } else {
                        next(5000) as u32
                    };
                    if runs.iter().all(|&(_, other)| other != id) {
                        runs.push((len, id));
                    }
                }
            }
            let tok = with_runs(&runs);
            for n in [
                1,
                2,
                3,
                5,
                7,
                64,
                255,
                256,
                257,
                1000,
                4097,
                10_000 + next(5000) as usize,
            ] {
                let mut units = Vec::new();
                if tok.merge_run(b'a', n, &mut units) {
                    assert_eq!(units, general(&tok, n), "runs {runs:?}, n {n}");
                } else {
                    assert!(!orderly, "gave up on orderly runs {runs:?}, n {n}");
                    gave_up += 1;
                }
            }
        }
        // Giving up is for odd vocabularies; on these it is rare.
        assert!(gave_up < 300, "gave up {gave_up} times");
    }

    /// The merges rule (a listed pair per merge, in list order), against the general loop over
    /// the same pair table, on random merge lists over runs of 'a'.
    #[test]
    fn merges_rule_equals_the_general_loop() {
        let mut next = generator(0x2545_F491_4F6C_DD1D);
        let mut gave_up = 0;
        for _ in 0..200 {
            let longest = 2 + next(24) as usize;
            let runs: Vec<Vec<u8>> = (1..=longest).map(|k| vec![b'a'; k]).collect();
            // Every split of every run, in a random order; some left out.
            let mut merges: Vec<(usize, usize)> = (2..=longest)
                .flat_map(|k| (1..k).map(move |i| (i, k - i)))
                .filter(|_| next(4) > 0)
                .collect();
            for i in (1..merges.len()).rev() {
                merges.swap(i, next(i as u64 + 1) as usize);
            }
            let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
                .filter(|&b| b != b'a')
                .map(|b| (vec![b], 1000 + u32::from(b)))
                .collect();
            ranks.extend(runs.iter().enumerate().map(|(k, r)| (r.clone(), k as u32)));
            let model = Model {
                ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
                merges: Some(
                    merges
                        .iter()
                        .map(|&(i, j)| (&runs[i - 1][..], &runs[j - 1][..]))
                        .collect(),
                ),
                patterns: vec![named::GPT2],
                ..Model::default()
            };
            let tok = ByteLevel::new(&model).unwrap();
            let Rule::Merges(table) = &tok.rule else {
                panic!("a merges list gives the merges rule")
            };
            for n in [2, 3, 9, 64, 256, 1000, 3001 + next(3000) as usize] {
                let mut units = Vec::new();
                if tok.merge_run(b'a', n, &mut units) {
                    let mut general = vec![tok.byte_units[usize::from(b'a')]; n];
                    merge_with(&mut general, table);
                    assert_eq!(units, general, "merges {merges:?}, n {n}");
                } else {
                    gave_up += 1;
                }
            }
        }
        assert!(gave_up < 700, "gave up {gave_up} times of 1400");
    }

    /// Runs of one multi-byte character against the general loop from bytes, on random
    /// vocabularies of the character's substrings, substrings of its repetition that cross a
    /// copy's end, and its runs. Orderly ones rank the character's substrings first, then the
    /// others shorter first; the others
    /// rank everything at random, so that a merge across copies often comes before a copy's own
    /// (where the run must not be taken). The same units whenever it is taken, and it is taken
    /// on the orderly ones.
    #[test]
    fn character_runs_equal_the_general_loop() {
        let mut next = generator(0xD1B5_4A32_D192_ED03);
        let (mut taken, mut refused) = (0, 0);
        for round in 0..240 {
            let c = UNITS[round % UNITS.len()].as_bytes();
            let k = c.len();
            let orderly = round % 2 == 0;
            let stream: Vec<u8> = c.iter().copied().cycle().take(k * 12).collect();
            let inside: Vec<Vec<u8>> = (0..k)
                .flat_map(|a| (a + 2..=k).map(move |b| c[a..b].to_vec()))
                .filter(|t| orderly || t == c || next(4) > 0)
                .collect();
            let mut rest: Vec<Vec<u8>> = Vec::new();
            for _ in 0..next(12) {
                let a = next(k as u64) as usize;
                let len = (k - a + 1) + next(2 * k as u64) as usize;
                rest.push(stream[a..a + len].to_vec());
            }
            for m in 2..10 {
                if next(3) > 0 {
                    rest.push(c.repeat(m));
                }
            }
            let mut listed = if orderly {
                inside.clone()
            } else {
                [inside.clone(), rest.clone()].concat()
            };
            if orderly {
                // Shorter first, as in a learned vocabulary (runs out of order may make the
                // simulation give up).
                rest.sort_by_key(|t| t.len());
                listed.extend(rest);
            } else {
                shuffle(&mut next, &mut listed);
            }
            let tokens = after_the_bytes(listed);
            let tok = crate::bytelevel::testing::ranked(&tokens);
            for copies in [257, 258, 700, 1001 + next(1000) as usize] {
                let piece = c.repeat(copies);
                let mut units = Vec::new();
                if tok.merge_repeated(&piece, &mut units).unwrap() {
                    let mut want: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
                    merge_with(&mut want, &RankPairs { tok: &tok });
                    assert_eq!(units, want, "tokens {tokens:?}, {copies} copies");
                    taken += 1;
                } else {
                    assert!(
                        !orderly,
                        "refused orderly tokens {tokens:?}, {copies} copies"
                    );
                    refused += 1;
                }
            }
        }
        // Both sides are exercised.
        assert!(
            taken > 480 && refused > 80,
            "taken {taken}, refused {refused}"
        );
    }

    /// The repeated strings of the differential tests: characters of two to four bytes, and
    /// strings of several characters.
    const UNITS: [&str; 7] = ["é", "ශ", "한", "🦙", "ab", "කා", "ab1"];

    /// A random vocabulary around one character `c`: every byte, `c`'s substrings, tokens from
    /// the signs that may come before a run into a prefix of `c` and from a suffix of `c` into
    /// those that may come after, a long token elsewhere (so that the longest token varies),
    /// and where `crossing`, substrings of `c` repeated across a copy's end; ranks at random.
    fn vocabulary_around(
        next: &mut dyn FnMut(u64) -> u64,
        c: &[u8],
        crossing: bool,
    ) -> Vec<Vec<u8>> {
        let k = c.len();
        let stream = c.repeat(12);
        let mut listed: Vec<Vec<u8>> = (0..k)
            .flat_map(|a| (a + 2..=k).map(move |b| c[a..b].to_vec()))
            .collect();
        for before in [&b" "[..], b"(", b" ("] {
            for m in 1..=2 * k {
                if next(2) == 0 {
                    listed.push([before, &stream[..m]].concat());
                }
            }
        }
        for after in [&b"'s"[..], b".", b"'"] {
            for m in 1..=2 * k {
                if next(2) == 0 {
                    listed.push([&stream[stream.len() - m..], after].concat());
                }
            }
        }
        listed.push(vec![b'q'; 2 + next(60) as usize]);
        if crossing {
            for _ in 0..1 + next(4) {
                let a = next(k as u64) as usize;
                listed.push(stream[a..a + k - a + 1 + next(2 * k as u64) as usize].to_vec());
            }
        }
        shuffle(next, &mut listed);
        after_the_bytes(listed)
    }

    /// `list` in a random order.
    fn shuffle(next: &mut dyn FnMut(u64) -> u64, list: &mut [Vec<u8>]) {
        for i in (1..list.len()).rev() {
            list.swap(i, next(i as u64 + 1) as usize);
        }
    }

    /// Every byte, then the tokens of `listed` in order, each once.
    fn after_the_bytes(listed: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for t in listed {
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        tokens
    }

    /// Long pieces holding a run of one character or short string after and before a few signs,
    /// under both rules, against the general loop from bytes: the same units. Where no token
    /// crosses a copy's end, the run is found and cut between its copies.
    #[test]
    fn runs_inside_pieces_equal_the_general_loop() {
        let mut next = generator(0x94D0_49BB_1331_11EB);
        let mut found = 0;
        for round in 0..240 {
            let c = UNITS[round % UNITS.len()].as_bytes();
            let crossing = round % 3 == 0;
            let tokens = vocabulary_around(&mut next, c, crossing);
            let ranked = crate::bytelevel::testing::ranked(&tokens);
            // The merges rule: each token made from one of its splits into two tokens, in
            // rank order.
            let merges: Vec<(&[u8], &[u8])> = tokens[256..]
                .iter()
                .filter_map(|t| {
                    let splits: Vec<usize> = (1..t.len())
                        .filter(|&i| {
                            tokens.contains(&t[..i].to_vec()) && tokens.contains(&t[i..].to_vec())
                        })
                        .collect();
                    let i = *splits.get(next(splits.len().max(1) as u64) as usize)?;
                    Some((&t[..i], &t[i..]))
                })
                .collect();
            let ranks: Vec<(Vec<u8>, u32)> = tokens.iter().cloned().zip(0..).collect();
            let listed = crate::bytelevel::testing::build(&ranks, Some(merges));
            for copies in [90, 200, 700, 1001 + next(1000) as usize] {
                let before = [&b""[..], b" ", b"(", b" ("][next(4) as usize];
                let after = [&b""[..], b"'s", b".", b"'"][next(4) as usize];
                let piece = [before, &c.repeat(copies), after].concat();
                let mut units = Vec::new();
                ranked.merge_long(&piece, &mut units);
                let mut want: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
                merge_with(&mut want, &RankPairs { tok: &ranked });
                assert_eq!(units, want, "ranks {tokens:?}, {piece:?}");
                let Rule::Merges(table) = &listed.rule else {
                    panic!("a merges list gives the merges rule")
                };
                listed.merge_long(&piece, &mut units);
                let mut want: Vec<u32> = piece
                    .iter()
                    .map(|&b| listed.byte_units[usize::from(b)])
                    .collect();
                merge_with(&mut want, table);
                assert_eq!(units, want, "merges {tokens:?}, {piece:?}");
                if !crossing && ranked.uncrossed_run(&piece).is_some() {
                    found += 1;
                }
            }
        }
        // Most runs without tokens across copies are long enough to be cut.
        assert!(found > 300, "found {found}");
    }

    /// A piece that is not one string repeated, or too short to find the limit in, is refused:
    /// one byte changed, a length that is not a whole number of copies.
    #[test]
    fn only_whole_repeats_are_taken() {
        let c = "ශ".as_bytes();
        let tok = crate::bytelevel::testing::ranked(
            &(0..=255u8)
                .map(|b| vec![b])
                .chain([c[..2].to_vec(), c.to_vec(), c.repeat(2)])
                .collect::<Vec<_>>(),
        );
        let mut units = Vec::new();
        let piece = c.repeat(1000);
        assert!(tok.merge_repeated(&piece, &mut units).unwrap());
        assert_eq!(units.len(), 500);
        let mut changed = piece.clone();
        changed[1500] = b'x';
        assert!(!tok.merge_repeated(&changed, &mut units).unwrap());
        assert!(!tok
            .merge_repeated(&piece[..piece.len() - 1], &mut units)
            .unwrap());
        assert!(!tok.merge_repeated(&piece[..252], &mut units).unwrap()); // under MIN_RUN
                                                                          // Repeats of "b7 81 e0": no token inside it, and a token across its copies' ends.
        let shifted = &piece[1..piece.len() - 2];
        assert!(!tok.merge_repeated(shifted, &mut units).unwrap());
        tok.merge_long(shifted, &mut units);
        let mut want: Vec<u32> = shifted.iter().map(|&b| u32::from(b)).collect();
        merge_with(&mut want, &RankPairs { tok: &tok });
        assert_eq!(units, want);
        // A vocabulary with a token longer than MAX_LONGEST takes the plain loop.
        let long = crate::bytelevel::testing::ranked(
            &(0..=255u8)
                .map(|b| vec![b])
                .chain([
                    c[..2].to_vec(),
                    c.to_vec(),
                    vec![b'q'; super::MAX_LONGEST + 1],
                ])
                .collect::<Vec<_>>(),
        );
        let piece = c.repeat(2000);
        assert!(!long.merge_repeated(&piece, &mut units).unwrap());
        assert!(long.uncrossed_run(&[b" ", &piece[..]].concat()).is_none());
        long.merge_long(&piece, &mut units);
        assert_eq!(units, vec![257; 2000]);
    }

    /// A vocabulary with a long token holding every window of a repeated string makes the scan
    /// for tokens in a run look up every substring up to it: past its budget (eight bytes a byte
    /// of the run) the scan gives up, and the piece takes the plain loop, with the same units.
    #[test]
    fn a_scan_past_its_budget_gives_up() {
        let u: Vec<u8> = (0..32u8).map(|i| b'a' + (i * 7) % 26).collect();
        let stream = u.repeat(40);
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.push([&b"Z"[..], &stream[..511]].concat());
        let tok = crate::bytelevel::testing::ranked(&tokens);
        let short = u.repeat(22);
        assert_eq!(tok.crossing_limit(&short, 32), None);
        assert_eq!(tok.uncut_phase(&short, 32), None);
        let long = u.repeat(20_000);
        assert_eq!(tok.crossing_limit(&long, 32), Some(NO_TOKEN));
        assert_eq!(tok.uncut_phase(&long, 32), Some(0));
        for piece in [short, [&b" "[..], &long[..]].concat()] {
            let mut units = Vec::new();
            tok.merge_long(&piece, &mut units);
            let mut want: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
            merge_with(&mut want, &RankPairs { tok: &tok });
            assert_eq!(units, want);
        }
    }

    /// Runs where the pair of a merged part and the next one ranks below the inner pairs:
    /// merging a whole group at once would be wrong there, and one merge at a time is right.
    #[test]
    fn lower_ranks_in_between_stop_a_group() {
        // "aaa" ranks below "aa": after the first "aa", ("aa", "a") merges before the next "aa".
        let tok = with_runs(&[(2, 20), (3, 10), (4, 30), (6, 5)]);
        for n in 2..200 {
            let mut units = Vec::new();
            assert!(tok.merge_run(b'a', n, &mut units), "n {n}");
            assert_eq!(units, general(&tok, n), "n {n}");
        }
    }
}
