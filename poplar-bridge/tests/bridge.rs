//! The runtime driven from Rust through the cxx bridge: build a graph from handles, run
//! it, move host tensors, read counters and the memory report, and get C++ errors back
//! as `Err`.
use poplar_bridge::{ElemType, MemoryItem, MemoryKind, Session, TileMemory, codelets_gp, program_bytes, vertex_costs};

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn token_ring_through_the_bridge() {
    let n = 4u32;
    let mut s = Session::new(1, n).unwrap();
    s.add_codelets(&codelets_gp()).unwrap();
    let tok = s.add_variable(ElemType::UnsignedInt, &[n as usize, 4], "tokens").unwrap();
    let cs = s.add_compute_set("step").unwrap();
    let mut rows = Vec::new();
    for t in 0..n {
        let row = s.index(tok, t as usize).unwrap();
        s.set_tile_mapping(row, t).unwrap();
        let v = s.add_vertex(cs, "TestTokenStep", t).unwrap();
        s.connect(v, "token", row).unwrap();
        s.set_field_u32(v, "tileId", t).unwrap();
        rows.push(row);
    }
    let from = s.concat(&rows, 0).unwrap();
    let mut rotated = rows[1..].to_vec();
    rotated.push(rows[0]);
    let to = s.concat(&rotated, 0).unwrap();
    s.create_host_write("tokens_in", tok).unwrap();
    s.create_host_read("tokens_out", tok).unwrap();
    let exec = s.execute(cs).unwrap();
    let copy = s.copy(from, to).unwrap();
    let step = s.sequence(&[exec, copy]).unwrap();
    let ring = s.repeat(3, step).unwrap();

    let report = s.graph_memory_report().unwrap();
    s.compile(&[ring]).unwrap();
    assert_eq!(report, s.memory_report().unwrap());
    assert_eq!(report.num_tiles, 4);
    assert_eq!(report.bytes_per_tile, 638_976);
    // 16 B of token; state = list entry 4 + SPAN 8 + value 4; one vertex type's code
    // and six worker stacks as deep as it needs, both as the build measured them.
    let cost = vertex_costs().into_iter().find(|c| c.name == "TestTokenStep").unwrap();
    assert!(cost.measured && cost.stack_bytes > 0 && cost.code_bytes > 0, "{cost:?}");
    assert_eq!(
        report.tiles[2],
        TileMemory {
            tile: 2,
            tensor_bytes: 16,
            vertex_state_bytes: 16,
            code_bytes: cost.code_bytes,
            stack_bytes: 6 * cost.stack_bytes
        }
    );
    assert_eq!(program_bytes(&["TestTokenStep"]), Some(cost.code_bytes + 6 * cost.stack_bytes));
    let tile2: Vec<&MemoryItem> = report.items.iter().filter(|i| i.tile == 2).collect();
    assert!(tile2.iter().any(|i| i.kind == MemoryKind::Tensor && i.name == "tokens" && i.bytes == 16));
    assert!(
        tile2.iter().any(|i| i.kind == MemoryKind::Code && i.name == "TestTokenStep" && i.bytes == cost.code_bytes)
    );
    assert!(
        tile2
            .iter()
            .any(|i| i.kind == MemoryKind::Stack && i.name == "TestTokenStep" && i.bytes == 6 * cost.stack_bytes)
    );

    let init: Vec<u8> = (0..n * 4).flat_map(|i| (i * 100).to_le_bytes()).collect();
    s.write_tensor("tokens_in", &init).unwrap();
    s.run(0).unwrap();
    let mut out = vec![0u8; init.len()];
    s.read_tensor("tokens_out", &mut out).unwrap();
    let got = u32s(&out);
    // After 3 steps the token that started on tile t sits on tile (t + 3) % 4.
    for t in 0..n as usize {
        let at = (t + 3) % 4;
        let k = &got[at * 4..at * 4 + 4];
        let mut h = (t as u32 * 4 + 1) * 100;
        for step in 0..3 {
            h = h.wrapping_mul(31).wrapping_add(((t + step) % 4) as u32);
        }
        assert_eq!(k, [t as u32 * 400 + 3, h, ((t + 2) % 4) as u32, (t as u32 * 4 + 3) * 100]);
    }
    let c = s.counters().unwrap();
    assert_eq!((c.compute_steps, c.vertex_runs, c.copies, c.bytes_exchanged, c.host_calls), (3, 12, 3, 192, 3));
    assert_eq!(c.implicit_exchange_bytes, 0);
    s.reset_counters().unwrap();
    assert_eq!(s.counters().unwrap(), Default::default());
}

#[test]
fn errors_come_back_as_results() {
    let mut s = Session::new(1, 2).unwrap();
    s.add_codelets(&codelets_gp()).unwrap();
    assert!(s.run(0).unwrap_err().to_string().contains("no engine yet"));
    let a = s.add_variable(ElemType::Float, &[8], "lonely").unwrap();
    let e = s.compile(&[]).unwrap_err().to_string();
    assert!(e.contains("lonely") && e.contains("no tile mapping"), "{e}");
    assert!(s.set_tile_mapping(a, 0).unwrap_err().to_string().contains("already compiled"));

    let mut s = Session::new(1, 2).unwrap();
    let big = s.add_variable(ElemType::Float, &[200_000], "too_big").unwrap();
    s.set_tile_mapping(big, 1).unwrap();
    let r = s.graph_memory_report().unwrap();
    assert_eq!(r.tiles.len(), 1);
    assert_eq!(r.tiles[0].tensor_bytes, 800_000);
    let e = s.compile(&[]).unwrap_err().to_string();
    assert!(e.contains("Out of memory on tile 1") && e.contains("too_big"), "{e}");

    let mut s = Session::new(1, 2).unwrap();
    assert!(s.add_codelets("nope.gp").unwrap_err().to_string().contains("nope.gp"));
    let t = s.add_variable(ElemType::Half, &[3], "h").unwrap();
    assert!(s.set_initial_bytes(t, &[0; 4]).unwrap_err().to_string().contains("4 bytes"));
    assert!(s.set_tile_mapping(t, 2).unwrap_err().to_string().contains("the target has 2 tiles"));
    assert!(s.slice(t, 2, 5, 0).unwrap_err().to_string().contains("out of range"));
    assert!(Session::new(0, 4).is_err());
}

/// compileGraph checks the graph as Engine's constructor does; storing the
/// executable (what `compile_cached` does with the SDK) is refused by the host
/// runtime, which leaves no file behind.
#[test]
fn the_host_runtime_compiles_executables_in_memory_only() {
    let dir = std::env::temp_dir().join(format!("foam-exe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("graph.poplar_exe");
    let mut s = Session::new(1, 2).unwrap();
    s.add_variable(ElemType::Float, &[8], "lonely").unwrap();
    let e = s.compile_cached(&[], file.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("lonely") && e.contains("no tile mapping"), "compileGraph checks the graph: {e}");

    let mut s = Session::new(1, 2).unwrap();
    let a = s.add_variable(ElemType::Float, &[8], "a").unwrap();
    s.set_tile_mapping(a, 0).unwrap();
    let e = s.compile_cached(&[], file.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("Executable::serialize") && e.contains("Poplar SDK"), "{e}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir(&dir).unwrap();
}
