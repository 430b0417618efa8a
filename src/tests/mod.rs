//! The core's own property tests: the normalizer, the emptiness search and the holey lexer
//! against brute-force oracles that share no code with them (`oracles`), and the checker's
//! routes on a real workload. They live in the crate because what they test is private.

mod checker_small;
mod counted_strings;
mod emptiness;
mod normalize;
mod oracles;
mod workload;
