//! The open branches of a ring-bond product's state: what the product keeps of each branch so
//! that, when it ends, the labels' states say where their openers stand to the atom the
//! branch hangs from (its *anchor*), which is the current atom again.
//!
//! A label's state says where its opener stands to the current atom ([`Labels`]). Inside a
//! branch the current atom moves on; at its end it is the anchor again, and a label opened on
//! the anchor (`C1(C)1`), on the atom bonded to it (`C1C(C)1`) or on the branch's first atom
//! (`C(C1)1`) may not close there, nor, for the first two, on the atom after the branch
//! (`C1(C)C1`). So each open branch keeps the labels that are open *near* its anchor
//! ([`Labels::near`]): those it found there, and those opened on its first atom, as long as
//! they stay open; and where its current atom stands (no atom yet, the first, a later one).
//! Every other open label was opened further back from the anchor.
//!
//! A branch that keeps nothing near and is past its first atom ends as a break would (every
//! open label further back), so such branches at the bottom of the stack are dropped: a canvas
//! of plain chains keeps an empty stack. A product of a text with holes follows at most
//! [`MAX_HOLEY_DEPTH`] branches at once (a hole can nest them without end); what it does past
//! that is the product's choice (see [`super::RingProduct::new`]).

use super::interner::Interner;
use super::labels::{Labels, Who, CLOSED, OPEN_BONDED};

/// The most open branches a product of a text with holes follows at once (text without holes
/// follows them all: its automaton has no cycle).
pub(crate) const MAX_HOLEY_DEPTH: usize = 4;

/// Where a branch's current atom stands to its anchor.
pub(super) const NO_ATOM: u8 = 0;
/// The branch's first atom, bonded to the anchor.
pub(super) const FIRST_ATOM: u8 = 1;
/// A later atom, or one after a dot: not bonded to the anchor.
pub(super) const PAST: u8 = 2;

/// An open branch: the labels open near its anchor, and where its current atom stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Branch {
    near: Labels,
    at: u8,
}

impl Branch {
    /// Whether its end reads as a break would: nothing open near the anchor, and no label can
    /// be opened near it any more.
    fn ends_as_break(&self) -> bool {
        self.at == PAST && self.near == Labels::default()
    }
}

/// What a lexeme does to the open branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Move {
    /// An atom.
    Atom,
    /// A break (a dot): the next atom bonds to nothing.
    Break,
    /// A branch opens on the current atom.
    Open,
    /// The innermost branch ends.
    Close,
    /// A label opens on the current atom.
    Opened(Who),
    /// A label closes.
    Closed(Who),
    /// Nothing that matters to the labels.
    Other,
}

/// The stacks of open branches a product's states hold, each stored once and named by an
/// index (0: no open branch).
pub(super) struct BranchStacks {
    stacks: Interner<Vec<Branch>>,
    follow: bool,
}

impl BranchStacks {
    /// Stacks of open branches, if `follow` (if not, a branch's end reads as a break).
    pub(super) fn new(follow: bool) -> BranchStacks {
        BranchStacks {
            stacks: Interner::new(Vec::new()),
            follow,
        }
    }

    /// The labels and the stack after a lexeme that does `m`, from stack `stack`; `labels` are
    /// the labels after the lexeme for every move but [`Move::Close`], for which they are the
    /// labels before it.
    pub(super) fn after(&mut self, stack: u32, labels: Labels, m: Move) -> (Labels, u32) {
        let branches = self.stacks.get(stack);
        if !self.follow {
            let labels = match m {
                Move::Close => labels.after_break(),
                _ => labels,
            };
            return (labels, stack);
        }
        let mut changed: Vec<Branch> = match m {
            Move::Other => return (labels, stack),
            Move::Open => {
                let mut b = branches.clone();
                b.push(Branch {
                    near: labels.near(),
                    at: NO_ATOM,
                });
                b
            }
            Move::Close => {
                let Some((top, rest)) = branches.split_last() else {
                    // A branch dropped from the stack (it ended as a break would, or the
                    // product forgot it), or none opened (not a word): a break.
                    return (labels.after_break(), stack);
                };
                let after = labels.after_branch(&top.near);
                let rest = rest.to_vec();
                return (after, self.stacks.intern(rest));
            }
            Move::Atom | Move::Break => {
                let Some(top) = branches.last() else {
                    return (labels, stack);
                };
                let at = match (m, top.at) {
                    (Move::Atom, NO_ATOM) => FIRST_ATOM,
                    _ => PAST,
                };
                if at == top.at {
                    return (labels, stack);
                }
                let mut b = branches.clone();
                b.last_mut().expect("not empty").at = at;
                b
            }
            Move::Opened(who) => {
                // Opened near the innermost anchor if on its branch's first atom; further
                // back from every other anchor.
                match branches.last() {
                    Some(top) if top.at == FIRST_ATOM => {
                        let mut b = branches.clone();
                        let top = b.last_mut().expect("not empty");
                        top.near = top.near.with(who, OPEN_BONDED);
                        b
                    }
                    _ => return (labels, stack),
                }
            }
            Move::Closed(who) => {
                let closed: Vec<Branch> = branches
                    .iter()
                    .map(|b| Branch {
                        near: b.near.with(who, CLOSED),
                        at: b.at,
                    })
                    .collect();
                if closed == *branches {
                    return (labels, stack);
                }
                closed
            }
        };
        // Branches at the bottom that end as breaks are dropped (the stack's depth is for the
        // product to judge).
        let drop = changed.iter().take_while(|b| b.ends_as_break()).count();
        changed.drain(..drop);
        (labels, self.stacks.intern(changed))
    }

    /// How many branches stack `id` holds.
    pub(super) fn depth(&self, id: u32) -> usize {
        self.stacks.get(id).len()
    }

    /// Stack `id` without its bottom branch, whose end will read as a break.
    pub(super) fn without_bottom(&mut self, id: u32) -> u32 {
        let stack = self.stacks.get(id)[1..].to_vec();
        self.stacks.intern(stack)
    }
}
