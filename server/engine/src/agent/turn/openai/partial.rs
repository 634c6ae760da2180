//! The narration of a final answer that is still arriving. The answer is one JSON
//! object (`{"intent": …, "narracion": "…"}`, see `prompt::SYSTEM_PROMPT`); while it
//! streams, [`narration_so_far`] finds the `narracion` string in the text received so
//! far and decodes what of it has arrived, so the runner can show it before the
//! object is complete. The whole answer is still parsed and judged once it ends.
//!
//! Written here rather than with a partial-JSON crate: only one string field of one
//! object is needed, its decoding is `serde_json`'s (the scan only finds where the
//! string starts and where the received part may safely be cut), and it runs once per
//! streamed chunk on a few kilobytes.

/// The key the answer's narration comes under.
const KEY: &str = "\"narracion\"";

/// The decoded `narracion` received so far (`None` until its opening quote arrived).
/// An escape cut in two is left out until its rest arrives.
pub fn narration_so_far(content: &str) -> Option<String> {
    let start = value_start(content)?;
    let raw = &content[start..];
    // Up to the closing quote, or everything received.
    let mut end = raw.len();
    let mut escaped = false;
    for (i, b) in raw.bytes().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut raw = &raw[..end];
    // A cut escape: a lone backslash, or `\u` with fewer than four hex digits.
    if let Some(cut) = raw.rfind('\\') {
        let tail = &raw[cut..];
        let backslashes = raw[..=cut]
            .bytes()
            .rev()
            .take_while(|b| *b == b'\\')
            .count();
        let is_escape_start = backslashes % 2 == 1;
        if is_escape_start && (tail.len() == 1 || (tail.starts_with("\\u") && tail.len() < 6)) {
            raw = &raw[..cut];
        }
    }
    decode(raw).or_else(|| {
        // A surrogate pair cut between its halves: wait for the second half.
        raw.rfind("\\u").and_then(|cut| decode(&raw[..cut]))
    })
}

/// Where the narration's characters start: just after the opening quote of the value
/// of a `"narracion"` key (not one inside another string, which would be escaped).
fn value_start(content: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = content[from..].find(KEY) {
        let key = from + found;
        from = key + KEY.len();
        if content[..key].ends_with('\\') {
            continue;
        }
        let rest = content[from..].trim_start();
        let Some(after_colon) = rest.strip_prefix(':') else {
            continue;
        };
        let value = after_colon.trim_start();
        if value.starts_with('"') {
            return Some(content.len() - value.len() + 1);
        }
        // The value has not arrived yet (or is not a string).
        return None;
    }
    None
}

fn decode(raw: &str) -> Option<String> {
    serde_json::from_str::<String>(&format!("\"{raw}\"")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narration_grows_with_the_text_received_and_ends_at_its_quote() {
        let answer = r#"{"intent": {"tipo": "responder"}, "narracion": "Encontré a [[company:E1]].\nTe \"propongo\" guardarlos."}"#;
        let mut seen = Vec::new();
        for end in (0..=answer.len()).filter(|i| answer.is_char_boundary(*i)) {
            if let Some(n) = narration_so_far(&answer[..end]) {
                seen.push(n);
            }
        }
        assert_eq!(
            seen.last().map(String::as_str),
            Some("Encontré a [[company:E1]].\nTe \"propongo\" guardarlos.")
        );
        // Every step extends the one before: nothing shown is ever taken back.
        for pair in seen.windows(2) {
            assert!(
                pair[1].starts_with(&pair[0]),
                "{:?} then {:?}",
                pair[0],
                pair[1]
            );
        }
        assert!(seen.len() > 10, "it grew piece by piece");
    }

    #[test]
    fn cut_escapes_wait_for_their_rest() {
        assert_eq!(
            narration_so_far(r#"{"narracion": "Hola\"#).as_deref(),
            Some("Hola")
        );
        assert_eq!(
            narration_so_far(r#"{"narracion": "Compa\u00"#).as_deref(),
            Some("Compa")
        );
        assert_eq!(
            narration_so_far(r#"{"narracion": "Compa\u00f1"#).as_deref(),
            Some("Compañ")
        );
        // An emoji's surrogate pair cut between its halves.
        assert_eq!(
            narration_so_far(r#"{"narracion": "Listo \ud83d"#).as_deref(),
            Some("Listo ")
        );
        assert_eq!(
            narration_so_far(r#"{"narracion": "Listo \ud83d\ude80"#).as_deref(),
            Some("Listo 🚀")
        );
        // An escaped backslash is complete.
        assert_eq!(
            narration_so_far(r#"{"narracion": "a\\"#).as_deref(),
            Some("a\\")
        );
    }

    #[test]
    fn only_the_narracion_value_counts() {
        assert_eq!(narration_so_far(r#"{"intent": {"tipo": "resp"#), None);
        assert_eq!(narration_so_far(r#"{"intent": {}, "narracion""#), None);
        // The key quoted inside another string is not the field.
        let quoted = r#"{"intent": {"criterio": "di \"narracion\": \"no\""}, "narracion": "sí"}"#;
        assert_eq!(narration_so_far(quoted).as_deref(), Some("sí"));
        // A fenced answer reads the same.
        assert_eq!(
            narration_so_far("```json\n{\"narracion\": \"Va").as_deref(),
            Some("Va")
        );
    }
}
