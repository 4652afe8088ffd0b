//! The span table against a table of span texts, its 64-bit limits, the piece counts of span
//! counts (test builds only).

use super::*;
use crate::counting::Tally;

fn sorted(c: &Counts) -> Vec<(Vec<u8>, u64)> {
    let mut v: Vec<_> = c.iter().map(|(k, n)| (k.to_vec(), n)).collect();
    v.sort();
    v
}

fn span_texts(t: &SpanTable) -> Counts {
    let mut out = Counts::default();
    t.for_each_span(|span, n| out.add(span, n));
    out
}

#[test]
fn span_tables_count_as_text_tables_do() {
    let spans = [
        " ab c.",
        " c",
        " ",
        " ab c.",
        "x y  z",
        " c",
        "\n",
        " ශ්‍රී ලංකාව.",
    ];
    // One table, then the same spans over two tables merged, then the text table.
    let mut one = SpanTable::default();
    let (mut left, mut right) = (SpanTable::default(), SpanTable::default());
    let mut text = Counts::default();
    for (i, span) in spans.iter().enumerate() {
        let n = i as u64 + 1;
        Tally::add(&mut one, span.as_bytes(), n);
        Tally::add(
            if i % 2 == 0 { &mut left } else { &mut right },
            span.as_bytes(),
            n,
        );
        text.add(span.as_bytes(), n);
    }
    left.absorb(right);
    for table in [&one, &left] {
        assert_eq!(table.len(), text.len());
        assert_eq!(table.total(), text.total());
        assert_eq!(sorted(&span_texts(table)), sorted(&text));
        assert_eq!(sorted(&table.pieces()), sorted(&pieces_of(&text)));
    }
    let shipped = SpanTable::from_counts(&text);
    assert_eq!(sorted(&shipped.pieces()), sorted(&pieces_of(&text)));
    let mut again = SpanTable::default();
    again.add_bytes(&one.to_bytes()).unwrap();
    assert_eq!(sorted(&span_texts(&again)), sorted(&text));
}

#[test]
fn span_tables_refuse_counts_past_64_bits() {
    let mut t = SpanTable::default();
    assert!(t.try_add(b" a a", u64::MAX / 2));
    // the span fits (u64::MAX / 2 + 1) but its piece " a" (twice per span) would not
    assert!(!t.try_add(b" a", 2));
    assert!(!t.try_add(b" a a", 1));
    assert!(t.try_add(b" b", u64::MAX));
    assert!(!t.try_add(b" b", 1));
    assert!(t.try_add(b" b", 0));
    assert_eq!(t.pieces().get(b" a"), u64::MAX - 1);
    assert_eq!(t.pieces().get(b" b"), u64::MAX);
    assert_eq!(t.len(), 2);
}

#[test]
fn piece_counts_follow_from_span_counts() {
    let mut spans = Counts::default();
    spans.add(" ab c.".as_bytes(), 2);
    spans.add(" c".as_bytes(), 1);
    spans.add(b" ", 4);
    let pieces = pieces_of(&spans);
    assert_eq!(pieces.get(b" ab"), 2);
    assert_eq!(pieces.get(b" c."), 2);
    assert_eq!(pieces.get(b" c"), 1);
    assert_eq!(pieces.get(b" "), 4);
    assert_eq!(pieces.total(), 9);
}
