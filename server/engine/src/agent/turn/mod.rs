//! Luna's turn: the compiled input (`input`), the model gateway (`gateway`) and its
//! OpenAI-compatible implementation with routing (`openai`), what the model may answer
//! (`intent`), how its narration is checked (`narration`), the loop that runs it
//! all against the registry and the session log (`runner`) and the step-by-step record
//! of each turn that the evals read (`trajectory`).

pub mod gateway;
pub mod input;
pub mod intent;
pub mod narration;
pub mod openai;
pub mod runner;
pub mod service;
pub mod trajectory;

#[cfg(test)]
mod tests;
