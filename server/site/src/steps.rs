//! The build steps of `luna-site`, in the order `main` runs them.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use anyhow::{anyhow, bail, Context, Result};

use crate::{Site, OUTPUT_NAME, PKG_DIR, SITE_ROOT};

/// The variables cargo-leptos 0.3.10 gives both cargo builds. `LEPTOS_OUTPUT_NAME` is
/// read at compile time by leptos (the hydration script's file names).
fn leptos_env(site: &Site) -> Vec<(&'static str, String)> {
    vec![
        ("LEPTOS_OUTPUT_NAME", OUTPUT_NAME.into()),
        ("LEPTOS_SITE_ROOT", SITE_ROOT.into()),
        ("LEPTOS_SITE_PKG_DIR", PKG_DIR.into()),
        ("LEPTOS_SITE_ADDR", "127.0.0.1:3000".into()),
        ("LEPTOS_RELOAD_PORT", "3001".into()),
        ("LEPTOS_LIB_DIR", "frontend".into()),
        ("LEPTOS_BIN_DIR", "server".into()),
        ("LEPTOS_JS_MINIFY", site.release.to_string()),
        ("LEPTOS_HASH_FILES", "false".into()),
    ]
}

/// `RUSTFLAGS` from the environment plus `extra` (cargo-leptos adds its flags the same
/// way, so a build with the caller's flags still gets them).
fn rustflags(extra: &str) -> String {
    match std::env::var("RUSTFLAGS") {
        Ok(flags) if !flags.trim().is_empty() => format!("{} {extra}", flags.trim()),
        _ => extra.to_string(),
    }
}

/// Runs a command from the workspace root; its output goes to the terminal.
fn run(site: &Site, cmd: &mut Command) -> Result<()> {
    let status = cmd
        .current_dir(&site.root)
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(())
}

/// A program installed by `npm ci` at the workspace root.
fn npm_bin(site: &Site, name: &str) -> Result<PathBuf> {
    let path = site.root.join("node_modules/.bin").join(name);
    if !path.exists() {
        bail!(
            "{} is missing: run `npm ci` at the workspace root (./.ci/setup does)",
            path.display()
        );
    }
    Ok(path)
}

/// Empties the site directory (a frontend build rewrites all of it) and creates `pkg/`.
pub fn clean(site: &Site) -> Result<()> {
    let dir = site.site_dir();
    if dir.exists() {
        for entry in fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                fs::remove_dir_all(&path)?;
            } else {
                fs::remove_file(&path)?;
            }
        }
    }
    fs::create_dir_all(site.pkg_dir())?;
    Ok(())
}

/// Builds the frontend's wasm and returns its path.
pub fn build_frontend(site: &Site) -> Result<PathBuf> {
    let front = site.target.join("front");
    let mut cmd = Command::new(cargo());
    cmd.args(["build", "--package=luna-frontend", "--lib"])
        .arg(format!("--target-dir={}", front.display()))
        .arg("--target=wasm32-unknown-unknown");
    if site.release {
        cmd.arg("--profile=wasm-release");
    }
    // --emit-relocs: the splitter needs the relocations; erase_components: the
    // workspace's `always-erase-components` (smaller, faster-compiling views).
    cmd.envs(leptos_env(site)).env(
        "RUSTFLAGS",
        rustflags("-Clink-args=--emit-relocs --cfg erase_components"),
    );
    run(site, &mut cmd)?;
    let profile = if site.release {
        "wasm-release"
    } else {
        "debug"
    };
    Ok(front
        .join("wasm32-unknown-unknown")
        .join(profile)
        .join("luna_frontend.wasm"))
}

/// The main module the splitter leaves for wasm-bindgen.
fn split_main(wasm: &Path) -> PathBuf {
    wasm.with_file_name("luna_frontend_split.wasm")
}

/// Splits the lazy routes and components into their own wasm chunks under `pkg/`
/// and writes the prefetch manifest; returns the chunks.
pub fn split(site: &Site, wasm: &Path) -> Result<Vec<PathBuf>> {
    let input = fs::read(wasm).with_context(|| format!("reading {}", wasm.display()))?;
    let pkg = site.pkg_dir();
    let main_out = split_main(wasm);
    let main_module = format!("./{OUTPUT_NAME}.js");
    let mut opts = wasm_split_cli_support::Options::new(&input);
    opts.output_dir = &pkg;
    opts.main_out_path = &main_out;
    opts.main_module = &main_module;
    opts.link_name = "./__wasm_split.______________________.js";
    let split =
        wasm_split_cli_support::transform(opts).map_err(|e| anyhow!("wasm split: {e:?}"))?;
    fs::write(
        pkg.join("__wasm_split_manifest.json"),
        serde_json::to_string_pretty(&split.prefetch_map)?,
    )?;
    Ok(split.split_modules)
}

/// wasm-bindgen on the split main module, as `wasm-bindgen --target=web
/// --keep-lld-exports --no-demangle --out-name=luna`; returns `pkg/luna.wasm`.
pub fn bindgen(site: &Site, wasm: &Path) -> Result<PathBuf> {
    let pkg = site.pkg_dir();
    let mut b = wasm_bindgen_cli_support::Bindgen::new();
    b.web(true)?
        .input_path(split_main(wasm))
        .demangle(false)
        .keep_lld_exports(true)
        .typescript(false)
        .omit_default_module_path(false)
        .out_name(OUTPUT_NAME);
    b.generate(&pkg)?;
    // leptos' hydration script loads `luna.wasm` when LEPTOS_OUTPUT_NAME is set.
    let dest = pkg.join(format!("{OUTPUT_NAME}.wasm"));
    fs::rename(pkg.join(format!("{OUTPUT_NAME}_bg.wasm")), &dest)?;
    Ok(dest)
}

/// `wasm-opt -Oz` from npm binaryen on every wasm file, biggest first, two at a time
/// (Debian's wasm-opt breaks hydration: package.json says why).
pub fn optimize(site: &Site, files: &[PathBuf]) -> Result<()> {
    let wasm_opt = npm_bin(site, "wasm-opt")?;
    let mut queue = files.to_vec();
    queue.sort_by_key(|f| fs::metadata(f).map(|m| m.len()).unwrap_or(0));
    let queue = std::sync::Mutex::new(queue);
    let worker = || -> Result<()> {
        loop {
            let next = queue.lock().map_err(|_| anyhow!("poisoned queue"))?.pop();
            let Some(file) = next else { return Ok(()) };
            let status = Command::new(&wasm_opt)
                .args([
                    "-Oz",
                    "--enable-bulk-memory",
                    "--enable-nontrapping-float-to-int",
                ])
                .arg(&file)
                .arg("-o")
                .arg(&file)
                .status()?;
            if !status.success() {
                bail!("wasm-opt failed on {}", file.display());
            }
        }
    };
    std::thread::scope(|scope| {
        let other = scope.spawn(worker);
        let mine = worker();
        other
            .join()
            .map_err(|_| anyhow!("wasm-opt thread panicked"))??;
        mine
    })
}

/// Minifies the JS glue (cargo-leptos used swc; terser from npm does the same job).
pub fn minify_js(site: &Site) -> Result<()> {
    let js = site.pkg_dir().join(format!("{OUTPUT_NAME}.js"));
    run(
        site,
        Command::new(npm_bin(site, "terser")?)
            .arg(&js)
            .args(["--module", "--compress", "--mangle", "--output"])
            .arg(&js),
    )
}

/// Tailwind v4 CLI on `style/main.css`, then lightningcss for the browsers of
/// browserslist's `defaults` (colour fallbacks, prefixes; minified in release), as
/// cargo-leptos did → `pkg/luna.css`.
pub fn style(site: &Site) -> Result<()> {
    let tmp = site.target.join("luna-site");
    fs::create_dir_all(&tmp)?;
    let tailwind_out = tmp.join("tailwind.css");
    run(
        site,
        Command::new(npm_bin(site, "tailwindcss")?)
            .args(["--input", "style/main.css", "--output"])
            .arg(&tailwind_out),
    )?;
    let mut cmd = Command::new(npm_bin(site, "lightningcss")?);
    cmd.args(["--targets", "defaults"]);
    if site.release {
        cmd.arg("--minify");
    }
    cmd.arg(&tailwind_out)
        .arg("--output-file")
        .arg(site.pkg_dir().join(format!("{OUTPUT_NAME}.css")));
    run(site, &mut cmd)
}

/// Copies `public/` (favicon, manifest, icons, robots.txt) to the site root.
pub fn assets(site: &Site) -> Result<()> {
    copy_dir(&site.root.join("public"), &site.site_dir())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else {
            fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

/// Writes `.br` (quality 11) and `.gz` (best) copies of every file of the site.
pub fn precompress(site: &Site) -> Result<()> {
    let mut files = Vec::new();
    collect_files(&site.site_dir(), &mut files)?;
    std::thread::scope(|scope| {
        let (a, b) = files.split_at(files.len() / 2);
        let first = scope.spawn(|| compress_all(a));
        let second = compress_all(b);
        first
            .join()
            .map_err(|_| anyhow!("compression thread panicked"))??;
        second
    })
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if !matches!(path.extension().and_then(|e| e.to_str()), Some("br" | "gz")) {
            out.push(path);
        }
    }
    Ok(())
}

fn compress_all(files: &[PathBuf]) -> Result<()> {
    let params = brotli::enc::BrotliEncoderParams::default();
    for file in files {
        let bytes = fs::read(file)?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&bytes)?;
        fs::write(with_suffix(file, "gz"), gz.finish()?)?;
        let mut br = fs::File::create(with_suffix(file, "br"))?;
        brotli::BrotliCompress(&mut bytes.as_slice(), &mut br, &params)?;
    }
    Ok(())
}

fn with_suffix(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// Starts the server's cargo build (same variables, plus `erase_components`); it runs
/// beside the frontend steps, which never wait for long on both cores at once.
pub fn start_server_build(site: &Site) -> Result<Child> {
    let mut cmd = Command::new(cargo());
    cmd.args(["build", "--package=luna-server", "--bin=luna-server"]);
    if site.release {
        cmd.arg("--release");
    }
    cmd.envs(leptos_env(site))
        .env("RUSTFLAGS", rustflags("--cfg erase_components"))
        .current_dir(&site.root);
    cmd.spawn()
        .context("could not start cargo build luna-server")
}

/// Waits for the server's build.
pub fn finish_server_build(mut child: Child) -> Result<()> {
    let status = child.wait()?;
    if !status.success() {
        bail!("cargo build luna-server failed ({status})");
    }
    Ok(())
}

/// The cargo that runs us (`cargo run` sets `CARGO`), else the one on PATH.
fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site_in(root: &Path) -> Site {
        Site {
            root: root.to_path_buf(),
            target: root.join("target"),
            release: true,
            precompress: true,
            frontend_only: true,
        }
    }

    /// Browsers that accept br or gzip get exactly the bytes of the file, for every file
    /// of the site (nested ones too), and the copies are not compressed again.
    #[test]
    fn precompressed_copies_decode_to_the_original() {
        let root = std::env::temp_dir().join(format!("luna-site-test-{}", std::process::id()));
        let site = site_in(&root);
        let pkg = site.pkg_dir();
        fs::create_dir_all(&pkg).unwrap();
        let js = "export function hydrate() { return 42; }\n".repeat(200);
        fs::write(pkg.join("luna.js"), &js).unwrap();
        fs::write(site.site_dir().join("robots.txt"), "User-agent: *\n").unwrap();

        precompress(&site).unwrap();
        precompress(&site).unwrap(); // a second run must not make .br.br files

        for (file, want) in [
            (pkg.join("luna.js"), js.as_bytes().to_vec()),
            (
                site.site_dir().join("robots.txt"),
                b"User-agent: *\n".to_vec(),
            ),
        ] {
            let mut gz = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::GzDecoder::new(
                    fs::File::open(with_suffix(&file, "gz")).unwrap(),
                ),
                &mut gz,
            )
            .unwrap();
            assert_eq!(gz, want, "{}", file.display());
            let mut br = Vec::new();
            brotli::BrotliDecompress(
                &mut fs::File::open(with_suffix(&file, "br")).unwrap(),
                &mut br,
            )
            .unwrap();
            assert_eq!(br, want, "{}", file.display());
        }
        let mut all = Vec::new();
        collect_files(&site.site_dir(), &mut all).unwrap();
        assert_eq!(all.len(), 2, "only the originals are inputs: {all:?}");
        assert!(!with_suffix(&pkg.join("luna.js.br"), "br").exists());
        fs::remove_dir_all(&root).unwrap();
    }

    /// The caller's RUSTFLAGS are kept and ours appended (cargo reads only one variable).
    #[test]
    fn rustflags_keep_the_callers_flags() {
        // One test owns the variable (tests run in threads of one process).
        std::env::set_var("RUSTFLAGS", " -Ctarget-cpu=native ");
        assert_eq!(
            rustflags("--cfg erase_components"),
            "-Ctarget-cpu=native --cfg erase_components"
        );
        std::env::remove_var("RUSTFLAGS");
        assert_eq!(
            rustflags("--cfg erase_components"),
            "--cfg erase_components"
        );
    }
}
