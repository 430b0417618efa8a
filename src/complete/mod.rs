//! From a witness (a lexeme sequence that the grammar derives and some filling of the holes
//! lexes to) to the filling itself: concrete bytes for every hole.
//!
//! A 0-1 breadth-first search over (place, lexer configuration, lexemes matched) finds hole
//! bytes whose full text lexes to exactly the witness, spending the fewest hole bytes; among
//! equally short fillers it tries readable bytes first (space, letters and digits — `0` last
//! of them — other printable ASCII). One exists whenever the witness came from the canvas's lexeme DFA, since
//! that DFA accepts exactly the lexings of the fillings.

use crate::deadline::{Deadline, Poll};
use std::collections::VecDeque;

use hashbrown::HashMap;

use crate::canvas::HoleyText;
use crate::grammar::TerminalId;
use crate::holey::config::{ConfigId, ConfigTable, TooLarge, DEAD_CONFIG};
use crate::lexicon::{Lexeme, Lexicon};

/// Where the lexer is: a byte offset in a chunk, or inside a hole.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Place {
    Chunk { k: u32, offset: u32 },
    Hole { k: u32 },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct Node {
    place: Place,
    config: ConfigId,
    matched: u32,
}

/// How a node was reached: from which node, and with which hole byte (if any).
type Parent = (Node, Option<u8>);

/// The hole fillers (one per hole) that make `text` lex to exactly `witness`, or `None` if the
/// search space of `max_nodes` nodes is exhausted without one.
pub fn realize(
    lx: &Lexicon,
    table: &mut ConfigTable,
    text: &HoleyText,
    witness: &[TerminalId],
    max_nodes: usize,
    deadline: &Deadline,
) -> Result<Option<Vec<Vec<u8>>>, TooLarge> {
    let mut poll = Poll::new(deadline);
    let classes = readable_classes(lx);
    let last = text.chunks.len() as u32 - 1;
    let start = Node {
        place: Place::Chunk { k: 0, offset: 0 },
        config: table.start(),
        matched: 0,
    };
    // Each node's cheapest known cost (hole bytes) and how it was reached.
    let mut parent: HashMap<Node, (u32, Option<Parent>)> = HashMap::new();
    parent.insert(start, (0, None));
    let mut queue: VecDeque<(Node, u32)> = VecDeque::from([(start, 0)]);
    while let Some((node, cost)) = queue.pop_front() {
        if parent[&node].0 < cost {
            continue;
        }
        if parent.len() > max_nodes || poll.expired() {
            return Ok(None);
        }
        let mut free: Vec<Node> = Vec::new();
        let mut paid: Vec<(Node, u8)> = Vec::new();
        for &(l, next) in table.emits(lx, node.config)? {
            match l {
                Lexeme::Skip => free.push(Node {
                    config: next,
                    ..node
                }),
                Lexeme::Terminal(t) if witness.get(node.matched as usize) == Some(&t) => {
                    free.push(Node {
                        config: next,
                        matched: node.matched + 1,
                        ..node
                    })
                }
                Lexeme::Terminal(_) => {}
            }
        }
        match node.place {
            Place::Chunk { k, offset } => {
                let chunk = &text.chunks[k as usize];
                if (offset as usize) < chunk.len() {
                    let next = table.step(lx, node.config, lx.class_of(chunk[offset as usize]))?;
                    if next != DEAD_CONFIG {
                        free.push(Node {
                            place: Place::Chunk {
                                k,
                                offset: offset + 1,
                            },
                            config: next,
                            ..node
                        });
                    }
                } else if k < last {
                    free.push(Node {
                        place: Place::Hole { k },
                        ..node
                    });
                } else if node.matched as usize == witness.len()
                    && table.at_boundary(lx, node.config)
                {
                    return Ok(Some(fillers(&parent, node, text.chunks.len() - 1)));
                }
            }
            Place::Hole { k } => {
                free.push(Node {
                    place: Place::Chunk {
                        k: k + 1,
                        offset: 0,
                    },
                    ..node
                });
                for &(class, byte) in &classes {
                    let next = table.step(lx, node.config, class)?;
                    if next != DEAD_CONFIG {
                        paid.push((
                            Node {
                                config: next,
                                ..node
                            },
                            byte,
                        ));
                    }
                }
            }
        }
        for n in free {
            if parent.get(&n).is_none_or(|&(c, _)| c > cost) {
                parent.insert(n, (cost, Some((node, None))));
                queue.push_front((n, cost));
            }
        }
        for (n, byte) in paid {
            if parent.get(&n).is_none_or(|&(c, _)| c > cost + 1) {
                parent.insert(n, (cost + 1, Some((node, Some(byte)))));
                queue.push_back((n, cost + 1));
            }
        }
    }
    Ok(None)
}

/// Walks the parents back from `goal`, collecting each hole's bytes.
fn fillers(
    parent: &HashMap<Node, (u32, Option<Parent>)>,
    goal: Node,
    holes: usize,
) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new(); holes];
    let mut node = goal;
    while let Some((_, Some((prev, byte)))) = parent.get(&node) {
        if let (Some(b), Place::Hole { k }) = (byte, prev.place) {
            out[k as usize].push(*b);
        }
        node = *prev;
    }
    for f in &mut out {
        f.reverse();
    }
    out
}

/// Each byte class with its most readable byte, most readable classes first.
fn readable_classes(lx: &Lexicon) -> Vec<(usize, u8)> {
    let mut best: Vec<Option<u8>> = vec![None; lx.num_classes()];
    for b in 0..=255u8 {
        let c = lx.class_of(b);
        if best[c].is_none_or(|old| preference(b) < preference(old)) {
            best[c] = Some(b);
        }
    }
    let mut out: Vec<(usize, u8)> = best
        .into_iter()
        .enumerate()
        .filter_map(|(c, b)| b.map(|b| (c, b)))
        .collect();
    out.sort_by_key(|&(_, b)| preference(b));
    out
}

/// The order in which equally short fillers try bytes: by [`readability`], then by value,
/// except that `0` comes after the other digits. A filler of zeros reads as a placeholder and
/// is sometimes refused by the tools users judge with: a `date` of year `0000` is valid to RFC
/// 3339 and the `jsonschema` crate but not to Python's `datetime` (years start at 1), and a
/// SMILES ring label is conventionally `1`.
fn preference(b: u8) -> (u8, u8) {
    (readability(b), if b == b'0' { b'9' + 1 } else { b })
}

/// Lower is more readable.
fn readability(b: u8) -> u8 {
    match b {
        b' ' => 0,
        b'a'..=b'z' | b'0'..=b'9' => 1,
        b'A'..=b'Z' => 2,
        b'!'..=b'~' => 3,
        b'\n' => 4,
        b'\t' | b'\r' => 5,
        0x80..=0xff => 6,
        _ => 7,
    }
}
