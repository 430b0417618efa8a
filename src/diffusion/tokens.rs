//! Tokenizer glue: `tokenizer.json` through the `tokenizers` crate, the exact bytes every
//! vocabulary id produces, the mask token, and the chat templates of both families.
//!
//! Exact bytes: in a byte-level BPE vocabulary (GPT-2, Qwen, LLaDA) every character of a token
//! stands for one byte through the GPT-2 byte-to-unicode alphabet, which is inverted here, so a
//! token that holds half of a UTF-8 sequence yields exactly those bytes. Vocabularies in the
//! SentencePiece style map `<0xHH>` to byte HH and `▁` to a space. Added and special tokens
//! yield their content.

use std::fmt;
use std::path::{Path, PathBuf};

use tokenizers::Tokenizer;

use super::error::{DiffusionError, Result};
use super::Family;

/// Names of mask tokens, tried in order when none is given: Dream's, LLaDA's.
pub const MASK_TOKEN_NAMES: [&str; 2] = ["<|mask|>", "<|mdm_mask|>"];

/// `tokenizer.json` at `path`, read within [`MAX_TOKENIZER_BYTES`] and parsed.
fn read_tokenizer(path: &Path) -> Result<Tokenizer> {
    let json =
        crate::vocab::read_bounded(path, MAX_TOKENIZER_BYTES, "tokenizer files").map_err(|e| {
            DiffusionError::Tokenizer {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
    parse_tokenizer(&json, path)
}

/// A `tokenizer.json` held in memory; `label` names it in errors.
fn parse_tokenizer(json: &[u8], label: &Path) -> Result<Tokenizer> {
    Tokenizer::from_bytes(json).map_err(|e| DiffusionError::Tokenizer {
        path: label.to_path_buf(),
        reason: e.to_string(),
    })
}

/// A tokenizer with the exact bytes of every id.
///
/// `Debug` shows where it came from and its sizes, not its tables.
pub struct Tokens {
    tokenizer: Tokenizer,
    bytes: Vec<Vec<u8>>,
    special: Vec<bool>,
    mask_id: u32,
    path: PathBuf,
}

pub use crate::vocab::byte_to_char;
use crate::vocab::{byte_level, char_to_byte, sentencepiece, MAX_TOKENIZER_BYTES, MAX_VOCAB};

impl Tokens {
    /// Loads `tokenizer.json`; the mask token is the first of [`MASK_TOKEN_NAMES`] present.
    pub fn load(path: &Path) -> Result<Tokens> {
        Self::load_with_mask(path, None)
    }

    /// Loads `tokenizer.json` with the named mask token (or the usual names if `None`).
    pub fn load_with_mask(path: &Path, mask: Option<&str>) -> Result<Tokens> {
        Self::from_tokenizer(read_tokenizer(path)?, Some(mask), path)
    }

    /// Reads a `tokenizer.json` held in memory; `label` names it in errors.
    pub fn from_bytes(json: &[u8], mask: Option<&str>, label: &Path) -> Result<Tokens> {
        Self::from_tokenizer(parse_tokenizer(json, label)?, Some(mask), label)
    }

    /// Loads the `tokenizer.json` of an autoregressive model, which has no mask token
    /// ([`Tokens::mask_id`] is then `u32::MAX`, an id no vocabulary holds).
    pub fn load_causal(path: &Path) -> Result<Tokens> {
        Self::from_tokenizer(read_tokenizer(path)?, None, path)
    }

    /// `mask`: `None` for no mask token (autoregressive models); `Some(None)` for the usual
    /// names; `Some(Some(name))` for that one.
    fn from_tokenizer(
        tokenizer: Tokenizer,
        mask: Option<Option<&str>>,
        path: &Path,
    ) -> Result<Tokens> {
        let err = |reason: String| DiffusionError::Tokenizer {
            path: path.to_path_buf(),
            reason,
        };
        let mask_id = match mask {
            None => u32::MAX,
            Some(mask) => {
                let names: Vec<&str> = match mask {
                    Some(m) => vec![m],
                    None => MASK_TOKEN_NAMES.to_vec(),
                };
                names
                    .iter()
                    .find_map(|n| tokenizer.token_to_id(n))
                    .ok_or_else(|| {
                        err(format!("no mask token (looked for {})", names.join(", ")))
                    })?
            }
        };
        let added = tokenizer.get_added_tokens_decoder();
        let size = added
            .keys()
            .map(|&id| id as usize + 1)
            .chain(std::iter::once(tokenizer.get_vocab_size(false)))
            .max()
            .unwrap_or(0);
        // The tables below hold an entry per id up to the largest: an added token's id is
        // the file's word, so it is bounded before they are allocated.
        if size > MAX_VOCAB {
            return Err(err(format!(
                "the vocabulary has {size} ids (its largest id is {}); at most {MAX_VOCAB} are \
                 supported",
                size - 1
            )));
        }
        let inv = char_to_byte();
        let regular: Vec<Option<String>> = (0..size as u32)
            .map(|id| {
                if added.contains_key(&id) {
                    None
                } else {
                    tokenizer.id_to_token(id)
                }
            })
            .collect();
        let is_byte_level = regular
            .iter()
            .flatten()
            .all(|t| byte_level(t, &inv).is_some());
        let mut bytes = vec![Vec::new(); size];
        let mut special = vec![false; size];
        for (id, tok) in regular.iter().enumerate() {
            if let Some(t) = tok {
                bytes[id] = if is_byte_level {
                    byte_level(t, &inv).expect("checked above")
                } else {
                    sentencepiece(t)
                };
            }
        }
        for (&id, tok) in added.iter() {
            bytes[id as usize] = tok.content.as_bytes().to_vec();
            special[id as usize] = tok.special;
        }
        Ok(Tokens {
            tokenizer,
            bytes,
            special,
            mask_id,
            path: path.to_path_buf(),
        })
    }

    /// Token ids of `text`; added and special tokens written in the text are recognized.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| DiffusionError::Tokenizer {
                path: self.path.clone(),
                reason: e.to_string(),
            })?;
        Ok(enc.get_ids().to_vec())
    }

    /// The exact bytes of `id` (empty for ids outside the vocabulary).
    pub fn bytes(&self, id: u32) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], |b| b.as_slice())
    }

    /// The bytes of every id, indexed by id.
    pub fn all_bytes(&self) -> &[Vec<u8>] {
        &self.bytes
    }

    /// Whether `id` is a special added token.
    pub fn is_special(&self, id: u32) -> bool {
        self.special.get(id as usize).copied().unwrap_or(false)
    }

    /// The vocabulary a checker reads this tokenizer's ids with (token canvases, masks):
    /// every id's exact bytes; `eos_ids` end the output; the other special tokens (the mask
    /// token among them) never stand in an output, nor do ids past the tokenizer up to `width`
    /// (a model's logits row may be wider).
    pub fn vocabulary(&self, eos_ids: &[u32], width: usize) -> crate::vocab::Vocabulary {
        let forbidden: Vec<u32> = (0..self.bytes.len() as u32)
            .filter(|&id| self.is_special(id) || id == self.mask_id)
            .filter(|id| !eos_ids.contains(id))
            .collect();
        let mut v = crate::vocab::Vocabulary::new(self.bytes.clone(), eos_ids, &forbidden);
        v.pad_to(width);
        v
    }

    /// The concatenated bytes of `ids`.
    pub fn decode_bytes(&self, ids: &[u32]) -> Vec<u8> {
        ids.iter()
            .flat_map(|&id| self.bytes(id).iter().copied())
            .collect()
    }

    /// The id of the mask token.
    pub fn mask_id(&self) -> u32 {
        self.mask_id
    }

    /// The id of a token given by its text, if it is one token.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.tokenizer.token_to_id(token)
    }

    /// Number of ids (regular and added).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the tokenizer has no ids.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The underlying `tokenizers` tokenizer, for what this type does not wrap.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("path", &self.path)
            .field("len", &self.bytes.len())
            .field("mask_id", &self.mask_id)
            .finish_non_exhaustive()
    }
}

/// The chat formats of the instruction-tuned models.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChatTemplate {
    /// LLaDA-Instruct: Llama-3-style headers after `<|startoftext|>`.
    LLaDA,
    /// Dream-Instruct, DiffuCoder-Instruct: Qwen's ChatML.
    Dream,
}

impl ChatTemplate {
    /// The template of a family's instruction-tuned models.
    pub fn for_family(family: Family) -> ChatTemplate {
        match family {
            Family::LLaDA => ChatTemplate::LLaDA,
            Family::Dream => ChatTemplate::Dream,
        }
    }

    /// The prompt for one user turn, ready for the assistant's answer, followed by `prefill`:
    /// the start of the answer the model continues (e.g. a code fence "```json\n").
    pub fn render(&self, system: Option<&str>, user: &str, prefill: &str) -> String {
        let mut s = String::new();
        match self {
            ChatTemplate::LLaDA => {
                s.push_str("<|startoftext|>");
                let turn = |s: &mut String, role: &str, text: &str| {
                    s.push_str("<|start_header_id|>");
                    s.push_str(role);
                    s.push_str("<|end_header_id|>\n\n");
                    s.push_str(text.trim());
                    s.push_str("<|eot_id|>");
                };
                if let Some(sys) = system {
                    turn(&mut s, "system", sys);
                }
                turn(&mut s, "user", user);
                s.push_str("<|start_header_id|>assistant<|end_header_id|>\n\n");
            }
            ChatTemplate::Dream => {
                s.push_str("<|im_start|>system\n");
                s.push_str(system.unwrap_or("You are a helpful assistant."));
                s.push_str("<|im_end|>\n<|im_start|>user\n");
                s.push_str(user);
                s.push_str("<|im_end|>\n<|im_start|>assistant\n");
            }
        }
        s.push_str(prefill);
        s
    }

    /// Tokens that end the assistant's turn besides the model's EOS (`<|eot_id|>`,
    /// `<|im_end|>`).
    pub fn end_of_turn(&self) -> &'static str {
        match self {
            ChatTemplate::LLaDA => "<|eot_id|>",
            ChatTemplate::Dream => "<|im_end|>",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphabet_is_a_bijection() {
        let a = byte_to_char();
        let mut seen: Vec<char> = a.to_vec();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 256);
        assert_eq!(a[b' ' as usize], '\u{120}');
        assert_eq!(a[b'\n' as usize], '\u{10A}');
        assert_eq!(a[b'A' as usize], 'A');
        let inv = char_to_byte();
        assert_eq!(byte_level("\u{120}hi", &inv), Some(b" hi".to_vec()));
        assert_eq!(byte_level("\u{2581}", &inv), None);
    }

    #[test]
    fn a_tokenizer_file_that_never_ends_is_refused_at_the_cap() {
        let e = Tokens::load(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero") && e.contains("128 MiB"), "{e}");
        let e = Tokens::load(Path::new("/nonexistent/tokenizer.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/tokenizer.json"), "{e}");
    }

    #[test]
    fn sentencepiece_pieces() {
        assert_eq!(sentencepiece("<0x0A>"), b"\n");
        assert_eq!(sentencepiece("\u{2581}the"), b" the");
    }

    #[test]
    fn templates() {
        let l = ChatTemplate::LLaDA.render(None, " hi ", "```json\n");
        assert_eq!(
            l,
            "<|startoftext|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>\
             <|start_header_id|>assistant<|end_header_id|>\n\n```json\n"
        );
        let d = ChatTemplate::Dream.render(None, "hi", "");
        assert_eq!(
            d,
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n\
             <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
    }
}
