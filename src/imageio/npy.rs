//! NumPy `.npy` (format 1.0) for float planes, so users can `np.load` raw outputs.

use std::io::{self, Read, Write};
use std::path::Path;

/// Writes a little-endian f32 array of `shape` (C order) to `path`, all or nothing.
pub fn write_npy_f32(path: &Path, shape: &[usize], data: &[f32]) -> anyhow::Result<()> {
    crate::outfiles::write_file(path, |w| encode_npy_f32(w, shape, data))
}

/// Encodes a little-endian f32 array of `shape` (C order) into `f`.
pub fn encode_npy_f32(f: &mut dyn Write, shape: &[usize], data: &[f32]) -> io::Result<()> {
    assert_eq!(shape.iter().product::<usize>(), data.len(), "npy shape does not match data");
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_txt = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_txt}, }}");
    // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    for v in data {
        f.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

/// A float array read from `.npy`, converted to f64.
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
    /// Stored as bytes (`|u1`): values are 0..=255.
    pub is_u8: bool,
}

/// Reads a C-order `.npy` of little-endian f4/f8 or u1; values are returned as stored.
pub fn read_npy(path: &Path) -> Result<NpyArray, String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| e.to_string())?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let (hlen, hstart) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(hstart..hstart + hlen)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("truncated or non-text .npy header")?;
    let field = |key: &str| -> Result<&str, String> {
        let at = header.find(&format!("'{key}'")).ok_or(format!(".npy header has no '{key}'"))?;
        let rest = header[at + key.len() + 2..].trim_start().strip_prefix(':').ok_or("bad .npy header")?;
        Ok(rest.trim_start())
    };
    let descr = field("descr")?;
    let descr = descr.get(1..).and_then(|d| d.split('\'').next()).ok_or("bad descr")?;
    if field("fortran_order")?.starts_with("True") {
        return Err("Fortran-order .npy arrays are not supported".into());
    }
    let shape_txt = field("shape")?;
    let shape_txt = &shape_txt[1..shape_txt.find(')').ok_or("bad shape")?];
    let shape: Vec<usize> = shape_txt
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad shape entry {s:?}")))
        .collect::<Result<_, _>>()?;
    let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or("shape overflows")?;
    let body = &bytes[hstart + hlen..];
    let size = match descr {
        "<f4" => 4,
        "<f8" => 8,
        "|u1" => 1,
        d => {
            return Err(format!("unsupported .npy dtype {d} (expected <f4, <f8 or |u1)"));
        }
    };
    if body.len() != count * size {
        return Err(format!("data is {} bytes, shape {shape:?} of {descr} needs {}", body.len(), count * size));
    }
    let data = match size {
        4 => body.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64).collect(),
        8 => body.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect(),
        _ => body.iter().map(|&b| b as f64).collect(),
    };
    Ok(NpyArray { shape, data, is_u8: size == 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        let data: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
        write_npy_f32(&p, &[2, 4, 3], &data).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!((bytes.len() - 24 * 4) % 64, 0);
        let a = read_npy(&p).unwrap();
        assert_eq!(a.shape, vec![2, 4, 3]);
        assert_eq!(a.data, data.iter().map(|&v| v as f64).collect::<Vec<_>>());
    }
}
