//! BPE of a long piece of whitespace in one pass, by compatible token pairs.
//!
//! Pre-tokenizers of the tiktoken family make one piece of a whitespace run up to its last
//! newline, so a file of mixed spaces, tabs, newlines and Unicode spaces is one piece of
//! megabytes, which the merge loops cost tens of nanoseconds per merge on. Here the result is
//! found without merging, from two facts about either merge rule (lowest rank first, leftmost
//! on ties):
//!
//! 1. A token can be in a result only if it is the result of its own bytes ("self-encoding"):
//!    no merge crosses a token's boundaries, so its bytes merged on their own alone.
//! 2. Tokens `t1 .. tk` of self-encoding tokens spelling `s` are the result of `s` if and only
//!    if every adjacent pair is *compatible*: the result of `t(i) t(i+1)`'s bytes is the two
//!    tokens. (If some merge crossed a boundary, take the first one: until then every token's
//!    bytes merged as on their own, so the two tokens' bytes alone would have made the same
//!    merge at that boundary, and the pair would not be compatible.)
//!
//! The result is therefore found left to right, taking the longest token that fits and is
//! compatible with the one before, and stepping back to a shorter one where the rest cannot
//! be spelt. A place where that failed is never tried again: arriving there, the tokens before
//! it are always the same (by 2, the result of the text up to there), so it would fail again.
//! The work is linear in practice. The tokens are those made only of the bytes of Unicode's
//! White_Space characters in UTF-8 ([`ALPHABET`]: byte fragments such as `e2 80` included,
//! since a result may hold them), in a trie; the compatibility of a pair is found once and
//! remembered in a fixed table of one byte per pair. It is found from each token's own merges,
//! traced at construction by the crate's merge loop ([`crate::merge::merge_traced`]): the two
//! sides' merges are run in the order the rule takes them, watching the pair at the border
//! ([`Whitespace::sides_stay_apart`]), which costs a few steps where merging the pair's bytes
//! again cost a merge loop (a fresh tokenizer meets tens of thousands of pairs in a megabyte of
//! random whitespace). A vocabulary with more such tokens than [`MAX_TOKENS`] gets the table
//! for ASCII whitespace only.
//!
//! Nothing else takes this path: other long pieces are cut and merged as before ([`super::ranks`]).
//! The facts hold for any piece, so a long piece of these bytes that is not whitespace (a
//! run of `©`, whose bytes `c2 a9` are among them) is encoded here correctly too.

use super::{ByteLevel, Rule};
use crate::memory;
use crate::merge::{merge_traced, Merge, PairTable, Pairs};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU8, Ordering};

/// The bytes of ASCII whitespace (`\t \n \v \f \r` and space), first, then every other byte
/// of a White_Space character in UTF-8 (U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028,
/// U+2029, U+202F, U+205F, U+3000), each byte once: every byte of a piece taken here.
#[rustfmt::skip]
const ALPHABET: [u8; 27] = [
    b'\t', b'\n', 0x0B, 0x0C, b'\r', b' ',
    // U+0085 and U+00A0 (c2 85, c2 a0), U+1680 (e1 9a 80)
    0xC2, 0x85, 0xA0, 0xE1, 0x9A, 0x80,
    // U+2000-U+200A (e2 80 80-8a), U+2028, U+2029, U+202F (e2 80 a8, a9, af), U+205F (e2 81 9f)
    0xE2, 0x81, 0x82, 0x83, 0x84, 0x86, 0x87, 0x88, 0x89, 0x8A, 0xA8, 0xA9, 0xAF, 0x9F,
    // U+3000 (e3 80 80)
    0xE3,
];
/// The ASCII part of [`ALPHABET`], all a vocabulary with too many tokens over it gets.
const ASCII: usize = 6;
/// More whitespace tokens than this and no table is built (its pairs would take over 1 MiB).
const MAX_TOKENS: usize = 1024;
const NONE: u32 = u32::MAX;
/// The search's steps allowed per byte of a piece: random whitespace takes a few, and an input
/// that needs more goes to the merge loops instead (see [`Whitespace::encode`]).
const WORK_PER_BYTE: usize = 32;
/// Compatibility table entries: not yet known, compatible, not compatible.
const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// Whether each byte is one of [`ALPHABET`] (asked of every byte of every token at load).
const IN_ALPHABET: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = true;
        i += 1;
    }
    table
};

/// Whether `b` is a byte of [`ALPHABET`].
#[inline]
pub(super) fn is_whitespace(b: u8) -> bool {
    IN_ALPHABET[usize::from(b)]
}

/// A node of the trie: the token that ends there and the children, in one record whose first
/// cache line holds the token and the ASCII symbols' children (a walk over ASCII whitespace, the
/// usual piece, reads one line a byte; in two arrays it read two).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Node {
    /// The token (an index into `ids`) that ends here, or [`NONE`].
    token: u32,
    /// The child by symbol (0: none; the root, node 0, is no one's child).
    children: [u32; ALPHABET.len()],
}

impl Node {
    const EMPTY: Node = Node {
        token: NONE,
        children: [0; ALPHABET.len()],
    };
}

/// The self-encoding whitespace tokens of a vocabulary in a trie, and their pairs' compatibility.
pub struct Whitespace {
    /// The trie symbol of each byte, or `u8::MAX` for a byte outside [`ALPHABET`].
    symbol: [u8; 256],
    /// The trie's nodes, the root first.
    nodes: Vec<Node>,
    /// The longest token's length in bytes: the trie's depth.
    longest: usize,
    ids: Vec<u32>,
    /// Token `i`'s bytes are `bytes[starts[i]..starts[i + 1]]`.
    bytes: Vec<u8>,
    starts: Vec<usize>,
    /// `compat[a * ids.len() + b]`: [`UNKNOWN`], [`YES`] or [`NO`]; written by any thread that
    /// finds out (each finds the same answer, so a race only repeats the work).
    compat: Box<[AtomicU8]>,
    /// The tokens that start with each symbol.
    by_first: [Vec<u32>; ALPHABET.len()],
    /// Ranks rule: every merge of two tokens over the alphabet into a third (rank: its id), all
    /// the merges that bytes of the alphabet can take. (The merges rule has its own table.)
    pairs: Option<PairTable>,
    /// Each token's own merges, in order, token `i`'s at `steps[step_starts[i]..step_starts[i +
    /// 1]]`: what [`Self::find_compatible`] runs a pair's two sides by. Empty if some token's
    /// merges did not give the token (never seen; the pair's bytes are merged instead).
    steps: Vec<Step>,
    step_starts: Vec<u32>,
    /// `followed[t * ALPHABET.len() + s]`: whether some token that starts with symbol `s` is
    /// compatible after token `t` (as `compat`). A token not followed by one is a dead end
    /// before that symbol, known without trying every token there (in a long run of spaces,
    /// most long space tokens are such dead ends: they would be merged differently).
    followed: Box<[AtomicU8]>,
}

/// One merge of a token's own merges: its rank, and the part it makes if that part starts the
/// token (`first`) or ends it (`last`), else [`NONE`].
#[derive(Clone, Copy)]
struct Step {
    rank: u32,
    first: u32,
    last: u32,
}

/// A rank no merge has.
const NO_RANK: u32 = u32::MAX;
/// The most work spent tracing the whitespace tokens' merges at construction: the sum of the
/// squares of their lengths, which bounds the scan's steps (o200k_base's come to an eighth of it).
const TRACE_BUDGET: usize = 2 << 20;

/// The merges that bytes of the alphabet can take: the merges rule's own table, or under the
/// ranks rule the table of the alphabet's (None where no traces are made: see `build`).
fn merges_of<'a>(tok: &'a ByteLevel, alphabet: &'a Option<PairTable>) -> Option<&'a dyn Pairs> {
    match &tok.rule {
        Rule::Merges(table) => Some(table),
        Rule::Ranks => alphabet.as_ref().map(|pairs| pairs as &dyn Pairs),
    }
}

/// Under the ranks rule, the merges among `tokens` (every token over the alphabet): each token
/// made of two others, with its id as the merge's rank. Merging bytes of the alphabet can only
/// make tokens over it, so these are all the merges such bytes can take.
fn alphabet_pairs(tokens: &[(&[u8], u32)]) -> PairTable {
    let ids: FxHashMap<&[u8], u32> = tokens.iter().copied().collect();
    let mut pairs = PairTable::new();
    for &(bytes, id) in tokens {
        for k in 1..bytes.len() {
            if let (Some(&left), Some(&right)) = (ids.get(&bytes[..k]), ids.get(&bytes[k..])) {
                pairs.insert(left, right, Merge { rank: id, id });
            }
        }
    }
    pairs
}

impl Whitespace {
    /// The table for `tok`'s whitespace tokens (`found`: every non-empty token of bytes that
    /// [`is_whitespace`], and its id), over the whole [`ALPHABET`] or, with more than
    /// [`MAX_TOKENS`] tokens over it, its ASCII part; None when some byte of that alphabet is
    /// no token of its own (the search needs each byte to be spellable) or there are still
    /// too many tokens; [`memory::NoMemory`] where its compatibility tables cannot be had.
    pub(super) fn build(
        tok: &ByteLevel,
        mut found: Vec<(&[u8], u32)>,
    ) -> Result<Option<Whitespace>, memory::NoMemory> {
        found.retain(|(b, _)| !b.is_empty());
        let mut size = ALPHABET.len();
        if found.len() > MAX_TOKENS {
            // (Every token here is over the alphabet: its ASCII ones are over the ASCII part.)
            size = ASCII;
            found.retain(|(b, _)| b.is_ascii());
        }
        let alphabet = &ALPHABET[..size];
        if alphabet
            .iter()
            .any(|&b| !found.iter().any(|&(t, _)| t == [b]))
            || found.len() > MAX_TOKENS
        {
            return Ok(None);
        }
        // Tracing a token's merges costs the square of its length (the scan), and so does
        // finding its splits: a vocabulary of long whitespace tokens is answered by merging.
        let traced = found.iter().map(|(b, _)| b.len() * b.len()).sum::<usize>() <= TRACE_BUDGET;
        let pairs = (traced && matches!(tok.rule, Rule::Ranks)).then(|| alphabet_pairs(&found));
        let mut symbol = [u8::MAX; 256];
        for (i, &b) in alphabet.iter().enumerate() {
            symbol[usize::from(b)] = i as u8;
        }
        // Fact 1: only tokens that are their own bytes' result can be in a result.
        let mut units = Vec::new();
        found.retain(|&(bytes, id)| {
            tok.merge_plain(bytes, &mut units);
            units == [id]
        });
        found.sort_unstable();
        let mut table = Whitespace {
            symbol,
            nodes: vec![Node::EMPTY],
            longest: found.iter().map(|(b, _)| b.len()).max().unwrap_or(0),
            ids: Vec::with_capacity(found.len()),
            bytes: Vec::new(),
            starts: vec![0],
            compat: Box::default(),
            by_first: Default::default(),
            followed: Box::default(),
            pairs,
            steps: Vec::new(),
            step_starts: vec![0],
        };
        for (index, &(bytes, id)) in found.iter().enumerate() {
            let mut node = 0;
            for &b in bytes {
                let s = usize::from(symbol[usize::from(b)]);
                if table.nodes[node].children[s] == 0 {
                    table.nodes[node].children[s] = table.nodes.len() as u32;
                    table.nodes.push(Node::EMPTY);
                }
                node = table.nodes[node].children[s] as usize;
            }
            table.nodes[node].token = index as u32;
            table.by_first[usize::from(symbol[usize::from(bytes[0])])].push(index as u32);
            table.ids.push(id);
            table.bytes.extend_from_slice(bytes);
            table.starts.push(table.bytes.len());
        }
        if traced {
            table.trace_tokens(tok);
        }
        let n = table.ids.len();
        table.compat = memory::made_by(n * n, || AtomicU8::new(UNKNOWN))?;
        table.followed = memory::made_by(n * ALPHABET.len(), || AtomicU8::new(UNKNOWN))?;
        Ok(Some(table))
    }

    /// Whether `piece` is made of the table's alphabet only (what [`Self::encode`] takes).
    #[inline]
    pub(super) fn covers(&self, piece: &[u8]) -> bool {
        piece
            .iter()
            .all(|&b| self.symbol[usize::from(b)] != u8::MAX)
    }

    fn token_bytes(&self, index: u32) -> &[u8] {
        let i = index as usize;
        &self.bytes[self.starts[i]..self.starts[i + 1]]
    }

    /// Whether tokens `a` and `b` (indices) stay two tokens when their bytes are merged alone.
    #[inline(always)]
    fn compatible(&self, tok: &ByteLevel, a: u32, b: u32) -> bool {
        let slot = &self.compat[a as usize * self.ids.len() + b as usize];
        match slot.load(Ordering::Relaxed) {
            YES => true,
            NO => false,
            _ => self.find_compatible(tok, a, b, slot),
        }
    }

    /// [`Self::compatible`] the first time a pair is asked about: the merge loops answer.
    #[cold]
    #[inline(never)]
    fn find_compatible(&self, tok: &ByteLevel, a: u32, b: u32, slot: &AtomicU8) -> bool {
        let yes = match merges_of(tok, &self.pairs) {
            Some(pairs) if !self.steps.is_empty() => self.sides_stay_apart(tok, pairs, a, b),
            _ => {
                let bytes = [self.token_bytes(a), self.token_bytes(b)].concat();
                let mut units = Vec::with_capacity(bytes.len());
                tok.merge_plain(&bytes, &mut units);
                units == [self.ids[a as usize], self.ids[b as usize]]
            }
        };
        slot.store(if yes { YES } else { NO }, Ordering::Relaxed);
        yes
    }

    /// Whether merging the bytes of tokens `a` and `b` (indices) leaves the two tokens: each
    /// side's own merges run in the order the rule takes them from both (the lower rank first,
    /// the left side's on a tie), and no merge may join the part ending `a` to the part starting
    /// `b`. While none does, each side merges as it does alone (a merge only looks at its pair),
    /// so the first merge across is found, if there is one, by watching the pair at the border
    /// as the sides' merges change it: it is taken when its rank is below the left side's next
    /// merge and not above the right side's (on a tie the left-most pair is merged first).
    fn sides_stay_apart(&self, tok: &ByteLevel, pairs: &dyn Pairs, a: u32, b: u32) -> bool {
        let (left, right) = (self.steps_of(a), self.steps_of(b));
        let (bytes_a, bytes_b) = (self.token_bytes(a), self.token_bytes(b));
        let mut last = tok.byte_units[usize::from(bytes_a[bytes_a.len() - 1])];
        let mut first = tok.byte_units[usize::from(bytes_b[0])];
        let (mut i, mut j) = (0, 0);
        loop {
            let next_left = left.get(i).map_or(NO_RANK, |s| s.rank);
            let next_right = right.get(j).map_or(NO_RANK, |s| s.rank);
            if let Some(across) = pairs.get(last, first) {
                if across.rank < next_left && across.rank <= next_right {
                    return false;
                }
            }
            if next_left == NO_RANK && next_right == NO_RANK {
                return true;
            }
            if next_left <= next_right {
                if left[i].last != NONE {
                    last = left[i].last;
                }
                i += 1;
            } else {
                if right[j].first != NONE {
                    first = right[j].first;
                }
                j += 1;
            }
        }
    }

    fn steps_of(&self, index: u32) -> &[Step] {
        let i = index as usize;
        &self.steps[self.step_starts[i] as usize..self.step_starts[i + 1] as usize]
    }

    /// Each token's own merges, in order ([`Self::steps`]), by the merge loop with a trace.
    fn trace_tokens(&mut self, tok: &ByteLevel) {
        let Some(pairs) = merges_of(tok, &self.pairs) else {
            return;
        };
        let mut units = Vec::new();
        for index in 0..self.ids.len() {
            let bytes = self.token_bytes(index as u32);
            units.clear();
            units.extend(bytes.iter().map(|&b| tok.byte_units[usize::from(b)]));
            let steps = &mut self.steps;
            let mut record = |at: usize, len: usize, merge: Merge| {
                steps.push(Step {
                    rank: merge.rank,
                    first: if at == 0 { merge.id } else { NONE },
                    last: if at + 2 == len { merge.id } else { NONE },
                })
            };
            merge_traced(&mut units, pairs, &mut record);
            if units != [self.ids[index]] {
                // (a token the byte-level loops found its own bytes' result)
                self.steps = Vec::new();
                self.step_starts = vec![0];
                return;
            }
            self.step_starts.push(self.steps.len() as u32);
        }
    }

    /// Whether some token that starts with byte `next` is compatible after token `t`.
    #[inline(always)]
    fn can_follow(&self, tok: &ByteLevel, t: u32, next: u8) -> bool {
        let s = usize::from(self.symbol[usize::from(next)]);
        let slot = &self.followed[t as usize * ALPHABET.len() + s];
        match slot.load(Ordering::Relaxed) {
            YES => true,
            NO => false,
            _ => self.find_follower(tok, t, s, slot),
        }
    }

    /// [`Self::can_follow`] the first time: every token that starts with symbol `s` is tried.
    #[cold]
    #[inline(never)]
    fn find_follower(&self, tok: &ByteLevel, t: u32, s: usize, slot: &AtomicU8) -> bool {
        let yes = self.by_first[s].iter().any(|&u| self.compatible(tok, t, u));
        slot.store(if yes { YES } else { NO }, Ordering::Relaxed);
        yes
    }

    /// The tokens that `piece[at..]` starts with, into `found` (of [`Self::longest`] slots or
    /// more) as (index, length), shortest first; how many.
    #[inline]
    fn prefixes(&self, piece: &[u8], at: usize, found: &mut [(u32, usize)]) -> usize {
        let mut n = 0;
        let mut node = 0usize;
        for (depth, &b) in piece[at..].iter().enumerate() {
            let s = usize::from(self.symbol[usize::from(b)]);
            match self.nodes[node].children[s] {
                0 => break,
                child => node = child as usize,
            }
            // Written whether or not a token ends here, and kept only if one does: whether it
            // does follows the text, which the CPU cannot predict.
            let token = self.nodes[node].token;
            found[n] = (token, depth + 1);
            n += usize::from(token != NONE);
        }
        n
    }

    /// The units of `piece` (of the table's alphabet only, see [`Self::covers`]) after every
    /// merge of `tok`'s rule, into `units`; false if no spelling was found (which the two facts
    /// rule out, since every byte of the alphabet is a token) or the search took more than
    /// [`WORK_PER_BYTE`] steps per byte: the caller then merges as usual, so that no input costs
    /// more than a bounded search and the merge loops.
    pub(super) fn encode(&self, tok: &ByteLevel, piece: &[u8], units: &mut Vec<u32>) -> bool {
        self.encode_within(tok, piece, units, WORK_PER_BYTE * piece.len() + 4096)
    }

    /// [`Self::encode`] giving up after `work` steps (a token tried is a step).
    fn encode_within(
        &self,
        tok: &ByteLevel,
        piece: &[u8],
        units: &mut Vec<u32>,
        mut work: usize,
    ) -> bool {
        let n = piece.len();
        if n >= u32::MAX as usize {
            return false; // positions are kept in 32 bits
        }
        // Memory that cannot be had gives up too (each buffer grows with the piece): the
        // general path then says so as an error.
        // dead[p]: no result has a token boundary at p (tried, and the rest failed).
        let Ok(mut dead) = memory::filled(0u64, n / 64 + 1) else {
            return false;
        };
        let is_dead = |dead: &[u64], p: usize| dead[p / 64] & (1 << (p % 64)) != 0;
        // The tokens so far: (index, where it starts).
        // Whitespace tokens are a few bytes long: a quarter of the bytes is room enough, usually.
        let mut chosen: Vec<(u32, u32)> = Vec::new();
        if memory::reserve(&mut chosen, n / 4 + 1).is_err() {
            return false;
        }
        let mut found = vec![(NONE, 0); self.longest];
        let (mut at, mut limit) = (0usize, usize::MAX);
        while at < n {
            let prev = chosen.last().map(|&(t, _)| t);
            // The longest token at `at` shorter than `limit` whose end is not dead and which
            // is compatible with the one before; shorter ones in turn.
            let count = self.prefixes(piece, at, &mut found);
            work = match work.checked_sub(count + 1) {
                Some(left) => left,
                None => return false,
            };
            let next = found[..count].iter().rev().copied().find(|&(t, len)| {
                len < limit
                    && !is_dead(&dead, at + len)
                    && prev.is_none_or(|p| self.compatible(tok, p, t))
                    && (at + len == n || self.can_follow(tok, t, piece[at + len]))
            });
            match next {
                Some((t, len)) => {
                    if memory::push(&mut chosen, (t, at as u32)).is_err() {
                        return false;
                    }
                    at += len;
                    limit = usize::MAX;
                }
                None => {
                    dead[at / 64] |= 1 << (at % 64);
                    let Some((t, start)) = chosen.pop() else {
                        return false;
                    };
                    limit = self.token_bytes(t).len();
                    at = start as usize;
                }
            }
        }
        units.clear();
        if memory::reserve(units, chosen.len()).is_err() {
            return false;
        }
        units.extend(chosen.iter().map(|&(t, _)| self.ids[t as usize]));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::testing::generator;
    use crate::bytelevel::{Model, RankPairs};
    use crate::merge::merge_with;
    use crate::pretokenize::named;

    /// A random piece of `len` bytes of `alphabet`.
    fn piece(next: &mut impl FnMut(u64) -> u64, alphabet: &[u8], len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| alphabet[next(alphabet.len() as u64) as usize])
            .collect()
    }

    /// The one-pass result against `general` (the rule's loop on a piece's byte units) on 150
    /// random pieces of `alphabet`, a tenth of them up to 3,000 bytes long.
    fn equals_on_random_pieces(
        model_no: usize,
        tok: &ByteLevel,
        next: &mut impl FnMut(u64) -> u64,
        alphabet: &[u8],
        general: impl Fn(&mut Vec<u32>),
    ) {
        let ws = tok.whitespace.as_ref().expect("a whitespace table");
        for round in 0..150 {
            let len = 1 + next(if round % 10 == 0 { 3000 } else { 300 }) as usize;
            let text = piece(next, alphabet, len);
            let mut fast = Vec::new();
            assert!(ws.encode(tok, &text, &mut fast));
            let mut units: Vec<u32> = text.iter().map(|&b| u32::from(b)).collect();
            general(&mut units);
            assert_eq!(fast, units, "model {model_no}, {text:?}");
        }
    }

    /// Random whitespace tokens of 2-9 bytes over `alphabet`, ranked at random: many of them
    /// are not their own bytes' result, many pairs are not compatible, and runs of one byte
    /// tie (the leftmost merge first).
    fn random_tokens(next: &mut impl FnMut(u64) -> u64, alphabet: &[u8]) -> Vec<Vec<u8>> {
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        while tokens.len() < 120 {
            let len = 2 + next(8) as usize;
            let t = piece(next, alphabet, len);
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        tokens
    }

    /// A tokenizer of the 256 bytes and [`random_tokens`] over `alphabet`, ranked at random,
    /// under the ranks rule.
    fn random_ranks(next: &mut impl FnMut(u64) -> u64, alphabet: &[u8]) -> ByteLevel {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        let mut ids: Vec<u32> = (256..376).collect();
        for i in (1..ids.len()).rev() {
            ids.swap(i, next(i as u64 + 1) as usize);
        }
        ranks.extend(random_tokens(next, alphabet).into_iter().zip(ids));
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        ByteLevel::new(&model).unwrap()
    }

    /// A tokenizer of 150 random merges of tokens over `alphabet` (some making a token that an
    /// earlier merge made already), under the merges rule.
    fn random_merges(next: &mut impl FnMut(u64) -> u64, alphabet: &[u8]) -> ByteLevel {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut made: Vec<usize> = alphabet.iter().map(|&b| usize::from(b)).collect();
        while pairs.len() < 150 {
            let (a, b) = (
                made[next(made.len() as u64) as usize],
                made[next(made.len() as u64) as usize],
            );
            let joined = [tokens[a].clone(), tokens[b].clone()].concat();
            if joined.len() > 10 || pairs.contains(&(a, b)) {
                continue;
            }
            pairs.push((a, b));
            if !tokens.contains(&joined) {
                tokens.push(joined);
                made.push(tokens.len() - 1);
            }
        }
        let merges: Vec<(&[u8], &[u8])> = pairs
            .iter()
            .map(|&(a, b)| (tokens[a].as_slice(), tokens[b].as_slice()))
            .collect();
        let model = Model {
            ranks: tokens
                .iter()
                .enumerate()
                .map(|(i, t)| (t.as_slice(), i as u32))
                .collect(),
            merges: Some(merges),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        ByteLevel::new(&model).unwrap()
    }

    /// The one-pass result equals the general merge loop's (driven by ids, no shortcut) on
    /// random pieces, for random vocabularies under the ranks rule.
    #[test]
    fn ranks_rule_equals_the_general_loop() {
        let mut next = generator(0x5DEE_CE66_D1CE_5EED);
        for (model_no, alphabet) in [&b" \n"[..], b" \t\n", b" \t\n\r\x0b\x0c", b"\n\t"]
            .iter()
            .cycle()
            .take(12)
            .enumerate()
        {
            let tok = random_ranks(&mut next, alphabet);
            equals_on_random_pieces(model_no, &tok, &mut next, alphabet, |units| {
                merge_with(units, &RankPairs { tok: &tok })
            });
        }
    }

    /// The same under the merges rule: random merges of existing tokens (some making a token
    /// that an earlier merge made already), against the merges loop on the whole piece.
    #[test]
    fn merges_rule_equals_the_general_loop() {
        let mut next = generator(0xC0FF_EE15_600D_F00D);
        for model_no in 0..8 {
            let alphabet: &[u8] = [&b" \n"[..], b" \t\n\r"][model_no % 2];
            let tok = random_merges(&mut next, alphabet);
            let crate::bytelevel::Rule::Merges(table) = &tok.rule else {
                unreachable!()
            };
            equals_on_random_pieces(model_no, &tok, &mut next, alphabet, |units| {
                merge_with(units, table)
            });
        }
    }

    /// Every pair of a table's tokens: compatible by the two sides' merges
    /// ([`Whitespace::sides_stay_apart`]) exactly when merging the pair's bytes gives the two.
    fn pairs_agree(model_no: usize, tok: &ByteLevel) {
        let ws = tok.whitespace.as_ref().expect("a whitespace table");
        assert!(!ws.steps.is_empty(), "model {model_no}: no traces");
        let n = ws.ids.len() as u32;
        let mut units = Vec::new();
        for a in 0..n {
            for b in 0..n {
                let bytes = [ws.token_bytes(a), ws.token_bytes(b)].concat();
                tok.merge_plain(&bytes, &mut units);
                let merged = units == [ws.ids[a as usize], ws.ids[b as usize]];
                let pairs = merges_of(tok, &ws.pairs).expect("traced");
                let traced = ws.sides_stay_apart(tok, pairs, a, b);
                assert_eq!(traced, merged, "model {model_no}: {bytes:?}");
            }
        }
    }

    /// [`pairs_agree`] on random vocabularies of both rules: ranked at random (a token may rank
    /// below its parts) and merged at random (some merges make a token an earlier one made).
    #[test]
    fn traced_pairs_agree_with_merging_them() {
        let mut next = generator(0x7A11_5EED_0DD5_C0DE);
        let mut pairs_seen = 0;
        for model_no in 0..8 {
            let alphabet: &[u8] = [&b" \n"[..], b" \t\n\r"][model_no % 2];
            let tok = random_ranks(&mut next, alphabet);
            pairs_agree(model_no, &tok);
            pairs_seen += tok.whitespace.as_ref().unwrap().ids.len().pow(2);
        }
        for model_no in 8..14 {
            let alphabet: &[u8] = [&b" \n"[..], b" \t\n\r"][model_no % 2];
            let tok = random_merges(&mut next, alphabet);
            pairs_agree(model_no, &tok);
            pairs_seen += tok.whitespace.as_ref().unwrap().ids.len().pow(2);
        }
        assert!(pairs_seen > 50_000, "{pairs_seen} pairs");
    }

    /// Whitespace tokens too long to trace at construction ([`TRACE_BUDGET`]): no traces, and
    /// the pairs are answered by merging their bytes, with the same results.
    #[test]
    fn long_tokens_are_not_traced() {
        let mut next = generator(0x10A6_5EED_7ACE_0001);
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        let mut tokens = random_tokens(&mut next, b" \t\n");
        for k in 0..40u8 {
            let mut long = piece(&mut next, b" \t\n", 600);
            long.push(b"\t\n "[usize::from(k % 3)]);
            tokens.push(long);
        }
        ranks.extend(tokens.into_iter().zip(256..));
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let tok = ByteLevel::new(&model).unwrap();
        let ws = tok.whitespace.as_ref().expect("a whitespace table");
        assert!(ws.steps.is_empty() && ws.pairs.is_none());
        equals_on_random_pieces(0, &tok, &mut next, b" \t\n", |units| {
            merge_with(units, &RankPairs { tok: &tok })
        });
    }

    /// Out of work, the search gives up (and the caller merges as usual), leaving `units` alone.
    #[test]
    fn gives_up_past_its_work() {
        let ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .map(|b| (vec![b], u32::from(b)))
            .chain([(b"  ".to_vec(), 300), (b" \n".to_vec(), 301)])
            .collect();
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let tok = ByteLevel::new(&model).unwrap();
        let ws = tok.whitespace.as_ref().unwrap();
        let text = b"     \n  \n".repeat(50);
        let mut units = vec![7];
        assert!(!ws.encode_within(&tok, &text, &mut units, 100));
        assert_eq!(units, [7]);
        assert!(ws.encode(&tok, &text, &mut units));
        let mut general = Vec::new();
        tok.merge_plain(&text, &mut general);
        assert_eq!(units, general);
    }

    /// A tokenizer of `ranks` (token bytes, id) with o200k's pre-tokenizer.
    fn o200k_like(ranks: &[(Vec<u8>, u32)]) -> ByteLevel {
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::O200K],
            ..Model::default()
        };
        ByteLevel::new(&model).unwrap()
    }

    /// The alphabet is every byte of every White_Space character in UTF-8, by regex-syntax's
    /// Unicode tables (what the pre-tokenizers' `\s` is), with ASCII first.
    #[test]
    fn the_alphabet_is_the_bytes_of_white_space() {
        let mut bytes: Vec<u8> = Vec::new();
        for (lo, hi) in crate::pretokenize::classes::ranges(r"\s") {
            for cp in lo..=hi {
                let c = char::from_u32(cp).unwrap();
                bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
        }
        bytes.sort_unstable();
        bytes.dedup();
        let mut alphabet = ALPHABET.to_vec();
        alphabet.sort_unstable();
        assert_eq!(alphabet, bytes);
        assert!(ALPHABET[..ASCII].iter().all(u8::is_ascii));
        assert!(ALPHABET[ASCII..].iter().all(|b| !b.is_ascii()));
    }

    /// Random pieces of Unicode whitespace (and of `©`, a non-space of the same bytes) in
    /// o200k-like random vocabularies that hold byte fragments such as `e2 80`: the one-pass
    /// result equals the general loop's.
    #[test]
    fn unicode_whitespace_equals_the_general_loop() {
        let mut next = generator(0x0DDB_A115_EEDC_AFE0);
        let chars = [
            "\u{3000}", "\u{2000}", "\u{200a}", "\u{a0}", "\u{85}", "\u{2028}", "\u{1680}",
            "\u{205f}", "\u{a9}", " ", "\n",
        ];
        for model_no in 0..6 {
            let mut ranks: Vec<(Vec<u8>, u32)> =
                (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            while tokens.len() < 120 {
                let n = 1 + next(3) as usize;
                let mut t: Vec<u8> = (0..n)
                    .flat_map(|_| chars[next(chars.len() as u64) as usize].bytes())
                    .collect();
                // A fragment: cut a character short, as o200k's `e2 80` and `\xa0\xe1\x83` are.
                if next(3) == 0 && t.len() > 1 {
                    t.truncate(t.len() - 1);
                }
                if t.len() >= 2 && !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
            let mut ids: Vec<u32> = (256..256 + tokens.len() as u32).collect();
            for i in (1..ids.len()).rev() {
                ids.swap(i, next(i as u64 + 1) as usize);
            }
            ranks.extend(tokens.into_iter().zip(ids));
            let tok = o200k_like(&ranks);
            let ws = tok.whitespace.as_ref().expect("a whitespace table");
            for round in 0..150 {
                let len = 1 + next(if round % 10 == 0 { 1000 } else { 100 }) as usize;
                let text: Vec<u8> = (0..len)
                    .flat_map(|_| chars[next(chars.len() as u64) as usize].bytes())
                    .collect();
                assert!(ws.covers(&text));
                let mut fast = Vec::new();
                assert!(ws.encode(&tok, &text, &mut fast));
                let mut units: Vec<u32> = text.iter().map(|&b| u32::from(b)).collect();
                merge_with(&mut units, &RankPairs { tok: &tok });
                assert_eq!(fast, units, "model {model_no}, {text:?}");
            }
        }
    }

    /// With more tokens over the whole alphabet than the table takes, it keeps the ASCII ones.
    #[test]
    fn too_many_unicode_tokens_leave_ascii() {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        let mut id = 256;
        for a in ALPHABET[ASCII..].iter() {
            for b in ALPHABET[ASCII..].iter() {
                for c in [0x80u8, 0x81, 0x82] {
                    ranks.push((vec![*a, *b, c], id));
                    id += 1;
                }
            }
        }
        ranks.push((b"  ".to_vec(), id));
        assert!(ranks.len() - 256 > MAX_TOKENS);
        let tok = o200k_like(&ranks);
        let ws = tok.whitespace.as_ref().expect("an ASCII table");
        assert!(ws.covers(b" \t\n "));
        assert!(!ws.covers("\u{3000}".as_bytes()));
        let mut units = Vec::new();
        assert!(ws.encode(&tok, b"    ", &mut units));
        assert_eq!(units, [id, id]);
    }

    /// No table where a whitespace byte has no token of its own (nothing could spell it).
    #[test]
    fn needs_every_whitespace_byte() {
        let ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .filter(|&b| b != 0x0C)
            .map(|b| (vec![b], u32::from(b)))
            .collect();
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        assert!(ByteLevel::new(&model).unwrap().whitespace.is_none());
    }
}
