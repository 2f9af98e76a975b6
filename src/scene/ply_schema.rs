//! The scene.ply header: read it (bounded, so a binary blob without a header cannot make
//! us buffer gigabytes), parse it with ply-rs-bw, and check that it declares exactly the
//! layout the trainer writes.

use std::collections::HashSet;
use std::io::{BufRead, Read};

use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{ElementDef, Header, PropertyType, ScalarType};

pub use ply_rs_bw::ply::Encoding as PlyFormat;

use super::error::{Elem, Problem};
use super::ply_ascii::AsciiRecord;
use super::sh_degree_for_len;

/// Real headers are ~1.5 KB; anything past this is not a scene.ply header.
const MAX_HEADER_BYTES: u64 = 1 << 20;

/// Vertex properties before the SH block, in file order.
const FIXED_VERTEX_PROPS: [(&str, ScalarType); 8] = [
    ("x", ScalarType::Float),
    ("y", ScalarType::Float),
    ("z", ScalarType::Float),
    ("red", ScalarType::UChar),
    ("green", ScalarType::UChar),
    ("blue", ScalarType::UChar),
    ("density", ScalarType::Float),
    ("adjacency_offset", ScalarType::UInt),
];

/// What a valid header declares.
#[derive(Clone, Debug)]
pub struct Schema {
    pub format: PlyFormat,
    pub vertices: usize,
    pub adjacency: usize,
    pub sh_degree: u8,
    pub sh_rest_len: usize,
    /// Header bytes including the `end_header` line.
    pub header_len: u64,
    /// The parsed element definitions (the ascii decoder walks them).
    pub vertex_def: ElementDef,
    pub adjacency_def: ElementDef,
}

impl Schema {
    /// Bytes of one packed binary vertex record.
    pub fn vertex_record_len(&self) -> usize {
        super::ply_write::vertex_record_len(self.sh_rest_len)
    }
}

/// Reads and checks the header, leaving `reader` at the first payload byte.
pub fn read_schema<R: BufRead>(reader: &mut R) -> Result<Schema, Problem> {
    let text = read_header_text(reader)?;
    check_header_lines(&text)?;
    let header = Parser::<AsciiRecord>::new()
        .read_ply_header(&mut text.as_bytes())
        .map_err(|e| Problem::header(ply_rs_message(&e)))?;
    reject_duplicates(&text)?;
    check_layout(&header, text.len() as u64)
}

/// The header as text, through the `end_header` line.
fn read_header_text<R: BufRead>(reader: &mut R) -> Result<String, Problem> {
    let mut bytes = Vec::with_capacity(4096);
    let mut limited = reader.take(MAX_HEADER_BYTES);
    let mut first = true;
    loop {
        let start = bytes.len();
        let n = limited.read_until(b'\n', &mut bytes)?;
        if n == 0 {
            return Err(if first {
                Problem::Empty
            } else if bytes.len() as u64 >= MAX_HEADER_BYTES {
                Problem::header(format!("no end_header line in the first {MAX_HEADER_BYTES} bytes"))
            } else {
                Problem::header("file ends before the end_header line")
            });
        }
        let line = trim_eol(&bytes[start..]);
        if first {
            if line != b"ply" {
                return Err(Problem::NotPly);
            }
            first = false;
        } else if line == b"end_header" {
            break;
        }
    }
    String::from_utf8(bytes).map_err(|_| Problem::header("header is not text (invalid UTF-8)"))
}

/// Scalar type names a PLY header may use (both spellings).
const TYPE_NAMES: [&str; 16] = [
    "char", "uchar", "short", "ushort", "int", "uint", "float", "double", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "float32", "float64",
];

/// Checks every header line's form, so that a fault is reported in words ("line 3:
/// expected ...") rather than as the parser's internals.
fn check_header_lines(text: &str) -> Result<(), Problem> {
    for (i, line) in text.lines().enumerate().skip(1) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let fault = match words.as_slice() {
            ["format", f, v] if matches!(*f, "ascii" | "binary_little_endian" | "binary_big_endian") => {
                (*v != "1.0").then(|| format!("format version {v:?} is not supported (PLY has only 1.0)"))
            }
            ["format", ..] => Some("expected 'format ascii|binary_little_endian|binary_big_endian 1.0'".into()),
            ["comment" | "obj_info", ..] | ["end_header"] => None,
            ["element", name, n] if is_name(name) && n.parse::<usize>().is_ok() => None,
            ["element", name, n] if is_name(name) && n.bytes().all(|b| b.is_ascii_digit()) => {
                Some(format!("element count {n} is too large"))
            }
            ["element", ..] => Some("expected 'element NAME COUNT' with a whole-number count".into()),
            ["property", "list", n, t, name] if TYPE_NAMES.contains(n) && TYPE_NAMES.contains(t) && is_name(name) => {
                None
            }
            ["property", "list", ..] => Some("expected 'property list COUNT-TYPE VALUE-TYPE NAME'".into()),
            ["property", t, name] if TYPE_NAMES.contains(t) && is_name(name) => None,
            ["property", t, _] if TYPE_NAMES.contains(t) => Some(NAME_RULE.into()),
            ["property", t, _] => {
                Some(format!("unknown property type {t:?} (expected one of {})", TYPE_NAMES.join(", ")))
            }
            ["property", ..] => Some("expected 'property TYPE NAME'".into()),
            [] => None,
            [w, ..] => Some(format!(
                "unknown keyword {w:?} (expected format, element, property, comment, obj_info or end_header)"
            )),
        };
        if let Some(fault) = fault {
            return Err(Problem::header(format!("line {}: {fault}, found {line:?}", i + 1)));
        }
    }
    Ok(())
}

const NAME_RULE: &str = "a name is a letter or '_' followed by letters, digits, '_' or '-'";

/// An element or property name as PLY readers take it.
fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// ply-rs-bw's message without the debug dump of its grammar error it appends.
fn ply_rs_message(e: &ply_rs_bw::parser::ParseError) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("cannot be parsed");
    format!("cannot be parsed: {first}")
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// ply-rs-bw keys elements and properties by name and silently merges repeats, which
/// would shift every later field; a repeated name must be an error instead.
fn reject_duplicates(text: &str) -> Result<(), Problem> {
    let mut elements = HashSet::new();
    let mut props = HashSet::new();
    let mut current = String::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["element", name, ..] => {
                if !elements.insert(name.to_string()) {
                    return Err(Problem::header(format!("element '{name}' is declared twice")));
                }
                current = name.to_string();
                props.clear();
            }
            ["property", .., name] if !props.insert(name.to_string()) => {
                return Err(Problem::header(format!("element {current}: property '{name}' is declared twice")));
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_layout(header: &Header, header_len: u64) -> Result<Schema, Problem> {
    let names: Vec<&str> = header.elements.keys().map(String::as_str).collect();
    if let Some(other) = names.iter().find(|n| !matches!(**n, "vertex" | "adjacency")) {
        return Err(Problem::header(format!(
            "unexpected element '{other}' (a scene.ply has only 'vertex' then 'adjacency')"
        )));
    }
    for want in ["vertex", "adjacency"] {
        if !names.contains(&want) {
            return Err(Problem::header(format!("missing element '{want}'")));
        }
    }
    if names != ["vertex", "adjacency"] {
        return Err(Problem::header("element 'adjacency' comes before 'vertex'"));
    }
    let vertex_def = header.elements["vertex"].clone();
    let adjacency_def = header.elements["adjacency"].clone();

    let sh_rest_len = check_vertex_props(&vertex_def)?;
    let sh_degree = sh_degree_for_len(sh_rest_len).ok_or_else(|| {
        Problem::element(
            Elem::Vertex,
            format!("{sh_rest_len} color_sh_* properties; SH degrees 0..3 need 0, 9, 24 or 45"),
        )
    })?;
    check_props(Elem::Adjacency, &adjacency_def, &[("adjacency".into(), ScalarType::UInt)])?;
    if vertex_def.count == 0 {
        return Err(Problem::element(Elem::Vertex, "count is 0; a scene needs at least one site"));
    }
    Ok(Schema {
        format: header.encoding,
        vertices: vertex_def.count,
        adjacency: adjacency_def.count,
        sh_degree,
        sh_rest_len,
        header_len,
        vertex_def,
        adjacency_def,
    })
}

/// Checks the vertex properties against the trainer's layout; returns the SH float count.
fn check_vertex_props(def: &ElementDef) -> Result<usize, Problem> {
    let sh_rest_len = def.properties.keys().filter(|n| sh_index(n).is_some()).count();
    let mut expected: Vec<(String, ScalarType)> =
        FIXED_VERTEX_PROPS.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    expected.extend((0..sh_rest_len).map(|k| (format!("color_sh_{k}"), ScalarType::Float)));
    check_props(Elem::Vertex, def, &expected)?;
    Ok(sh_rest_len)
}

/// `color_sh_K` → K.
pub fn sh_index(name: &str) -> Option<usize> {
    name.strip_prefix("color_sh_")?.parse().ok()
}

/// Exact names, order and scalar types; reports unknown, then missing, then misplaced,
/// then mistyped properties.
fn check_props(elem: Elem, def: &ElementDef, expected: &[(String, ScalarType)]) -> Result<(), Problem> {
    let err = |detail: String| Err(Problem::element(elem, detail));
    for name in def.properties.keys() {
        if !expected.iter().any(|(n, _)| n == name) {
            return err(format!("unknown property '{name}'"));
        }
    }
    for (name, _) in expected {
        if !def.properties.contains_key(name) {
            return err(format!("missing property '{name}'"));
        }
    }
    for (pos, ((name, ty), (want, want_ty))) in def.properties.iter().zip(expected).enumerate() {
        if name != want {
            return err(format!("property {pos} is '{name}', expected '{want}'"));
        }
        match &ty.data_type {
            PropertyType::Scalar(t) if t == want_ty => {}
            PropertyType::Scalar(t) => {
                return err(format!("property '{name}' is {}, expected {}", type_name(t), type_name(want_ty)));
            }
            PropertyType::List(..) => {
                return err(format!("property '{name}' is a list, expected {}", type_name(want_ty)));
            }
        }
    }
    Ok(())
}

pub fn type_name(t: &ScalarType) -> &'static str {
    match t {
        ScalarType::Char => "char",
        ScalarType::UChar => "uchar",
        ScalarType::Short => "short",
        ScalarType::UShort => "ushort",
        ScalarType::Int => "int",
        ScalarType::UInt => "uint",
        ScalarType::Float => "float",
        ScalarType::Double => "double",
    }
}
