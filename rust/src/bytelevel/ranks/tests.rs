//! The ranks rule by byte positions against the general merge loop: cuts found by the
//! four-byte windows and three-byte tokens, and every path (short scan, heap, buckets, cuts) on
//! random vocabularies and pieces (test builds only).

use super::*;
use crate::bytelevel::{testing, Model, RankPairs};
use crate::merge::merge_with;
use crate::pretokenize::named;

/// Long pieces over an alphabet whose every byte pair but one is a token, and whose every
/// three-byte window around that pair occurs in some token (as in random whitespace): only
/// the four-byte windows and the three-byte tokens find the cuts, and tokens across the
/// pair of each length test that they are not missed.
#[test]
fn fine_cuts_equal_the_general_loop() {
    let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
    let tokens = [
        // every pair but "yw", and tokens across "yw" (three bytes on either side, four,
        // five), ranked so that each of them forms somewhere
        "wx", "xy", "ywx", "xyw", "yy", "xx", "yx", "xw", "ww", "wy", "xyy", "xyyw", "yywx", "ywxx",
        "yywxx",
        // the windows around "yw", from tokens that never form ('q' is in no piece)
        "qxywq", "qyywq", "qwywq", "qywxq", "qywyq", "qywwq",
    ];
    for (i, t) in tokens.iter().enumerate() {
        ranks.push((t.as_bytes().to_vec(), 300 + i as u32));
    }
    let model = Model {
        ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
        patterns: vec![named::GPT2],
        ..Model::default()
    };
    let tok = ByteLevel::new(&model).unwrap();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for round in 0..600 {
        let mut piece = Vec::new();
        while piece.len() < 65 + round % 400 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            piece.push(b"xyw"[(state % 3) as usize]);
        }
        let mut long = Vec::new();
        tok.merge_long(&piece, &mut long);
        let mut units: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
        merge_with(&mut units, &RankPairs { tok: &tok });
        assert_eq!(long, units, "{:?}", String::from_utf8_lossy(&piece));
    }
}

/// merge_short and merge_mid against the general loop driven by ids, on every string over a small
/// alphabet up to length 6, and on long random ones: the same units.
#[test]
fn equals_the_general_loop() {
    let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
        .filter(|&b| b != b'z') // a byte without a token of its own
        .map(|b| (vec![b], u32::from(b)))
        .collect();
    for (i, t) in [
        "ab", "bc", "abc", "ca", "aa", "aaa", "cab", "zb", "bz", "abz", "zz", "bcab", "aab",
        // tokens across a byte pair that is no token: only the three-byte windows see them
        "abd", "eab", "dd",
        // across the pair "zd", which is no token, only longer windows see these: the
        // three-byte token "zda", and "dezzd" through the four bytes "ezzd"
        "ez", "dez", "dezz", "dezzd", "da", "zda",
    ]
    .iter()
    .enumerate()
    {
        ranks.push((t.as_bytes().to_vec(), 400 - i as u32 * 3));
    }
    let model = Model {
        ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
        patterns: vec![named::GPT2],
        ..Model::default()
    };
    let tok = ByteLevel::new(&model).unwrap();
    let general = |piece: &[u8]| {
        let mut units: Vec<u32> = piece.iter().map(|&b| tok.byte_units[b as usize]).collect();
        merge_with(&mut units, &RankPairs { tok: &tok });
        units
    };
    // Long pieces: cut where no token can span, each part merged alone; 'd' and 'e' are in
    // no longer token, so pieces with them have cuts, and the rest have few.
    for piece in testing::long_pieces(0x9E37_79B9_7F4A_7C15, 600, 400, [b"abczde", b"abcz"]) {
        let mut long = Vec::new();
        tok.merge_long(&piece, &mut long);
        assert_eq!(
            long,
            general(&piece),
            "{:?}",
            String::from_utf8_lossy(&piece)
        );
    }
    // Words of 9 to 64 bytes, which `encode_piece` cuts like long ones where a cut is found
    // at the middle and merges whole otherwise: both ways give the general loop's units.
    let (mut cut, mut whole) = (0, 0);
    for (k, piece) in testing::long_pieces(0x5851_F42D_4C95_7F2D, 800, 1, [b"abczde", b"abcz"])
        .into_iter()
        .enumerate()
    {
        let piece = &piece[..MIN_CUT + 1 + k % (MAX_SHORT - MIN_CUT)];
        if tok.worth_cutting(piece) {
            cut += 1;
        } else {
            whole += 1;
        }
        let (mut cut_units, mut whole_units) = (Vec::new(), Vec::new());
        tok.merge_long(piece, &mut cut_units);
        tok.merge_plain(piece, &mut whole_units);
        let expected = general(piece);
        assert_eq!(cut_units, expected, "{:?}", String::from_utf8_lossy(piece));
        assert_eq!(
            whole_units,
            expected,
            "{:?}",
            String::from_utf8_lossy(piece)
        );
    }
    assert!(cut > 100 && whole > 100, "cut {cut}, whole {whole}");
    // Each merger of whole parts alone, uncut, from 2 bytes up: the heaps, and the sweep,
    // which stops and refiles its bucket where a merge makes a pair of its rank or lower
    // (here tokens rank below their parts).
    let mut next = testing::generator(0x0DDB_1A5E_5BAD_5EED);
    for round in 0..1500 {
        let alphabet: &[u8] = [b"abcz".as_slice(), b"abczde", b"ab"][round % 3];
        let len = 2 + next(if round % 5 == 0 { 1500 } else { 200 }) as usize;
        let piece: Vec<u8> = (0..len)
            .map(|_| alphabet[next(alphabet.len() as u64) as usize])
            .collect();
        let (mut heap, mut sweep, mut long) = (Vec::new(), Vec::new(), Vec::new());
        tok.merge_sweep(&piece, &mut sweep).unwrap();
        tok.merge_heap_long(&piece, &mut long).unwrap();
        let expected = general(&piece);
        assert_eq!(
            long,
            expected,
            "long heap {:?}",
            String::from_utf8_lossy(&piece)
        );
        if piece.len() <= MAX_HEAP {
            // (the heap's arrays are sized for the parts it is given)
            tok.merge_heap(&piece, &mut heap);
            assert_eq!(heap, expected, "heap {:?}", String::from_utf8_lossy(&piece));
        }
        assert_eq!(
            sweep,
            expected,
            "sweep {:?}",
            String::from_utf8_lossy(&piece)
        );
    }
    // Whole pieces on either side of the lengths where the heap in memory gives way to the
    // sweep, of many byte pairs and of few.
    for alphabet in [b"abczde".as_slice(), b"ab"] {
        for len in [MAX_HEAP, MAX_HEAP + 1, MAX_LONG_HEAP, MAX_LONG_HEAP + 1] {
            let piece: Vec<u8> = (0..len)
                .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                .collect();
            let mut plain = Vec::new();
            tok.merge_plain(&piece, &mut plain);
            assert_eq!(plain, general(&piece), "{len} bytes");
        }
    }
    // The short scan, and the heap on the stack (`mid`) from two bytes up.
    let alphabet = b"abcz";
    let (mut short, mut mid) = (Vec::new(), Vec::new());
    let mut check = |piece: &[u8]| {
        let expected = general(piece);
        if piece.len() <= MIN_MID {
            short.clear();
            tok.merge_short(piece, &mut short);
            assert_eq!(short, expected, "{piece:?}");
        }
        if piece.len() >= 2 {
            mid.clear();
            tok.merge_mid(piece, &mut mid);
            assert_eq!(mid, expected, "mid {piece:?}");
        }
    };
    for len in 1..=6u32 {
        for code in 0..4usize.pow(len) {
            let piece: Vec<u8> = (0..len).map(|k| alphabet[(code >> (2 * k)) & 3]).collect();
            check(&piece);
        }
    }
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..2000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = 1 + (state % MAX_SHORT as u64) as usize;
        let piece: Vec<u8> = (0..len)
            .map(|k| alphabet[((state >> (k % 60)) & 3) as usize])
            .collect();
        check(&piece);
    }
}

/// The heap in memory takes parts of many distinct byte pairs up to its limit, of a dozen or so
/// up to a shorter one, and leaves a short string repeated to the rank buckets.
#[test]
fn the_heap_in_memory_takes_parts_of_many_byte_pairs() {
    let mut next = testing::generator(0xB1_7E5);
    let mut random = |alphabet: &[u8], len: usize| -> Vec<u8> {
        (0..len)
            .map(|_| alphabet[next(alphabet.len() as u64) as usize])
            .collect()
    };
    let letters = b"abcdefghij";
    assert!(ByteLevel::suits_heap(&random(letters, 300)));
    assert!(ByteLevel::suits_heap(&random(letters, MAX_LONG_HEAP)));
    assert!(!ByteLevel::suits_heap(&random(letters, MAX_LONG_HEAP + 1)));
    assert!(ByteLevel::suits_heap(&random(b"ACGT", MAX_FEW_HEAP)));
    assert!(!ByteLevel::suits_heap(&random(b"ACGT", MAX_FEW_HEAP + 1)));
    assert!(!ByteLevel::suits_heap(&b" abc".repeat(500)));
    assert!(!ByteLevel::suits_heap(&b"ab".repeat(500)));
}
