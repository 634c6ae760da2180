//! The layering rule, enforced: every `crate::` path in the engine's non-test code is
//! read and its target's layer compared with the file's own. A file may name its own
//! layer or any layer below it, never one above (see ARCHITECTURE.md, "Layers"):
//!
//! `base` → domains (`accounts` → `billing` → `session` → `market` → `crm` → `people`
//! → `knowledge` → `sequences`, each may use the ones before it) → `registry` (with
//! `crate::Engine`, the services struct) → `tools` → `agent` → the composition root
//! (`lib.rs`, `demo`, `testkit`).
//!
//! [`KNOWN_UPWARD`] lists the imports that still go up, each with why; the list may
//! only shrink: an entry that no longer occurs fails the test too.
//!
//! The code map, enforced: every module of the engine, the server, the app, the
//! protocol and the frontend is named (in backticks) in ARCHITECTURE.md's "Code map",
//! so the map lists the code a reader will find; and none is over
//! [`MAX_MODULE_LINES`] lines but the data in [`DATA_MODULES`].

use std::collections::BTreeSet;
use std::path::Path;

/// The layer of a crate-level name, as a rank (higher sits above). Domains share
/// rank 1 and are ordered among themselves by [`DOMAINS`].
fn rank(top: &str) -> Option<u8> {
    Some(match top {
        "base" | "catalog" | "clock" | "error" | "ids" | "password" | "store" | "EngineError"
        | "EngineResult" | "Store" => 0,
        d if DOMAINS.contains(&d) => 1,
        "registry" | "Engine" => 2,
        "tools" => 3,
        "agent" | "turn" | "decisions" | "director" | "research" | "screen" | "evals" => 4,
        "demo" | "testkit" | "lib" => 5,
        _ => return None,
    })
}

/// The domains, lowest first: a domain may use the ones listed before it.
const DOMAINS: &[&str] = &[
    "accounts",
    "billing",
    "session",
    "market",
    "crm",
    "people",
    "knowledge",
    "sequences",
];

/// The parts of the agent layer, lowest first: each may use the ones listed before it.
/// The turn contract sits at the bottom; the director is a model that speaks it;
/// research runs use the director; cards start research runs; the turn loop drives
/// them all; the tools' port, the screen and the evals sit on top.
const AGENT: &[&str] = &[
    "contract",
    "director",
    "research",
    "decisions",
    "turn",
    "port",
    "screen",
    "evals",
];

/// Imports that still go up a layer: (file under `src/`, the name it imports).
const KNOWN_UPWARD: &[(&str, &str)] = &[];

/// The crate-level names a source text refers to through `crate::…` paths, grouped
/// `use crate::{a::X, b}` forms included.
fn crate_names(src: &str) -> BTreeSet<String> {
    names_under(src, "crate::")
}

/// The first names after `prefix` (`crate::`, `crate::agent::`) in a source text.
fn names_under(src: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = src;
    while let Some(i) = rest.find(prefix) {
        rest = &rest[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group, up to its closing brace.
            let (mut depth, mut item, mut end) = (0usize, String::new(), group.len());
            for (j, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = j;
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        push_first(&mut out, &item);
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(ch);
            }
            push_first(&mut out, &item);
            rest = &group[end..];
        } else {
            push_first(&mut out, rest);
        }
    }
    out
}

fn push_first(out: &mut BTreeSet<String>, path: &str) {
    let name: String = path
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if !name.is_empty() && name != "self" {
        out.insert(name);
    }
}

/// The upward imports of one file (`rel` is its path under `src/`).
fn upward(rel: &str, src: &str) -> Vec<String> {
    let own = rel.split('/').next().unwrap_or(rel).trim_end_matches(".rs");
    let Some(own_rank) = rank(own) else {
        return vec![format!("{own} (a top-level module with no layer)")];
    };
    // Inline test modules are tests: they may use anything.
    let code = src.split("#[cfg(test)]\nmod tests {").next().unwrap_or(src);
    let mut up: Vec<String> = Vec::new();
    if own == "agent" {
        let part = rel.split('/').nth(1).unwrap_or("").trim_end_matches(".rs");
        let pos = |p: &str| AGENT.iter().position(|x| *x == p);
        if let Some(own_pos) = pos(part) {
            up.extend(
                names_under(code, "crate::agent::")
                    .into_iter()
                    .filter(|t| t != part && pos(t).is_none_or(|p| p > own_pos))
                    .map(|t| format!("agent::{t}")),
            );
        }
    }
    up.extend(
        crate_names(code)
            .into_iter()
            .filter(|t| t != own)
            .filter(|t| match rank(t) {
                None => true,
                Some(r) if r > own_rank => true,
                Some(1) if own_rank == 1 => {
                    let pos = |d: &str| DOMAINS.iter().position(|x| *x == d);
                    pos(t) > pos(own)
                }
                Some(_) => false,
            }),
    );
    up
}

fn is_test_file(rel: &str) -> bool {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    file == "tests.rs" || file.ends_with("_tests.rs") || rel.contains("/tests/")
}

/// Every `.rs` file under `dir` as (its path relative to `root`, its text), in order.
fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("the engine's sources are readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            let src = std::fs::read_to_string(&path).expect("a source file");
            out.push((rel, src));
        }
    }
}

/// One non-test source file of a crate the code map describes.
struct Module {
    /// The crate's source root, from the engine's directory (one of [`MAPPED_CRATES`]).
    root: &'static str,
    /// The path under that root.
    rel: String,
    src: String,
}

impl Module {
    fn path(&self) -> String {
        format!("{}/{}", self.root, self.rel)
    }

    /// A crate root or a binary rather than a module a reader looks for by name.
    fn is_entry(&self) -> bool {
        ["lib.rs", "main.rs"].contains(&self.rel.as_str()) || self.rel.starts_with("bin/")
    }
}

/// The crates' source roots the code map describes, from the engine's directory.
const MAPPED_CRATES: &[&str] = &[
    "src",
    "../src",
    "../../app/src",
    "../../app/protocol/src",
    "../../frontend/src",
];

/// Every non-test module of the mapped crates.
fn mapped_modules() -> Vec<Module> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for &root in MAPPED_CRATES {
        let dir = here.join(root);
        let mut files = Vec::new();
        sources(&dir, &dir, &mut files);
        out.extend(
            files
                .into_iter()
                .filter(|(rel, _)| !is_test_file(rel))
                .map(|(rel, src)| Module { root, rel, src }),
        );
    }
    out
}

/// The engine's own modules (not `lib.rs`, not the binaries), by path under `src/`.
fn engine_modules() -> Vec<Module> {
    mapped_modules()
        .into_iter()
        .filter(|m| m.root == "src" && !m.is_entry())
        .collect()
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let found: Vec<(String, String)> = engine_modules()
        .iter()
        .flat_map(|m| {
            upward(&m.rel, &m.src)
                .into_iter()
                .map(|t| (m.rel.clone(), t))
        })
        .collect();
    let known: Vec<(String, String)> = KNOWN_UPWARD
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    let new: Vec<_> = found.iter().filter(|v| !known.contains(v)).collect();
    assert!(
        new.is_empty(),
        "imports that go up a layer (see ARCHITECTURE.md, \"Layers\"): {new:?}"
    );
    let gone: Vec<_> = known.iter().filter(|k| !found.contains(k)).collect();
    assert!(
        gone.is_empty(),
        "these known upward imports are gone: remove them from KNOWN_UPWARD: {gone:?}"
    );
}

#[test]
fn an_upward_import_is_caught_in_every_form() {
    // Inside the agent: the turn contract reaching into the loop, or the director into
    // the cards; the loop using the contract and the director is fine.
    assert_eq!(
        upward(
            "agent/contract/intent.rs",
            "use crate::agent::turn::runner;\n"
        ),
        ["agent::turn"]
    );
    assert_eq!(
        upward(
            "agent/director/planner.rs",
            "use crate::agent::{contract::intent, decisions::Held};\n"
        ),
        ["agent::decisions"]
    );
    assert!(upward(
        "agent/turn/runner.rs",
        "use crate::agent::contract::gateway;\nuse crate::agent::director::grammar;\n"
    )
    .is_empty());
    // A base module reaching into the agent, directly and inside a group.
    assert_eq!(
        upward("base/store.rs", "use crate::agent::turn::runner;\n"),
        ["agent"]
    );
    assert_eq!(
        upward(
            "base/clock.rs",
            "use crate::{base::error::EngineResult, tools::{market, crm}};\n"
        ),
        ["tools"]
    );
    // A domain using a later domain, and one using the services struct.
    assert_eq!(
        upward("crm/x.rs", "use crate::knowledge::Topic;"),
        ["knowledge"]
    );
    assert_eq!(
        upward("market/x.rs", "fn f(e: &crate::Engine) {}"),
        ["Engine"]
    );
    // Downward and same-layer imports pass; inline tests may use anything.
    assert!(upward("tools/x.rs", "use crate::{registry::ToolDef, crm::Crm};").is_empty());
    assert!(upward("people/x.rs", "use crate::crm::Record;").is_empty());
    assert!(upward(
        "base/x.rs",
        "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::agent::turn;\n}\n"
    )
    .is_empty());
    // A new top-level module must be given a layer.
    assert_eq!(upward("newthing.rs", "").len(), 1);
}

/// The words named in backticks in ARCHITECTURE.md's "Code map" section, split at
/// path and item separators (`ocds/fields.rs` names `ocds` and `fields`).
fn code_map_names() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    let doc = std::fs::read_to_string(path).expect("ARCHITECTURE.md is readable");
    let start = doc.find("## Code map").expect("a \"Code map\" section");
    let map = &doc[start..];
    let map = &map[..map[3..].find("\n## ").map_or(map.len(), |end| end + 3)];
    map.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A module's name: its file's stem, or its directory's for a `mod.rs`.
fn module_name(rel: &str) -> &str {
    let mut parts = rel.rsplit('/');
    let file = parts.next().unwrap_or(rel);
    match file.strip_suffix(".rs") {
        Some("mod") => parts.next().unwrap_or(file),
        Some(stem) => stem,
        None => file,
    }
}

/// The longest a module may grow (ARCHITECTURE.md: "modules under ~600 lines"); a
/// module that needs more is split by what it holds.
const MAX_MODULE_LINES: usize = 620;

/// Modules that are data rather than code, and may be longer.
const DATA_MODULES: &[&str] = &[
    // The giro catalogue: each giro's words, forms and SCIAN classes.
    "src/base/catalog/scian.rs",
];

#[test]
fn every_module_is_named_in_the_code_map() {
    let names = code_map_names();
    let unnamed: Vec<String> = mapped_modules()
        .iter()
        .filter(|m| !m.is_entry() && !names.contains(module_name(&m.rel)))
        .map(Module::path)
        .collect();
    assert!(
        unnamed.is_empty(),
        "modules ARCHITECTURE.md's code map does not name (add each where its layer is \
         described): {unnamed:?}"
    );
}

#[test]
fn no_module_outgrows_the_size_a_reader_can_hold() {
    let long: Vec<(String, usize)> = mapped_modules()
        .iter()
        .filter(|m| !DATA_MODULES.contains(&m.path().as_str()))
        .map(|m| (m.path(), m.src.lines().count()))
        .filter(|(_, lines)| *lines > MAX_MODULE_LINES)
        .collect();
    assert!(
        long.is_empty(),
        "modules over {MAX_MODULE_LINES} lines (split each by what it holds): {long:?}"
    );
}

#[test]
fn the_code_map_check_reads_module_names_as_the_map_writes_them() {
    assert_eq!(module_name("market/import/ocds/fields.rs"), "fields");
    assert_eq!(module_name("registry/mod.rs"), "registry");
    assert_eq!(module_name("demo.rs"), "demo");
    let names = code_map_names();
    assert!(names.contains("base") && names.contains("pipeline"));
    // Words outside backticks are not names.
    assert!(!names.contains("Code"));
}
