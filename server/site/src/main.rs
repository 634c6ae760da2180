//! `luna-site`: builds Luna's site the way `cargo leptos build --split [--release]
//! [--precompress]` did, from tools the workspace already has, so that a fresh machine
//! does not spend half an hour compiling cargo-leptos (docs/BENCH.md, "First hour").
//!
//! Steps, each timed on stderr:
//! 1. `cargo build` of `luna-frontend` for wasm32 (`wasm-release` profile in release),
//!    with the `LEPTOS_*` variables and flags cargo-leptos sets;
//! 2. wasm splitting (`wasm_split_cli_support`, the library cargo-leptos uses): the lazy
//!    routes and components become their own chunks plus a prefetch manifest;
//! 3. wasm-bindgen (the library, at the version of the linked crate) → `pkg/luna.js`
//!    and `pkg/luna.wasm`;
//! 4. in release: `wasm-opt -Oz` (npm binaryen) on every wasm, terser on the JS glue;
//! 5. Tailwind CLI and lightningcss → `pkg/luna.css`; `public/` copied to the site root;
//! 6. with `--precompress`: `.br` and `.gz` next to every file (the server sends them);
//! 7. unless `--frontend-only`: `cargo build` of `luna-server`, started first and run
//!    beside the steps above (its own target directory, so no lock is shared).

mod steps;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};

/// Where and how to build; the values cargo-leptos read from `[workspace.metadata.leptos]`.
pub struct Site {
    /// The workspace root (every relative path below is under it).
    pub root: PathBuf,
    /// Cargo's target directory (`CARGO_TARGET_DIR` or `target`).
    pub target: PathBuf,
    pub release: bool,
    pub precompress: bool,
    pub frontend_only: bool,
}

/// The name of the JS, wasm and CSS files (`LEPTOS_OUTPUT_NAME`).
pub const OUTPUT_NAME: &str = "luna";
/// The site root the server reads (`LEPTOS_SITE_ROOT`), relative to the workspace.
pub const SITE_ROOT: &str = "target/site";
/// The package directory inside the site root (`LEPTOS_SITE_PKG_DIR`).
pub const PKG_DIR: &str = "pkg";

impl Site {
    fn from_args() -> Result<Site> {
        let mut site = Site {
            root: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
            target: PathBuf::new(),
            release: false,
            precompress: false,
            frontend_only: false,
        };
        for arg in std::env::args().skip(1) {
            match arg.as_str() {
                "--release" => site.release = true,
                "--precompress" => site.precompress = true,
                "--frontend-only" => site.frontend_only = true,
                other => bail!(
                    "unknown argument {other:?}; usage: luna-site [--release] [--precompress] [--frontend-only]"
                ),
            }
        }
        site.root = site.root.canonicalize()?;
        site.target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => site.root.join(dir),
            None => site.root.join("target"),
        };
        Ok(site)
    }

    /// `target/site`.
    pub fn site_dir(&self) -> PathBuf {
        self.root.join(SITE_ROOT)
    }

    /// `target/site/pkg`.
    pub fn pkg_dir(&self) -> PathBuf {
        self.site_dir().join(PKG_DIR)
    }
}

/// Runs one step and prints how long it took.
fn timed<T>(name: &str, step: impl FnOnce() -> Result<T>) -> Result<T> {
    eprintln!("luna-site: {name}");
    let start = Instant::now();
    let out = step()?;
    eprintln!("luna-site: {name}: {:.1} s", start.elapsed().as_secs_f64());
    Ok(out)
}

fn main() -> Result<()> {
    let site = Site::from_args()?;
    let start = Instant::now();
    steps::clean(&site)?;
    let server = match site.frontend_only {
        true => None,
        false => Some(steps::start_server_build(&site)?),
    };
    let front = frontend(&site);
    if let Some(mut server) = server {
        if front.is_err() {
            // Do not leave a build running behind a failed one.
            let _ = server.kill();
            let _ = server.wait();
        } else {
            timed("cargo build luna-server (finishing)", || {
                steps::finish_server_build(server)
            })?;
        }
    }
    front?;
    eprintln!(
        "luna-site: site ready in {} ({:.0} s)",
        site.site_dir().display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Everything but the server: wasm, JS, CSS and assets under the site directory.
fn frontend(site: &Site) -> Result<()> {
    let wasm = timed("cargo build luna-frontend (wasm32)", || {
        steps::build_frontend(site)
    })?;
    let chunks = timed("wasm split", || steps::split(site, &wasm))?;
    let main_wasm = timed("wasm-bindgen", || steps::bindgen(site, &wasm))?;
    if site.release {
        let mut all = chunks;
        all.push(main_wasm);
        timed("wasm-opt -Oz", || steps::optimize(site, &all))?;
        timed("minify JS (terser)", || steps::minify_js(site))?;
    }
    timed("Tailwind CSS", || steps::style(site))?;
    timed("public/", || steps::assets(site))?;
    if site.release && site.precompress {
        timed("precompress (brotli, gzip)", || steps::precompress(site))?;
    }
    Ok(())
}
