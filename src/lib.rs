#![warn(missing_docs)]
//! lacuna: grammar-constrained decoding for diffusion and infilling language models.
//!
//! A diffusion model fills the positions of its output in any order. At every step lacuna
//! tells its sampler whether the partial output (a *canvas*: filled positions and masked ones)
//! can still be completed to a word of a context-free grammar, and exactly which tokens may
//! stand at a masked position. `DESIGN.md` describes the method; this page, the library's face.
//!
//! # The public face
//!
//! - [`grammar`]: a grammar from a spec ([`grammar::spec::load`]: `json`, `cpp`, `smiles`, a
//!   `.lark` file, a JSON Schema file), from Lark text ([`grammar::lark::parse`]), from a JSON
//!   Schema ([`grammar::schema::compile`]), or built in code ([`grammar::GrammarBuilder`]).
//! - [`canvas`]: text canvases ([`canvas::Canvas`]: bytes, masks, end of output), token
//!   canvases ([`canvas::tokens::TokenCanvas`]: ids and masks), and the JSON-lines formats of
//!   `lacuna check` and `lacuna mask`.
//! - [`vocab`]: a tokenizer's vocabulary: every id's bytes, its end-of-output ids, the ids that
//!   may never appear in an output.
//! - [`checker`]: the [`checker::Checker`] of one grammar: `check`, `complete`, the valid-token
//!   mask of a position (`allowed`), joint steps (`validate`, `commit`).
//! - [`deadline`]: a wall-clock deadline and a cancellation flag for any call of a checker.
//! - [`diffusion`] and [`train`] (feature `models`): LLaDA and Dream on candle, their samplers,
//!   generation under a constraint, and training small models.
//!
//! Everything else (the lexer over canvases, the emptiness search, the completion search) is
//! private: it changes as the method does.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `cli` | yes | the `lacuna` command (clap), and with it `embedded-model` |
//! | `embedded-model` | via `cli` | the 17 MB default model compiled in ([`diffusion::default_model`]) |
//! | `models` | via `cli` | [`diffusion`], [`train`]: candle, tokenizers |
//! | `cuda` | no | the models on NVIDIA GPUs |
//!
//! `cargo build --no-default-features` builds the core (grammars, canvases, vocabularies,
//! the checker) with none of candle, tokenizers, clap or the model. Every public type is
//! `Send` and `Sync`; a [`checker::Checker`] is `&mut` per call, so a worker thread owns one.
//!
//! # Untrusted input
//!
//! Every input lacuna reads may come from someone who wrote it carelessly or to break it:
//! grammar files, regexes inside them, JSON Schemas, canvas and token-canvas lines,
//! tokenizer files, model folders (config and safetensors), training files, command-line
//! arguments. Each is read under the limits below. An exhausted limit is an error that names
//! the limit and where the input broke it (file, line:column, JSON pointer, canvas line,
//! tensor), or, for a question about a canvas, the answer `unknown` (never a guess); never a
//! panic, a hang, or unbounded memory. A line-oriented command reports a bad line and goes on.
//!
//! # Limits
//!
//! | input | limit | value |
//! | --- | --- | --- |
//! | files read | a `.lark` or schema file / `tokenizer.json` / a model folder's JSON | 64 MiB / 128 MiB / 16 MiB |
//! | Lark grammar | nesting of groups | 64 levels |
//! | | repetition count (`~ n`, `~ n..m`) | 10,000 |
//! | | rule alternatives after expanding repetitions and templates | 500,000 |
//! | | one regex or literal | 1 MiB of text |
//! | every pattern (Lark, schema `pattern`) | Thompson NFA, counted repetitions written out | 16 MiB |
//! | | determinization memory (bounds its time too), DFA | 4 MiB, 256 MiB |
//! | every grammar | productions / terminals / lexical context tables | 500,000 / 32,768 / 256 MiB |
//! | | normalization's inlining / 2-gram sharing work (they stop early: the language is kept) | 2²² / 2²⁵ steps |
//! | all terminals together | lexer NFA / DFA | 64 MiB / 256 MiB |
//! | JSON Schema | nesting | 128 levels |
//! | | `$ref` / `allOf` expansions | 100,000 per schema |
//! | | `allOf` merge depth, `oneOf`/`anyOf` alternatives | 32 / 256 |
//! | | array positions written out (`minItems`, `prefixItems`) | 1,024 |
//! | | string length bounds written out (larger ones, and any beside a `pattern` or `format`, are counted by the lexer, up to 2³⁰) | 256 |
//! | | grammar rules | 120,000 |
//! | vocabulary | ids | 2²⁴ |
//! | a check ([`checker::Budgets`]) | search work | 4,000,000 items considered |
//! | | lexeme automaton of one canvas | 500,000 states |
//! | | lexer configurations and hole sets kept | 200,000 each (emptied at half) |
//! | | completion search | 2,000,000 nodes |
//! | | one mask | 512 checks, 16 × the search work, 2 s |
//! | | any call | the caller's [`deadline::Deadline`] |
//! | a checker's caches by chunk text | entries / key bytes | 24,576 / 64 MiB |
//! | `lacuna check`, `lacuna mask` | grammars kept per run | 16 (least recently used dropped) |
//! | | positions of a token canvas line | 131,072 (`--max-positions`) |
//! | | one input line | 64 MiB |
//! | | one line's work, once its grammar is loaded | `--timeout-ms` (none by default) |
//! | `lacuna generate` | `--length` + prompt | the model's context |
//! | | `--steps` | 1 to `--length` |
//! | `lacuna train` | corpus / one line / one prompt or answer | 1 GiB / 1 MiB / 16 KiB |
//! | | parameters / `--batch-tokens` / `--max-len` / `--minutes` | 2²⁸ / 2²⁰ / 8,192 / 10⁶ |

pub mod canvas;
pub mod checker;
#[cfg(feature = "cli")]
pub mod cli;
mod complete;
pub mod deadline;
#[cfg(feature = "models")]
pub mod diffusion;
#[cfg(feature = "models")]
mod fnv;
pub mod grammar;
mod holey;
pub mod infill;
mod intersect;
mod lexicon;
#[cfg(test)]
mod tests;
#[cfg(feature = "models")]
pub mod train;
pub mod vocab;

/// Not a stable API: the emptiness search on lexeme automata, exposed only for lacuna's own
/// micro-benchmarks (`cargo bench --features internals --bench core`).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::holey::{HoleyLexer, LexLimits};
    pub use crate::intersect::{Edge, LexemeDfa, Searcher, Verdict, DEFAULT_BUDGET};
    pub use crate::lexicon::Lexicon;
}
