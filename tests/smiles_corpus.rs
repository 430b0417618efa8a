//! The shipped SMILES grammar (`grammars/smiles.lark`) on real molecules, judged against an
//! independent SMILES reader, the `purr` crate.
//!
//! Corpora (copies in `tests/data/`, see the README there): the first 200,000 SMILES of the
//! MOSES training set and the 6,601 SMILES of ChEBI-20 (validation and test).
//!
//! The tests:
//! - every MOSES SMILES is accepted;
//! - every ChEBI-20 SMILES that purr reads is accepted, and the checker agrees with purr on all
//!   of them (the rule below); the ones purr rejects are counted by cause;
//! - on seeded random mutations of MOSES SMILES (deleted, inserted, replaced and transposed
//!   characters) and on random bracket atoms, the checker agrees with purr;
//! - every MOSES or ChEBI SMILES with 1–8 random holes cut into it (inside lexemes, across
//!   lexemes, at either end) is completable, and its completion is accepted by the checker,
//!   read by purr with every ring closed, and its rings pair up;
//! - hand-written tricky cases and the SMILES rows of the shared benchmark workload.
//!
//! **The agreement rule.** purr's verdict on a text is one of: reads it; a *syntax* error
//! (`purr::read::read` fails); an *unclosed ring bond* or a *ring bond whose two ends carry
//! incompatible bond symbols* (`purr::graph::Builder::build` fails). The grammar pairs ring
//! bonds (`%ring_bonds`) as RDKit does, which purr does not quite: it reads a ring from an atom
//! to itself (`C11`) and one that doubles a bond (`C1C1`), and refuses incompatible bond
//! symbols (`C=1CC-1`), which RDKit reads. So, with `smiles_rings` (an independent reading of
//! the rings as RDKit pairs them) saying whether the rings pair up:
//! - purr reads it ⇒ the checker accepts iff the rings pair up;
//! - purr finds a syntax error or an unclosed ring bond ⇒ the checker rejects;
//! - purr finds only incompatible bond symbols ⇒ the checker accepts iff the rings pair up.
//!
//! Two purr 0.9 bugs are the only other allowed disagreements, each recognised precisely:
//! - purr reads the bracket symbol `G` (no such element) as fluorine (its `read_symbol` returns
//!   F for a `G` not followed by a, d or e): allowed only when the checker accepts the text with
//!   each such `G` replaced by `F`;
//! - purr cannot read the charges `+10` and `-10` (after `+1` it only looks for 1–5), which
//!   OpenSMILES allows: allowed only when purr's error is at the `0` of such a charge and purr
//!   finds no syntax error once those zeros are dropped.

mod corpus;
#[path = "common/purr_syntax.rs"]
mod purr_syntax;
#[path = "common/smiles_rings.rs"]
mod smiles_rings;

use std::io::Read;

use corpus::{moses, Rng};
use lacuna::canvas::{parse_canvas_line, HoleyText};
use lacuna::checker::{CheckVerdict, Checker, CompletionError};
use smiles_rings::rings_pair_up;

// ---- data ----------------------------------------------------------------------------------

fn gunzip(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut out)
        .unwrap();
    out
}

/// (CID, SMILES) of ChEBI-20 validation and test.
fn chebi() -> Vec<(String, String)> {
    let mut out = vec![];
    for name in [
        "chebi20_validation_smiles.tsv.gz",
        "chebi20_test_smiles.tsv.gz",
    ] {
        let text = gunzip(name);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("CID\tSMILES"));
        for line in lines {
            let (cid, smiles) = line.split_once('\t').unwrap();
            out.push((cid.to_string(), smiles.to_string()));
        }
    }
    out
}

fn checker() -> Checker {
    Checker::from_spec("smiles").unwrap()
}

// ---- the oracle and the agreement rule -------------------------------------------------------

/// purr's verdict on a text.
#[derive(Debug, Clone, PartialEq)]
enum Purr {
    Reads,
    /// `read` failed: at this character index, or at the end of the text (`None`).
    Syntax(Option<usize>),
    /// Read, but a ring bond is never closed.
    UnclosedRing,
    /// Read, but the two ends of a ring bond carry incompatible bond symbols (`C=1CC-1`).
    RingBondMismatch,
}

/// `text` without chirality in its bracket atoms (`[C@@H]` → `[CH]`, `[Co@OH12]` → `[Co]`).
/// purr's graph builder panics on chirality classes other than tetrahedral (`unimplemented!`
/// in purr 0.9), and ring-bond pairing does not depend on chirality.
fn without_chirality(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'@' && in_bracket(b, i) {
            i += 1;
            if b[i..].starts_with(b"@") {
                i += 1;
            } else if ["TH", "AL", "SP", "TB", "OH"]
                .iter()
                .any(|c| b[i..].starts_with(c.as_bytes()))
            {
                i += 2;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn purr(text: &str) -> Purr {
    match purr_syntax::read_syntax(text) {
        Err(purr::read::Error::EndOfLine) => return Purr::Syntax(None),
        Err(purr::read::Error::Character(i)) => return Purr::Syntax(Some(i)),
        Ok(()) => {}
    }
    let plain = without_chirality(text);
    let mut builder = purr::graph::Builder::new();
    purr::read::read(&plain, &mut builder, None)
        .unwrap_or_else(|e| panic!("{plain:?} (from {text:?}): {e:?}"));
    match builder.build() {
        Ok(_) => Purr::Reads,
        Err(purr::graph::Error::Rnum(_)) => Purr::UnclosedRing,
        Err(purr::graph::Error::Join(..)) => Purr::RingBondMismatch,
    }
}

/// Why the checker and purr judge a text as they do, when the agreement rule allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    BothAccept,
    BothReject,
    /// Both reject: purr finds an unclosed ring bond.
    BothRejectRing,
    /// The checker rejects a ring bond that purr reads: to its own atom, or doubling a bond.
    RingRule,
    /// The checker accepts; purr finds incompatible bond symbols at a ring bond's two ends.
    RingBondMismatch,
    /// The checker rejects a bracket symbol `G` that purr reads as F.
    PurrBugG,
    /// The checker rejects a branch that opens with a dot (`C(.C)`), which OpenSMILES and
    /// purr allow and RDKit refuses.
    DotOpensBranch,
    /// The checker accepts a charge `+10`/`-10` that purr cannot read.
    PurrBugCharge10,
}

/// Whether byte `i` of `text` lies inside a bracket atom (after a `[` not yet closed).
fn in_bracket(text: &[u8], i: usize) -> bool {
    text[..i]
        .iter()
        .rev()
        .find(|&&b| b == b'[' || b == b']')
        .is_some_and(|&b| b == b'[')
}

/// `text` with every bracket symbol `G` (not followed by a, d or e, so no element) replaced
/// by `F`, or `None` if it has no such `G`.
fn g_as_fluorine(text: &str) -> Option<String> {
    let mut bytes = text.as_bytes().to_vec();
    let mut changed = false;
    for i in 0..bytes.len() {
        let symbol_start = bytes[..i]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_digit())
            .is_some_and(|&b| b == b'[');
        let next = bytes.get(i + 1).copied();
        if bytes[i] == b'G' && symbol_start && !matches!(next, Some(b'a' | b'd' | b'e')) {
            bytes[i] = b'F';
            changed = true;
        }
    }
    changed.then(|| String::from_utf8(bytes).unwrap())
}

/// Whether purr's syntax error on `text` is only its inability to read charges `+10`/`-10`:
/// the error is at the `0` of such a charge, and dropping those zeros (one at a time, as purr
/// reports them) leaves no syntax error.
fn only_charge_ten(text: &str) -> bool {
    let mut text = text.to_string();
    let mut dropped = 0;
    while let Purr::Syntax(Some(i)) = purr(&text) {
        let b = text.as_bytes();
        let charge_ten =
            i >= 2 && b[i] == b'0' && matches!(&b[i - 2..i], b"+1" | b"-1") && in_bracket(b, i);
        if !charge_ten {
            return false;
        }
        text.remove(i);
        dropped += 1;
    }
    dropped > 0 && !matches!(purr(&text), Purr::Syntax(_))
}

/// Classifies the checker's verdict on `text` against purr's; `Err` describes a disagreement
/// that the rule does not allow.
fn judge(checker: &mut Checker, text: &str) -> Result<Outcome, String> {
    let accepted = checker.accepts(text.as_bytes());
    let verdict = purr(text);
    let paired = || rings_pair_up(text);
    let outcome = match (accepted, &verdict) {
        (true, Purr::Reads) if paired() => Outcome::BothAccept,
        (false, Purr::Reads) if !paired() => Outcome::RingRule,
        (false, Purr::Syntax(_)) => Outcome::BothReject,
        (false, Purr::UnclosedRing) => Outcome::BothRejectRing,
        (true, Purr::RingBondMismatch) if paired() => Outcome::RingBondMismatch,
        (false, Purr::RingBondMismatch) if !paired() => Outcome::RingRule,
        (true, Purr::Syntax(_)) if only_charge_ten(text) => Outcome::PurrBugCharge10,
        (false, Purr::Reads | Purr::RingBondMismatch)
            if text.contains("(.") && checker.accepts(text.replace("(.", "(").as_bytes()) =>
        {
            Outcome::DotOpensBranch
        }
        (false, Purr::Reads | Purr::RingBondMismatch)
            if g_as_fluorine(text).is_some_and(|t| checker.accepts(t.as_bytes())) =>
        {
            Outcome::PurrBugG
        }
        _ => {
            return Err(format!(
                "checker {} but purr says {verdict:?}: {text:?}",
                if accepted { "accepts" } else { "rejects" }
            ))
        }
    };
    Ok(outcome)
}

/// Counts of outcomes, printed for the record (`--nocapture`).
#[derive(Default)]
struct Tally(std::collections::BTreeMap<Outcome, (usize, Vec<String>)>);

impl Tally {
    fn add(&mut self, outcome: Outcome, text: &str) {
        let e = self.0.entry(outcome).or_default();
        e.0 += 1;
        if e.1.len() < 3 {
            e.1.push(text.to_string());
        }
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.0.get(&outcome).map_or(0, |e| e.0)
    }

    fn print(&self, what: &str) {
        eprintln!("{what}:");
        for (outcome, (n, examples)) in &self.0 {
            eprintln!("  {outcome:?}: {n}, e.g. {examples:?}");
        }
    }
}

// ---- corpora ---------------------------------------------------------------------------------

#[test]
fn moses_first_200k_are_accepted() {
    let mut checker = checker();
    let all = moses();
    assert_eq!(all.len(), 200_000);
    let rejected: Vec<&String> = all
        .iter()
        .filter(|s| !checker.accepts(s.as_bytes()))
        .collect();
    assert!(
        rejected.is_empty(),
        "{} rejected, e.g. {:?}",
        rejected.len(),
        &rejected[..rejected.len().min(5)]
    );
    // purr reads them all too: the oracle of the other tests is sound on this corpus.
    let unread: Vec<&String> = all.iter().filter(|s| purr(s) != Purr::Reads).collect();
    assert!(
        unread.is_empty(),
        "purr: {:?}",
        &unread[..unread.len().min(5)]
    );
}

/// What purr stumbles on in a text it cannot read: the character at the error, with context.
fn purr_error_context(text: &str) -> String {
    match purr(text) {
        Purr::Syntax(Some(i)) => {
            let from = i.saturating_sub(6);
            let to = (i + 4).min(text.len());
            format!("syntax at {:?} in …{}…", &text[i..i + 1], &text[from..to])
        }
        other => format!("{other:?}"),
    }
}

/// ChEBI-20 writes some backslash bonds doubled (`C/C=C\\\\C`, an escaping artifact of the
/// data set): purr rejects exactly those, and so does the checker. With the doubling undone,
/// every one of them is read by purr and accepted.
#[test]
fn chebi20_smiles_that_purr_reads_are_accepted() {
    let mut checker = checker();
    let all = chebi();
    assert_eq!(all.len(), 6_601);
    let mut tally = Tally::default();
    let mut failures = vec![];
    let mut causes: std::collections::BTreeMap<String, usize> = Default::default();
    let mut undoubled = 0;
    for (cid, smiles) in &all {
        match judge(&mut checker, smiles) {
            Ok(outcome) => tally.add(outcome, smiles),
            Err(e) => failures.push(format!("CID {cid}: {e}")),
        }
        if purr(smiles) == Purr::Reads {
            continue;
        }
        let cause = match purr(smiles) {
            Purr::Syntax(Some(i)) if smiles[..i].ends_with('\\') && &smiles[i..=i] == "\\" => {
                "doubled backslash".to_string()
            }
            _ => format!("CID {cid}: {}", purr_error_context(smiles)),
        };
        if cause == "doubled backslash" {
            let fixed = smiles.replace("\\\\", "\\");
            match judge(&mut checker, &fixed) {
                Ok(Outcome::BothAccept) => undoubled += 1,
                other => failures.push(format!("CID {cid} undoubled: {other:?} {fixed:?}")),
            }
        }
        *causes.entry(cause).or_default() += 1;
    }
    tally.print("ChEBI-20");
    eprintln!("purr rejects ChEBI-20 SMILES: {causes:?}; {undoubled} read once undoubled");
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(tally.count(Outcome::BothAccept) > 5_000);
    assert!(undoubled > 0);
}

// ---- mutations -------------------------------------------------------------------------------

/// Characters that mutations insert: everything SMILES syntax uses, letters of element
/// symbols and of chirality classes, and a few that never belong.
const MUTATION_ALPHABET: &[u8] = b"CNOSPFIBclnosbpHrltaeGTAL()[]=#$:/\\-+.%@*0123456789 x";

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let i = rng
            .below(bytes.len().max(1))
            .min(bytes.len().saturating_sub(1));
        let c = MUTATION_ALPHABET[rng.below(MUTATION_ALPHABET.len())];
        match rng.below(4) {
            0 if !bytes.is_empty() => {
                bytes.remove(i);
            }
            1 => bytes.insert(rng.below(bytes.len() + 1), c),
            2 if !bytes.is_empty() => bytes[i] = c,
            _ if i + 1 < bytes.len() => bytes.swap(i, i + 1),
            _ => bytes.push(c),
        }
    }
    String::from_utf8(bytes).unwrap()
}

#[test]
fn mutated_moses_smiles_are_judged_like_purr() {
    let mut checker = checker();
    let corpus = moses();
    let mut rng = Rng(0x5EED_0001);
    let mut tally = Tally::default();
    let mut failures = vec![];
    for _ in 0..20_000 {
        let original = &corpus[rng.below(corpus.len())];
        let text = mutate(&mut rng, original);
        match judge(&mut checker, &text) {
            Ok(outcome) => tally.add(outcome, &text),
            Err(e) => failures.push(format!("{e} (from {original:?})")),
        }
    }
    tally.print("mutated MOSES");
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    // Mutations must exercise all sides of the rule.
    // (Incompatible ring-bond symbols need two explicit bonds and are rare here; the tricky
    // cases cover them.)
    for outcome in [
        Outcome::BothAccept,
        Outcome::BothReject,
        Outcome::BothRejectRing,
    ] {
        assert!(tally.count(outcome) >= 50, "too few {outcome:?}");
    }
}

/// Pieces of bracket atoms, valid and not, to stress the one lexeme the grammar cannot split.
const BRACKET_PIECES: &[&str] = &[
    "1", "13", "2", "0", "999", "1000", "C", "c", "N", "n", "O", "o", "S", "s", "se", "as", "a",
    "Se", "As", "Fe", "Cl", "Br", "Sc", "Hs", "H", "Xe", "X", "G", "Ge", "Zz", "*", "@", "@@",
    "@TH", "@AL", "@SP", "@TB", "@OH", "@TH1", "@TB20", "@OH30", "@OH31", "@TB21", "H2", "H9", "+",
    "-", "++", "--", "+2", "-3", "+15", "+16", "+10", "-10", "+0", ":", ":1", ":123", ":1234", "5",
    "7", "]", "[",
];

#[test]
fn random_bracket_atoms_are_judged_like_purr() {
    let mut checker = checker();
    let mut rng = Rng(0x5EED_0002);
    let mut tally = Tally::default();
    let mut failures = vec![];
    for _ in 0..20_000 {
        let mut atom = String::from("C[");
        for _ in 0..1 + rng.below(5) {
            atom.push_str(BRACKET_PIECES[rng.below(BRACKET_PIECES.len())]);
        }
        atom.push_str("]C");
        match judge(&mut checker, &atom) {
            Ok(outcome) => tally.add(outcome, &atom),
            Err(e) => failures.push(e),
        }
    }
    tally.print("random bracket atoms");
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    assert!(tally.count(Outcome::BothAccept) >= 500);
    assert!(tally.count(Outcome::BothReject) >= 500);
}

/// The 118 element symbols, from an independent list (IUPAC periodic table).
const ELEMENTS: &str = "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co \
    Ni Cu Zn Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce \
    Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac \
    Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og";

#[test]
fn bracket_symbols_are_exactly_the_elements() {
    let mut checker = checker();
    let elements: Vec<&str> = ELEMENTS.split_whitespace().collect();
    assert_eq!(elements.len(), 118);
    for upper in b'A'..=b'Z' {
        let upper = upper as char;
        let mut candidates = vec![upper.to_string()];
        candidates.extend((b'a'..=b'z').map(|lower| format!("{upper}{}", lower as char)));
        for symbol in candidates {
            let text = format!("[{symbol}]");
            assert_eq!(
                checker.accepts(text.as_bytes()),
                elements.contains(&symbol.as_str()),
                "{text}"
            );
        }
    }
}

// ---- holes -----------------------------------------------------------------------------------

/// Holes cut into real SMILES are completable, and completions are SMILES whose rings pair up.
///
/// A completion fills the holes with the cheapest lexemes the grammar needs, ring bonds paired
/// (`C1CC□` completes to `C1CC1`). Fillers may put a bond symbol before a ring number that
/// conflicts with the one at the ring bond's other end (`C=1CC#1`: RDKit reads it, purr does
/// not); those are counted. A completion may also fail to be labelled (the check keeps only
/// the parity of labels no chunk mentions), or run out of budget where several holes meet
/// several labels (a `CompletionError`, never an invalid text): counted, at most 10%.
#[test]
fn smiles_with_holes_are_completable_and_complete_to_smiles() {
    let mut checker = checker();
    let mut corpus: Vec<String> = moses().into_iter().step_by(100).collect();
    corpus.extend(
        chebi()
            .into_iter()
            .map(|(_, s)| s)
            .filter(|s| purr(s) == Purr::Reads)
            .step_by(4),
    );
    let mut rng = Rng(0x5EED_0003);
    let (mut unlabelled, mut mismatched_rings, mut cases) = (0, 0, 0);
    let mut why_not: std::collections::BTreeMap<String, usize> = Default::default();
    let mut by_holes = [0usize; 9];
    for _ in 0..3_000 {
        let smiles = &corpus[rng.below(corpus.len())];
        let n = smiles.len();
        let holes = 1 + rng.below(8);
        let mut cuts: Vec<usize> = (0..2 * holes).map(|_| rng.below(n + 1)).collect();
        cuts.sort_unstable();
        // Holes at either end now and then.
        if rng.below(4) == 0 {
            cuts[0] = 0;
        }
        if rng.below(4) == 0 {
            *cuts.last_mut().unwrap() = n;
        }
        let text = corpus::cut(smiles.as_bytes(), &cuts);
        let check = checker.check_text(&text);
        assert_eq!(
            check.verdict,
            CheckVerdict::Completable,
            "cuts {cuts:?} of {smiles}"
        );
        cases += 1;
        by_holes[holes] += 1;
        let completion = match checker.complete_text(&text) {
            Ok(c) => c.unwrap_or_else(|| panic!("no completion for cuts {cuts:?} of {smiles}")),
            Err(
                e @ (CompletionError::Unlabelled
                | CompletionError::RingAcrossBranches
                | CompletionError::Budget),
            ) => {
                unlabelled += 1;
                *why_not.entry(format!("{e:?}")).or_default() += 1;
                continue;
            }
            Err(e) => panic!("{e}: cuts {cuts:?} of {smiles}"),
        };
        let completion = String::from_utf8(completion).unwrap();
        assert!(checker.accepts(completion.as_bytes()), "{completion}");
        let verdict = purr(&completion);
        assert!(
            matches!(verdict, Purr::Reads | Purr::RingBondMismatch),
            "purr: {verdict:?} on completion {completion:?} of cuts {cuts:?} of {smiles}"
        );
        assert!(
            rings_pair_up(&completion),
            "{completion:?} of cuts {cuts:?} of {smiles}"
        );
        mismatched_rings += usize::from(verdict == Purr::RingBondMismatch);
    }
    eprintln!(
        "{cases} holey SMILES (by hole count {:?}); {unlabelled} completions could not be \
         labelled or ran out of budget ({why_not:?}), {mismatched_rings} put different bond \
         symbols on a ring bond's ends",
        &by_holes[1..]
    );
    // Measured: see DESIGN.md, *Ring bonds* (several holes meeting several mentioned labels,
    // where a completion must open a ring in a hole and the strict product outgrows the
    // budget).
    assert!(
        unlabelled * 10 <= cases,
        "{unlabelled} of {cases} unlabelled or over budget"
    );
}

// ---- hand-written cases ----------------------------------------------------------------------

#[test]
fn tricky_smiles() {
    let mut checker = checker();
    let mut verdict = |parts: &[&str]| {
        let text = HoleyText {
            chunks: parts.iter().map(|p| p.as_bytes().to_vec()).collect(),
        };
        checker.check_text(&text).verdict
    };
    use CheckVerdict::*;
    let good = [
        "C",
        "Cl",
        "CCl",
        "ClC",
        "BrCBr",
        "[13CH4]",
        "[C@@H](F)(Cl)Br",
        "N[C@H](C)C(=O)O",
        "C%10CC%10",
        "C%123CC%12C3",
        "C1CC1",
        "c1ccccc1",
        "[Fe+2]",
        "[Fe++]",
        "[O-]",
        "[NH4+]",
        "C.C",
        "[Na+].[Cl-]",
        "CSc1ccccc1",
        "Sc1ccccc1",
        "[Sc]",
        "[se]1cccc1",
        "c1cc[nH]c1",
        "C(C)1CC1",
        "C1(C)CC1",
        "C=1CC1",
        "C(=O)(O)",
        "F/C=C/F",
        "F\\C=C\\F",
        "C#N",
        "C$C",
        "c:c",
        "*C*",
        "[*]",
        "[2H]",
        "[C@TH1H]",
        "[Co@OH30]",
        "[Fe@TB20]",
        "[C@AL1]",
        "[Pt@SP3]",
        "[CH3:123]",
        "[U+15]",
        "[Cl-10]",
        "At",
        "Ts",
        "C1CC1C1CC1",
    ];
    for s in good {
        assert_eq!(verdict(&[s]), Completable, "{s}");
    }
    let bad = [
        "",
        "C l",
        "l",
        "C(",
        "C)",
        "[C",
        "C]",
        "C==C",
        "()",
        "C()",
        "C(.C)",
        // Two rings between the same two atoms.
        "C%123CC%123",
        "C12CC12",
        "(C)",
        ".C",
        "C.",
        "C..C",
        "C.1",
        "C=(C)",
        "C=",
        "=C",
        "C%1",
        "C%",
        "[]",
        "[H",
        "[G]",
        "[Xx]",
        "[c@]H",
        "C[CH]]",
        "[C@TB21]",
        "[C@OH31]",
        "[C@TH3]",
        "[CH10]",
        "[C+16]",
        "[C+0]",
        "[C+++]",
        "[C:]",
        "[C:1234]",
        "[1234C]",
        "[a]",
        "A",
        "T",
        "c1cc cc1",
        "C-1-",
        "CC\\\\4",
        "C11",
        "C1C1",
        "C1CC",
        "C%01CC%01",
    ];
    for s in bad {
        assert_eq!(verdict(&[s]), NotCompletable, "{s}");
    }
    // Chlorine across a hole: the empty filler joins `C` and `l` into one lexeme.
    assert_eq!(verdict(&["C", "l"]), Completable);
    assert_eq!(verdict(&["CC", "lCC"]), Completable);
    assert_eq!(verdict(&["", "l"]), Completable);
    assert_eq!(verdict(&["Cl", "l"]), Completable);
    assert_eq!(verdict(&["C l", ""]), NotCompletable);
    // Inside a bracket atom, and across its end.
    assert_eq!(verdict(&["[13C", "H4]"]), Completable);
    assert_eq!(verdict(&["[Fe+", "2]"]), Completable);
    assert_eq!(verdict(&["[C@", "@H]C"]), Completable);
    assert_eq!(verdict(&["[C@@@", "]"]), NotCompletable);
    assert_eq!(verdict(&["C", "]"]), Completable);
    assert_eq!(verdict(&["C(", "]"]), Completable); // C(C)[C]
    assert_eq!(verdict(&["C", "(]"]), NotCompletable);
    // Branches and rings across holes.
    assert_eq!(verdict(&["C(", ""]), Completable);
    assert_eq!(verdict(&["C", ")"]), Completable);
    assert_eq!(verdict(&[")", ""]), NotCompletable);
    assert_eq!(verdict(&["C%1", "CC%10"]), Completable);
    assert_eq!(verdict(&["C%", "%10"]), Completable);
    assert_eq!(verdict(&["C==", "C"]), NotCompletable);
    assert_eq!(verdict(&["C=", "=C"]), Completable);
    assert_eq!(verdict(&["", ""]), Completable);
    // Ring bonds pair up, as RDKit pairs them (purr reads `C11`, `C1C1` and `C1(C)C1`, RDKit
    // does not).
    let mut checker = self::checker();
    for (text, outcome) in [
        ("C1CC1", Outcome::BothAccept),
        ("C1CC", Outcome::BothRejectRing),
        ("C1CC2", Outcome::BothRejectRing),
        ("C11", Outcome::RingRule),
        ("C1C1", Outcome::RingRule),
        ("C1(C)C1", Outcome::RingRule),
        ("C(C1)1", Outcome::RingRule),
        ("C=1CC-1", Outcome::RingBondMismatch),
        ("C/1CC/1", Outcome::RingBondMismatch),
        ("C=1CC=1", Outcome::BothAccept),
        ("[G]", Outcome::PurrBugG),
        ("C(.C)", Outcome::DotOpensBranch),
        ("[Fe+10]", Outcome::PurrBugCharge10),
        ("C==C", Outcome::BothReject),
    ] {
        assert_eq!(judge(&mut checker, text), Ok(outcome), "{text}");
    }
}

/// The SMILES rows of the shared benchmark workload (`benches/data/workload`): every canvas
/// that is not marked corrupted is completable, and its completion (less the closing fence) is
/// read by purr without a syntax error.
#[test]
fn workload_smiles_canvases() {
    let text = std::fs::read_to_string(format!(
        "{}/benches/data/workload/canvases.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut checkers = std::collections::HashMap::new();
    let (mut clean, mut corrupted_rejected, mut corrupted) = (0, 0, 0);
    for line in text.lines() {
        let meta: serde_json::Value = serde_json::from_str(line).unwrap();
        if meta["family"] != "smiles" {
            continue;
        }
        let parsed = parse_canvas_line(line).unwrap();
        let spec = parsed.grammar.clone().unwrap();
        let checker = checkers
            .entry(spec.clone())
            .or_insert_with(|| Checker::from_spec(&spec).unwrap());
        let verdict = checker.check(&parsed.canvas).verdict;
        if meta["corrupted"] == true {
            corrupted += 1;
            corrupted_rejected += usize::from(verdict == CheckVerdict::NotCompletable);
            continue;
        }
        clean += 1;
        assert_eq!(verdict, CheckVerdict::Completable, "{}", meta["id"]);
        let completion = checker.complete(&parsed.canvas).unwrap().unwrap();
        let completion = String::from_utf8(completion).unwrap();
        let smiles = completion.trim_end_matches("```").trim_end();
        assert!(
            !matches!(purr(smiles), Purr::Syntax(_)),
            "{}: {completion:?}",
            meta["id"]
        );
    }
    eprintln!("workload: {clean} clean canvases completable; {corrupted_rejected} of {corrupted} corrupted ones not completable");
    assert!(clean >= 100);
}

/// Core bug, left for the checker's owners. With the SMILES grammar written with a repeated
/// tail (`chain: ATOM _tail*`, the same language as the shipped grammar's left recursion) the
/// check judges this one-hole text completable in milliseconds, and rightly so (the filler
/// `C(C(C(C(C(C(C(C(C(C` works), but the completion search runs out of its 2,000,000 nodes
/// (about 3 s) and returns `CompletionError::Budget`. (Reduced from a ChEBI-20 SMILES with 6
/// holes; the shipped grammar completes it, and 15,000 random holey SMILES, without a miss.)
#[test]
#[ignore = "core bug: completion runs out of budget; see the doc comment"]
fn completion_of_a_hole_that_opens_nine_branches() {
    let shipped = lacuna::grammar::spec::SHIPPED
        .iter()
        .find(|(name, _)| *name == "smiles")
        .unwrap()
        .1;
    let rules = "start: chain\nchain: ATOM _tail*\n_tail: \"(\" [BOND | \".\"] chain \")\"\n    \
                 | [BOND | \".\"] ATOM\n    | [BOND] RING\n";
    let terminals = &shipped[shipped.find("\nATOM:").unwrap()..];
    let grammar =
        lacuna::grammar::lark::parse(&format!("{rules}{terminals}"), "tail.lark").unwrap();
    let mut checker = Checker::new(grammar).unwrap();
    let rest = "([C]([C](O8)CO)O)O)O)O[H]9[H]([C]([H]([C](O9)C)O)O)O)NC(=O)C)O)([H]([C]([C](O)))\
                [C][C]([C]([C](O1)CO)O)O)O)O[H]1[H]([C]([H]([C](O1)C)O)O)O)NC(=O)C)O)";
    assert!(checker.accepts(format!("C(C(C(C(C(C(C(C(C(C{rest}").as_bytes()));
    let text = HoleyText {
        chunks: vec![vec![], rest.as_bytes().to_vec()],
    };
    assert_eq!(checker.check_text(&text).verdict, CheckVerdict::Completable);
    let completion = checker.complete_text(&text).unwrap().unwrap();
    assert!(checker.accepts(&completion));
}
