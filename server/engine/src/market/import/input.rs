//! Where an import's bytes come from — a file, standard input or bytes in memory —
//! and how they are opened: buffered, and decompressed when they are gzip.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

/// Where the bytes of an import come from.
#[derive(Debug, Clone)]
pub enum Input {
    File(PathBuf),
    /// Standard input (`-`): not resumable, its hash is known only at the end.
    Stdin,
    Bytes(Vec<u8>),
}

impl Input {
    /// How the run names its input.
    pub fn label(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Stdin => "-".into(),
            Input::Bytes(_) => "(memoria)".into(),
        }
    }

    /// The raw bytes as a blocking reader. Call it on a blocking thread.
    pub(super) fn open(self) -> std::io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Input::File(p) => Box::new(std::fs::File::open(&p)?),
            Input::Stdin => Box::new(std::io::stdin()),
            Input::Bytes(b) => Box::new(std::io::Cursor::new(b)),
        })
    }
}

/// Wraps raw input in a buffered reader, decompressing it when it starts with the
/// gzip magic bytes (`1f 8b`); concatenated gzip members are read as one stream.
pub(super) fn decoded(raw: impl Read + Send + 'static) -> std::io::Result<Box<dyn BufRead + Send>> {
    let mut buffered = BufReader::with_capacity(256 * 1024, raw);
    let head = buffered.fill_buf()?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::bufread::MultiGzDecoder::new(buffered);
        Ok(Box::new(BufReader::with_capacity(256 * 1024, gz)))
    } else {
        Ok(Box::new(buffered))
    }
}
