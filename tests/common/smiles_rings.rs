//! An independent reading of SMILES ring bonds for the tests (`ring_bonds`, `smiles_corpus`):
//! atoms, bonds, branches, dots and ring labels read with a stack into the molecule's graph,
//! sharing no code with lacuna. It refuses a ring left open, a ring from an atom to itself and
//! a ring bond that doubles a bond (RDKit's rules), or, under [`Rules::Checked`], all but the
//! last for a bond that is itself a ring bond, as `grammars/smiles.lark` documents. The text
//! must be a SMILES apart from its rings (every ring label after an atom).

#![allow(dead_code)]

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Rules {
    /// The molecule's graph: no ring to its own atom, no ring doubling a bond.
    Rdkit,
    /// What lacuna checks: those rules, but a ring bond may double another ring bond
    /// (`C12CC12`).
    Checked,
}

/// Whether the ring bonds of a grammatical SMILES `text` pair up under `rules`.
pub fn rings_pair_up(text: &str, rules: Rules) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    // Atom index of the last atom; the branch stack; whether the next atom is bonded to it.
    let mut last: Option<usize> = None;
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut bonded = true;
    let mut atoms = 0usize;
    // The bonds between atoms, each with whether it is a ring bond.
    let mut bonds: std::collections::HashMap<(usize, usize), bool> = Default::default();
    // Open labels: label → the atom it opened on.
    let mut open: std::collections::HashMap<String, usize> = Default::default();
    let key = |a: usize, c: usize| (a.min(c), a.max(c));
    while i < b.len() {
        let c = b[i];
        let label = match c {
            b'[' => {
                let end = i + text[i..].find(']').unwrap();
                i = end;
                None
            }
            b'0'..=b'9' => Some(text[i..i + 1].to_string()),
            b'%' => {
                let l = text[i..i + 3].to_string();
                i += 2;
                Some(l)
            }
            b'(' => {
                stack.push(last);
                i += 1;
                continue;
            }
            b')' => {
                last = stack.pop().unwrap();
                i += 1;
                continue;
            }
            b'.' => {
                bonded = false;
                i += 1;
                continue;
            }
            b'-' | b'=' | b'#' | b'$' | b':' | b'/' | b'\\' => {
                i += 1;
                continue;
            }
            _ => {
                // A bare atom: two letters for Br, Cl, At, Ts.
                if matches!(&text[i..(i + 2).min(text.len())], "Br" | "Cl" | "At" | "Ts") {
                    i += 1;
                }
                None
            }
        };
        match label {
            None => {
                // An atom.
                let a = atoms;
                atoms += 1;
                if let (Some(p), true) = (last, bonded) {
                    bonds.insert(key(p, a), false);
                }
                last = Some(a);
                bonded = true;
            }
            Some(l) => {
                let here = last.expect("a ring bond follows an atom");
                match open.remove(&l) {
                    None => {
                        open.insert(l, here);
                    }
                    Some(from) => {
                        let doubles = match bonds.get(&key(from, here)) {
                            None => false,
                            Some(&ring) => rules == Rules::Rdkit || !ring,
                        };
                        if from == here || doubles {
                            return false;
                        }
                        bonds.insert(key(from, here), true);
                    }
                }
            }
        }
        i += 1;
    }
    open.is_empty()
}
