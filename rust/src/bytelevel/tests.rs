//! The byte-level tokenizer's tests: both merge rules, the caches and memo against plain
//! merging, the shortcuts against the rules they stand for, errors and their offsets.

use super::testing::build;
use super::*;
use crate::merge::merge_with;
use crate::pretokenize::named;

/// GPT-2-pattern tokenizers of `ranks`: one with a cache of `cache_bytes` (and so a memo),
/// and one with neither, whose ids the first must give.
fn cached_and_plain(ranks: &[(Vec<u8>, u32)], cache_bytes: usize) -> (ByteLevel, ByteLevel) {
    let model = |cache_bytes| Model {
        ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
        patterns: vec![named::GPT2],
        cache_bytes,
        ..Model::default()
    };
    (
        ByteLevel::new(&model(cache_bytes)).unwrap(),
        ByteLevel::new(&model(0)).unwrap(),
    )
}

/// Bytes, and a token for each consonant and vowel (`bcdfghjk`, `aeiouywx`) from id `first`
/// on: a vowel and a consonant are no token, so a word of three such pairs is three tokens.
fn syllable_ranks(first: u32) -> Vec<(Vec<u8>, u32)> {
    let pairs = b"bcdfghjk"
        .iter()
        .flat_map(|&c| b"aeiouywx".iter().map(move |&v| vec![c, v]));
    bytes_model(&[])
        .into_iter()
        .chain(pairs.zip(first..))
        .collect()
}

/// Words `from..from + n` of three consonant-vowel pairs, each after a phrase that repeats
/// (new words close together would rest the memo's short table).
fn syllable_words(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| {
            let word: String = (0..3)
                .flat_map(|k| {
                    let c = b"bcdfghjk"[(i >> (6 * k)) & 7];
                    [c, b"aeiouywx"[(i >> (6 * k + 3)) & 7]]
                })
                .map(char::from)
                .collect();
            word + ". ba ba ba."
        })
        .collect()
}

#[test]
fn a_memo_taken_over_hands_nothing_to_another_vocabulary() {
    // Six tokenizers whose vocabularies give the same words other ids, used in turn on one
    // thread, more than it keeps memos: each memo is taken over by a later tokenizer while
    // it holds pending words of an earlier one, which must never reach the later one's
    // shared cache. Every text is encoded by all six: a word handed to the wrong cache
    // would come back with the wrong ids.
    let pairs: Vec<(ByteLevel, ByteLevel)> = (0..6)
        .map(|k| cached_and_plain(&syllable_ranks(256 + 1000 * k), 64 << 20))
        .collect();
    const { assert!(memo::MEMOS < 6) };
    // (texts long enough for a memo to let go of some of its own words whichever memo
    // each tokenizer is given: as many words as its short table has pairs)
    let words = memo::SLOTS / 2;
    for round in 0..2 {
        for from in (0..2 * words).step_by(words) {
            let text = syllable_words(round * 2 * words + from, words);
            for (tok, plain) in &pairs {
                assert_eq!(
                    tok.encode_ordinary(&text).unwrap(),
                    plain.encode_ordinary(&text).unwrap()
                );
            }
        }
    }
    assert!(pairs.iter().all(|(tok, _)| !tok.cache().is_empty()));
}

fn bytes_model(extra: &[(&'static [u8], u32)]) -> Vec<(Vec<u8>, u32)> {
    let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
    ranks.extend(extra.iter().map(|&(b, i)| (b.to_vec(), i)));
    ranks
}

#[test]
fn merge_bytes_merges_without_looking_the_whole_up() {
    // "xyz" is a token the merges never reach (neither "xy" nor "yz" is one): encode finds
    // it whole, merge_bytes merges as tiktoken's byte_pair_encode does and leaves bytes.
    let ranks = bytes_model(&[(b"ab", 256), (b"xyz", 257)]);
    let (tok, _) = cached_and_plain(&ranks, 0);
    assert_eq!(tok.encode_ordinary("xyz").unwrap(), vec![257]);
    assert_eq!(
        tok.merge_bytes(b"xyz").unwrap(),
        b"xyz".map(u32::from).to_vec()
    );
    assert_eq!(tok.merge_bytes(b"").unwrap(), Vec::<u32>::new());
    assert_eq!(tok.merge_bytes(&[0xE0, 0xB6]).unwrap(), vec![0xE0, 0xB6]);
    let long = b"ab".repeat(400); // past the short and heap merges
    assert_eq!(tok.merge_bytes(&long).unwrap(), vec![256; 400]);
}

#[test]
fn the_memo_gives_the_ids_of_the_merges() {
    // Texts of short pieces encoded again and again, by two tokenizers in turn and after
    // clear_cache, give the ids of a tokenizer with no cache (and so no memo).
    let ranks = bytes_model(&[
        (b"ab", 256),
        (b" ab", 257),
        (b"abc", 258),
        (b" x", 259),
        (b"cab", 260),
    ]);
    let (one, two) = (build(&ranks, None), build(&ranks, None));
    let model = Model {
        ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
        patterns: vec![named::GPT2],
        cache_bytes: 0,
        ..Model::default()
    };
    let plain = ByteLevel::new(&model).unwrap();
    let mut next = testing::generator(7);
    let words: [&str; 8] = ["ab", " ab", "abc", " x", "cab", " abcab", "bca", "!!"];
    for round in 0..200 {
        let text: String = (0..1 + next(40)).map(|_| words[next(8) as usize]).collect();
        let want = plain.encode_ordinary(&text).unwrap();
        for tok in [&one, &two, &one] {
            assert_eq!(tok.encode_ordinary(&text).unwrap(), want, "{text:?}");
        }
        if round % 50 == 0 {
            one.clear_cache();
        }
    }
    // Another vocabulary on the same thread, in turn: each keeps its own ids (the memo's
    // slots are its owner's).
    let other = build(&bytes_model(&[(b"ab", 256), (b"bc", 257)]), None);
    for _ in 0..3 {
        assert_eq!(one.encode_ordinary("abc ab").unwrap(), [258, 257]);
        assert_eq!(other.encode_ordinary("abc ab").unwrap(), [256, 99, 32, 256]);
    }
}

#[test]
fn a_resting_memo_gives_the_ids_of_the_merges() {
    // Random short pieces, nearly all new, rest the memo's short table (with now and then
    // a word too long for it, answered while it rests); then prose that repeats itself,
    // then random pieces again, in one text and line by line: the ids of a tokenizer with
    // no memo.
    let ranks = bytes_model(&[(b"ab", 256), (b" ab", 257), (b"abc", 258), (b"ca", 259)]);
    let (tok, plain) = cached_and_plain(&ranks, 1 << 20);
    let mut next = testing::generator(11);
    let mut random = |n: usize| -> String {
        let mut text = String::new();
        for _ in 0..n {
            if next(200) == 0 {
                let len = 17 + next(40) as usize;
                text.extend((0..len).map(|_| ['a', 'b', 'c'][next(3) as usize]));
                continue;
            }
            let c = char::from_u32(0x20 + next(0xE0) as u32).unwrap_or('?');
            text.push(if next(3) == 0 { ' ' } else { c });
        }
        text
    };
    let prose = " abc ab cab, ca!".repeat(8000);
    let text = format!("{}{prose}{}", random(300_000), random(100_000));
    assert_eq!(
        tok.encode_ordinary(&text).unwrap(),
        plain.encode_ordinary(&text).unwrap()
    );
    assert_eq!(
        tok.encode_ordinary(&text).unwrap(),
        plain.encode_ordinary(&text).unwrap()
    );
    for line in text.as_bytes().chunks(4096) {
        let line = String::from_utf8_lossy(line);
        assert_eq!(
            tok.encode_ordinary(&line).unwrap(),
            plain.encode_ordinary(&line).unwrap()
        );
    }
}

#[test]
fn words_of_every_length_give_the_ids_of_the_merges_warm() {
    // Words of 1 to 30 consonant-vowel pairs over tokens of pairs and of two pairs: pieces
    // of up to 61 bytes with up to 16 ids and more, so that every table of the memo keeps
    // some (the longest one by length and, with a slot of the long one saying so, by their
    // ids' count) and some are kept by none. Encoded again and again, in changing order,
    // they give the ids of a tokenizer with no cache.
    let pairs: Vec<Vec<u8>> = b"bcdfghjk"
        .iter()
        .flat_map(|&c| b"aeiouywx".iter().map(move |&v| vec![c, v]))
        .collect();
    let quads = pairs
        .iter()
        .flat_map(|a| pairs.iter().map(move |b| [a.as_slice(), b].concat()));
    let ranks: Vec<(Vec<u8>, u32)> = bytes_model(&[])
        .into_iter()
        .chain(pairs.iter().cloned().chain(quads).zip(256..))
        .collect();
    let (tok, plain) = cached_and_plain(&ranks, 64 << 20);
    let mut next = testing::generator(5);
    // (a third of them after one 32-byte beginning: pieces told apart only by their ends)
    let words: Vec<String> = (0..3000)
        .map(|i| {
            let (first, n) = if i % 3 == 0 {
                (pairs[..16].concat(), 1 + next(12) as usize)
            } else {
                (Vec::new(), 1 + next(30) as usize)
            };
            let rest = (0..n).flat_map(|_| pairs[next(64) as usize].clone());
            String::from_utf8(first.into_iter().chain(rest).collect()).unwrap()
        })
        .collect();
    let lengths: std::collections::BTreeSet<usize> = words.iter().map(|w| w.len() + 1).collect();
    assert!(lengths.contains(&(memo::LONGEST_KEY - 1)) && lengths.contains(&61));
    for round in 0..4 {
        let text: String = (0..words.len())
            .map(|i| format!(" {}", words[(i * (2 * round + 1) + round) % words.len()]))
            .collect();
        let want = plain.encode_ordinary(&text).unwrap();
        assert_eq!(tok.encode_ordinary(&text).unwrap(), want, "round {round}");
        for line in text.as_bytes().chunks(600).take(20) {
            let line = std::str::from_utf8(line).unwrap();
            let want = plain.encode_ordinary(line).unwrap();
            assert_eq!(tok.encode_ordinary(line).unwrap(), want, "round {round}");
        }
    }
}

#[test]
fn clear_cache_hands_its_memo_to_its_next_owner() {
    // `clear_cache` takes a new owner id: on the thread that clears, the memo of the old id
    // goes to the new one rather than another memo being made beside it, and nothing the
    // old id kept is found by the new one.
    let (tok, plain) = cached_and_plain(&syllable_ranks(256), 64 << 20);
    std::thread::scope(|s| {
        s.spawn(|| {
            for round in 0..3 {
                let text = syllable_words(round * 500, 500);
                for _ in 0..2 {
                    assert_eq!(
                        tok.encode_ordinary(&text).unwrap(),
                        plain.encode_ordinary(&text).unwrap()
                    );
                }
                tok.clear_cache();
            }
            assert_eq!(memo::made_on_thread(), 1);
        });
    });
}

#[test]
fn a_dropped_or_cleared_tokenizers_memos_go_to_the_next_on_every_thread() {
    // A worker thread encodes with one tokenizer after another, each dropped (or cleared)
    // on the main thread: the worker takes the memo of the one gone rather than making a
    // memo for each (new memory is slow to come), and finds none of its pieces.
    let (plain, text) = (
        cached_and_plain(&syllable_ranks(256), 0).1,
        syllable_words(0, 500),
    );
    let expected = plain.encode_ordinary(&text).unwrap();
    let (to_worker, jobs) = std::sync::mpsc::channel::<std::sync::Arc<ByteLevel>>();
    let (to_main, done) = std::sync::mpsc::channel::<usize>();
    let worker = std::thread::spawn(move || {
        for tok in jobs {
            assert_eq!(tok.encode_ordinary(&text).unwrap(), expected);
            drop(tok);
            to_main.send(memo::made_on_thread()).unwrap();
        }
    });
    for round in 0..3 {
        let tok = std::sync::Arc::new(cached_and_plain(&syllable_ranks(256), 64 << 20).0);
        to_worker.send(tok.clone()).unwrap();
        assert_eq!(done.recv().unwrap(), 1, "round {round}");
        if round == 1 {
            tok.clear_cache(); // its old id is released too
            to_worker.send(tok.clone()).unwrap();
            assert_eq!(done.recv().unwrap(), 1, "round {round}, cleared");
        }
        drop(tok); // the last reference: released here, not on the worker
    }
    drop(to_worker);
    worker.join().unwrap();
}

#[test]
fn the_shared_cache_holds_what_the_memo_lets_go() {
    // Words of six letters, three tokens each, each after a phrase the memo knows (new
    // words close together would rest its short table): a thread's memo keeps them, so
    // encoding them alone writes few to the shared cache (those that fall three to a
    // pair of the memo's first, small table, about one in a hundred), a batch's call on several
    // threads writes each at once, and the words the memo lets go reach it. Every id is
    // that of a tokenizer with no cache, on this thread and on another.
    let (tok, plain) = cached_and_plain(&syllable_ranks(256), 64 << 20);
    let same = |text: &str, tok: &ByteLevel| {
        assert_eq!(
            tok.encode_ordinary(text).unwrap(),
            plain.encode_ordinary(text).unwrap()
        );
    };
    assert_eq!(plain.encode_ordinary("bakoje").unwrap().len(), 3);
    let alone = syllable_words(0, 1_000);
    same(&alone, &tok);
    assert!(tok.cache().len() < 50, "{} pieces", tok.cache().len());
    // (fewer new words than the shared cache's window: it does not rest either)
    let together = syllable_words(1_000, 1_000);
    let mut ids = Vec::new();
    tok.encode_into_batch(&together, &SpecialSet::None, &SpecialSet::None, &mut ids, 2)
        .unwrap();
    assert_eq!(ids, plain.encode_ordinary(&together).unwrap());
    let shared = tok.cache().len();
    assert!(shared > 950, "{shared}");
    // More new words than the memo has slots, in texts of fewer than a window each: those
    // it lets go are handed to the shared cache.
    for from in (2_000..4_000 + memo::SLOTS).step_by(1_000) {
        same(&syllable_words(from, 1_000), &tok);
    }
    assert!(tok.cache().len() > shared + 10_000, "{}", tok.cache().len());
    same(&alone, &tok);
    std::thread::scope(|s| {
        s.spawn(|| {
            same(&alone, &tok);
            same(&together, &tok);
        });
    });
}

#[test]
fn one_token_words_do_not_rest_the_cache() {
    // 3,000 words that are tokens, then 500 new words of more tokens each than the thread's
    // memo keeps (so that each is written to the cache at once): the cache rests only while
    // the pieces it is asked about miss, and it is not asked about a word the token table
    // answers, so all 500 are cached (counted as misses, they rested it).
    let ranks = bytes_model(&[(b" abcdef", 256)]);
    let tok = build(&ranks, None);
    let mut text = " abcdef".repeat(3000);
    for i in 0..500u32 {
        let letters: String = (0..5)
            .map(|k| char::from(b'q' + ((i >> (2 * k)) & 3) as u8))
            .collect();
        text.push_str(&format!(" x{letters}{}", "q".repeat(memo::LONGEST_IDS)));
    }
    tok.encode_ordinary(&text).unwrap();
    assert_eq!(tok.cache().len(), 500);
}

#[test]
fn ranks_rule_merges_lowest_first() {
    let ranks = bytes_model(&[(b"ab", 256), (b"bc", 257), (b"abc", 258)]);
    let tok = build(&ranks, None);
    // "abc" is a token: emitted whole. "abcb": ab(256) first, then abc(258), then b.
    assert_eq!(tok.encode_ordinary("abc").unwrap(), vec![258]);
    assert_eq!(
        tok.encode_ordinary("abcb").unwrap(),
        vec![258, u32::from(b'b')]
    );
    assert_eq!(
        tok.encode_ordinary("abcb").unwrap(),
        vec![258, u32::from(b'b')]
    ); // cached
    assert_eq!(tok.decode_bytes(&[258, 98]).unwrap(), b"abcb");
}

#[test]
fn merges_rule_and_ignore_merges() {
    let ranks = bytes_model(&[(b"ab", 256), (b"bc", 257), (b"abc", 258)]);
    // Only "b"+"c" then "a"+"bc" are listed: "abc" goes a|bc -> abc.
    let tok = build(&ranks, Some(vec![(b"b", b"c"), (b"a", b"bc")]));
    assert_eq!(tok.encode_ordinary("abcb").unwrap(), vec![258, 98]);
    assert_eq!(tok.encode_ordinary("ab").unwrap(), vec![97, 98]); // "ab" is not a listed merge
}

/// Long pieces under the merges rule are cut where no token can span: the same units as
/// merging the whole piece, on random pieces over letters some of whose pairs are in no
/// token (cuts) and some only inside three-byte tokens.
#[test]
fn merges_rule_cuts_long_pieces_as_the_whole_would_merge() {
    let extra: Vec<(&'static [u8], u32)> = vec![
        (b"ab", 256),
        (b"bc", 257),
        (b"abc", 258),
        (b"ca", 259),
        (b"cab", 260),
        (b"abd", 261),
        (b"eab", 262),
        (b"aa", 263),
        (b"aaa", 264),
    ];
    let ranks = bytes_model(&extra);
    let merges: Vec<(&[u8], &[u8])> = vec![
        (b"a", b"a"),
        (b"c", b"a"),
        (b"b", b"c"),
        (b"ab", b"d"),
        (b"a", b"b"),
        (b"aa", b"a"),
        (b"e", b"ab"),
        (b"a", b"bc"),
        (b"ca", b"b"),
    ];
    let tok = build(&ranks, Some(merges));
    let Rule::Merges(table) = &tok.rule else {
        panic!("a merges list gives the merges rule")
    };
    // Pieces where a three-byte token forms across a pair that is no token, on either side.
    let mut pieces: Vec<Vec<u8>> = vec![b"eabe".repeat(20), b"xabd".repeat(20)];
    pieces.extend(testing::long_pieces(
        0x9E37_79B9_7F4A_7C15,
        400,
        300,
        [b"abcde", b"abc"],
    ));
    for piece in pieces {
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        tok.encode_piece(
            &piece,
            None,
            &mut out,
            &mut scratch,
            &mut Bypass::default(),
            0,
        )
        .unwrap();
        let mut whole: Vec<u32> = piece.iter().map(|&b| tok.byte_units[b as usize]).collect();
        merge_with(&mut whole, table);
        assert_eq!(out, whole, "{:?}", String::from_utf8_lossy(&piece));
    }
}

#[test]
fn specials_and_added_tokens() {
    let tok = build(&bytes_model(&[]), None);
    let err = tok
        .encode("hé <|end|>", &SpecialSet::None, &SpecialSet::All)
        .unwrap_err();
    assert_eq!(
        err,
        Error::Disallowed {
            token: "<|end|>".into(),
            offset: 3
        }
    );
    let ids = tok
        .encode("a<|end|>@@", &SpecialSet::All, &SpecialSet::None)
        .unwrap();
    assert_eq!(ids, vec![97, 1000, 1001]);
    let ids = tok.encode_ordinary("a<|end|>@@").unwrap();
    assert_eq!(ids.last(), Some(&1001));
    assert!(ids.len() > 3);
}

#[test]
fn missing_bytes_merge_or_fail() {
    // No token for "a" alone, but "ab" exists: "ab" encodes, "a" alone cannot.
    let ranks = vec![(b"ab".to_vec(), 0), (b"b".to_vec(), 1)];
    let tok = build(&ranks, None);
    assert_eq!(tok.encode_ordinary("abb").unwrap(), vec![0, 1]);
    assert_eq!(
        tok.encode_ordinary("ba"),
        Err(Error::NoToken {
            byte: b'a',
            offset: Some(1)
        })
    );
    // The place of the first byte left without a token, not of the byte's first occurrence.
    assert_eq!(
        tok.encode_ordinary("abbba"),
        Err(Error::NoToken {
            byte: b'a',
            offset: Some(4)
        })
    );
    assert_eq!(
        tok.decode_bytes(&[0, 7]),
        Err(Error::UnknownId { id: 7, position: 1 })
    );
}

#[test]
fn bad_vocabularies_are_errors() {
    let model = Model {
        ranks: vec![(b"a", 0), (b"b", 0)],
        patterns: vec![named::GPT2],
        ..Model::default()
    };
    let Err(Error::Vocab(msg)) = ByteLevel::new(&model) else {
        panic!("accepted a duplicate id")
    };
    assert_eq!(msg, "ranks: token id 0 is used twice (b'a' and b'b')");
    let model = Model {
        ranks: vec![(b"a", 0), (b"b", 1)],
        merges: Some(vec![(b"a", b"b")]),
        patterns: vec![named::GPT2],
        ..Model::default()
    };
    let Err(Error::Vocab(msg)) = ByteLevel::new(&model) else {
        panic!("accepted a merge without a token")
    };
    assert!(msg.contains("the merged token b'ab' is not in the vocabulary"));
}

#[test]
fn a_special_or_added_token_may_be_the_ordinary_token_of_its_bytes() {
    // HF keeps an added "ab" that a merge makes too: one id, the same bytes.
    for (special, added) in [(vec![("ab", 2)], vec![]), (vec![], vec![("ab", 2)])] {
        let model = Model {
            ranks: vec![(b"a", 0), (b"b", 1), (b"ab", 2)],
            merges: Some(vec![(b"a", b"b")]),
            special_tokens: special,
            added_tokens: added,
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let tok = ByteLevel::new(&model).expect("one id, one spelling");
        assert_eq!(tok.decode_bytes(&[2]).unwrap(), b"ab");
    }
    // Another id, or other bytes, under one id stay errors.
    for special in [vec![("ab", 1)], vec![("ba", 2)]] {
        let model = Model {
            ranks: vec![(b"a", 0), (b"b", 1), (b"ab", 2)],
            merges: Some(vec![(b"a", b"b")]),
            special_tokens: special,
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let Err(Error::Vocab(msg)) = ByteLevel::new(&model) else {
            panic!("accepted two spellings of one id")
        };
        assert!(msg.contains("is used twice"), "{msg}");
    }
}
