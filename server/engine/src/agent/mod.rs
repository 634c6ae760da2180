//! The agent layer: what plays and governs Luna on top of the tools — the turn loop
//! (`turn`), decision cards and auto mode (`decisions`), the local director
//! (`director`), long research runs (`research`), the board projection (`screen`) and
//! the evals. It may import every layer below; nothing below imports it.

pub mod contract;
pub mod decisions;
pub mod director;
pub mod evals;
pub mod port;
pub mod research;
pub mod screen;
pub mod turn;
