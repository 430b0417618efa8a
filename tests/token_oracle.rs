//! Token canvases and valid-token masks against a brute-force oracle.
//!
//! A small expression grammar with a string lexeme that spans positions, a skipped space, and
//! a small vocabulary whose tokens cross lexeme boundaries (`1+`, `)+`, `"a`, `a"`). The
//! oracle enumerates every assignment of vocabulary ids to the masked positions, builds the
//! output under the token semantics (an EOS ends it, no text after an EOS), and runs a
//! hand-written lexer and recursive-descent parser that share no code with lacuna.
//!
//! What must hold:
//! - soundness: whatever some assignment completes, the checker calls completable, and every
//!   id of such an assignment is in its position's mask;
//! - exactness: on canvases whose mask runs are at most `EXACT_RUN` long, the checker agrees
//!   with the oracle, so a completable canvas has no empty mask;
//! - a mask is exactly the ids whose per-token check says completable.

use std::sync::Arc;

use lacuna::canvas::tokens::{TokenCanvas, EXACT_RUN};
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::grammar::lark;
use lacuna::vocab::{TokenId, TokenKind, Vocabulary};
use proptest::prelude::*;

const GRAMMAR: &str = r#"
start: expr
expr: term ("+" term)*
term: NUM | NAME | STR | "(" expr ")"
NUM: /[0-9]+/
NAME: /[a-z]+/
STR: /"[a-z +()]*"/
%ignore " "
"#;

/// Text tokens, then EOS (`</s>`) and a forbidden special.
const WORDS: [&str; 16] = [
    "1", "2", "12", "a", "ab", "+", "(", ")", " ", "\"", "\"a", "a\"", "+(", ")+", "1+", " +",
];

fn vocab() -> Vocabulary {
    let mut bytes: Vec<Vec<u8>> = WORDS.iter().map(|w| w.as_bytes().to_vec()).collect();
    bytes.push(b"</s>".to_vec());
    bytes.push(b"<pad>".to_vec());
    let eos = WORDS.len() as TokenId;
    Vocabulary::new(bytes, &[eos], &[eos + 1])
}

fn checker() -> Checker {
    let g = lark::parse(GRAMMAR, "expr.lark").unwrap();
    Checker::with_vocabulary(g, Arc::new(vocab())).unwrap()
}

// ---- the independent recognizer ----

#[derive(Debug, PartialEq, Clone, Copy)]
enum Tok {
    Num,
    Name,
    Str,
    Plus,
    Open,
    Close,
}

fn lex(text: &[u8]) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        let run = |pred: fn(u8) -> bool| text[i..].iter().take_while(|&&b| pred(b)).count();
        match c {
            b' ' => i += 1,
            b'0'..=b'9' => {
                i += run(|b| b.is_ascii_digit());
                out.push(Tok::Num);
            }
            b'a'..=b'z' => {
                i += run(|b| b.is_ascii_lowercase());
                out.push(Tok::Name);
            }
            b'"' => {
                let close = text[i + 1..].iter().position(|&b| b == b'"')?;
                let body = &text[i + 1..i + 1 + close];
                if !body
                    .iter()
                    .all(|&b| b.is_ascii_lowercase() || b" +()".contains(&b))
                {
                    return None;
                }
                i += close + 2;
                out.push(Tok::Str);
            }
            b'+' => {
                i += 1;
                out.push(Tok::Plus);
            }
            b'(' => {
                i += 1;
                out.push(Tok::Open);
            }
            b')' => {
                i += 1;
                out.push(Tok::Close);
            }
            _ => return None,
        }
    }
    Some(out)
}

fn parse_expr(t: &[Tok], mut i: usize) -> Option<usize> {
    i = parse_term(t, i)?;
    while t.get(i) == Some(&Tok::Plus) {
        i = parse_term(t, i + 1)?;
    }
    Some(i)
}

fn parse_term(t: &[Tok], i: usize) -> Option<usize> {
    match t.get(i)? {
        Tok::Num | Tok::Name | Tok::Str => Some(i + 1),
        Tok::Open => {
            let j = parse_expr(t, i + 1)?;
            (t.get(j) == Some(&Tok::Close)).then_some(j + 1)
        }
        _ => None,
    }
}

fn recognizes(text: &[u8]) -> bool {
    lex(text).is_some_and(|t| parse_expr(&t, 0) == Some(t.len()))
}

/// The output an assignment writes, or `None` if it is not well formed (text after an EOS, a
/// forbidden id).
fn output(v: &Vocabulary, cells: &[TokenId]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut ended = false;
    for &id in cells {
        match v.kind(id)? {
            TokenKind::Forbidden => return None,
            TokenKind::Eos => ended = true,
            TokenKind::Text if ended => return None,
            TokenKind::Text => out.extend_from_slice(v.bytes(id)),
        }
    }
    Some(out)
}

/// Whether some assignment of ids to the masks writes a word of the grammar.
fn oracle(v: &Vocabulary, canvas: &TokenCanvas) -> bool {
    let masks = canvas.masked_positions();
    let n = v.len();
    let mut choice = vec![0usize; masks.len()];
    let mut cells: Vec<TokenId> = canvas.cells.iter().map(|c| c.unwrap_or(0)).collect();
    loop {
        for (m, &p) in masks.iter().enumerate() {
            cells[p] = choice[m] as TokenId;
        }
        if output(v, &cells).is_some_and(|o| recognizes(&o)) {
            return true;
        }
        let mut m = 0;
        loop {
            if m == masks.len() {
                return false;
            }
            choice[m] += 1;
            if choice[m] < n {
                break;
            }
            choice[m] = 0;
            m += 1;
        }
    }
}

/// Whether every run of masks is read exactly (at most `EXACT_RUN` long).
fn exact_reading(canvas: &TokenCanvas) -> bool {
    canvas
        .cells
        .split(|c| c.is_some())
        .all(|run| run.len() <= EXACT_RUN)
}

fn arb_canvas(max_len: usize) -> impl Strategy<Value = TokenCanvas> {
    let n = WORDS.len() as TokenId + 2;
    proptest::collection::vec(
        prop_oneof![3 => Just(None), 4 => (0..n).prop_map(Some)],
        1..=max_len,
    )
    .prop_map(TokenCanvas::new)
    .prop_filter("at most 3 masks", |c| c.masked_positions().len() <= 3)
}

#[test]
fn the_oracle_recognizer_reads_the_grammar() {
    for ok in [
        "1",
        "a+12",
        "(a)+\"a b\"",
        " ( 1 + ( ab ) ) ",
        "\"\"",
        "1 +2",
    ] {
        assert!(recognizes(ok.as_bytes()), "{ok}");
    }
    for bad in ["", "1 2", "(", "a+", "\"a", "\"a\"b", "+1", "()"] {
        assert!(!recognizes(bad.as_bytes()), "{bad}");
    }
    // The checker agrees on complete texts.
    let mut c = checker();
    for text in ["1", "a+12", "1 2", "\"a", "(a)+\"a b\"", "+1"] {
        assert_eq!(
            c.accepts(text.as_bytes()),
            recognizes(text.as_bytes()),
            "{text}"
        );
    }
}

/// The mask of `p`, after asserting that it has no unknown ids and is exactly the ids whose
/// per-token check says completable.
fn mask_matching_checks(
    c: &mut Checker,
    canvas: &TokenCanvas,
    p: usize,
) -> Result<lacuna::checker::Allowed, TestCaseError> {
    let allowed = c.allowed(canvas, p).unwrap();
    prop_assert_eq!(allowed.unknown, 0);
    for id in 0..c.vocabulary().unwrap().len() as TokenId {
        let one = canvas.with(p, id);
        let by_check = c.check_tokens(&one).unwrap().verdict == CheckVerdict::Completable;
        prop_assert_eq!(
            allowed.mask.contains(id),
            by_check,
            "position {} id {}",
            p,
            id
        );
    }
    Ok(allowed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn checks_are_sound_and_exact_on_short_runs(canvas in arb_canvas(6)) {
        let v = vocab();
        let mut c = checker();
        let verdict = c.check_tokens(&canvas).unwrap().verdict;
        prop_assert_ne!(verdict, CheckVerdict::Unknown);
        let truth = oracle(&v, &canvas);
        if truth {
            prop_assert_eq!(verdict, CheckVerdict::Completable, "rejected a completable canvas");
        }
        if exact_reading(&canvas) {
            prop_assert_eq!(verdict == CheckVerdict::Completable, truth);
        }
    }

    #[test]
    fn masks_are_the_ids_whose_checks_pass(canvas in arb_canvas(6)) {
        let v = vocab();
        let mut c = checker();
        let completable = c.check_tokens(&canvas).unwrap().verdict == CheckVerdict::Completable;
        for p in canvas.masked_positions() {
            let allowed = mask_matching_checks(&mut c, &canvas, p)?;
            for id in 0..v.len() as TokenId {
                if oracle(&v, &canvas.with(p, id)) {
                    prop_assert!(allowed.mask.contains(id), "mask misses a completable id");
                }
            }
            if completable && exact_reading(&canvas) {
                prop_assert!(!allowed.mask.is_empty(), "empty mask at {} of a completable canvas", p);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Long runs are read loosely (a hole of any string between exact ends), but a mask must
    /// still be exactly the ids whose checks pass, and the ids of a completing assignment.
    #[test]
    fn masks_match_checks_on_long_runs(cells in proptest::collection::vec(
        prop_oneof![5 => Just(None), 3 => (0..WORDS.len() as TokenId + 2).prop_map(Some)],
        1..=10,
    )) {
        let canvas = TokenCanvas::new(cells);
        let mut c = checker();
        for p in canvas.masked_positions() {
            mask_matching_checks(&mut c, &canvas, p)?;
        }
    }
}

#[test]
fn a_string_spans_masked_positions() {
    let v = vocab();
    let id = |w: &str| WORDS.iter().position(|x| *x == w).unwrap() as TokenId;
    let mut c = checker();
    // `"a` □ □ `+` `1`: the string must close inside the two positions.
    let canvas = TokenCanvas::new(vec![
        Some(id("\"a")),
        None,
        None,
        Some(id("+")),
        Some(id("1")),
    ]);
    assert_eq!(
        c.check_tokens(&canvas).unwrap().verdict,
        CheckVerdict::Completable
    );
    let second = c.allowed(&canvas, 2).unwrap();
    // The last position must close the string: `"` or `a"`, not `a` or `1`.
    assert!(second.mask.contains(id("\"")) && second.mask.contains(id("a\"")));
    assert!(!second.mask.contains(id("a")) && !second.mask.contains(id("1")));
    assert!(oracle(&v, &canvas));
    // With one position, `1` cannot be followed by a name: `1` □ `a` has no single token.
    let canvas = TokenCanvas::new(vec![Some(id("1")), None, Some(id("a"))]);
    let one = c.allowed(&canvas, 1).unwrap();
    let ids: Vec<&str> = one.mask.ids().map(|i| WORDS[i as usize]).collect();
    assert_eq!(ids, ["+", "1+", " +"]);
}

#[test]
fn the_end_of_output_is_allowed_only_where_the_output_may_end() {
    let v = vocab();
    let eos = WORDS.len() as TokenId;
    let id = |w: &str| WORDS.iter().position(|x| *x == w).unwrap() as TokenId;
    let mut c = checker();
    // `1` □ □: the output may end at either position.
    let canvas = TokenCanvas::new(vec![Some(id("1")), None, None]);
    assert!(c.allowed(&canvas, 1).unwrap().mask.contains(eos));
    // `1+` □ □: not at the first position (the sum needs a term).
    let canvas = TokenCanvas::new(vec![Some(id("1+")), None, None]);
    let first = c.allowed(&canvas, 1).unwrap();
    assert!(!first.mask.contains(eos));
    assert!(first.mask.contains(id("2")));
    // Never before placed text, and never a forbidden id.
    let canvas = TokenCanvas::new(vec![Some(id("1")), None, Some(id("+")), Some(id("2"))]);
    let m = c.allowed(&canvas, 1).unwrap().mask;
    assert!(!m.contains(eos) && !m.contains(eos + 1));
    assert_eq!(v.kind(eos + 1), Some(TokenKind::Forbidden));
}

#[test]
fn joint_steps_stop_at_the_first_refusal() {
    let id = |w: &str| WORDS.iter().position(|x| *x == w).unwrap() as TokenId;
    let mut c = checker();
    let mut canvas = TokenCanvas::masked(6);
    let pairs = [(0, id("(")), (1, id("a")), (2, id("+")), (3, id(")"))];
    // `(a+` then `)` leaves `(a+)`: not completable (a sum needs its second term).
    assert_eq!(c.validate(&canvas, &pairs).unwrap(), 3);
    assert_eq!(canvas, TokenCanvas::masked(6), "validate leaves the canvas");
    assert_eq!(c.commit(&mut canvas, &pairs[..2]).unwrap(), 2);
    assert_eq!(canvas.cells[..2], [Some(id("(")), Some(id("a"))]);
    canvas.retract(&[1]);
    assert_eq!(canvas.cells[1], None);
    let e = c.validate(&canvas, &[(0, id("a"))]).unwrap_err();
    assert!(e.to_string().contains("position 0 is not masked"), "{e}");
}

/// `WORDS`, then every byte as a token of its own (as in a byte-level BPE vocabulary).
fn byte_level_checker() -> Checker {
    let mut bytes: Vec<Vec<u8>> = WORDS.iter().map(|w| w.as_bytes().to_vec()).collect();
    bytes.extend((0..=255u8).map(|b| vec![b]));
    let vocab = Vocabulary::new(bytes, &[], &[]);
    assert!(vocab.writes_every_byte());
    let g = lark::parse(GRAMMAR, "expr.lark").unwrap();
    Checker::with_vocabulary(g, Arc::new(vocab)).unwrap()
}

/// Text between the holes of the texts below.
const FRAGMENTS: [&str; 9] = ["", "1", "a", "+", "(", ")", "\"a", " ", "1+("];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Where every byte is a token, a token canvas reads a long run of masks as one byte then
    /// any text instead of one token then any text: the same language, read more cheaply.
    /// Masks of a hole of one token, in texts holding such runs before and after it, agree
    /// under both readings.
    #[test]
    fn one_byte_then_any_text_reads_as_one_token_then_any_text(
        segments in proptest::collection::vec((0..FRAGMENTS.len(), 0..3u8), 1..6),
        open_at in 0..6usize,
    ) {
        use lacuna::canvas::{HoleKind, HoleyText};
        let mut chunks: Vec<Vec<u8>> = vec![Vec::new()];
        let (mut by_token, mut by_byte) = (Vec::new(), Vec::new());
        let mut open = None;
        for (i, &(f, hole)) in segments.iter().enumerate() {
            chunks.last_mut().unwrap().extend_from_slice(FRAGMENTS[f].as_bytes());
            if i == open_at % segments.len() {
                open = Some(by_token.len());
                by_token.push(HoleKind::Token);
                by_byte.push(HoleKind::Token);
                chunks.push(Vec::new());
            }
            match hole {
                0 => {
                    by_token.push(HoleKind::Token);
                    by_byte.push(HoleKind::Token);
                    chunks.push(Vec::new());
                }
                1 => {
                    by_token.push(HoleKind::Any);
                    by_byte.push(HoleKind::Any);
                    chunks.push(Vec::new());
                }
                _ => {
                    by_token.extend([HoleKind::Token, HoleKind::Any]);
                    by_byte.extend([HoleKind::Byte, HoleKind::Any]);
                    chunks.extend([Vec::new(), Vec::new()]);
                }
            }
            chunks.last_mut().unwrap().extend_from_slice(FRAGMENTS[(f * 7 + i) % FRAGMENTS.len()].as_bytes());
        }
        let text = HoleyText { chunks };
        let open = open.unwrap();
        let mut c = byte_level_checker();
        let token = c.allowed_in_text(&text, &by_token, open).unwrap();
        let byte = c.allowed_in_text(&text, &by_byte, open).unwrap();
        prop_assert_eq!(token.unknown, 0);
        prop_assert_eq!(byte.unknown, 0);
        prop_assert_eq!(token.mask, byte.mask, "{:?} {:?}", text, by_byte);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A hole of one byte against its definition: the mask of a token's position in a text
    /// with a byte hole is the union, over the 256 bytes, of its masks with that byte written
    /// in the hole's place.
    #[test]
    fn a_hole_of_one_byte_is_any_one_byte(
        left in 0..FRAGMENTS.len(),
        middle in 0..FRAGMENTS.len(),
        right in 0..FRAGMENTS.len(),
        byte_first in any::<bool>(),
    ) {
        use lacuna::canvas::{HoleKind, HoleyText};
        let [l, m, r] = [left, middle, right].map(|i| FRAGMENTS[i].as_bytes().to_vec());
        let mut c = byte_level_checker();
        // `l □ m ▣ r` or `l ▣ m □ r`: □ the byte hole, ▣ the token whose mask is asked.
        let (kinds, open) = if byte_first {
            ([HoleKind::Byte, HoleKind::Token], 1)
        } else {
            ([HoleKind::Token, HoleKind::Byte], 0)
        };
        let text = HoleyText { chunks: vec![l.clone(), m.clone(), r.clone()] };
        let by_hole = c.allowed_in_text(&text, &kinds, open).unwrap();
        prop_assert_eq!(by_hole.unknown, 0);
        let mut union = lacuna::vocab::TokenMask::new(by_hole.mask.vocab_len());
        for b in 0..=255u8 {
            let chunks = if byte_first {
                vec![[l.as_slice(), &[b], m.as_slice()].concat(), r.clone()]
            } else {
                vec![l.clone(), [m.as_slice(), &[b], r.as_slice()].concat()]
            };
            let one = c
                .allowed_in_text(&HoleyText { chunks }, &[HoleKind::Token], 0)
                .unwrap();
            prop_assert_eq!(one.unknown, 0);
            union.union_with(&one.mask);
        }
        prop_assert_eq!(by_hole.mask, union);
    }
}
