//! A minimal RFC 4180 CSV reader (quoted fields, doubled quotes, CRLF, newlines inside
//! quotes) for the embedded catalogues and the SAT 69-B list. Avoids a dependency for
//! what is a few dozen lines.

/// Parses `text` into records of fields. Never fails: malformed quoting is read
/// leniently (a stray quote inside an unquoted field is kept as a character).
pub fn parse(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut field_started_quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' if field.is_empty() && !field_started_quoted => {
                in_quotes = true;
                field_started_quoted = true;
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                field_started_quoted = false;
            }
            '\r' => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                field_started_quoted = false;
                records.push(std::mem::take(&mut record));
            }
            other => field.push(other),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_quotes_commas_and_crlf() {
        let rows = super::parse("a,\"b, c\",\"d \"\"e\"\"\"\r\n1,,3\r\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], vec!["a", "b, c", "d \"e\""]);
        assert_eq!(rows[1], vec!["1", "", "3"]);
    }
}
