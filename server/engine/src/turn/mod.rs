//! Luna's turn: what the model may answer (`intent`) and how its narration is checked
//! against the objects validated in the turn (`narration`).

pub mod intent;
pub mod narration;
