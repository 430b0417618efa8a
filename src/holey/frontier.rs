//! The lexer configurations that can stand at one place of a canvas, over every lexing of
//! every filling of what lies before it.
//!
//! A position's valid-token mask groups the vocabulary by what each token does from these
//! configurations ([`super::tokens::effects`]): two tokens that do the same from every one of
//! them give the same lexeme automaton, so they share one verdict. A superset of the true set
//! only makes the groups finer, never wrong, so holes of any text take everything reachable
//! (bytes and every emission), not the hole sets the automaton uses.

use hashbrown::HashSet;

use super::config::{ConfigId, ConfigTable, TooLarge, DEAD_CONFIG};
use super::tokens::TokenCaches;
use crate::canvas::{HoleKind, HoleyText};
use crate::lexicon::Lexicon;

/// The configurations at byte `offset` of chunk `chunk` of `text` (holes filled as `kinds`
/// says), with the emissions made there; at most `limit` of them.
#[allow(clippy::too_many_arguments)]
pub fn configs_at(
    lx: &Lexicon,
    table: &mut ConfigTable,
    tokens: &mut TokenCaches,
    text: &HoleyText,
    kinds: &[HoleKind],
    chunk: usize,
    offset: usize,
    limit: usize,
) -> Result<Vec<ConfigId>, TooLarge> {
    let mut front = vec![table.start()];
    emit_all(lx, table, &mut front)?;
    for (k, bytes) in text.chunks.iter().enumerate().take(chunk + 1) {
        let end = if k == chunk { offset } else { bytes.len() };
        for &b in &bytes[..end] {
            let class = lx.class_of(b);
            let mut next = Vec::with_capacity(front.len());
            for &c in &front {
                let n = table.step(lx, c, class)?;
                if n != DEAD_CONFIG {
                    next.push(n);
                }
            }
            front = next;
            emit_all(lx, table, &mut front)?;
        }
        if k == chunk {
            break;
        }
        front = match kinds.get(k).copied().unwrap_or_default() {
            HoleKind::Any => everything_from(lx, table, &front, limit)?,
            kind => {
                let set = table.intern_set(front.clone())?;
                let mut exits: Vec<ConfigId> = tokens
                    .union(lx, table, set)?
                    .iter()
                    .map(|p| p.exit)
                    .collect();
                if kind == HoleKind::TokenOrNone {
                    exits.extend_from_slice(&front);
                }
                exits
            }
        };
        emit_all(lx, table, &mut front)?;
        if front.len() > limit {
            return Err(TooLarge);
        }
    }
    Ok(front)
}

/// Adds to `front` the configuration after every emission of its members, and dedups it. (One
/// round suffices: what follows an emission is between tokens, and emits nothing.)
fn emit_all(
    lx: &Lexicon,
    table: &mut ConfigTable,
    front: &mut Vec<ConfigId>,
) -> Result<(), TooLarge> {
    let n = front.len();
    for i in 0..n {
        let c = front[i];
        for &(_, next) in table.emits(lx, c)? {
            front.push(next);
        }
    }
    front.sort_unstable();
    front.dedup();
    Ok(())
}

/// Every configuration reachable from `start` by bytes and emissions.
fn everything_from(
    lx: &Lexicon,
    table: &mut ConfigTable,
    start: &[ConfigId],
    limit: usize,
) -> Result<Vec<ConfigId>, TooLarge> {
    let mut seen: HashSet<ConfigId> = start.iter().copied().collect();
    let mut stack = start.to_vec();
    while let Some(c) = stack.pop() {
        let mut next: Vec<ConfigId> = table.emits(lx, c)?.iter().map(|&(_, n)| n).collect();
        for class in 0..lx.num_classes() {
            next.push(table.step(lx, c, class)?);
        }
        for n in next {
            if n != DEAD_CONFIG && seen.insert(n) {
                if seen.len() > limit {
                    return Err(TooLarge);
                }
                stack.push(n);
            }
        }
    }
    let mut out: Vec<ConfigId> = seen.into_iter().collect();
    out.sort_unstable();
    Ok(out)
}
