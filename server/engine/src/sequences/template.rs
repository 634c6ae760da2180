//! Personalising a step for one recipient: `{{variable}}` placeholders filled from the
//! recipient's contact and the company's evidence, and the SHA-256 fingerprint of what
//! a person authorizes (sender + audience + rendered content of one step).

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::model::{Recipient, Step};

/// The variables a template may use, in Spanish, as the person sees them.
pub const VARIABLES: [&str; 6] = [
    "nombre",
    "empresa",
    "puesto",
    "estado",
    "adjudicacion",
    "remitente",
];

/// A rendered step for one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub body: String,
    /// Placeholders that had no value for this recipient.
    pub empty: Vec<String>,
    /// Placeholders that are not variables at all (a typo such as `{{nombr}}`).
    pub unknown: Vec<String>,
}

/// Fills `{{var}}` in `text` from `vars`. Unknown or empty variables render as "" and
/// are reported.
fn fill(
    text: &str,
    vars: &BTreeMap<String, String>,
    empty: &mut Vec<String>,
    unknown: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = after[..end].trim().to_lowercase();
        if !VARIABLES.contains(&name.as_str()) {
            if !unknown.contains(&name) {
                unknown.push(name);
            }
        } else {
            match vars.get(&name).filter(|v| !v.trim().is_empty()) {
                Some(v) => out.push_str(v),
                None => {
                    if !empty.contains(&name) {
                        empty.push(name);
                    }
                }
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

pub fn render(step: &Step, recipient: &Recipient) -> Rendered {
    let (mut empty, mut unknown) = (Vec::new(), Vec::new());
    let subject = fill(&step.subject, &recipient.vars, &mut empty, &mut unknown);
    let body = fill(&step.body, &recipient.vars, &mut empty, &mut unknown);
    Rendered {
        subject,
        body,
        empty,
        unknown,
    }
}

/// SHA-256 over sender + the sorted audience + every recipient's rendered subject and
/// body of step `index`, with its delay. Any change to any of them changes it.
pub fn fingerprint(sender: &str, index: usize, step: &Step, audience: &[Recipient]) -> String {
    let mut sorted: Vec<&Recipient> = audience.iter().collect();
    sorted.sort_by(|a, b| a.email.cmp(&b.email));
    let mut h = Sha256::new();
    h.update(b"luna/sequence-step/v1\0");
    h.update(sender.as_bytes());
    h.update([0]);
    h.update(index.to_le_bytes());
    h.update(step.delay_days.to_le_bytes());
    for r in sorted {
        let rendered = render(step, r);
        for part in [&r.email, &rendered.subject, &rendered.body] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipient(email: &str, name: &str) -> Recipient {
        let mut vars = BTreeMap::new();
        vars.insert("nombre".into(), name.into());
        vars.insert("empresa".into(), "Cartonera Jalisco".into());
        Recipient {
            email: email.into(),
            record_id: "rec_1".into(),
            vars,
            time_zone: None,
        }
    }

    fn step(body: &str) -> Step {
        Step {
            delay_days: 0,
            subject: "Hola {{nombre}}".into(),
            body: body.into(),
        }
    }

    #[test]
    fn placeholders_fill_and_report_empty_and_unknown_ones() {
        let r = render(
            &step("{{empresa}} le vendió a {{adjudicacion}}; saludos {{nombr}}"),
            &recipient("a@x.mx", "Ana"),
        );
        assert_eq!(r.subject, "Hola Ana");
        assert_eq!(r.body, "Cartonera Jalisco le vendió a ; saludos ");
        assert_eq!(r.empty, ["adjudicacion"]);
        assert_eq!(r.unknown, ["nombr"]);
    }

    #[test]
    fn the_fingerprint_changes_with_sender_audience_or_content_only() {
        let aud = vec![recipient("a@x.mx", "Ana"), recipient("b@x.mx", "Beto")];
        let s = step("Texto");
        let f = fingerprint("Luna <ventas@x.mx>", 0, &s, &aud);
        let reversed: Vec<Recipient> = aud.iter().rev().cloned().collect();
        assert_eq!(f, fingerprint("Luna <ventas@x.mx>", 0, &s, &reversed));
        assert_ne!(f, fingerprint("Otro <otro@x.mx>", 0, &s, &aud));
        assert_ne!(
            f,
            fingerprint("Luna <ventas@x.mx>", 0, &step("Texto."), &aud)
        );
        assert_ne!(f, fingerprint("Luna <ventas@x.mx>", 0, &s, &aud[..1]));
        assert_ne!(f, fingerprint("Luna <ventas@x.mx>", 1, &s, &aud));
    }
}
