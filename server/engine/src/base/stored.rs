//! Typed storage at the edge of a `rows.rs`: statuses and kinds stored as text map to
//! enums through one table (`text_enum!`), JSON text columns decode into their types,
//! and a stored value the code does not know is a typed internal error, never a panic
//! or a silent default.

use serde::de::DeserializeOwned;

use crate::base::error::{EngineError, EngineResult};

/// A stored value the code cannot read: the database and the code disagree. Logged,
/// never shown (`EngineError::Internal`).
pub fn unknown(what: &str, text: &str) -> EngineError {
    EngineError::internal(format!("stored {what}: unknown value {text:?}"))
}

/// Parses stored text with an enum's own `parse`; unknown text is [`unknown`].
pub fn parse<T>(what: &str, text: &str, parse: impl FnOnce(&str) -> Option<T>) -> EngineResult<T> {
    parse(text).ok_or_else(|| unknown(what, text))
}

/// Decodes a JSON text column.
pub fn json<T: DeserializeOwned>(what: &str, text: &str) -> EngineResult<T> {
    serde_json::from_str(text).map_err(|e| EngineError::internal(format!("stored {what}: {e}")))
}

/// Decodes an optional JSON text column (`NULL` is `None`).
pub fn opt_json<T: DeserializeOwned>(what: &str, text: Option<&str>) -> EngineResult<Option<T>> {
    text.map(|t| json(what, t)).transpose()
}

/// A count stored as `i64`, clamped into `u32` (negatives are 0).
pub fn count(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// An enum stored as text, with its one text mapping.
pub trait TextEnum: Sized + Copy + PartialEq + std::fmt::Debug + 'static {
    const ALL: &'static [Self];
    fn as_str(self) -> &'static str;
    /// The stored text back to the variant; unknown text is a typed error.
    fn from_stored(text: &str) -> EngineResult<Self>;
}

/// Declares an enum stored as text: `Variant = "text"` is its only mapping. Gives
/// `as_str`, `ALL`, `FromStr` (unknown text: [`unknown`]) and [`TextEnum`].
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::base::error::EngineError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err($crate::base::stored::unknown(stringify!($name), other)),
                }
            }
        }

        impl $crate::base::stored::TextEnum for $name {
            const ALL: &'static [Self] = $name::ALL;

            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }

            fn from_stored(text: &str) -> $crate::base::error::EngineResult<Self> {
                text.parse()
            }
        }
    };
}
pub(crate) use text_enum;

/// Test helper: every variant's text reads back as itself, and text no variant has is
/// an internal error.
#[cfg(test)]
pub fn assert_round_trips<T: TextEnum>() {
    for v in T::ALL {
        assert_eq!(T::from_stored(v.as_str()).ok(), Some(*v), "{v:?}");
    }
    let err = T::from_stored("no-such-value").expect_err("unknown text must fail");
    assert!(
        matches!(err, EngineError::Internal(ref m) if m.contains("no-such-value")),
        "{err:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    text_enum! {
        enum Probe { Uno = "uno", Dos = "dos" }
    }

    #[test]
    fn a_text_enum_round_trips_and_rejects_unknown_text() {
        assert_round_trips::<Probe>();
        assert_eq!(Probe::Dos.as_str(), "dos");
        assert!("Dos".parse::<Probe>().is_err());
    }

    #[test]
    fn bad_stored_json_is_an_internal_error() {
        let err = json::<Vec<u32>>("probe", "{").expect_err("bad json");
        assert!(matches!(err, EngineError::Internal(_)));
        assert_eq!(opt_json::<u32>("probe", None).ok(), Some(None));
        assert_eq!(opt_json::<u32>("probe", Some("7")).ok(), Some(Some(7)));
    }
}
