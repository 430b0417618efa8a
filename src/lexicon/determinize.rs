//! The subset construction of the lexer's DFA, straight from regex-automata's Thompson NFA
//! into the lexicon's dense table.
//!
//! Why by hand: regex-automata's dense determinizer is general (look-around, unanchored and
//! per-pattern starts, leftmost match semantics, quit bytes) and pays for it per transition;
//! on a JSON Schema's dozen terminals it took 0.8–0.9 ms of the 1.4 ms a checker costs to
//! build, the single largest share (`cargo run --release --example schema_compile`). The lexer
//! needs much less: anchored starts, every match (`MatchKind::All`), no look-around. So this
//! module determinizes exactly that case, and [`determinize`] answers `None` for anything else
//! (an NFA with look-around, or a DFA past its size limit), which the caller then builds with
//! regex-automata as before. `tests` hold the two to the same lexer, on every input, on the
//! shipped grammars, on schemas and on generated grammars.
//!
//! A DFA state is the set of the NFA's byte-consuming and match states reached, together with
//! whether the set before the last byte matched — the distinction regex-automata's states
//! carry, since it reports a match one byte late. The lexer would be the same without it (a
//! state where a token just ended and one where none did would merge), but the token walks
//! of masks group tokens by the states they pass, and merging them made JSON masks slower:
//! `cargo run --release --example mask_block -- json infill` took 4.8 s for its block instead
//! of 3.5 s, on 5,217 token groups instead of 6,810.

use hashbrown::HashMap;
use regex_automata::nfa::thompson::{State, NFA};
use regex_automata::util::primitives::StateID as NfaStateId;

use super::table::{StateId, DEAD};

/// The lexer DFA as the lexicon tabulates it: state 0 dead, state 1 the start, states
/// numbered in the order a breadth-first walk over the byte classes first meets them; a state
/// after a match whose set is empty is kept (no winners, no future), as regex-automata keeps it.
pub(super) struct Determinized {
    /// `classes[b]`: the class of byte `b`; classes are contiguous byte ranges, in order.
    pub classes: [u8; 256],
    pub num_classes: usize,
    /// `trans[s * num_classes + c]`.
    pub trans: Vec<StateId>,
    /// For each state, the patterns (indices into the NFA's patterns) that match the text read
    /// so far, ascending.
    pub matches: Vec<Vec<u32>>,
}

/// The lexer DFA of `nfa`, or `None` where this construction does not apply: an NFA with
/// look-around, or more than `size_limit` bytes of table and state sets (regex-automata, under
/// its own limits, then builds the DFA or names what is too large).
pub(super) fn determinize(nfa: &NFA, size_limit: usize) -> Option<Determinized> {
    if !nfa.look_set_any().is_empty() {
        return None;
    }
    let states = nfa.states();
    let bc = nfa.byte_classes();
    let mut classes = [0u8; 256];
    for b in 0..=255u8 {
        classes[b as usize] = bc.get(b);
    }
    let num_classes = bc.alphabet_len() - 1; // the last class is end-of-input
    let mut closure = Closure::new(states.len());
    let mut ids: HashMap<(bool, Box<[u32]>), StateId> = HashMap::new();
    let mut sets: Vec<Box<[u32]>> = vec![Box::new([])];
    let mut matches: Vec<Vec<u32>> = vec![Vec::new()];
    let mut bytes = 0usize;

    let start: Box<[u32]> = closure
        .of(states, [nfa.start_anchored()].into_iter())?
        .into();
    ids.insert((false, start.clone()), 1);
    bytes += start.len() * 4;
    sets.push(start);
    let mut trans = vec![DEAD; 2 * num_classes];
    // For each class, the NFA states its byte leads to from the current DFA state.
    let mut targets: Vec<Vec<NfaStateId>> = vec![Vec::new(); num_classes];
    // The DFA state of each set of NFA states a byte leads to (its kernel, before the epsilon
    // closure): far fewer kernels than transitions (a JSON Schema's lexer: 1,390 kernels for
    // 33,407 closures), and a kernel is a few states where its closure is dozens.
    // Most kernels are one NFA state: those are looked up by index, without hashing
    // (`UNSEEN` where not met yet).
    let mut kernels: HashMap<(bool, Box<[u32]>), StateId> = HashMap::new();
    let mut single_kernels: Vec<[StateId; 2]> = vec![[UNSEEN; 2]; states.len()];
    let mut kernel: Vec<u32> = Vec::new();
    let mut i = 1;
    while i < sets.len() {
        targets.iter_mut().for_each(Vec::clear);
        matches.push(patterns_matched(states, &sets[i]));
        // Part of every successor's identity (see the module docs); an empty successor of a
        // matching set is kept too.
        let source_matches = !matches[i].is_empty();
        for &s in sets[i].iter() {
            let mut add = |lo: u8, hi: u8, next: NfaStateId| {
                for c in classes[lo as usize]..=classes[hi as usize] {
                    targets[c as usize].push(next);
                }
            };
            match &states[s as usize] {
                State::ByteRange { trans } => add(trans.start, trans.end, trans.next),
                State::Sparse(sparse) => {
                    for t in sparse.transitions.iter() {
                        add(t.start, t.end, t.next);
                    }
                }
                State::Dense(dense) => {
                    for (b, &next) in dense.transitions.iter().enumerate() {
                        if next != NfaStateId::ZERO {
                            add(b as u8, b as u8, next);
                        }
                    }
                }
                _ => {}
            }
        }
        // Adjacent classes often lead to the same NFA states (a range spans several classes):
        // their closure is computed once.
        let mut previous: Option<(usize, StateId)> = None;
        for c in 0..num_classes {
            if targets[c].is_empty() && !source_matches {
                continue;
            }
            if let Some((p, id)) = previous {
                if targets[p] == targets[c] {
                    trans[i * num_classes + c] = id;
                    continue;
                }
            }
            kernel.clear();
            kernel.extend(targets[c].iter().map(|s| s.as_u32()));
            kernel.sort_unstable();
            kernel.dedup();
            let known = match kernel[..] {
                [one] => Some(single_kernels[one as usize][source_matches as usize])
                    .filter(|&id| id != UNSEEN),
                _ => kernels.get(&SetKey(source_matches, &kernel)).copied(),
            };
            if let Some(id) = known {
                trans[i * num_classes + c] = id;
                previous = Some((c, id));
                continue;
            }
            // Kernels kept by hashing count against the size limit too.
            if kernel.len() > 1 {
                bytes += kernel.len() * 4 + 32;
                if bytes > size_limit {
                    return None;
                }
            }
            let set = closure.of(states, targets[c].iter().copied())?;
            if set.is_empty() && !source_matches {
                remember(
                    &mut kernels,
                    &mut single_kernels,
                    source_matches,
                    &kernel,
                    DEAD,
                );
                previous = Some((c, DEAD));
                continue;
            }
            let next = match ids.get(&SetKey(source_matches, set)) {
                Some(&id) => id,
                None => {
                    let id = sets.len() as StateId;
                    bytes += set.len() * 4 + num_classes * 4 + 48;
                    if bytes > size_limit {
                        return None;
                    }
                    let set: Box<[u32]> = set.into();
                    ids.insert((source_matches, set.clone()), id);
                    sets.push(set);
                    trans.extend(std::iter::repeat_n(DEAD, num_classes));
                    id
                }
            };
            remember(
                &mut kernels,
                &mut single_kernels,
                source_matches,
                &kernel,
                next,
            );
            trans[i * num_classes + c] = next;
            previous = Some((c, next));
        }
        i += 1;
    }
    Some(Determinized {
        classes,
        num_classes,
        trans,
        matches,
    })
}

/// Not a state: a kernel not met yet.
const UNSEEN: StateId = StateId::MAX;

/// Records the DFA state a kernel leads to.
fn remember(
    kernels: &mut HashMap<(bool, Box<[u32]>), StateId>,
    single_kernels: &mut [[StateId; 2]],
    source_matches: bool,
    kernel: &[u32],
    id: StateId,
) {
    match kernel {
        [one] => single_kernels[*one as usize][source_matches as usize] = id,
        _ => {
            kernels.insert((source_matches, kernel.into()), id);
        }
    }
}

/// The patterns whose match state is in `set`, ascending.
fn patterns_matched(states: &[State], set: &[u32]) -> Vec<u32> {
    let mut m: Vec<u32> = set
        .iter()
        .filter_map(|&s| match states[s as usize] {
            State::Match { pattern_id } => Some(pattern_id.as_u32()),
            _ => None,
        })
        .collect();
    m.sort_unstable();
    m.dedup();
    m
}

/// Epsilon closures, with the scratch space reused from one to the next.
struct Closure {
    /// `seen[s] == stamp`: state `s` is in the closure being built.
    seen: Vec<u32>,
    stamp: u32,
    stack: Vec<NfaStateId>,
    out: Vec<u32>,
}

impl Closure {
    fn new(num_states: usize) -> Closure {
        Closure {
            seen: vec![0; num_states],
            stamp: 0,
            stack: Vec::new(),
            out: Vec::new(),
        }
    }

    /// The byte-consuming and match states reachable from `from` by epsilon moves, ascending
    /// (a set's canonical form). `None` on a look-around state, which this construction does
    /// not handle.
    fn of(&mut self, states: &[State], from: impl Iterator<Item = NfaStateId>) -> Option<&[u32]> {
        self.stamp += 1;
        if self.stamp == u32::MAX {
            self.seen.iter_mut().for_each(|x| *x = 0);
            self.stamp = 1;
        }
        self.out.clear();
        self.stack.extend(from);
        while let Some(s) = self.stack.pop() {
            let i = s.as_usize();
            if self.seen[i] == self.stamp {
                continue;
            }
            self.seen[i] = self.stamp;
            match &states[i] {
                State::ByteRange { .. }
                | State::Sparse(_)
                | State::Dense(_)
                | State::Match { .. } => self.out.push(s.as_u32()),
                State::Union { alternates } => self.stack.extend(alternates.iter().rev()),
                State::BinaryUnion { alt1, alt2 } => {
                    self.stack.push(*alt2);
                    self.stack.push(*alt1);
                }
                State::Capture { next, .. } => self.stack.push(*next),
                State::Fail => {}
                State::Look { .. } => {
                    self.stack.clear();
                    return None;
                }
            }
        }
        self.out.sort_unstable();
        Some(&self.out)
    }
}

/// A borrowed form of a DFA state's key (its set as a slice), so a lookup copies nothing.
#[derive(Hash)]
struct SetKey<'a>(bool, &'a [u32]);

impl hashbrown::Equivalent<(bool, Box<[u32]>)> for SetKey<'_> {
    fn equivalent(&self, key: &(bool, Box<[u32]>)) -> bool {
        self.0 == key.0 && self.1 == &key.1[..]
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::grammar::{lark, schema, spec, Grammar};
    use crate::lexicon::{Lexicon, DEAD};

    /// Whether `s` can still end a token: not dead, and a match now or after more bytes.
    fn live(lx: &Lexicon, s: crate::lexicon::StateId) -> bool {
        s != DEAD && (!lx.winners(s).is_empty() || lx.extendable(s))
    }

    /// Walks the two DFAs in step from their starts over every byte: each pair of states
    /// reached must agree on its winners, on whether it can be extended, and on whether it is
    /// live. This is equality of the two lexers on every input, not on samples. (Both keep,
    /// after a match, states with no winners and no future; which of those each keeps need
    /// not agree, and no lexer tells them from the dead state.)
    fn assert_same_lexer(g: &Grammar) {
        let ours = Lexicon::new(g).unwrap();
        let reference = Lexicon::new_with_regex_automata(g);
        assert!(ours.num_states() <= reference.num_states());
        let mut seen = hashbrown::HashSet::new();
        let mut stack = vec![(ours.start(), reference.start())];
        seen.insert(stack[0]);
        while let Some((x, y)) = stack.pop() {
            assert_eq!(ours.winners(x), reference.winners(y));
            assert_eq!(ours.extendable(x), reference.extendable(y));
            for b in 0..=255u8 {
                let (nx, ny) = (ours.next(x, b), reference.next(y, b));
                let alive = live(&ours, nx);
                assert_eq!(alive, live(&reference, ny), "byte {b:#x}");
                if alive && seen.insert((nx, ny)) {
                    stack.push((nx, ny));
                }
            }
        }
    }

    #[test]
    fn the_shipped_grammars_lex_as_with_regex_automata() {
        for (name, _) in spec::SHIPPED {
            assert_same_lexer(&spec::load(name).unwrap());
        }
    }

    #[test]
    fn schema_grammars_lex_as_with_regex_automata() {
        let schemas = [
            r#"{"type": "object", "properties": {"name": {"type": "string", "maxLength": 40},
                "when": {"type": "string", "format": "date-time"},
                "id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]+$"},
                "tag": {"enum": ["a", "é", "a\"b", 3, null]},
                "n": {"type": "integer", "minimum": -5, "maximum": 300},
                "x": {"type": "number"}}, "required": ["name"]}"#,
            r#"{"type": "array", "items": {"type": "string", "pattern": "ü+|\\d{2,3}"}}"#,
            r#"{"type": "string", "format": "email"}"#,
        ];
        for s in schemas {
            let v: serde_json::Value = serde_json::from_str(s).unwrap();
            let c = schema::compile(&v, &schema::SchemaOptions::default()).unwrap();
            assert_same_lexer(&c.grammar);
        }
    }

    /// A regex over a small alphabet of ASCII, multi-byte and class atoms.
    fn regex() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            Just("a".to_string()),
            Just("b".to_string()),
            Just("é".to_string()),
            Just("[a-c]".to_string()),
            Just("[^a]".to_string()),
            Just("\\w".to_string()),
            Just("ab".to_string()),
        ];
        atom.prop_recursive(4, 16, 3, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("{x}{y}")),
                (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("(?:{x}|{y})")),
                inner.clone().prop_map(|x| format!("(?:{x})*")),
                inner.clone().prop_map(|x| format!("(?:{x})?")),
                (inner, 0..3u32, 0..3u32)
                    .prop_map(|(x, lo, extra)| format!("(?:{x}){{{lo},{}}}", lo + extra)),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Random terminals (literals and regexes, some ignored, some of higher priority) lex
        /// the same with either determinizer.
        #[test]
        fn random_terminals_lex_as_with_regex_automata(
            regexes in prop::collection::vec(regex(), 1..5),
            literal in "[ab]{1,3}",
            ignore_first in any::<bool>(),
            priority in 0..2i32,
        ) {
            let mut src = String::from("start: (L");
            for i in 0..regexes.len() {
                src.push_str(&format!(" | T{i}"));
            }
            src.push_str(")*\n");
            src.push_str(&format!("L.{priority}: \"{literal}\"\n"));
            for (i, r) in regexes.iter().enumerate() {
                // A last atom keeps the terminal from matching the empty string.
                src.push_str(&format!("T{i}: /(?:{r})(?:a|é|[b-d])/\n"));
            }
            if ignore_first {
                src.push_str("WS: /[ ]+/\n%ignore WS\n");
            }
            // Each terminal ends with an atom, so none matches the empty string: every such
            // grammar loads.
            assert_same_lexer(&lark::parse(&src, "random").unwrap());
        }
    }
}
