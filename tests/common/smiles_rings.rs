//! An independent reading of SMILES ring bonds for the tests (`ring_bonds`, `smiles_corpus`):
//! atoms, bonds, branches, dots and ring labels read with a stack into the molecule's graph,
//! sharing no code with lacuna. It refuses what RDKit refuses: a ring left open, a ring from
//! an atom to itself, and a ring bond that doubles a bond, a ring bond included (`C1C1`,
//! `C12CC12`). The text must be a SMILES apart from its rings (every ring label after an atom).

#![allow(dead_code)]

/// Whether the ring bonds of a grammatical SMILES `text` pair up as RDKit requires.
pub fn rings_pair_up(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    // Atom index of the last atom; the branch stack; whether the next atom is bonded to it.
    let mut last: Option<usize> = None;
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut bonded = true;
    let mut atoms = 0usize;
    // The bonds between atoms.
    let mut bonds: std::collections::HashSet<(usize, usize)> = Default::default();
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
                    bonds.insert(key(p, a));
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
                        if from == here || !bonds.insert(key(from, here)) {
                            return false;
                        }
                    }
                }
            }
        }
        i += 1;
    }
    open.is_empty()
}
