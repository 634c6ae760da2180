//! One module per page. Pages compose components and own their data resources.

mod knowledge;
mod login;
mod not_found;
mod settings;
mod tools;
mod workspace;

pub use knowledge::KnowledgeReviewPage;
pub use login::LoginPage;
pub use not_found::NotFoundPage;
pub use settings::SettingsPage;
pub use tools::ToolsPage;
pub use workspace::WorkspacePage;
