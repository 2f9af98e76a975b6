//! The vertex-input recorder (POPLAR_HOST_RECORD, host/record.hpp) on the token ring of
//! tests/cpp/scenarios.cpp: 8 tiles, each vertex steps its token, a Copy passes every
//! token on to the next tile, 5 times. Its own test binary, because the recorder is
//! switched on by the environment of the whole process.
use std::collections::HashMap;
use std::fs;

use poplar_bridge::selftest::run;

struct Field {
    name: String,
    bytes: usize,
    hash: String,
}

struct Record {
    exec: u64,
    tile: u32,
    vertex: u32,
    fields: Vec<Field>,
    post: HashMap<String, String>,
}

fn parse(text: &str) -> Vec<Record> {
    let mut recs: Vec<Record> = Vec::new();
    let mut by_vertex: HashMap<(u64, u32), usize> = HashMap::new();
    let mut cur = None;
    for line in text.lines() {
        let p: Vec<&str> = line.split_whitespace().collect();
        match p[0] {
            "rec" => {
                assert_eq!(p[1], "step", "{line}");
                assert_eq!(p[5], "TestTokenStep", "{line}");
                let r = Record {
                    exec: p[2].parse().unwrap(),
                    tile: p[3].parse().unwrap(),
                    vertex: p[4].parse().unwrap(),
                    fields: Vec::new(),
                    post: HashMap::new(),
                };
                by_vertex.insert((r.exec, r.vertex), recs.len());
                cur = Some(recs.len());
                recs.push(r);
            }
            "f" => recs[cur.unwrap()].fields.push(Field {
                name: p[1].into(),
                bytes: p[3].parse().unwrap(),
                hash: p[4].into(),
            }),
            "done" => {
                let exec = recs[cur.unwrap()].exec;
                cur = Some(by_vertex[&(exec, p[1].parse::<u32>().unwrap())]);
            }
            "post" => {
                recs[cur.unwrap()].post.insert(p[1].into(), p[2].into());
            }
            other => panic!("unexpected line kind {other}: {line}"),
        }
    }
    recs
}

#[test]
fn records_every_vertex_input_before_its_compute_set_and_its_output_after() {
    let dir = std::env::temp_dir().join(format!("poplar-record-test-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    // SAFETY: the only test of this binary; nothing else reads the environment meanwhile.
    unsafe {
        std::env::set_var("POPLAR_HOST_RECORD", &dir);
        std::env::set_var("POPLAR_HOST_RECORD_EVERY", "1");
    }
    run("token_ring", 1).unwrap();

    let recs = parse(&fs::read_to_string(dir.join("records.txt")).unwrap());
    let blobs = fs::read(dir.join("blobs.bin")).unwrap();
    let mut index = HashMap::new();
    let mut total = 0;
    for line in fs::read_to_string(dir.join("blobs.txt")).unwrap().lines() {
        let p: Vec<&str> = line.split_whitespace().collect();
        let (off, n): (usize, usize) = (p[1].parse().unwrap(), p[2].parse().unwrap());
        assert!(index.insert(p[0].to_string(), (off, n)).is_none(), "blob {} stored twice", p[0]);
        assert_eq!(off, total, "blobs are back to back");
        total += n;
    }
    assert_eq!(total, blobs.len());
    let word = |f: &Field, i: usize| {
        let (off, n) = index[&f.hash];
        assert_eq!(n, f.bytes, "field {}", f.name);
        u32::from_le_bytes(blobs[off + 4 * i..off + 4 * i + 4].try_into().unwrap())
    };

    // Five executions of eight vertices, each with its token (4 words) and tileId.
    assert_eq!(recs.len(), 40);
    let mut at = HashMap::new();
    for r in &recs {
        let token = r.fields.iter().find(|f| f.name == "token").unwrap();
        let tile_id = r.fields.iter().find(|f| f.name == "tileId").unwrap();
        assert_eq!((token.bytes, tile_id.bytes), (16, 4));
        assert_eq!(word(tile_id, 0), r.tile);
        if r.exec == 1 {
            // Recorded before the first step: the token's identity as initialised.
            assert_eq!(word(token, 3), 1000 + r.tile);
        }
        assert!(r.post.contains_key("token"), "written field without its hash after the run");
        at.insert((r.exec, r.tile), r);
    }
    // The Copy passes tile t's token, as the step left it, to tile t+1: what the recorder
    // saw after execution k on tile t is what it saw before execution k+1 on tile t+1.
    for exec in 1..5 {
        for tile in 0..8 {
            let before = &at[&(exec, tile)];
            let after = &at[&(exec + 1, (tile + 1) % 8)];
            let next = &after.fields.iter().find(|f| f.name == "token").unwrap().hash;
            assert_eq!(&before.post["token"], next, "exec {exec} tile {tile} (vertex {})", before.vertex);
            assert_ne!(
                before.post["token"],
                before.fields.iter().find(|f| f.name == "token").unwrap().hash,
                "the step changes the token"
            );
        }
    }
    fs::remove_dir_all(&dir).ok();
}
