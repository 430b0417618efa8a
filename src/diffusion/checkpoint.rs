//! Hugging Face-style checkpoint folders: `config.json`, and weights in `model.safetensors` or
//! shards listed by `model.safetensors.index.json`, stored as f32, f16 or bf16 and converted to
//! the compute dtype on load. Errors name the file and the field or tensor at fault.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::VarBuilder;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::error::{DiffusionError, Result};

/// The name of the config file in a checkpoint folder.
pub const CONFIG_FILE: &str = "config.json";
const SINGLE_FILE: &str = "model.safetensors";
const INDEX_FILE: &str = "model.safetensors.index.json";

/// The largest JSON file of a checkpoint folder read (`config.json`, the shard index,
/// `lacuna.json`), in bytes: 16 MiB, far above any real one (a few KiB; an index of
/// thousands of tensors, a few hundred KiB).
pub const MAX_JSON_BYTES: u64 = 16 << 20;

/// Reads a JSON file (at most [`MAX_JSON_BYTES`]) into `T`; syntax errors and data errors (a
/// missing or mistyped field, which serde names) both name the file.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    read_json_limited(path, MAX_JSON_BYTES)
}

/// [`read_json`] for a file of at most `limit` bytes; a larger one (or one that never ends,
/// such as `/dev/zero`) is an error naming the file and the limit.
pub fn read_json_limited<T: DeserializeOwned>(path: &Path, limit: u64) -> Result<T> {
    let io = |source| DiffusionError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes =
        crate::vocab::read_bounded(path, limit, "JSON files of a model folder").map_err(io)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "invalid UTF-8 at byte {} (JSON is UTF-8)",
                e.utf8_error().valid_up_to()
            ),
        ))
    })?;
    parse_json(path, &text)
}

/// Parses JSON `text` into `T`, naming `path` (where the text is, or would be) in errors as
/// [`read_json`] does.
pub fn parse_json<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| json_error(path, text, e))
}

fn json_error(path: &Path, text: &str, e: serde_json::Error) -> DiffusionError {
    if e.is_data() {
        let msg = e.to_string();
        // Where the error is: the path of keys (and array indices) that leads to the value
        // serde stopped at. A missing, unknown or duplicate field is named by serde between
        // backticks, inside the object at that path; any other message (an invalid type or
        // value) quotes the value between backticks, not the field, so that is not used.
        let at = path_at(text, e.line(), e.column());
        let named = ["missing field `", "unknown field `", "duplicate field `"]
            .iter()
            .find_map(|p| msg.strip_prefix(p))
            .and_then(|rest| rest.split('`').next());
        let field = match (named, at) {
            (Some(f), Some(at)) if !at.is_empty() => format!("{at}.{f}"),
            (Some(f), _) => f.to_string(),
            (None, Some(at)) if !at.is_empty() => at,
            (None, _) => "(the whole document)".to_string(),
        };
        DiffusionError::Field {
            path: path.to_path_buf(),
            field,
            reason: msg,
        }
    } else {
        DiffusionError::Json {
            path: path.to_path_buf(),
            source: e,
        }
    }
}

/// The path (`tasks.smiles.length`, `losses[3]`) of the innermost value open at 1-based
/// `line`/`column` of the JSON `text`: the keys of the objects and the indices of the arrays
/// that contain that point. `None` if the point is outside the text.
fn path_at(text: &str, line: usize, column: usize) -> Option<String> {
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let offset: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>()
        + column;
    let head = text.as_bytes().get(..offset.min(text.len()))?;
    let mut stack: Vec<Frame> = Vec::new();
    let mut last_string: Option<String> = None;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'"' => {
                // A string: to its closing quote (escapes skipped), or to the end of `head`.
                let start = i;
                i += 1;
                while i < head.len() && head[i] != b'"' {
                    i += if head[i] == b'\\' { 2 } else { 1 };
                }
                let raw = String::from_utf8_lossy(&head[start..(i + 1).min(head.len())]);
                last_string = Some(
                    serde_json::from_str::<String>(&raw)
                        .unwrap_or_else(|_| raw.trim_matches('"').to_string()),
                );
            }
            b':' => {
                if let Some(Frame::Object(key)) = stack.last_mut() {
                    *key = last_string.take();
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object(key)) => *key = None,
                Some(Frame::Array(n)) => *n += 1,
                None => {}
            },
            b'{' => stack.push(Frame::Object(None)),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object(None) => {}
            Frame::Array(n) => path.push_str(&format!("[{n}]")),
        }
    }
    Some(path)
}

/// Reads the `model_type` field of a checkpoint's config.
pub fn model_type(dir: &Path) -> Result<String> {
    #[derive(Deserialize)]
    struct Head {
        model_type: String,
    }
    let head: Head = read_json(&dir.join(CONFIG_FILE))?;
    Ok(head.model_type)
}

/// A field error for `config.json` in `dir` (for checks serde cannot express).
pub fn field_error(dir: &Path, field: &str, reason: impl Into<String>) -> DiffusionError {
    DiffusionError::Field {
        path: dir.join(CONFIG_FILE),
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// The weight files of a checkpoint folder: the single file, or the shards named in the index.
pub fn weight_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let single = dir.join(SINGLE_FILE);
    if single.is_file() {
        return Ok(vec![single]);
    }
    let index = dir.join(INDEX_FILE);
    if !index.is_file() {
        return Err(DiffusionError::NoWeights {
            dir: dir.to_path_buf(),
        });
    }
    #[derive(Deserialize)]
    struct Index {
        weight_map: HashMap<String, String>,
    }
    let idx: Index = read_json(&index)?;
    let files: BTreeSet<&String> = idx.weight_map.values().collect();
    if files.is_empty() {
        return Err(DiffusionError::Field {
            path: index,
            field: "weight_map".into(),
            reason: "names no files".into(),
        });
    }
    let mut out = Vec::new();
    for f in files {
        let p = dir.join(f);
        if !p.is_file() {
            return Err(DiffusionError::Field {
                path: index.clone(),
                field: "weight_map".into(),
                reason: format!("shard {f} does not exist"),
            });
        }
        out.push(p);
    }
    Ok(out)
}

/// Loads tensors by name from a checkpoint, converting them to the compute dtype; errors name
/// the checkpoint folder and the full tensor name.
///
/// `Debug` shows the folder, prefix, dtype and device, not the tensors.
#[derive(Clone)]
pub struct Weights {
    vb: VarBuilder<'static>,
    dir: PathBuf,
    prefix: String,
}

impl Weights {
    /// Opens the weights of the checkpoint folder `dir` (memory-mapped).
    pub fn open(dir: &Path, dtype: DType, device: &Device) -> Result<Weights> {
        let files = weight_files(dir)?;
        for f in &files {
            check_header(f)?;
        }
        // SAFETY: the files are memory-mapped read-only; like every reader of mmaped
        // checkpoints we rely on them not being modified while the model is alive.
        let vb =
            unsafe { VarBuilder::from_mmaped_safetensors(&files, dtype, device) }.map_err(|e| {
                // safetensors refuses the whole file; name the tensor at fault where the
                // header shows one.
                files
                    .iter()
                    .find_map(|f| inconsistent_tensor(f).map(|(t, why)| (f, t, why)))
                    .map_or_else(
                        || unreadable(dir, e),
                        |(f, tensor, reason)| DiffusionError::Tensor {
                            path: f.clone(),
                            tensor,
                            reason,
                        },
                    )
            })?;
        Ok(Weights {
            vb,
            dir: dir.to_path_buf(),
            prefix: String::new(),
        })
    }

    /// Weights from tensors in memory (tests, converted checkpoints).
    pub fn from_tensors(
        tensors: HashMap<String, Tensor>,
        dtype: DType,
        device: &Device,
        label: &Path,
    ) -> Weights {
        Weights {
            vb: VarBuilder::from_tensors(tensors, dtype, device),
            dir: label.to_path_buf(),
            prefix: String::new(),
        }
    }

    /// Weights from a safetensors file held in memory for the program's life (the embedded
    /// default model), read in place.
    pub fn from_bytes(
        bytes: &'static [u8],
        dtype: DType,
        device: &Device,
        label: &Path,
    ) -> Result<Weights> {
        let vb = VarBuilder::from_slice_safetensors(bytes, dtype, device)
            .map_err(|e| unreadable(label, e))?;
        Ok(Weights {
            vb,
            dir: label.to_path_buf(),
            prefix: String::new(),
        })
    }

    /// Weights backed by trainable variables (training); `label` names them in errors.
    pub fn from_varmap(
        varmap: &candle_nn::VarMap,
        dtype: DType,
        device: &Device,
        label: &Path,
    ) -> Weights {
        Weights {
            vb: VarBuilder::from_varmap(varmap, dtype, device),
            dir: label.to_path_buf(),
            prefix: String::new(),
        }
    }

    /// The weights under `name.` (like `VarBuilder::pp`).
    pub fn pp(&self, name: impl AsRef<str>) -> Weights {
        let mut w = self.clone();
        w.prefix = self.full(name.as_ref());
        w.vb = self.vb.pp(name.as_ref());
        w
    }

    fn full(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix)
        }
    }

    /// Whether the tensor `name` exists.
    pub fn contains(&self, name: &str) -> bool {
        self.vb.contains_tensor(name)
    }

    /// The tensor `name` of the given shape, in the compute dtype.
    pub fn get(&self, shape: impl Into<Shape>, name: &str) -> Result<Tensor> {
        let shape = shape.into();
        self.vb
            .get(shape.clone(), name)
            .map_err(|e| DiffusionError::Tensor {
                path: self.dir.clone(),
                tensor: self.full(name),
                reason: match e.to_string() {
                    m if m.contains("shape mismatch") || m.contains("unexpected shape") => {
                        format!("wrong shape (expected {shape:?}): {m}")
                    }
                    m if m.contains("cannot find") => "missing from the checkpoint".to_string(),
                    m => m,
                },
            })
    }

    /// A linear layer `[out, in]`, with a bias `[out]` if `bias`.
    pub(crate) fn linear(
        &self,
        d_in: usize,
        d_out: usize,
        bias: bool,
        name: &str,
    ) -> Result<Linear> {
        let w = self.pp(name);
        let weight = w.get((d_out, d_in), "weight")?;
        let bias = if bias {
            Some(w.get(d_out, "bias")?)
        } else {
            None
        };
        Ok(Linear(candle_nn::Linear::new(weight, bias)))
    }

    /// The compute dtype.
    pub fn dtype(&self) -> DType {
        self.vb.dtype()
    }

    /// The device tensors are loaded to.
    pub fn device(&self) -> &Device {
        self.vb.device()
    }
}

impl fmt::Debug for Weights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Weights")
            .field("dir", &self.dir)
            .field("prefix", &self.prefix)
            .field("dtype", &self.dtype())
            .field("device", &self.device().location())
            .finish_non_exhaustive()
    }
}

/// Weights at `path` that could not be read as a whole.
fn unreadable(path: &Path, e: candle_core::Error) -> DiffusionError {
    DiffusionError::Tensor {
        path: path.to_path_buf(),
        tensor: "*".into(),
        reason: e.to_string(),
    }
}

/// The first tensor (by name) of a safetensors file whose byte range does not hold its dtype
/// and shape, with the reason; `None` if the header cannot be read or all agree. Only called
/// after `check_header` passed, on a header of at most [`MAX_HEADER_BYTES`].
fn inconsistent_tensor(path: &Path) -> Option<(String, String)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len).ok()?;
    let n = u64::from_le_bytes(len);
    if n > MAX_HEADER_BYTES {
        return None;
    }
    let mut header = vec![0u8; n as usize];
    f.read_exact(&mut header).ok()?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&header).ok()?;
    for (name, info) in header.iter().filter(|(k, _)| *k != "__metadata__") {
        let dtype = info["dtype"].as_str().unwrap_or("");
        let width: u64 = match dtype {
            "F64" | "I64" | "U64" => 8,
            "F32" | "I32" | "U32" => 4,
            "F16" | "BF16" | "I16" | "U16" => 2,
            "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => 1,
            _ => return Some((name.clone(), format!("unknown dtype {dtype:?}"))),
        };
        let shape: Option<Vec<u64>> = info["shape"]
            .as_array()
            .and_then(|d| d.iter().map(|x| x.as_u64()).collect());
        let offsets: Option<Vec<u64>> = info["data_offsets"]
            .as_array()
            .and_then(|d| d.iter().map(|x| x.as_u64()).collect());
        let (Some(shape), Some(offsets)) = (shape, offsets) else {
            return Some((name.clone(), "no shape or data_offsets".into()));
        };
        let needed = shape.iter().try_fold(width, |acc, &d| acc.checked_mul(d));
        let held = match offsets[..] {
            [start, end] if start <= end => Some(end - start),
            _ => None,
        };
        if needed.is_none() || held.is_none() || needed != held {
            return Some((
                name.clone(),
                format!(
                    "dtype {dtype} and shape {shape:?} need {} bytes, data_offsets {offsets:?} hold {}",
                    needed.map_or("more than 2^64".into(), |b| b.to_string()),
                    held.map_or("none (reversed)".into(), |b| b.to_string()),
                ),
            ));
        }
    }
    None
}

/// The largest safetensors header read to name a tensor at fault (100 MB, the safetensors
/// crate's own limit).
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// A linear layer (weight `[out, in]`, optional bias).
#[derive(Clone, Debug)]
pub struct Linear(candle_nn::Linear);

impl Linear {
    pub fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::Module::forward(&self.0, x)
    }
}

/// Rejects files that are not safetensors before they are mapped, naming the file.
fn check_header(path: &Path) -> Result<()> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|source| DiffusionError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut len = [0u8; 8];
    let bad = |reason: &str| DiffusionError::Tensor {
        path: path.to_path_buf(),
        tensor: "*".into(),
        reason: reason.to_string(),
    };
    f.read_exact(&mut len)
        .map_err(|_| bad("not a safetensors file (too short)"))?;
    let n = u64::from_le_bytes(len);
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    // The length is untrusted: `n + 8` must not wrap (a length near u64::MAX would pass).
    let fits = n.checked_add(8).is_some_and(|end| end <= size);
    if n == 0 || !fits {
        return Err(bad(&format!(
            "not a safetensors file (header length {n} does not fit in the file's {size} bytes)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `bytes` in the temporary folder, removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, bytes: &[u8]) -> TempFile {
            let path = std::env::temp_dir()
                .join(format!("lacuna-checkpoint-{}-{name}", std::process::id()));
            std::fs::write(&path, bytes).expect("the file is written");
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Card {
        tasks: HashMap<String, Task>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Task {
        length: usize,
    }

    fn field_of(json: &str) -> String {
        match parse_json::<Card>(Path::new("lacuna.json"), json) {
            Err(DiffusionError::Field { field, .. }) => field,
            other => panic!("{json}: {other:?}"),
        }
    }

    #[test]
    fn data_errors_name_the_field_not_the_value() {
        assert_eq!(field_of(r#"{"tasks": 5}"#), "tasks");
        assert_eq!(field_of("{\n  \"tasks\" :\n 5\n}"), "tasks");
        assert_eq!(
            field_of(r#"{"tasks": {"a": {"length": "x"}}}"#),
            "tasks.a.length"
        );
        assert_eq!(field_of(r#"{"tasks": {"a": {}}}"#), "tasks.a.length");
        assert_eq!(field_of(r#"{"x": "\"}", "y": [1, {"z": 2}]}"#), "tasks");
        assert_eq!(field_of("5"), "(the whole document)");
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct State {
            losses: Vec<f32>,
        }
        match parse_json::<State>(Path::new("s.json"), r#"{"losses": [1, 2, "x"]}"#) {
            Err(DiffusionError::Field { field, .. }) => assert_eq!(field, "losses[2]"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn json_files_are_read_up_to_the_limit() {
        let e = read_json::<Card>(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero") && e.contains("16 MiB"), "{e}");
    }

    #[test]
    fn header_length_near_u64_max_is_refused_without_overflow() {
        for n in [u64::MAX, u64::MAX - 3, u64::MAX - 7] {
            let mut bytes = n.to_le_bytes().to_vec();
            bytes.extend_from_slice(b"{}      ");
            let f = TempFile::new(&format!("huge-{n}.safetensors"), &bytes);
            match check_header(&f.0) {
                Err(DiffusionError::Tensor { path, reason, .. }) => {
                    assert_eq!(path, f.0);
                    assert!(reason.contains("header length"), "{reason}");
                }
                other => panic!("header length {n}: {other:?}"),
            }
        }
    }

    #[test]
    fn header_lengths_within_the_file_pass() {
        let mut bytes = 8u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}      ");
        let f = TempFile::new("fits.safetensors", &bytes);
        assert!(check_header(&f.0).is_ok());
        let short = TempFile::new("short.safetensors", &[1, 2, 3]);
        assert!(check_header(&short.0).is_err());
    }
}
