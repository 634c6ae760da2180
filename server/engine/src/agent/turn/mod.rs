//! Luna's turn: the compiled input (`input`), the model gateway (`gateway`) and its
//! OpenAI-compatible implementation with routing (`openai`), what the model may answer
//! (`intent`), the session's memory and stage (`memory`), chained requests (`plan`),
//! how its narration is checked (`narration`), the loop that runs it all against the
//! registry and the session log (`runner`), the API that starts turns (`service`), steering a running turn (`steering`) and
//! the step-by-step record of each turn that the evals read (`trajectory`).

pub mod gateway;
pub mod input;
pub mod intent;
pub mod memory;
pub mod narration;
pub mod openai;
pub mod plan;
pub mod runner;
pub mod service;
pub mod steering;
pub mod trajectory;

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod steering_tests;
#[cfg(test)]
mod tests;
