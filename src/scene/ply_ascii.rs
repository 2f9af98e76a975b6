//! ASCII payloads, decoded line by line through ply-rs-bw's typed property access
//! (`PropertyAccess` on a fixed-size record, so no per-record heap map or allocation).

use std::io::BufRead;

use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{ElementDef, PropertyAccess, PropertyAccessResult, PropertyType, ScalarType};

use super::error::{Elem, Problem, one_line};
use super::ply_schema::{Schema, sh_index};
use super::{Scene, sh_rest_len};

/// One ascii line of either element; the header check guarantees which setters fire.
pub struct AsciiRecord {
    xyz: [f32; 3],
    rgb: [u8; 3],
    density: f32,
    end: u32,
    sh: [f32; sh_rest_len(3)],
    adjacency: u32,
}

impl PropertyAccess for AsciiRecord {
    fn new() -> Self {
        AsciiRecord { xyz: [0.0; 3], rgb: [0; 3], density: 0.0, end: 0, sh: [0.0; sh_rest_len(3)], adjacency: 0 }
    }

    fn set_float(&mut self, name: &str, v: f32) -> PropertyAccessResult {
        match name {
            "x" => self.xyz[0] = v,
            "y" => self.xyz[1] = v,
            "z" => self.xyz[2] = v,
            "density" => self.density = v,
            _ => match sh_index(name).and_then(|k| self.sh.get_mut(k)) {
                Some(slot) => *slot = v,
                None => return PropertyAccessResult::UnsupportedType,
            },
        }
        PropertyAccessResult::Set
    }

    fn set_uchar(&mut self, name: &str, v: u8) -> PropertyAccessResult {
        match name {
            "red" => self.rgb[0] = v,
            "green" => self.rgb[1] = v,
            "blue" => self.rgb[2] = v,
            _ => return PropertyAccessResult::UnsupportedType,
        }
        PropertyAccessResult::Set
    }

    fn set_uint(&mut self, name: &str, v: u32) -> PropertyAccessResult {
        match name {
            "adjacency_offset" => self.end = v,
            "adjacency" => self.adjacency = v,
            _ => return PropertyAccessResult::UnsupportedType,
        }
        PropertyAccessResult::Set
    }
}

/// Decodes both elements into `scene` (already sized by the caller) and rejects
/// anything but whitespace after them.
pub fn read_ascii<R: BufRead>(reader: &mut R, schema: &Schema, scene: &mut Scene) -> Result<(), Problem> {
    let parser = Parser::<AsciiRecord>::new();
    let mut line = String::with_capacity(1024);
    let k = schema.sh_rest_len;
    for i in 0..schema.vertices {
        let rec = read_record(reader, &parser, &mut line, Elem::Vertex, &schema.vertex_def, i)?;
        scene.positions.push(rec.xyz);
        scene.color.push(rec.rgb);
        scene.density.push(rec.density);
        scene.adjacency_end.push(rec.end);
        scene.sh_rest.extend_from_slice(&rec.sh[..k]);
    }
    for i in 0..schema.adjacency {
        let rec = read_record(reader, &parser, &mut line, Elem::Adjacency, &schema.adjacency_def, i)?;
        scene.adjacency.push(rec.adjacency);
    }
    let mut trailing = 0u64;
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(|_| Problem::TrailingData(trailing + 1))? == 0 {
            break;
        }
        if !line.trim().is_empty() {
            trailing += line.len() as u64;
        }
    }
    if trailing > 0 { Err(Problem::TrailingData(trailing)) } else { Ok(()) }
}

fn read_record<R: BufRead>(
    reader: &mut R,
    parser: &Parser<AsciiRecord>,
    line: &mut String,
    elem: Elem,
    def: &ElementDef,
    index: usize,
) -> Result<AsciiRecord, Problem> {
    let fail = |detail: String| Problem::record(elem, index, detail);
    line.clear();
    let n = reader.read_line(line).map_err(|e| fail(format!("cannot read this ascii record: {e}")))?;
    if n == 0 {
        return Err(fail(format!("file ends before this record ({index} of {} read)", def.count)));
    }
    // ply-rs-bw ignores surplus values on a line; a shifted line must not pass silently.
    let values = line.split_whitespace().count();
    if values != def.properties.len() {
        return Err(fail(format!("ascii record has {values} values, expected {}", def.properties.len())));
    }
    parser.read_ascii_element(line, def).map_err(|e| {
        let why = bad_value(line, def).unwrap_or_else(|| one_line(e.to_string().lines().next().unwrap_or("")));
        fail(format!("bad ascii record: {why}"))
    })
}

/// Names the first value of an ascii record that is not a (finite) number of its
/// property's type.
fn bad_value(line: &str, def: &ElementDef) -> Option<String> {
    line.split_whitespace().zip(def.properties.iter()).enumerate().find_map(|(i, (v, (name, p)))| {
        let PropertyType::Scalar(t) = &p.data_type else { return None };
        let ok = match t {
            ScalarType::Float => v.parse::<f32>().is_ok_and(f32::is_finite),
            ScalarType::Double => v.parse::<f64>().is_ok_and(f64::is_finite),
            ScalarType::UChar => v.parse::<u8>().is_ok(),
            ScalarType::Char => v.parse::<i8>().is_ok(),
            ScalarType::UShort => v.parse::<u16>().is_ok(),
            ScalarType::Short => v.parse::<i16>().is_ok(),
            ScalarType::UInt => v.parse::<u32>().is_ok(),
            ScalarType::Int => v.parse::<i32>().is_ok(),
        };
        (!ok).then(|| format!("value {i} ({name}) is {v:?}, not a {}", super::ply_schema::type_name(t)))
    })
}
