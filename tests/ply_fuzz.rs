//! Corrupted scene.ply files never panic the reader: thousands of deterministic random
//! mutations (byte flips, truncations, insertions, header edits) of small valid files
//! in every encoding must each give a scene or an error, and every error is one line
//! naming the file.

use foam_ipu::scene::ply_read::parse_scene;
use foam_ipu::scene::ply_write::write_ply_as;
use foam_ipu::scene::random::{Rng, random_scene};
use foam_ipu::scene::{PlyFormat, read_scene_bytes};

fn mutate(rng: &mut Rng, orig: &[u8]) -> Vec<u8> {
    let mut b = orig.to_vec();
    let pos = |rng: &mut Rng, len: usize| (rng.next_u64() % len.max(1) as u64) as usize;
    match rng.next_u64() % 5 {
        0 => {
            for _ in 0..1 + rng.next_u64() % 4 {
                let p = pos(rng, b.len());
                b[p] = rng.next_u64() as u8;
            }
        }
        1 => b.truncate(pos(rng, b.len())),
        2 => {
            let p = pos(rng, b.len());
            let junk: Vec<u8> = (0..1 + rng.next_u64() % 16).map(|_| rng.next_u64() as u8).collect();
            b.splice(p..p, junk);
        }
        3 => {
            // Digits in the header: counts and types are where lies hurt most.
            let h = b.windows(10).position(|w| w == b"end_header").unwrap_or(b.len());
            let digits: Vec<usize> = (0..h).filter(|&i| b[i].is_ascii_digit()).collect();
            if !digits.is_empty() {
                let p = digits[pos(rng, digits.len())];
                b[p] = b'0' + (rng.next_u64() % 10) as u8;
            }
        }
        _ => {
            let p = pos(rng, b.len());
            b.remove(p.min(b.len().saturating_sub(1)));
        }
    }
    b
}

#[test]
fn mutated_files_give_errors_not_panics() {
    let mut rng = Rng::new(2024);
    let mut errors = 0;
    for (degree, format) in [
        (0u8, PlyFormat::BinaryLittleEndian),
        (1, PlyFormat::BinaryBigEndian),
        (2, PlyFormat::Ascii),
        (3, PlyFormat::BinaryLittleEndian),
    ] {
        let mut orig = Vec::new();
        write_ply_as(&random_scene(12, degree, degree as u64), &mut orig, format).unwrap();
        for _ in 0..1500 {
            let b = mutate(&mut rng, &orig);
            if let Err(e) = read_scene_bytes("fuzz.ply", &b) {
                let msg = e.to_string();
                assert!(msg.starts_with("fuzz.ply: ") && !msg.contains('\n'), "{msg:?}");
                errors += 1;
            }
            // The streaming path must agree on success or failure.
            let streamed = parse_scene(b.as_slice(), None).is_ok();
            let sized = parse_scene(b.as_slice(), Some(b.len() as u64)).is_ok();
            assert_eq!(streamed, sized, "streamed and sized parses disagree");
        }
    }
    // Most mutations must be caught (a flipped float bit can leave a valid scene).
    assert!(errors > 3000, "only {errors} of 6000 mutations were rejected");
}

#[test]
fn lying_count_on_a_stream_does_not_preallocate() {
    let mut b = Vec::new();
    write_ply_as(&random_scene(10, 3, 1), &mut b, PlyFormat::BinaryLittleEndian).unwrap();
    let at = b.windows(18).position(|w| w == b"element vertex 10\n").unwrap();
    b.splice(at..at + 18, b"element vertex 1000000000000\n".iter().copied());
    let t = std::time::Instant::now();
    let err = parse_scene(b.as_slice(), None).unwrap_err().to_string();
    assert!(err.starts_with("element vertex "), "{err}");
    assert!(err.contains("file ends inside this record"), "{err}");
    assert!(t.elapsed().as_secs() < 10);
}
