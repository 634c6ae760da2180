//! Mexico's time zones for sending windows: the IANA zone of a recipient from their
//! company's state (and, on the northern border, municipality), the zones a workspace
//! may choose, their Spanish names, and a local time in words
//! («lun 7 dic, 09:00 (hora del Pacífico)»). Zones come from `chrono-tz` (the IANA
//! database), never fixed offsets: Baja California and the border strip keep US
//! daylight saving time, the rest of the country has none since 2022.

use chrono::{Datelike, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text::fold;

/// The zone of a workspace that has not chosen one.
pub const DEFAULT_ZONE: Tz = Tz::America__Mexico_City;

/// The zones a workspace may choose, with their names in Ajustes.
pub const CHOICES: [(Tz, &str); 4] = [
    (Tz::America__Mexico_City, "Zona Centro (Ciudad de México)"),
    (Tz::America__Cancun, "Zona Sureste (Quintana Roo)"),
    (
        Tz::America__Mazatlan,
        "Zona Pacífico (Sinaloa, Nayarit, Baja California Sur, Sonora)",
    ),
    (Tz::America__Tijuana, "Zona Noroeste (Baja California)"),
];

/// Municipalities of the northern border strip that keep US daylight saving time,
/// folded, with their zone.
const BORDER: [(State, &str, Tz); 9] = [
    (State::Chihuahua, "juarez", Tz::America__Ciudad_Juarez),
    (
        State::Chihuahua,
        "ciudad juarez",
        Tz::America__Ciudad_Juarez,
    ),
    (State::Chihuahua, "ojinaga", Tz::America__Ojinaga),
    (State::Coahuila, "acuna", Tz::America__Matamoros),
    (State::Coahuila, "piedras negras", Tz::America__Matamoros),
    (State::NuevoLeon, "anahuac", Tz::America__Matamoros),
    (State::Tamaulipas, "nuevo laredo", Tz::America__Matamoros),
    (State::Tamaulipas, "reynosa", Tz::America__Matamoros),
    (State::Tamaulipas, "matamoros", Tz::America__Matamoros),
];

/// The official zone of a state (and municipality, where the state is split):
/// Zona Sureste for Quintana Roo, Zona Pacífico for Baja California Sur, Sinaloa,
/// Nayarit (but Bahía de Banderas) and Sonora (no daylight saving), Zona Noroeste for
/// Baja California, the border strip apart, Zona Centro for everything else.
pub fn of_state(state: State, city: Option<&str>) -> Tz {
    let city = city.map(fold).unwrap_or_default();
    if let Some((_, _, tz)) = BORDER.iter().find(|(s, c, _)| *s == state && *c == city) {
        return *tz;
    }
    match state {
        State::QuintanaRoo => Tz::America__Cancun,
        State::BajaCalifornia => Tz::America__Tijuana,
        State::BajaCaliforniaSur | State::Sinaloa => Tz::America__Mazatlan,
        State::Nayarit if city == "bahia de banderas" => Tz::America__Bahia_Banderas,
        State::Nayarit => Tz::America__Mazatlan,
        State::Sonora => Tz::America__Hermosillo,
        _ => Tz::America__Mexico_City,
    }
}

/// The zone of a recipient whose company is in `state` (any spelling the catalogue
/// knows) and `city`; `None` when the state is unknown (the workspace's zone applies).
pub fn of_place(state: Option<&str>, city: Option<&str>) -> Option<Tz> {
    let state = State::normalize(state?, StateContext::StateField).ok()?;
    Some(of_state(state, city))
}

/// A zone Luna knows by name (a stored or chosen one); `None` for anything else.
pub fn parse(name: &str) -> Option<Tz> {
    let tz: Tz = name.trim().parse().ok()?;
    is_mexican(tz).then_some(tz)
}

fn is_mexican(tz: Tz) -> bool {
    matches!(
        tz,
        Tz::America__Mexico_City
            | Tz::America__Cancun
            | Tz::America__Mazatlan
            | Tz::America__Hermosillo
            | Tz::America__Tijuana
            | Tz::America__Bahia_Banderas
            | Tz::America__Chihuahua
            | Tz::America__Ciudad_Juarez
            | Tz::America__Ojinaga
            | Tz::America__Matamoros
            | Tz::America__Merida
            | Tz::America__Monterrey
    )
}

/// «hora del Centro», «hora del Pacífico»…: how a person calls the zone.
pub fn label(tz: Tz) -> &'static str {
    match tz {
        Tz::America__Cancun => "hora del Sureste",
        Tz::America__Mazatlan | Tz::America__Hermosillo => "hora del Pacífico",
        Tz::America__Tijuana => "hora del Noroeste",
        Tz::America__Ciudad_Juarez | Tz::America__Ojinaga | Tz::America__Matamoros => {
            "hora de la frontera norte"
        }
        _ => "hora del Centro",
    }
}

const WEEKDAYS: [&str; 7] = ["lun", "mar", "mié", "jue", "vie", "sáb", "dom"];
const MONTHS: [&str; 12] = [
    "ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic",
];

/// `at` (Unix ms) in the zone, in words: «lun 7 dic, 09:00 (hora del Pacífico)».
pub fn local_words(at: i64, tz: Tz) -> String {
    let Some(t) = Utc.timestamp_millis_opt(at).single() else {
        return String::new();
    };
    let l = t.with_timezone(&tz);
    format!(
        "{} {} {}, {:02}:{:02} ({})",
        WEEKDAYS[l.weekday().num_days_from_monday() as usize],
        l.day(),
        MONTHS[l.month0() as usize],
        l.hour(),
        l.minute(),
        label(tz)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_gets_its_official_zone() {
        let z = |s: &str, c: Option<&str>| of_place(Some(s), c);
        assert_eq!(z("Quintana Roo", None), Some(Tz::America__Cancun));
        assert_eq!(z("Baja California", None), Some(Tz::America__Tijuana));
        assert_eq!(z("BCS", None), Some(Tz::America__Mazatlan));
        assert_eq!(z("Sinaloa", None), Some(Tz::America__Mazatlan));
        assert_eq!(z("Sonora", None), Some(Tz::America__Hermosillo));
        assert_eq!(z("Nayarit", Some("Tepic")), Some(Tz::America__Mazatlan));
        assert_eq!(
            z("Nayarit", Some("Bahía de Banderas")),
            Some(Tz::America__Bahia_Banderas)
        );
        // Chihuahua is Zona Centro since 2022, but Ciudad Juárez keeps US time.
        assert_eq!(
            z("Chihuahua", Some("Chihuahua")),
            Some(Tz::America__Mexico_City)
        );
        assert_eq!(
            z("Chihuahua", Some("Juárez")),
            Some(Tz::America__Ciudad_Juarez)
        );
        assert_eq!(z("CDMX", None), Some(Tz::America__Mexico_City));
        assert_eq!(
            z("Jalisco", Some("Guadalajara")),
            Some(Tz::America__Mexico_City)
        );
        assert_eq!(of_place(None, None), None);
        assert_eq!(of_place(Some("Texas"), None), None);
    }

    #[test]
    fn only_mexican_zones_parse() {
        assert_eq!(parse("America/Cancun"), Some(Tz::America__Cancun));
        assert_eq!(parse("Europe/Madrid"), None);
        assert_eq!(parse("UTC-6"), None);
        assert!(CHOICES.iter().all(|(tz, _)| parse(tz.name()) == Some(*tz)));
    }

    #[test]
    fn a_local_time_reads_in_spanish_with_its_zone() {
        // 2026-12-07 17:00 UTC: Monday 09:00 in Tijuana (UTC−8 in winter) and Mazatlán
        // (UTC−7) is 10:00, Mexico City 11:00, Cancún 12:00.
        let at = Utc
            .with_ymd_and_hms(2026, 12, 7, 17, 0, 0)
            .unwrap()
            .timestamp_millis();
        assert_eq!(
            local_words(at, Tz::America__Tijuana),
            "lun 7 dic, 09:00 (hora del Noroeste)"
        );
        assert_eq!(
            local_words(at, Tz::America__Mazatlan),
            "lun 7 dic, 10:00 (hora del Pacífico)"
        );
        assert_eq!(
            local_words(at, Tz::America__Cancun),
            "lun 7 dic, 12:00 (hora del Sureste)"
        );
        // Baja California keeps daylight saving time: in July it is UTC−7.
        let july = Utc
            .with_ymd_and_hms(2026, 7, 6, 16, 0, 0)
            .unwrap()
            .timestamp_millis();
        assert_eq!(
            local_words(july, Tz::America__Tijuana),
            "lun 6 jul, 09:00 (hora del Noroeste)"
        );
        assert_eq!(
            local_words(july, Tz::America__Mexico_City),
            "lun 6 jul, 10:00 (hora del Centro)"
        );
    }
}
