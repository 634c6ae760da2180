//! The demo workspaces' names and plans, shared by every domain's demo seed.

use luna_protocol::account::Plan;

/// The demo workspaces, in seeding order.
pub const DEMO_WORKSPACES: &[(&str, Plan)] = &[
    ("Empaques del Bajío", Plan::Founder),
    ("Consultoría Ibarra", Plan::Explorer),
];
