//! Who is calling and through where: the browser (`ui`), the chat's model (`luna`) or
//! an outside agent over MCP (`mcp`).

/// Where a tool is visible and who is calling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// Outside agents over `/mcp` (public catalog).
    Mcp,
    /// The chat's model.
    Luna,
    /// The browser's direct actions.
    Ui,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Mcp => "mcp",
            Surface::Luna => "luna",
            Surface::Ui => "ui",
        }
    }
}
