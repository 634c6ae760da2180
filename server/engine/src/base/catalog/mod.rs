//! Closed Mexican catalogues the market domain validates against: the 32 federal
//! entities, SCIAN activities (giros) with Spanish synonyms, and RFC validation and
//! generation. All data is embedded at compile time; nothing is read at runtime.

pub mod csv;
pub mod rfc;
pub mod scian;
pub mod states;
pub mod text;

pub use rfc::{Rfc, RfcCheck, RfcKind};
pub use scian::{Giro, ScianClass};
pub use states::{State, StateContext};
