//! Every kind of bad scene.ply through `foam-ipu info`: a one-line error naming the
//! file (and element and index where there is one), non-zero exit, no panic, no OOM.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use foam_ipu::scene::ply_write::write_ply_as;
use foam_ipu::scene::{PlyFormat, Scene};

/// Vertex record bytes at SH degree 1 (9 floats).
const REC: usize = 23 + 36;

/// A valid scene (SH degree 1) whose site i has the neighbours `slices[i]`.
fn scene(slices: &[Vec<u32>]) -> Scene {
    let n = slices.len();
    let mut ends = Vec::new();
    let mut end = 0;
    for s in slices {
        end += s.len() as u32;
        ends.push(end);
    }
    Scene {
        positions: (0..n).map(|i| [i as f32, (i * i) as f32, 1.0]).collect(),
        density: (0..n).map(|i| i as f32 * 0.5).collect(),
        color: (0..n).map(|i| [i as u8, 2, 3]).collect(),
        sh_degree: 1,
        sh_rest: (0..n * 9).map(|k| k as f32 * 0.01).collect(),
        adjacency_end: ends,
        adjacency: slices.concat(),
    }
}

/// Eight sites in a ring: site i lists i+1 then i−1, so adjacency entry 2i+p is
/// site i's p-th neighbour and the ends are 2, 4, …, 16.
fn ring() -> Scene {
    let n = 8u32;
    scene(&(0..n).map(|i| vec![(i + 1) % n, (i + n - 1) % n]).collect::<Vec<_>>())
}

/// Site 0 lists sites 1..=40 (a slice long enough for the sorted lookup path); each of
/// those lists only site 0.
fn star() -> Vec<Vec<u32>> {
    let mut slices = vec![(1..=40).collect::<Vec<u32>>()];
    slices.extend((1..=40).map(|_| vec![0]));
    slices
}

fn bytes(scene: &Scene, format: PlyFormat) -> Vec<u8> {
    let mut out = Vec::new();
    write_ply_as(scene, &mut out, format).unwrap();
    out
}

fn header_len(b: &[u8]) -> usize {
    b.windows(11).position(|w| w == b"end_header\n").unwrap() + 11
}

/// The file with its header text edited (payload untouched).
fn edit_header(b: &[u8], from: &str, to: &str) -> Vec<u8> {
    let h = header_len(b);
    let text = std::str::from_utf8(&b[..h]).unwrap();
    assert!(text.contains(from), "test bug: {from:?} not in header");
    let mut out = text.replacen(from, to, 1).into_bytes();
    out.extend_from_slice(&b[h..]);
    out
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }

    fn file(&self, name: &str, contents: &[u8]) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::write(&p, contents).unwrap();
        p
    }

    /// Writes `contents` as NAME.ply and checks `info` fails naming the file and
    /// mentioning every fragment.
    fn expect(&self, name: &str, contents: &[u8], fragments: &[&str]) -> String {
        let path = self.file(&format!("{name}.ply"), contents);
        error_for(&path, fragments)
    }
}

fn error_for(path: &Path, fragments: &[&str]) -> String {
    let p = path.to_str().unwrap();
    let err = common::expect_error(&["info", p]);
    assert!(err.starts_with(&format!("error: {p}: ")), "error does not name the file: {err}");
    for f in fragments {
        assert!(err.contains(f), "expected {f:?} in: {err}");
    }
    err
}

#[test]
fn not_a_scene_file() {
    let d = Dir::new();
    d.expect("empty", b"", &["file is empty"]);
    d.expect("text", b"hello world\n", &["not a PLY file"]);
    d.expect("blob", &vec![0x89u8; 3 << 20], &["not a PLY file"]);
    d.expect("no_end_header", b"ply\nformat ascii 1.0\nelement vertex 1\n", &["header", "end_header"]);
    let mut endless = b"ply\n".to_vec();
    endless.extend(std::iter::repeat_n(b'a', 3 << 20));
    d.expect("endless_header", &endless, &["header", "no end_header line in the first"]);
    d.expect("not_utf8", b"ply\nformat ascii 1.0\ncomment \xff\xfe\nend_header\n", &["header is not text"]);
    let missing = error_for(Path::new("/nonexistent/scene.ply"), &["cannot read"]);
    assert!(missing.contains("No such file"), "{missing}");
}

#[test]
fn header_layout_mismatches() {
    let d = Dir::new();
    let ok = bytes(&ring(), PlyFormat::BinaryLittleEndian);
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "bad_format",
            "binary_little_endian",
            "binary_middle_endian",
            &["header: line 2: expected 'format ascii|binary_little_endian|binary_big_endian 1.0'"],
        ),
        (
            "unknown_prop",
            "property float density\n",
            "property float density\nproperty float foo\n",
            &["element vertex: unknown property 'foo'"],
        ),
        ("missing_prop", "property uchar red\n", "", &["element vertex: missing property 'red'"]),
        (
            "mistyped_prop",
            "property float x\n",
            "property double x\n",
            &["element vertex: property 'x' is double, expected float"],
        ),
        (
            "mistyped_offset",
            "property uint adjacency_offset\n",
            "property int adjacency_offset\n",
            &["property 'adjacency_offset' is int, expected uint"],
        ),
        (
            "mistyped_adjacency",
            "property uint adjacency\n",
            "property int adjacency\n",
            &["element adjacency: property 'adjacency' is int, expected uint"],
        ),
        (
            "list_adjacency",
            "property uint adjacency\n",
            "property list uchar uint adjacency\n",
            &["element adjacency: property 'adjacency' is a list, expected uint"],
        ),
        (
            "swapped_props",
            "property uchar red\nproperty uchar green\n",
            "property uchar green\nproperty uchar red\n",
            &["element vertex: property 3 is 'green', expected 'red'"],
        ),
        ("sh_count", "property float color_sh_8\n", "", &["element vertex: 8 color_sh_* properties"]),
        (
            "sh_gap",
            "property float color_sh_3\n",
            "property float color_sh_9\n",
            &["element vertex: unknown property 'color_sh_9'"],
        ),
        (
            "duplicate_prop",
            "property float y\n",
            "property float x\n",
            &["element vertex: property 'x' is declared twice"],
        ),
        (
            "extra_element",
            "end_header\n",
            "element face 0\nproperty list uchar int vertex_indices\nend_header\n",
            &["unexpected element 'face'"],
        ),
        ("missing_element", "element adjacency 16\nproperty uint adjacency\n", "", &["missing element 'adjacency'"]),
        ("zero_vertices", "element vertex 8\n", "element vertex 0\n", &["element vertex: count is 0"]),
        (
            "count_overflow",
            "element vertex 8\n",
            "element vertex 99999999999999999999999\n",
            &["header: line 3: element count 99999999999999999999999 is too large"],
        ),
    ];
    for (name, from, to, fragments) in cases {
        d.expect(name, &edit_header(&ok, from, to), fragments);
    }
    // Elements in the wrong order.
    let h = header_len(&ok);
    let text = std::str::from_utf8(&ok[..h]).unwrap();
    let (top, vertex_rest) = text.split_at(text.find("element vertex").unwrap());
    let (vertex, adjacency) = vertex_rest.split_at(vertex_rest.find("element adjacency").unwrap());
    let adjacency = adjacency.strip_suffix("end_header\n").unwrap();
    let swapped = format!("{top}{adjacency}{vertex}end_header\n");
    d.expect("swapped_elements", swapped.as_bytes(), &["element 'adjacency' comes before 'vertex'"]);
}

#[test]
fn truncated_and_oversized_data() {
    let d = Dir::new();
    let ok = bytes(&ring(), PlyFormat::BinaryLittleEndian);
    let h = header_len(&ok);
    d.expect("cut_vertex", &ok[..h + 3 * REC + 10], &["element vertex 3:", "data ends in this record", "8 records"]);
    d.expect("cut_adjacency", &ok[..h + 8 * REC + 5 * 4 + 2], &["element adjacency 5:", "16 entries"]);
    d.expect("header_only", &ok[..h], &["element vertex 0:", "data ends"]);
    let mut long = ok.clone();
    long.extend_from_slice(b"garbage");
    d.expect("trailing", &long, &["7 bytes of unexpected data after the last element"]);
}

#[test]
fn absurd_counts_fail_fast_without_allocating() {
    let d = Dir::new();
    for format in [PlyFormat::BinaryLittleEndian, PlyFormat::BinaryBigEndian, PlyFormat::Ascii] {
        let ok = bytes(&ring(), format);
        let t = Instant::now();
        let huge = edit_header(&ok, "element vertex 8\n", "element vertex 1000000000000\n");
        d.expect(&format!("huge_vertex_{format}"), &huge, &["element vertex ", "declares 1000000000000 records"]);
        let huge = edit_header(&ok, "element adjacency 16\n", "element adjacency 1000000000000\n");
        d.expect(&format!("huge_adjacency_{format}"), &huge, &["element adjacency ", "declares 1000000000000 entries"]);
        // Allocating 10^12 records would take minutes or abort; the size check is instant.
        assert!(t.elapsed() < Duration::from_secs(10), "{format}: took {:?}", t.elapsed());
    }
}

#[test]
fn broken_offsets() {
    let d = Dir::new();
    let mut s = ring();
    s.adjacency_end[2] = 3;
    d.expect(
        "non_monotonic",
        &bytes(&s, PlyFormat::BinaryLittleEndian),
        &["element vertex 2: adjacency_offset 3 is below the previous end 4"],
    );
    let mut s = ring();
    s.adjacency_end[3] = 100;
    d.expect(
        "overflowing",
        &bytes(&s, PlyFormat::BinaryLittleEndian),
        &["element vertex 3: adjacency_offset 100 is past the end of the 16 adjacency entries"],
    );
    let mut s = ring();
    s.adjacency.push(0);
    d.expect(
        "short_last",
        &bytes(&s, PlyFormat::BinaryLittleEndian),
        &["element vertex 7: the last adjacency_offset 16 must equal the adjacency count 17"],
    );
}

#[test]
fn broken_neighbours() {
    let d = Dir::new();
    let le = |s: &Scene| bytes(s, PlyFormat::BinaryLittleEndian);
    let mut s = ring();
    s.adjacency[5] = 99;
    d.expect("out_of_range", &le(&s), &["element adjacency 5: neighbour 99 of vertex 2 is out of range (8 vertices)"]);
    let mut s = ring();
    s.adjacency[4] = 2;
    d.expect("self", &le(&s), &["element adjacency 4: vertex 2 lists itself as a neighbour"]);
    let mut s = ring();
    s.adjacency[5] = 3;
    d.expect("duplicate", &le(&s), &["element adjacency 5: vertex 2 lists neighbour 3 twice"]);
    let mut slices: Vec<Vec<u32>> = (0..8u32).map(|i| vec![(i + 1) % 8, (i + 7) % 8]).collect();
    slices[2].push(3);
    d.expect("duplicate_symmetric", &le(&scene(&slices)), &["element adjacency 6: vertex 2 lists neighbour 3 twice"]);
    let mut s = ring();
    s.adjacency[4] = 5;
    d.expect("asymmetric", &le(&s), &["element adjacency 4: vertex 2 lists neighbour 5, but vertex 5 does not list 2"]);

    // An unmirrored entry pointing to a lower index (the fast forward-only pass alone
    // cannot see it; the entry counts give it away).
    let mut slices: Vec<Vec<u32>> = (0..8u32).map(|i| vec![(i + 1) % 8, (i + 7) % 8]).collect();
    slices[5].push(2);
    d.expect(
        "asymmetric_backward",
        &le(&scene(&slices)),
        &["element adjacency 12: vertex 5 lists neighbour 2, but vertex 2 does not list 5"],
    );

    // The same faults on a slice long enough to be checked by binary search.
    let mut slices = star();
    slices[0][7] = 7;
    d.expect("long_duplicate", &le(&scene(&slices)), &["element adjacency 7: vertex 0 lists neighbour 7 twice"]);
    let mut slices = star();
    slices[0].retain(|&j| j != 9);
    d.expect(
        "long_asymmetric",
        &le(&scene(&slices)),
        &["element adjacency 47: vertex 9 lists neighbour 0, but vertex 0 does not list 9"],
    );
    assert!(common::run(&["info", d.file("star.ply", &le(&scene(&star()))).to_str().unwrap()]).status.success());
}

#[test]
fn bad_values() {
    let d = Dir::new();
    let le = |s: &Scene| bytes(s, PlyFormat::BinaryLittleEndian);
    let mut s = ring();
    s.positions[4][1] = f32::NAN;
    d.expect("nan_position", &le(&s), &["element vertex 4: y is NaN"]);
    let mut s = ring();
    s.density[5] = f32::INFINITY;
    d.expect("inf_density", &le(&s), &["element vertex 5: density is inf"]);
    let mut s = ring();
    s.density[6] = -0.5;
    d.expect(
        "negative_density",
        &bytes(&s, PlyFormat::BinaryBigEndian),
        &["element vertex 6: density -0.5 is negative"],
    );
    let mut s = ring();
    s.sh_rest[3 * 9 + 4] = f32::NEG_INFINITY;
    d.expect("inf_sh", &le(&s), &["element vertex 3: color_sh_4 is -inf"]);
}

#[test]
fn bad_ascii_records() {
    let d = Dir::new();
    let ok = String::from_utf8(bytes(&ring(), PlyFormat::Ascii)).unwrap();
    let h = header_len(ok.as_bytes());
    let (header, body) = ok.split_at(h);
    let lines: Vec<&str> = body.lines().collect();
    let with_line = |i: usize, new: &str| {
        let mut l = lines.clone();
        l[i] = new;
        format!("{header}{}\n", l.join("\n")).into_bytes()
    };
    let first_token_replaced = |i: usize, tok: &str| {
        let rest = lines[i].split_once(' ').unwrap().1;
        with_line(i, &format!("{tok} {rest}"))
    };
    d.expect("ascii_word", &first_token_replaced(1, "abc"), &["element vertex 1: bad ascii record"]);
    d.expect("ascii_nan", &first_token_replaced(2, "nan"), &["element vertex 2: bad ascii record"]);
    let big_red: Vec<&str> = lines[3].split(' ').collect();
    let mut big_red = big_red.clone();
    big_red[3] = "300";
    d.expect("ascii_uchar", &with_line(3, &big_red.join(" ")), &["element vertex 3: bad ascii record"]);
    let short = lines[2].rsplit_once(' ').unwrap().0;
    d.expect("ascii_short", &with_line(2, short), &["element vertex 2: ascii record has 16 values, expected 17"]);
    let long = format!("{} 7", lines[4]);
    d.expect("ascii_long", &with_line(4, &long), &["element vertex 4: ascii record has 18 values, expected 17"]);
    d.expect("ascii_negative_index", &with_line(8 + 3, "-1"), &["element adjacency 3: bad ascii record"]);
    let cut = format!("{header}{}\n", lines[..8 + 13].join("\n"));
    d.expect("ascii_cut", cut.as_bytes(), &["element adjacency 13: file ends before this record (13 of 16 read)"]);
    d.expect("ascii_trailing", format!("{ok}1 2 3\n").as_bytes(), &["bytes of unexpected data after the last element"]);
    // Trailing blank lines are harmless.
    let blank = d.file("ascii_blank.ply", format!("{ok}\n\n").as_bytes());
    assert!(common::run(&["info", blank.to_str().unwrap()]).status.success());
}
