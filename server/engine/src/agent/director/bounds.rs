//! Stage 4c of the director's interpreter: the bounds a request puts on amounts and
//! dates, as people write them. Amounts: «de más de 10 millones», «10 mdp para arriba»,
//! «entre 1 y 3 millones», «medio millón o menos», «> 5M», «800k», «arriba de 5
//! melones». Dates: «en 2024», «desde 2023», «este año», «el año pasado», «este mes»,
//! and months («entre enero y junio del 2024», «desde febrero de 2023»). Company size:
//! «micro», «pequeñas», «medianas», «grandes».

use super::words::phrase;
use crate::base::catalog::text::fold;

/// What folding would lose or keep glued, written as words first: comparison signs
/// («> 5M» → «mas de 5 M», «<2 millones» → «menos de 2 millones»), a number glued to
/// its money word («5M», «800k», «10mdp» → «5 M», «800 k», «10 mdp»), a thousands
/// comma dropped («750,000» → «750000»), a decimal point kept as `d` so folding does
/// not cut the number in two («3.5 millones» → «3d5 millones»), and a peso sign as the
/// word («$750,000» → «750000 pesos»).
pub(super) fn spell_out(message: &str) -> String {
    let signs = message
        .replace(">=", " al menos ")
        .replace("<=", " hasta ")
        .replace('>', " mas de ")
        .replace('<', " menos de ");
    let chars: Vec<char> = signs.chars().collect();
    let digits_at = |i: usize| chars[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut out = String::with_capacity(signs.len() + 8);
    let mut word_has_letter = false;
    let mut peso = false;
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let after_digit = i > 0 && chars[i - 1].is_ascii_digit();
        if ch.is_whitespace() {
            word_has_letter = false;
        }
        if ch == '$' && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
            peso = true;
            i += 1;
            continue;
        }
        if (ch == ',' || ch == '.')
            && after_digit
            && chars.get(i + 1).is_some_and(char::is_ascii_digit)
        {
            let next = digits_at(i + 1);
            // «750,000»: a group of three after a comma is thousands; else a decimal.
            if !(ch == ',' && next == 3) {
                out.push('d');
            }
            i += 1;
            continue;
        }
        if peso && !ch.is_ascii_digit() {
            // «$5M», «$5 millones»: the money word that follows says how much.
            let next_word: String = chars[i..]
                .iter()
                .skip_while(|c| c.is_whitespace())
                .take_while(|c| c.is_alphabetic())
                .collect();
            if money(&fold(&next_word)).is_none() {
                out.push_str(" pesos");
            }
            peso = false;
        }
        // Only a number that starts its word: «IPT880412AB3» stays one word.
        if after_digit && !word_has_letter && ch.is_alphabetic() {
            out.push(' ');
        }
        if ch.is_alphabetic() {
            word_has_letter = true;
        }
        out.push(ch);
        i += 1;
    }
    if peso {
        out.push_str(" pesos");
    }
    out
}

/// A number word: digits («10», «3d5» for 3.5 as `spell_out` writes it) or «medio» /
/// «un» / «una».
pub(super) fn number(w: &str) -> Option<f64> {
    match w {
        "medio" => Some(0.5),
        "un" | "una" => Some(1.0),
        _ => w
            .replace('d', ".")
            .parse::<f64>()
            .ok()
            .or_else(|| super::words::number(w).map(f64::from)),
    }
}

/// The multiplier a money word gives, if it is one.
fn money(w: &str) -> Option<f64> {
    // «melones»: millions, in Mexican slang.
    if w.starts_with("millon")
        || w.starts_with("melon")
        || ["mdp", "mdd", "m", "mill", "million", "millions"].contains(&w)
    {
        Some(1_000_000.0)
    } else if w == "mil" || w == "k" {
        Some(1_000.0)
    } else if w.starts_with("peso") {
        Some(1.0)
    } else {
        None
    }
}

/// Amount bounds: a number followed by a money word, bounded by the words around it.
pub(super) fn amounts(words: &[&str]) -> (Option<f64>, Option<f64>) {
    let mut found: Vec<(usize, f64)> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if let Some(n) = number(words[i]) {
            // «10 millones», «10 mdp», «1 y 3 millones» (the multiplier of the second).
            let next = words.get(i + 1).copied().unwrap_or("");
            let mult = money(next).or_else(|| {
                (next == "y" || next == "a")
                    .then(|| {
                        words
                            .get(i + 2)
                            .and_then(|w| number(w))
                            .and(words.get(i + 3).and_then(|w| money(w)))
                    })
                    .flatten()
            });
            if let Some(m) = mult {
                found.push((i, n * m));
            }
        }
        i += 1;
    }
    let Some(&(at, first)) = found.first() else {
        return (None, None);
    };
    let before = |k: usize| -> String { words[at.saturating_sub(k)..at].join(" ") };
    let after: String = words[(at + 2).min(words.len())..(at + 5).min(words.len())].join(" ");
    if let Some(&(_, second)) = found.get(1).filter(|_| before(1) == "entre") {
        return (Some(first.min(second)), Some(first.max(second)));
    }
    let b = before(3);
    let is_max = [
        "menos de",
        "hasta",
        "maximo",
        "menor a",
        "menores a",
        "menor de",
        "no mas de",
    ]
    .iter()
    .any(|p| b.ends_with(p))
        || after.starts_with("o menos")
        || after.starts_with("para abajo")
        || after.starts_with("pa abajo")
        || after.starts_with("or less");
    if is_max {
        (None, Some(first))
    } else {
        (Some(first), None)
    }
}

fn year(w: &str) -> Option<i32> {
    w.parse::<i32>().ok().filter(|y| (2000..=2100).contains(y))
}

/// A time window: years named, «este año», «el año pasado», «este mes».
pub(super) fn window(
    folded: &str,
    words: &[&str],
    today: (i32, u32),
) -> (Option<String>, Option<String>) {
    let (y, m) = today;
    if phrase(folded, "este ano") || phrase(folded, "en lo que va del ano") {
        return (Some(y.to_string()), None);
    }
    if phrase(folded, "el ano pasado") || phrase(folded, "ano pasado") {
        let last = (y - 1).to_string();
        return (Some(last.clone()), Some(last));
    }
    if phrase(folded, "este mes") {
        return (Some(format!("{y:04}-{m:02}")), None);
    }
    if let Some(months) = months_window(words, y) {
        return months;
    }
    if let Some(from) = short_year_since(words, y) {
        return (Some(from.to_string()), None);
    }
    // «del 2021 al 2023», «entre 2021 y 2023», «2021 a 2023», «2021-2023»: a span.
    let years: Vec<(usize, i32)> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| year(w).map(|y| (i, y)))
        .collect();
    if let [(i1, y1), (i2, y2), ..] = years.as_slice() {
        let between = &words[i1 + 1..*i2];
        if between.len() <= 1
            && between
                .iter()
                .all(|w| ["a", "al", "y", "hasta", "to"].contains(w))
        {
            return (Some(y1.min(y2).to_string()), Some(y1.max(y2).to_string()));
        }
    }
    for (i, w) in words.iter().enumerate() {
        let Some(found) = year(w) else { continue };
        let prev = if i > 0 { words[i - 1] } else { "" };
        let prev2 = if i > 1 { words[i - 2] } else { "" };
        // «del 2021 a la fecha», «2022 pa acá», «de 2020 a hoy».
        let next: String = words[i + 1..(i + 4).min(words.len())].join(" ");
        if [
            "a la fecha",
            "pa aca",
            "para aca",
            "a hoy",
            "al dia de hoy",
            "a la actualidad",
            "to date",
        ]
        .iter()
        .any(|p| next.starts_with(p))
        {
            return (Some(found.to_string()), None);
        }
        return match (prev2, prev) {
            (_, "desde") | ("partir", "de") | (_, "since") => (Some(found.to_string()), None),
            (_, "hasta") | (_, "antes") => (None, Some(found.to_string())),
            _ => (Some(found.to_string()), Some(found.to_string())),
        };
    }
    (None, None)
}

/// «desde el 22», «a partir del 19»: a year written with two digits after a word of
/// starting, never a day («desde el 22 de marzo») nor a quantity («desde 22 mil»);
/// only years up to the current one.
fn short_year_since(words: &[&str], this_year: i32) -> Option<i32> {
    words.iter().enumerate().find_map(|(i, w)| {
        let two = w.len() == 2 && w.bytes().all(|b| b.is_ascii_digit());
        let yy: i32 = w.parse().ok().filter(|_| two)?;
        let prev = |k: usize| i.checked_sub(k).map_or("", |p| words[p]);
        let since = prev(1) == "desde"
            || (prev(1) == "el" && prev(2) == "desde")
            || (prev(1) == "del" && prev(2) == "partir");
        let next = words.get(i + 1).copied().unwrap_or("");
        let not_a_year = ["de", "mil", "millones", "mdp", "k", "por", "pct"].contains(&next);
        let year = 2000 + yy;
        (since && !not_a_year && year <= this_year && yy >= 10).then_some(year)
    })
}

const MONTHS: [&[&str]; 12] = [
    &["enero", "ene", "january", "jan"],
    &["febrero", "feb", "february"],
    &["marzo", "mar", "march"],
    &["abril", "abr", "april", "apr"],
    &["mayo", "may"],
    &["junio", "jun", "june"],
    &["julio", "jul", "july"],
    &["agosto", "ago", "august", "aug"],
    &["septiembre", "setiembre", "sept", "september"],
    &["octubre", "oct", "october"],
    &["noviembre", "nov", "november"],
    &["diciembre", "dic", "december", "dec"],
];

/// The month a word names (1–12); abbreviations only next to a year or another month.
fn month(w: &str) -> Option<u32> {
    MONTHS
        .iter()
        .position(|names| names[0] == w || names[1..].contains(&w))
        .and_then(|m| u32::try_from(m + 1).ok())
}

/// A window of months: «entre enero y junio del 2024», «de marzo a mayo», «desde
/// febrero de 2023», «en abril 2024». A month with no year is of the current year.
/// Abbreviations («sep», «mar») count only next to a year or another month.
fn months_window(words: &[&str], this_year: i32) -> Option<(Option<String>, Option<String>)> {
    let full = |w: &str| MONTHS.iter().any(|names| names[0] == w);
    let found: Vec<(usize, u32)> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| month(w).map(|m| (i, m)))
        .collect();
    let year_near = |i: usize| {
        words[i + 1..(i + 4).min(words.len())]
            .iter()
            .find_map(|w| year(w))
    };
    let kept: Vec<(usize, u32)> = found
        .iter()
        .copied()
        .filter(|(i, _)| full(words[*i]) || year_near(*i).is_some() || found.len() > 1)
        .collect();
    let (&(i1, m1), last) = (kept.first()?, kept.last()?);
    let (i2, m2) = *last;
    let y = year_near(i2).or_else(|| year_near(i1)).unwrap_or(this_year);
    let at = |m: u32| format!("{y:04}-{m:02}");
    let prev = if i1 > 0 { words[i1 - 1] } else { "" };
    Some(if i2 > i1 {
        (Some(at(m1.min(m2))), Some(at(m1.max(m2))))
    } else {
        match prev {
            "desde" | "since" | "from" => (Some(at(m1)), None),
            "hasta" | "until" | "antes" => (None, Some(at(m1))),
            _ => (Some(at(m1)), Some(at(m1))),
        }
    })
}

/// The size band a request names, by word stem.
pub(super) fn size(words: &[&str]) -> Option<&'static str> {
    if starts_any(words, &["micro"]) {
        Some("micro")
    } else if starts_any(words, &["pequen", "chica", "chico", "small"]) {
        Some("pequena")
    } else if starts_any(words, &["median", "medium"]) {
        Some("mediana")
    } else if starts_any(words, &["grand", "large", "big"]) {
        Some("grande")
    } else {
        None
    }
}

/// Whether any word starts with any of `stems`.
pub(super) fn starts_any(words: &[&str], stems: &[&str]) -> bool {
    words.iter().any(|w| stems.iter().any(|s| w.starts_with(s)))
}
