//! The state of a ring-bond product's labels: each tracked label's state (two bits), the
//! loose group's labels told apart by their text (slots), and the loose group's count or
//! parity. A state says where each open label's opener stands to the current atom, which is
//! all a closing label needs; [`super::branches`] keeps what a branch's end restores.

/// A label's state in the product: closed; open on the last atom; open further back (it may
/// close); open on the atom before the last, which is bonded to it. Two bits: the low one says
/// the label may not close now.
pub(super) const CLOSED: u8 = 0;
pub(super) const OPEN_HERE: u8 = 1;
pub(super) const OPEN_BEFORE: u8 = 2;
pub(super) const OPEN_BONDED: u8 = 3;
const LOW_BITS: u64 = 0x5555_5555_5555_5555;

/// One label's state after an atom (what [`Labels::after_atom`] does to every tracked label
/// at once with bit operations).
pub(super) fn after_atom(v: u8) -> u8 {
    match v {
        OPEN_HERE => OPEN_BONDED,
        OPEN_BONDED => OPEN_BEFORE,
        v => v,
    }
}

/// One label's state after a break.
pub(super) fn after_break(v: u8) -> u8 {
    match v {
        CLOSED => CLOSED,
        _ => OPEN_BEFORE,
    }
}

/// The most labels tracked (two bits each in a [`Labels`]).
pub(super) const MAX_TRACKED: usize = 128;

/// The most loose labels a strict or closing product (a completion's) counts open at once;
/// more are refused, so that every word it accepts can be labelled. A loose product (checks
/// and masks) keeps the group's parity only ([`LooseCount::EVEN`], [`LooseCount::ODD`]):
/// counting even one open label there (3 counts and 2 parities, against 2 parities) made a
/// SMILES mask in the middle of 40 masked positions of the embedded model's vocabulary run
/// into its 2 s limit (21 ms with parity only).
pub(super) const MAX_COUNTED_OPEN: u8 = 1;

/// The loose group's open labels, counted by state: the labels of the group are alike to
/// the canvas's chunks (none mentions them), so which ones are open matters less than how
/// many are open on the last atom, on the atom bonded to it, and further back (only those
/// may close); or, uncounted, only the parity of its lexemes (each label occurs an even
/// number of times): necessary, not sufficient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(super) struct LooseCount {
    pub(super) here: u8,
    pub(super) bonded: u8,
    pub(super) before: u8,
}

impl LooseCount {
    /// An even number of the group's lexemes so far, uncounted.
    pub(super) const EVEN: LooseCount = LooseCount {
        here: u8::MAX,
        bonded: u8::MAX,
        before: 0,
    };
    /// An odd number, uncounted.
    pub(super) const ODD: LooseCount = LooseCount {
        here: u8::MAX,
        bonded: u8::MAX,
        before: 1,
    };

    pub(super) fn is_parity(&self) -> bool {
        self.here == u8::MAX
    }

    /// With `n` more lexemes (parity only).
    fn flipped(&self, n: u8) -> LooseCount {
        if (self.before + n).is_multiple_of(2) {
            LooseCount::EVEN
        } else {
            LooseCount::ODD
        }
    }

    fn open(&self) -> u8 {
        self.here + self.bonded + self.before
    }
}

/// The most labels of the loose group a product tells apart by their text at once (see
/// [`Labels::slots`]); past it they are counted with the group.
pub(super) const MAX_SLOTS: usize = 4;

/// An unused slot.
pub(super) const NO_SLOT: u8 = u8::MAX;

/// The states of the tracked labels (two bits each), of the loose group's labels told apart
/// for now, and the loose group's count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Labels {
    pub(super) tracked: [u64; MAX_TRACKED * 2 / 64],
    /// Labels of the loose group a chunk's text forces (`%` ending a hole, then `51`), each
    /// with its state, in a completion's products; sorted by label, unused ones last.
    pub(super) slots: [(u8, u8); MAX_SLOTS],
    pub(super) loose: LooseCount,
}

impl Default for Labels {
    fn default() -> Labels {
        Labels {
            tracked: Default::default(),
            slots: [(NO_SLOT, CLOSED); MAX_SLOTS],
            loose: LooseCount::default(),
        }
    }
}

/// A label of a [`Labels`], whichever way it is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Who {
    /// A tracked label, by index.
    Tracked(usize),
    /// A label of the loose group told apart in a slot, by index into the constraint's labels.
    Slot(u8),
    /// An open label of the loose group, counted.
    Loose,
}

impl Labels {
    pub(super) fn get(&self, i: usize) -> u8 {
        ((self.tracked[i / 32] >> ((i % 32) * 2)) & 3) as u8
    }

    fn set(&mut self, i: usize, v: u8) {
        let w = &mut self.tracked[i / 32];
        *w = (*w & !(3 << ((i % 32) * 2))) | ((v as u64) << ((i % 32) * 2));
    }

    /// The tracked labels open on the current atom (`OPEN_HERE`), bits by tracked index.
    pub(super) fn open_here(&self) -> u128 {
        let mut out = 0u128;
        for (i, &w) in self.tracked.iter().enumerate() {
            let mut here = w & LOW_BITS & !((w >> 1) & LOW_BITS);
            while here != 0 {
                out |= 1 << (i * 32 + here.trailing_zeros() as usize / 2);
                here &= here - 1;
            }
        }
        out
    }

    /// With the open tracked labels of `twins` (bits by tracked index) open on an atom bonded
    /// to the current one: their twin closed here, so their opener is bonded to it.
    pub(super) fn with_bonded(&self, twins: u128) -> Labels {
        let mut out = *self;
        let mut rest = twins;
        while rest != 0 {
            let k = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if out.get(k) != CLOSED {
                out.set(k, OPEN_BONDED);
            }
        }
        out
    }

    /// After an atom: a label open on the last atom is open on the one bonded to it
    /// (`OPEN_HERE` 01 → `OPEN_BONDED` 11), and one open on that atom is now further back
    /// (11 → `OPEN_BEFORE` 10); the loose group's counts move alike.
    pub(super) fn after_atom(&self) -> Labels {
        let mut out = *self;
        for w in &mut out.tracked {
            let (low, high) = (*w & LOW_BITS, (*w >> 1) & LOW_BITS);
            let (here, bonded) = (low & !high, low & high);
            *w = (*w | (here << 1)) & !bonded;
        }
        out.slots.iter_mut().for_each(|s| s.1 = after_atom(s.1));
        let l = self.loose;
        if !l.is_parity() {
            out.loose = LooseCount {
                here: 0,
                bonded: l.here,
                before: l.before + l.bonded,
            };
        }
        out
    }

    /// After a break (the next atom bonds elsewhere): every open label may close on it
    /// (01 and 11 → 10).
    pub(super) fn after_break(&self) -> Labels {
        let mut out = *self;
        for w in &mut out.tracked {
            let low = *w & LOW_BITS;
            *w = (*w & !low) | (low << 1);
        }
        out.slots.iter_mut().for_each(|s| s.1 = after_break(s.1));
        let l = self.loose;
        if !l.is_parity() {
            out.loose = LooseCount {
                here: 0,
                bonded: 0,
                before: l.open(),
            };
        }
        out
    }

    /// What a lexeme of the loose group (`group` labels in all) may leave: uncounted, the
    /// other parity (every word some labelling makes valid is accepted); counted, one more
    /// open on this atom (up to [`MAX_COUNTED_OPEN`]) or one fewer open from further back
    /// (every word accepted has a labelling, [`RingProduct::relabel`]).
    pub(super) fn loose_successors(&self, group: usize) -> [Option<Labels>; 2] {
        let l = self.loose;
        let with = |loose| Some(Labels { loose, ..*self });
        if l.is_parity() {
            return [with(l.flipped(1)), None];
        }
        let opened = match l.open() {
            n if n < MAX_COUNTED_OPEN && (n as usize) < group => with(LooseCount {
                here: l.here + 1,
                ..l
            }),
            _ => None,
        };
        let closed = match l.before {
            0 => None,
            n => with(LooseCount { before: n - 1, ..l }),
        };
        [opened, closed]
    }

    /// What a lexeme of the loose group whose label `x` has no slot may leave where its text
    /// is known (in a counted product): `x` opened in a new slot (counted where none is
    /// free), or one of the counted labels closed (it was `x`).
    pub(super) fn first_met(&self, x: u8, group: usize) -> [Option<Labels>; 2] {
        let opened = self
            .with_slot(x, OPEN_HERE)
            .or_else(|| self.loose_successors(group)[0]);
        let closed = self.loose_successors(group)[1];
        [opened, closed]
    }

    /// Whether the labels may all be closed: every tracked one and every slot closed, and
    /// the loose group empty (or even).
    pub(super) fn all_closed(&self) -> bool {
        (self.loose == LooseCount::default() || self.loose == LooseCount::EVEN)
            && self.tracked.iter().all(|&w| w == 0)
            && self.slots.iter().all(|&(_, v)| v == CLOSED)
    }

    /// The state of label `x`'s slot, if it has one.
    pub(super) fn slot(&self, x: u8) -> Option<u8> {
        self.slots.iter().find(|s| s.0 == x).map(|s| s.1)
    }

    /// With label `x`'s slot in state `v` (made if it has none, freed if closed); `None` if
    /// every slot is used.
    pub(super) fn with_slot(&self, x: u8, v: u8) -> Option<Labels> {
        let mut out = *self;
        match out.slots.iter().position(|s| s.0 == x) {
            Some(i) => out.slots[i].1 = v,
            None => {
                let free = out.slots.iter().position(|s| s.0 == NO_SLOT)?;
                out.slots[free] = (x, v);
            }
        }
        if v == CLOSED {
            for s in &mut out.slots {
                if s.0 == x {
                    *s = (NO_SLOT, CLOSED);
                }
            }
        }
        out.slots.sort_unstable();
        Some(out)
    }

    /// The open labels that may not close on the current atom nor on the atom after it
    /// (open on this atom, `OPEN_HERE`, or on an atom bonded to it, `OPEN_BONDED`), every
    /// other label closed: what a branch opened now keeps of its anchor (see
    /// [`Labels::after_branch`]). The loose group's parity is not kept.
    pub(super) fn near(&self) -> Labels {
        let mut out = Labels::default();
        for (o, &w) in out.tracked.iter_mut().zip(&self.tracked) {
            let low = w & LOW_BITS;
            *o = w & (low | low << 1);
        }
        let mut n = 0;
        for &(x, v) in &self.slots {
            if x != NO_SLOT && v & 1 == 1 {
                out.slots[n] = (x, v);
                n += 1;
            }
        }
        if !self.loose.is_parity() {
            out.loose = LooseCount {
                here: self.loose.here,
                bonded: self.loose.bonded,
                before: 0,
            };
        }
        out
    }

    /// After the end of a branch whose anchor kept `near` ([`Labels::near`], updated since):
    /// the current atom is the anchor again, so a label open near it is as `near` says, and
    /// every other open label was opened further back (the branch's labels and the anchor's
    /// older ones alike).
    pub(super) fn after_branch(&self, near: &Labels) -> Labels {
        let mut out = self.after_break();
        for (o, &w) in out.tracked.iter_mut().zip(&near.tracked) {
            let low = w & LOW_BITS;
            *o = (*o & !(low | low << 1)) | w;
        }
        for &(x, v) in &near.slots {
            if x != NO_SLOT {
                if let Some(l) = out.with_slot(x, v) {
                    out = l;
                }
            }
        }
        let (l, n) = (out.loose, near.loose);
        if !l.is_parity() && n.here + n.bonded > 0 {
            out.loose = LooseCount {
                here: n.here,
                bonded: n.bonded,
                before: l.before.saturating_sub(n.here + n.bonded),
            };
        }
        out
    }

    /// With label `who` in state `v`. A counted loose label opened near (`OPEN_BONDED`) adds
    /// to the group's count; one closed empties it (it holds at most one open label,
    /// [`MAX_COUNTED_OPEN`], so the one closed is that one).
    pub(super) fn with(&self, who: Who, v: u8) -> Labels {
        // A closed loose label empties the count only while it counts one label at most.
        const _: () = assert!(MAX_COUNTED_OPEN == 1);
        let mut out = *self;
        match who {
            Who::Tracked(k) => out.set(k, v),
            Who::Slot(x) => {
                if v != CLOSED || out.slot(x).is_some() {
                    out = out.with_slot(x, v).unwrap_or(out);
                }
            }
            Who::Loose if v == CLOSED => out.loose = LooseCount::default(),
            Who::Loose if v == OPEN_BONDED => out.loose.bonded += 1,
            Who::Loose => {}
        }
        out
    }
}
