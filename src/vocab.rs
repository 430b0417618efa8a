//! A model's vocabulary as the checker sees it: every id's exact bytes, and what the id may do
//! in an output.
//!
//! A diffusion model puts exactly one vocabulary id in each position, so token-level checking
//! ([`crate::checker::Checker::check_tokens`]) and valid-token masks
//! ([`crate::checker::Checker::allowed`]) need the bytes of every id and three kinds of id:
//! text (its bytes join the output), end of output (EOS, end of turn: the output ends before
//! it), and forbidden (special tokens other than those, ids with no bytes such as the padding
//! of a logits row past the tokenizer). This module reads them from a Hugging Face
//! `tokenizer.json` with serde alone, so the checker needs neither the `tokenizers` crate nor a
//! model. It is built once per tokenizer and shared (it is immutable): the per-grammar
//! structures that read it are built by the checker.
//!
//! Exact bytes: in a byte-level BPE vocabulary (GPT-2, Qwen, LLaDA) each character of a token
//! stands for one byte through the GPT-2 byte-to-unicode alphabet, which is inverted here, so a
//! token that holds half of a UTF-8 sequence yields exactly those bytes. SentencePiece-style
//! vocabularies map `<0xHH>` to byte HH and `▁` to a space. Added tokens yield their content.

use std::io::Read;
use std::path::Path;

use serde_json::Value;
use thiserror::Error;

/// A vocabulary id.
pub type TokenId = u32;

/// The largest vocabulary accepted (ids are `u32`; real vocabularies are below 300k).
pub const MAX_VOCAB: usize = 1 << 24;

/// The largest `tokenizer.json` read, in bytes (128 MiB): real ones are at most tens of MiB
/// (Qwen's is 7 MiB), and a file that never ends (`/dev/zero`) must not be read whole.
pub const MAX_TOKENIZER_BYTES: u64 = 128 << 20;

/// Reads the file at `path` whole, refusing one larger than `limit` bytes with an error that
/// gives the limit and `what` the file is (e.g. "tokenizer files"). A regular file is sized
/// before it is read; anything else (a pipe, `/dev/zero`) is read up to one byte past the
/// limit, never further. Errors are the I/O error's own (a missing file, a directory), or one
/// of kind [`std::io::ErrorKind::FileTooLarge`]; callers add the path.
pub(crate) fn read_bounded(path: &Path, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("larger than {}, the limit for {what}", human_bytes(limit)),
        )
    };
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let mut buf = Vec::new();
    if meta.is_file() {
        if meta.len() > limit {
            return Err(too_large());
        }
        // One byte more, so that reading to the end needs no second allocation.
        buf.reserve_exact(meta.len() as usize + 1);
    }
    file.take(limit.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(buf)
}

/// `n` bytes in words: `64 MiB`, `1 GiB`, or a count of bytes.
pub(crate) fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// Names of end-of-output tokens recognized when none are given, across model families.
pub const EOS_NAMES: [&str; 10] = [
    "<|endoftext|>",
    "<|eos|>",
    "</s>",
    "<eos>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|EOT|>",
    "<|end▁of▁sentence|>",
];

/// What an id may do in an output.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// Its bytes join the output.
    Text,
    /// The output ends before it (EOS, end of turn).
    Eos,
    /// It may never appear in an output (other special tokens, ids with no bytes).
    Forbidden,
}

/// Why a vocabulary could not be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum VocabError {
    /// The document is not JSON, or lacks the parts of a `tokenizer.json` that are read.
    #[error("{source_name}: not a tokenizer.json: {reason}")]
    NotATokenizer {
        /// The name the caller gave the document (usually its path).
        source_name: String,
        /// What is missing or malformed.
        reason: String,
    },
    /// None of the end-of-output names is a token of the vocabulary.
    #[error("{source_name}: no end-of-output token (looked for {looked_for}); name one")]
    NoEos {
        /// The name the caller gave the document.
        source_name: String,
        /// The names looked for, comma-separated.
        looked_for: String,
    },
    /// The largest id is [`MAX_VOCAB`] or more.
    #[error("{source_name}: the vocabulary has {size} ids; at most {MAX_VOCAB} are supported")]
    TooLarge {
        /// The name the caller gave the document.
        source_name: String,
        /// The vocabulary's size: one past its largest id.
        size: usize,
    },
    /// The file could not be read: missing, a directory, or larger than
    /// [`MAX_TOKENIZER_BYTES`] (a file that never ends, `/dev/zero`, is read no further).
    #[error("cannot read tokenizer {path}: {reason}")]
    Read {
        /// The path given.
        path: String,
        /// The I/O error, or the limit it broke.
        reason: String,
    },
    /// Two tokens of `model.vocab` share an id.
    #[error("{source_name}: token id {id} appears twice")]
    DuplicateId {
        /// The name the caller gave the document.
        source_name: String,
        /// The shared id.
        id: u64,
    },
}

/// Every id's bytes and kind. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Vocabulary {
    bytes: Vec<Vec<u8>>,
    kinds: Vec<TokenKind>,
    longest: usize,
    every_byte: bool,
}

impl Vocabulary {
    /// A vocabulary from explicit parts: `bytes[id]`, the end-of-output ids, and ids that may
    /// never appear. An id with no bytes that is not EOS is forbidden too.
    pub fn new(bytes: Vec<Vec<u8>>, eos: &[TokenId], forbidden: &[TokenId]) -> Vocabulary {
        let mut kinds: Vec<TokenKind> = bytes
            .iter()
            .map(|b| {
                if b.is_empty() {
                    TokenKind::Forbidden
                } else {
                    TokenKind::Text
                }
            })
            .collect();
        for &id in forbidden {
            if let Some(k) = kinds.get_mut(id as usize) {
                *k = TokenKind::Forbidden;
            }
        }
        for &id in eos {
            if let Some(k) = kinds.get_mut(id as usize) {
                *k = TokenKind::Eos;
            }
        }
        let longest = bytes
            .iter()
            .zip(&kinds)
            .filter(|(_, &k)| k == TokenKind::Text)
            .map(|(b, _)| b.len())
            .max()
            .unwrap_or(0);
        let mut single = [false; 256];
        for (b, &k) in bytes.iter().zip(&kinds) {
            if let ([byte], TokenKind::Text) = (b.as_slice(), k) {
                single[*byte as usize] = true;
            }
        }
        Vocabulary {
            every_byte: single.iter().all(|&s| s),
            bytes,
            kinds,
            longest,
        }
    }

    /// [`Vocabulary::from_tokenizer_json`] on the file at `path`, read under
    /// [`MAX_TOKENIZER_BYTES`].
    pub fn from_tokenizer_file(path: &Path, eos: &[&str]) -> Result<Vocabulary, VocabError> {
        let name = path.display().to_string();
        let json = read_bounded(path, MAX_TOKENIZER_BYTES, "tokenizer files").map_err(|e| {
            VocabError::Read {
                path: name.clone(),
                reason: e.to_string(),
            }
        })?;
        Vocabulary::from_tokenizer_json(&json, eos, &name)
    }

    /// Reads a Hugging Face `tokenizer.json`; `source_name` names it in errors. End-of-output
    /// ids are the special tokens named in `eos` (or [`EOS_NAMES`] when `eos` is empty); it is
    /// an error if there are none. Other special tokens are forbidden.
    pub fn from_tokenizer_json(
        json: &[u8],
        eos: &[&str],
        source_name: &str,
    ) -> Result<Vocabulary, VocabError> {
        let bad = |reason: &str| VocabError::NotATokenizer {
            source_name: source_name.to_string(),
            reason: reason.to_string(),
        };
        let doc: Value = serde_json::from_slice(json).map_err(|e| bad(&e.to_string()))?;
        let model = doc
            .get("model")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no `model` object"))?;
        let regular: Vec<(u64, String)> = match model.get("vocab") {
            // BPE, WordPiece, WordLevel: {token: id}.
            Some(Value::Object(map)) => map
                .iter()
                .map(|(t, id)| {
                    id.as_u64()
                        .map(|id| (id, t.clone()))
                        .ok_or_else(|| bad(&format!("model.vocab[{t:?}] is not an id")))
                })
                .collect::<Result<_, _>>()?,
            // Unigram: [[piece, score], ...], ids in order.
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    item.get(0)
                        .and_then(Value::as_str)
                        .map(|t| (i as u64, t.to_string()))
                        .ok_or_else(|| bad(&format!("model.vocab[{i}] is not [piece, score]")))
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(bad("no `model.vocab`")),
        };
        let mut added: Vec<(u64, String, bool)> = Vec::new();
        if let Some(items) = doc.get("added_tokens").and_then(Value::as_array) {
            for (i, item) in items.iter().enumerate() {
                let id = item.get("id").and_then(Value::as_u64);
                let content = item.get("content").and_then(Value::as_str);
                let (Some(id), Some(content)) = (id, content) else {
                    return Err(bad(&format!("added_tokens[{i}] has no `id` or `content`")));
                };
                let special = item
                    .get("special")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                added.push((id, content.to_string(), special));
            }
        }
        let size = regular
            .iter()
            .map(|(id, _)| id)
            .chain(added.iter().map(|(id, _, _)| id))
            .map(|&id| id.saturating_add(1))
            .max()
            .unwrap_or(0);
        if size > MAX_VOCAB as u64 {
            return Err(VocabError::TooLarge {
                source_name: source_name.to_string(),
                size: size as usize,
            });
        }
        let size = size as usize;
        let inv = char_to_byte();
        let byte_level = regular.iter().all(|(_, t)| byte_level(t, &inv).is_some());
        let mut bytes = vec![Vec::new(); size];
        let mut seen = vec![false; size];
        for (id, t) in &regular {
            if std::mem::replace(&mut seen[*id as usize], true) {
                return Err(VocabError::DuplicateId {
                    source_name: source_name.to_string(),
                    id: *id,
                });
            }
            bytes[*id as usize] = if byte_level {
                byte_level_bytes(t, &inv)
            } else {
                sentencepiece(t)
            };
        }
        let names: Vec<&str> = if eos.is_empty() {
            EOS_NAMES.to_vec()
        } else {
            eos.to_vec()
        };
        let mut eos_ids: Vec<TokenId> = regular
            .iter()
            .filter(|(_, t)| names.contains(&t.as_str()))
            .map(|&(id, _)| id as TokenId)
            .collect();
        let mut forbidden = Vec::new();
        for (id, content, special) in &added {
            bytes[*id as usize] = content.as_bytes().to_vec();
            if names.contains(&content.as_str()) {
                eos_ids.push(*id as TokenId);
            } else if *special {
                forbidden.push(*id as TokenId);
            }
        }
        if eos_ids.is_empty() {
            return Err(VocabError::NoEos {
                source_name: source_name.to_string(),
                looked_for: names.join(", "),
            });
        }
        Ok(Vocabulary::new(bytes, &eos_ids, &forbidden))
    }

    /// Grows the vocabulary to `size` ids (a model's logits row may be wider than its
    /// tokenizer); the new ids are forbidden.
    pub fn pad_to(&mut self, size: usize) {
        if size > self.bytes.len() {
            self.bytes.resize(size, Vec::new());
            self.kinds.resize(size, TokenKind::Forbidden);
        }
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the vocabulary has no ids.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes of `id` (empty outside the vocabulary).
    pub fn bytes(&self, id: TokenId) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// The kind of `id`; `None` outside the vocabulary.
    pub fn kind(&self, id: TokenId) -> Option<TokenKind> {
        self.kinds.get(id as usize).copied()
    }

    /// The end-of-output ids.
    pub fn eos_ids(&self) -> impl Iterator<Item = TokenId> + '_ {
        self.ids_of(TokenKind::Eos)
    }

    /// The ids whose bytes join the output.
    pub fn text_ids(&self) -> impl Iterator<Item = TokenId> + '_ {
        self.ids_of(TokenKind::Text)
    }

    fn ids_of(&self, kind: TokenKind) -> impl Iterator<Item = TokenId> + '_ {
        self.kinds
            .iter()
            .enumerate()
            .filter(move |(_, &k)| k == kind)
            .map(|(i, _)| i as TokenId)
    }

    /// The length in bytes of the longest text token.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Whether each of the 256 bytes is a text token of its own (byte-level BPE vocabularies:
    /// Qwen's, GPT-2's). Then one token followed by any text is exactly any non-empty text.
    pub fn writes_every_byte(&self) -> bool {
        self.every_byte
    }
}

/// A set of vocabulary ids in the layout samplers use: 32-bit words, id `i` is bit `i % 32` of
/// word `i / 32`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TokenMask {
    words: Vec<u32>,
    len: usize,
}

impl TokenMask {
    /// The empty set over a vocabulary of `len` ids.
    pub fn new(len: usize) -> TokenMask {
        TokenMask {
            words: vec![0; len.div_ceil(32)],
            len,
        }
    }

    /// Adds `id`; ids outside the vocabulary are ignored.
    pub fn insert(&mut self, id: TokenId) {
        if (id as usize) < self.len {
            self.words[id as usize / 32] |= 1 << (id % 32);
        }
    }

    /// Takes `id` out; ids outside the vocabulary are ignored.
    pub fn remove(&mut self, id: TokenId) {
        if (id as usize) < self.len {
            self.words[id as usize / 32] &= !(1 << (id % 32));
        }
    }

    /// Whether `id` is in the set (never for ids outside the vocabulary).
    pub fn contains(&self, id: TokenId) -> bool {
        (id as usize) < self.len && self.words[id as usize / 32] & (1 << (id % 32)) != 0
    }

    /// Adds every id of `other`, a set over a vocabulary of the same size.
    pub fn union_with(&mut self, other: &TokenMask) {
        debug_assert_eq!(self.len, other.len);
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            *w |= o;
        }
    }

    /// The number of ids in the set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no ids.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The ids in the set, ascending.
    pub fn ids(&self) -> impl Iterator<Item = TokenId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros();
                w &= w - 1;
                Some(i as TokenId * 32 + bit)
            })
        })
    }

    /// The words of the bitset.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// The size of the vocabulary the set ranges over.
    pub fn vocab_len(&self) -> usize {
        self.len
    }
}

/// The GPT-2 byte-to-unicode alphabet: the character that stands for each byte.
pub fn byte_to_char() -> [char; 256] {
    let mut out = ['\0'; 256];
    let mut extra = 0u32;
    for b in 0..256u32 {
        let printable =
            (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        out[b as usize] = if printable {
            char::from_u32(b).expect("latin-1")
        } else {
            extra += 1;
            char::from_u32(255 + extra).expect("valid code point")
        };
    }
    out
}

/// The inverse alphabet, indexed by code point (all below 0x144).
pub(crate) fn char_to_byte() -> Vec<Option<u8>> {
    let mut inv = vec![None; 0x144];
    for (b, c) in byte_to_char().iter().enumerate() {
        inv[*c as usize] = Some(b as u8);
    }
    inv
}

/// The bytes a byte-level BPE token stands for; `None` if a character is not in the alphabet.
pub(crate) fn byte_level(token: &str, inv: &[Option<u8>]) -> Option<Vec<u8>> {
    token
        .chars()
        .map(|c| inv.get(c as usize).copied().flatten())
        .collect()
}

fn byte_level_bytes(token: &str, inv: &[Option<u8>]) -> Vec<u8> {
    byte_level(token, inv).expect("every token was checked to be byte-level")
}

/// The bytes of a SentencePiece-style token: `<0xHH>` is byte HH, `▁` a space.
pub(crate) fn sentencepiece(token: &str) -> Vec<u8> {
    let b = token.as_bytes();
    if b.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
        if let Ok(v) = u8::from_str_radix(&token[3..5], 16) {
            return vec![v];
        }
    }
    token.replace('\u{2581}', " ").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_reads_stop_at_the_limit() {
        let dir = std::env::temp_dir().join(format!("lacuna-vocab-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ten.txt");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read_bounded(&file, 10, "tests").unwrap(), b"0123456789");
        let e = read_bounded(&file, 9, "tests").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "larger than 9 bytes, the limit for tests");
        // A stream that never ends is read one byte past the limit, no further.
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20, "tests").unwrap_err();
        assert_eq!(e.to_string(), "larger than 1 MiB, the limit for tests");
        assert!(read_bounded(&dir, 10, "tests").is_err(), "a directory");
        assert!(read_bounded(&dir.join("missing"), 10, "tests").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn masks_use_the_sampler_layout() {
        let mut m = TokenMask::new(70);
        for id in [0, 31, 32, 69, 70] {
            m.insert(id);
        }
        assert_eq!(m.words().len(), 3);
        assert_eq!(m.words()[0], 1 | (1 << 31));
        assert_eq!(m.words()[1], 1);
        assert_eq!(m.words()[2], 1 << 5);
        assert_eq!(m.ids().collect::<Vec<_>>(), [0, 31, 32, 69]);
        assert_eq!(m.count(), 4);
        assert!(!m.contains(70));
    }

    #[test]
    fn a_tokenizer_json_gives_bytes_and_kinds() {
        let json = r#"{"model": {"type": "BPE", "vocab": {"a": 0, "Ġb": 1, "Ã©": 2}},
            "added_tokens": [{"id": 3, "content": "<|endoftext|>", "special": true},
                             {"id": 5, "content": "<|pad|>", "special": true},
                             {"id": 6, "content": "<tool>", "special": false}]}"#;
        let v = Vocabulary::from_tokenizer_json(json.as_bytes(), &[], "t.json").unwrap();
        assert_eq!(v.len(), 7);
        assert_eq!(v.bytes(1), b" b");
        assert_eq!(v.bytes(2), "é".as_bytes());
        assert_eq!(v.kind(3), Some(TokenKind::Eos));
        assert_eq!(v.kind(4), Some(TokenKind::Forbidden), "no bytes");
        assert_eq!(v.kind(5), Some(TokenKind::Forbidden), "special");
        assert_eq!(v.kind(6), Some(TokenKind::Text));
        assert_eq!(v.longest(), 6);
    }

    #[test]
    fn bad_tokenizers_are_named() {
        let e = Vocabulary::from_tokenizer_json(b"[1, 2]", &[], "x.json").unwrap_err();
        assert!(
            e.to_string().starts_with("x.json: not a tokenizer.json"),
            "{e}"
        );
        let no_eos = r#"{"model": {"vocab": {"a": 0}}}"#;
        let e = Vocabulary::from_tokenizer_json(no_eos.as_bytes(), &[], "y.json").unwrap_err();
        assert!(matches!(e, VocabError::NoEos { .. }), "{e}");
        let huge = r#"{"model": {"vocab": {"a": 4294967295}}, "added_tokens": []}"#;
        let e = Vocabulary::from_tokenizer_json(huge.as_bytes(), &["a"], "z.json").unwrap_err();
        assert!(matches!(e, VocabError::TooLarge { .. }), "{e}");
    }
}
