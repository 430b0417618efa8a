//! The core's own property tests: the normalizer, the emptiness search and the holey lexer
//! against brute-force oracles that share no code with them (`oracles`), and the checker's
//! routes on a real workload. They live in the crate because what they test is private.

mod checker_small;
mod counted_strings;
mod emptiness;
mod normalize;
mod oracles;
mod workload;

/// A small seeded generator for unit tests that draw many tiny random cases in a loop
/// (xorshift64): `next(n)` is a number below `n`. Equal seeds draw equal cases.
pub(crate) fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

/// The text with holes between `parts` (`holey(&["{", "}"])` is `{`, a hole, `}`).
pub(crate) fn holey(parts: &[&str]) -> crate::canvas::HoleyText {
    crate::canvas::HoleyText {
        chunks: parts.iter().map(|p| p.as_bytes().to_vec()).collect(),
    }
}
