//! purr's syntax verdict on a SMILES: a reader that builds nothing. Shared by the SMILES corpus
//! test and the mask walks.

#![allow(dead_code)]

/// A follower that builds nothing: `read` with it gives purr's syntax verdict alone.
pub struct SyntaxOnly;

impl purr::walk::Follower for SyntaxOnly {
    fn root(&mut self, _: purr::feature::AtomKind) {}
    fn extend(&mut self, _: purr::feature::BondKind, _: purr::feature::AtomKind) {}
    fn join(&mut self, _: purr::feature::BondKind, _: purr::feature::Rnum) {}
    fn pop(&mut self, _: usize) {}
}

/// Whether purr reads `text` without a syntax error (ring bonds are not paired).
pub fn read_syntax(text: &str) -> Result<(), purr::read::Error> {
    purr::read::read(text, &mut SyntaxOnly, None)
}
