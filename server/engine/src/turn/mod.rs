//! Luna's turn: the compiled input (`input`), the model gateway (`gateway`) and its
//! OpenAI-compatible implementation with routing (`openai`), what the model may answer
//! (`intent`), how its narration is checked (`narration`) and the loop that runs it
//! all against the registry and the session log (`runner`).

pub mod gateway;
pub mod input;
pub mod intent;
pub mod narration;
pub mod openai;
pub mod runner;
pub mod service;

#[cfg(test)]
mod tests;
