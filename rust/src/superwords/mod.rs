//! Superword training (`wwho.sgpe.superwords`): the span counts, what each span becomes after
//! the word-level merges, and the second engine that learns the superword merges.
//!
//! The counters cut sentence spans ([`crate::spans`]) into a [`SpanTable`] (each distinct piece
//! once, spans as piece ids, the piece counts kept while counting). The word-level training
//! takes the pieces' counts ([`pieces`]); beside it, a thread merges the counting threads'
//! tables and works out what each piece becomes ([`prepare`], [`PieceItems`]). Once the
//! word-level engine has run, every span becomes the sequence of its pieces' tokens
//! ([`superword_words`]) and [`engine`] builds the superword engine from them, freeing what
//! the stage no longer needs first. The bindings only convert types and release the GIL.
//!
//! This module does not read corpora, choose the budget or assign final ids.
//!
//! The span table lives in `table`, the pieces' items and the spans as tokens in `items`; this
//! module holds the stage's steps (`prepare`, `engine`) and what they take.

use crate::counting::Counts;
use crate::engine::{Engine, EngineError};
use crate::training::WordCounts;
use crate::words::{Scope, WordSplitter};
use std::sync::Arc;

mod items;
mod table;
#[cfg(test)]
mod tests;

pub use items::{superword_words, PieceItems};
pub use table::{merged, pieces, pieces_of, SpanTable};

/// Where the superword stage's spans come from.
pub enum Spans {
    /// A span counter's tables, one per counting thread.
    Tables(Vec<SpanTable>),
    /// Span texts given as such (e.g. added from shards counted elsewhere).
    Texts(Counts),
}

impl Spans {
    fn into_table(self) -> SpanTable {
        match self {
            Spans::Tables(tables) => merged(tables),
            Spans::Texts(texts) => SpanTable::from_counts(&texts),
        }
    }
}

/// How the word-level training grouped each piece's tokens (`crate::training::collect_words`):
/// the superword stage groups them the same way.
pub struct Grouping<'a> {
    pub splitter: &'a WordSplitter,
    pub scope: Scope,
    /// The special and byte tokens' texts: a piece holding one is grouped as in scope `Words`,
    /// a span holding one is left unmerged.
    pub reserved: &'a [String],
    /// Superwords join only pieces that hold a letter: a piece of punctuation, digits or
    /// symbols after a space (a danda set apart in verse, a verse number) starts a new span.
    /// Such pieces repeat in a training text's formatting and rarely in other text.
    pub letters: bool,
}

/// Why the superword stage failed.
pub enum Failure {
    /// A panic on the thread of [`prepare`] (its payload, for the caller to report).
    Panicked(Box<dyn std::any::Any + Send>),
    /// Too many word types for the stage, or an input the engine refuses.
    Refused(EngineError),
}

/// The merged span table and its pieces' items, being worked out on a thread of its own.
pub struct Preparation(std::thread::JoinHandle<Result<(SpanTable, PieceItems), EngineError>>);

impl Preparation {
    fn join(self) -> Result<(SpanTable, PieceItems), Failure> {
        self.0
            .join()
            .map_err(Failure::Panicked)?
            .map_err(Failure::Refused)
    }
}

/// Start working out, on a thread of its own, what [`engine`] needs before the word-level
/// engine has run: the counting threads' `tables` merged, and what each of their pieces
/// becomes ([`PieceItems`], on that one thread: the word-level training runs beside it).
/// `words` are the word-level training's word types.
pub fn prepare(
    tables: Vec<SpanTable>,
    splitter: WordSplitter,
    scope: Scope,
    reserved: Vec<String>,
    words: Arc<WordCounts>,
) -> Preparation {
    Preparation(std::thread::spawn(move || {
        let table = merged(tables);
        let items = PieceItems::new(&table, &splitter, scope, &reserved, &words, 1)?;
        Ok((table, items))
    }))
}

/// The superword stage's input: prepared beside the word-level training ([`prepare`]), or
/// spans whose pieces' items are worked out by [`engine`] (on up to 8 threads).
pub enum Input {
    Prepared(Preparation),
    Spans(Spans),
}

/// What the word-level training leaves the superword stage; [`engine`] frees it.
pub struct WordLevel<'a> {
    /// The word types (left empty).
    pub words: &'a mut Arc<WordCounts>,
    /// String id -> symbol id of the word-level engine's input (left empty).
    pub symbol_ids: &'a mut Vec<u32>,
    /// The trained word-level engine: its words are released, its symbols and merges stay.
    pub engine: &'a mut Engine,
}

/// The superword stage's engine: every span of `input` as the tokens the word-level engine
/// left its pieces ([`superword_words`]), with the span's count; its symbols are the
/// word-level engine's. What the stage no longer needs (the span table, the pieces' items,
/// `level`'s word types and the first engine's words) is freed, and the allocator's free
/// pages handed back, before the new engine counts its pairs. `min_freq`: the least frequency
/// the new engine will be asked to merge; rarer pairs are left out of its index
/// ([`Engine::from_flat_forgetting`]; the results are the same).
pub fn engine(
    input: Input,
    grouping: &Grouping<'_>,
    level: WordLevel<'_>,
    min_freq: u64,
) -> Result<Engine, Failure> {
    let (table, items) = match input {
        Input::Prepared(preparation) => preparation.join()?,
        Input::Spans(spans) => {
            let table = spans.into_table();
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
            let items = PieceItems::new(
                &table,
                grouping.splitter,
                grouping.scope,
                grouping.reserved,
                level.words,
                threads,
            )
            .map_err(Failure::Refused)?;
            (table, items)
        }
    };
    let first = level.engine;
    let (data, lengths, counts) =
        superword_words(&table, &items, level.symbol_ids, first, grouping.letters);
    let symbols = first.symbols().to_vec();
    drop(table);
    drop(items);
    *level.words = Arc::new(WordCounts::default());
    *level.symbol_ids = Vec::new();
    first.release_words();
    #[cfg(target_os = "linux")]
    crate::alloc::trim();
    Engine::from_flat_forgetting(data, &lengths, counts, symbols, false, min_freq)
        .map_err(Failure::Refused)
}
