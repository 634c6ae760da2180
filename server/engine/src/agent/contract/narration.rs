//! Anchored narration. The model marks every fact as `[[kind:id]]`; the server replaces
//! each marker with the label of an object validated in this turn and records the span,
//! so the client never sees raw markers and every figure points at its evidence.
//!
//! A narration is valid only if every marker resolves, no digit appears outside a
//! marker (a number, date or amount must come from data, never from the model's prose)
//! and the prose keeps to the product lexicon (`crate::registry::lexicon`).

use std::collections::HashMap;

use luna_protocol::event::Anchor;
use serde::{Deserialize, Serialize};

/// The kinds of object a narration may cite (CONTRACT §7.2).
pub const REF_KINDS: &[&str] = &[
    "company", "record", "topic", "decision", "sequence", "evidence", "run",
];

/// A resolved anchor: `text[start..end]` is the label of `reference` (`kind:id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnchorSpan {
    pub start: usize,
    pub end: usize,
    pub reference: String,
}

/// Narration ready for the person: labels substituted, anchors recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedNarration {
    pub text: String,
    pub anchors: Vec<AnchorSpan>,
}

impl ResolvedNarration {
    /// The anchors as the wire carries them: byte offsets with the label they cover.
    pub fn wire_anchors(&self) -> Vec<Anchor> {
        self.anchors
            .iter()
            .map(|a| Anchor {
                start: a.start as u32,
                end: a.end as u32,
                label: self.text[a.start..a.end].to_owned(),
                reference: a.reference.clone(),
            })
            .collect()
    }
}

/// Why a narration was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NarrationProblem {
    /// A marker whose `kind:id` is not among the turn's validated objects.
    UnresolvedRef(String),
    /// A marker with an unknown kind or malformed body.
    MalformedRef(String),
    /// A digit in free prose: a figure that no object backs.
    UnanchoredFigure(String),
    /// A word the product lexicon forbids («universo», «mercado», «análisis»…) in the
    /// prose (labels from data are not checked: they are names).
    ForbiddenWord(String),
}

/// The objects validated in this turn, by `kind:id`, with the label to show.
#[derive(Debug, Clone, Default)]
pub struct KnownRefs {
    labels: HashMap<String, String>,
}

impl KnownRefs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an object. `reference` is `kind:id`; `label` is what the person reads.
    pub fn insert(&mut self, reference: impl Into<String>, label: impl Into<String>) {
        self.labels.insert(reference.into(), label.into());
    }

    pub fn label(&self, reference: &str) -> Option<&str> {
        self.labels.get(reference).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// One piece of a narration: prose or a marker body (`kind:id`).
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Prose(&'a str),
    Marker(&'a str),
}

fn split(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("[[") {
        match rest[open + 2..].find("]]") {
            Some(close) => {
                if open > 0 {
                    pieces.push(Piece::Prose(&rest[..open]));
                }
                pieces.push(Piece::Marker(&rest[open + 2..open + 2 + close]));
                rest = &rest[open + 2 + close + 2..];
            }
            None => break,
        }
    }
    if !rest.is_empty() {
        pieces.push(Piece::Prose(rest));
    }
    pieces
}

fn marker_is_well_formed(body: &str) -> bool {
    match body.split_once(':') {
        Some((kind, id)) => {
            REF_KINDS.contains(&kind) && !id.is_empty() && !id.contains(char::is_whitespace)
        }
        None => false,
    }
}

/// Checks a narration against the turn's objects. `Ok` carries the resolved text;
/// `Err` lists every problem found (used to ask the model for one repair).
pub fn resolve(text: &str, known: &KnownRefs) -> Result<ResolvedNarration, Vec<NarrationProblem>> {
    let mut out = String::with_capacity(text.len());
    let mut anchors = Vec::new();
    let mut problems = Vec::new();
    for piece in split(text) {
        match piece {
            Piece::Prose(p) => {
                if p.contains("[[") || p.contains("]]") {
                    problems.push(NarrationProblem::MalformedRef(p.trim().to_owned()));
                }
                if p.chars().any(|c| c.is_ascii_digit()) {
                    problems.push(NarrationProblem::UnanchoredFigure(p.trim().to_owned()));
                }
                problems.extend(
                    crate::registry::lexicon::violations(p)
                        .into_iter()
                        .map(NarrationProblem::ForbiddenWord),
                );
                out.push_str(p);
            }
            Piece::Marker(body) => {
                if !marker_is_well_formed(body) {
                    problems.push(NarrationProblem::MalformedRef(body.to_owned()));
                    continue;
                }
                match known.label(body) {
                    Some(label) => {
                        let start = out.len();
                        out.push_str(label);
                        anchors.push(AnchorSpan {
                            start,
                            end: out.len(),
                            reference: body.to_owned(),
                        });
                    }
                    None => problems.push(NarrationProblem::UnresolvedRef(body.to_owned())),
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(ResolvedNarration { text: out, anchors })
    } else {
        Err(problems)
    }
}

/// Splits after `.`, `!`, `?` or a newline, keeping the terminator with its sentence.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes: Vec<(usize, char)> = text.char_indices().collect();
    let mut in_marker = false;
    for (i, (pos, c)) in bytes.iter().enumerate() {
        if *c == '[' && bytes.get(i + 1).map(|x| x.1) == Some('[') {
            in_marker = true;
        }
        if *c == ']' && bytes.get(i + 1).map(|x| x.1) == Some(']') {
            in_marker = false;
        }
        if !in_marker && matches!(c, '.' | '!' | '?' | '\n') {
            let end = pos + c.len_utf8();
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The fallback after a failed repair: keeps only the sentences that resolve cleanly.
pub fn trim_to_anchored(text: &str, known: &KnownRefs) -> ResolvedNarration {
    let kept: String = sentences(text)
        .into_iter()
        .filter(|s| resolve(s, known).is_ok())
        .collect();
    resolve(kept.trim(), known).unwrap_or(ResolvedNarration {
        text: String::new(),
        anchors: vec![],
    })
}

/// What may be shown of a narration the model is still writing: its complete
/// sentences, in order, up to the first one that does not resolve on its own (that
/// one and everything after it wait for the whole answer, which is judged as usual).
/// A sentence still being written never shows, so a marker cut in two or a figure
/// whose anchor has not arrived yet never reaches the person.
pub fn checked_prefix(partial: &str, known: &KnownRefs) -> ResolvedNarration {
    let mut end = 0;
    for sentence in sentences(partial) {
        // `sentences` cuts after a terminator: only the last piece may lack one.
        let complete = sentence.ends_with(['.', '!', '?', '\n']);
        if !complete || resolve(sentence, known).is_err() {
            break;
        }
        end += sentence.len();
    }
    resolve(partial[..end].trim_end(), known).unwrap_or(ResolvedNarration {
        text: String::new(),
        anchors: Vec::new(),
    })
}

/// What the narration policy (CONTRACT §7.2) makes of one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every marker resolved and no figure is bare.
    Accepted(ResolvedNarration),
    /// Rejected, and the one repair is still available: ask for it with these problems.
    Repair(Vec<NarrationProblem>),
    /// Rejected with no repair left: only the sentences that resolve remain.
    Trimmed(ResolvedNarration),
}

/// Applies the policy to `text`: accept it, ask for the one repair (`may_repair`),
/// or cut it to what is anchored.
pub fn judge(text: &str, known: &KnownRefs, may_repair: bool) -> Verdict {
    match resolve(text, known) {
        Ok(r) => Verdict::Accepted(r),
        Err(problems) if may_repair => Verdict::Repair(problems),
        Err(_) => Verdict::Trimmed(trim_to_anchored(text, known)),
    }
}

/// The repair request the model reads: every problem, in the runner's format.
pub fn repair_note(problems: &[NarrationProblem]) -> String {
    problems
        .iter()
        .map(|p| format!("{p:?}"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> KnownRefs {
        let mut k = KnownRefs::new();
        k.insert("company:EMP010101AB1", "Empaques Tapatíos");
        k.insert("evidence:count-1", "412");
        k
    }

    #[test]
    fn markers_become_labels_with_spans() {
        let r = resolve(
            "Hay [[evidence:count-1]] proveedores; destaca [[company:EMP010101AB1]].",
            &known(),
        )
        .unwrap();
        assert_eq!(r.text, "Hay 412 proveedores; destaca Empaques Tapatíos.");
        assert_eq!(&r.text[r.anchors[0].start..r.anchors[0].end], "412");
        assert_eq!(r.anchors[1].reference, "company:EMP010101AB1");
        assert!(!r.text.contains("[["));
    }

    #[test]
    fn an_unknown_ref_or_a_bare_number_is_rejected() {
        let errs = resolve("Destaca [[company:NOPE]] con 40 contratos.", &known()).unwrap_err();
        assert!(errs.contains(&NarrationProblem::UnresolvedRef("company:NOPE".into())));
        assert!(errs
            .iter()
            .any(|e| matches!(e, NarrationProblem::UnanchoredFigure(_))));
        let errs = resolve("Ver [[empresa:X]].", &known()).unwrap_err();
        assert_eq!(
            errs,
            vec![NarrationProblem::MalformedRef("empresa:X".into())]
        );
    }

    #[test]
    fn trimming_keeps_only_anchored_sentences() {
        let t = trim_to_anchored(
            "Hay [[evidence:count-1]] proveedores. Son 40 en total. Destaca [[company:NOPE]]! Te propongo guardarlos.",
            &known(),
        );
        assert_eq!(t.text, "Hay 412 proveedores. Te propongo guardarlos.");
        assert_eq!(t.anchors.len(), 1);
    }

    #[test]
    fn a_forbidden_word_in_the_prose_goes_to_repair_but_a_name_does_not() {
        let errs = resolve(
            "Revisé el universo de [[evidence:count-1]] proveedores.",
            &known(),
        )
        .unwrap_err();
        assert_eq!(
            errs,
            vec![NarrationProblem::ForbiddenWord("universo".into())]
        );
        let mut k = known();
        k.insert("company:MER010101AB1", "Mercado del Empaque");
        assert!(resolve("Destaca [[company:MER010101AB1]].", &k).is_ok());
        // Without a repair left, the sentence is cut like an unanchored one.
        let t = trim_to_anchored(
            "Hice un análisis completo. Hay [[evidence:count-1]] proveedores.",
            &known(),
        );
        assert_eq!(t.text, "Hay 412 proveedores.");
    }

    #[test]
    fn a_narration_being_written_shows_its_complete_sentences_that_resolve() {
        let k = known();
        // Nothing complete yet, and a marker cut in two never shows.
        assert_eq!(checked_prefix("Hay [[evidence:cou", &k).text, "");
        let first = checked_prefix(
            "Hay [[evidence:count-1]] proveedores. Destaca [[company:EMP0",
            &k,
        );
        assert_eq!(first.text, "Hay 412 proveedores.");
        assert_eq!(first.wire_anchors()[0].label, "412");
        let more = checked_prefix(
            "Hay [[evidence:count-1]] proveedores. Destaca [[company:EMP010101AB1]]. Te",
            &k,
        );
        assert_eq!(more.text, "Hay 412 proveedores. Destaca Empaques Tapatíos.");
        assert_eq!(more.anchors.len(), 2);
        // A sentence with a bare figure or an unknown ref stops the draft there: what
        // follows waits for the whole answer to be judged.
        for held in [
            "Hay [[evidence:count-1]] proveedores. Son 40 en total. Te propongo guardarlos.",
            "Hay [[evidence:count-1]] proveedores. Destaca [[company:NOPE]]. Te propongo guardarlos.",
            "Hay [[evidence:count-1]] proveedores. Hice un análisis. Te propongo guardarlos.",
        ] {
            assert_eq!(checked_prefix(held, &k).text, "Hay 412 proveedores.", "{held}");
        }
    }
}
