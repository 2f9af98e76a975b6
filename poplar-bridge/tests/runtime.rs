//! The host runtime driven through C++ graph code (runtime/tests/cpp/scenarios.cpp): execution
//! semantics, determinism across thread counts, and every rule it enforces.
use poplar_bridge::selftest::run;

fn field<'a>(summary: &'a str, key: &str) -> &'a str {
    summary
        .split(';')
        .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {summary}"))
}

fn err(name: &str) -> String {
    match run(name, 0) {
        Ok(s) => panic!("scenario {name} should fail but returned {s}"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "error {msg:?} should mention {p:?}");
    }
    assert!(!msg.contains('\n'), "error should be one line: {msg:?}");
}

/// Token ring: the tokens a Repeat of (Execute; rotating Copy) leaves, simulated here.
fn expected_tokens(n: u32, repeats: u32) -> Vec<u32> {
    let mut tok: Vec<[u32; 4]> = (0..n).map(|t| [0, 0, 0, 1000 + t]).collect();
    for _ in 0..repeats {
        for (t, k) in tok.iter_mut().enumerate() {
            k[0] += 1;
            k[1] = k[1].wrapping_mul(31).wrapping_add(t as u32);
            k[2] = t as u32;
        }
        tok.rotate_right(1);
    }
    tok.concat()
}

fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

#[test]
fn token_ring_moves_tokens_with_copy_inside_repeat() {
    for scenario in ["token_ring", "token_ring_buffers"] {
        for threads in [1, 3] {
            let s = run(scenario, threads).unwrap();
            assert_eq!(field(&s, "tokens"), join(&expected_tokens(8, 5)), "{scenario} threads={threads}");
            assert_eq!(field(&s, "steps"), "5");
            assert_eq!(field(&s, "vertex_runs"), "40");
            assert_eq!(field(&s, "copies"), if scenario == "token_ring" { "5" } else { "10" });
            // 8 tokens of 16 bytes cross tiles per step; the inbox->token copy stays on-tile.
            assert_eq!(field(&s, "exchanged"), "640");
            assert_eq!(field(&s, "host_calls"), "2");
            assert_eq!(field(&s, "cycles"), "535"); // 5 steps x busiest tile (107 cycles)
        }
    }
}

fn expected_reduction_bits() -> u32 {
    let (tiles, n, w) = (12usize, 997usize, 6usize);
    let mut x: u32 = 12345;
    let data: Vec<f32> = (0..tiles * n)
        .map(|_| {
            x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            (x >> 8) as f32 * (1.0 / 16777216.0) - 0.25
        })
        .collect();
    let mut total = 0.0f32;
    for t in 0..tiles {
        for k in 0..w {
            let (b, e) = (n * k / w, n * (k + 1) / w);
            let mut s = 0.0f32;
            for v in &data[t * n + b..t * n + e] {
                s += v;
            }
            total += s;
        }
    }
    total.to_bits()
}

#[test]
fn multivertex_reduction_is_independent_of_thread_count() {
    let want = expected_reduction_bits().to_string();
    for threads in [1, 2, 3, 7] {
        let s = run("reduction", threads).unwrap();
        assert_eq!(field(&s, "total_bits"), want, "threads={threads}");
        assert_eq!(field(&s, "vertex_runs"), "13");
        assert_eq!(field(&s, "exchanged"), (11 * 6 * 4).to_string()); // tile 0's partials stay put
    }
}

/// The documented worker rule: a tile's lone MultiVertex runs as one job per worker
/// on the pool, so with one thread the workers run in worker order (each sees all
/// lower workers' writes) and with more they run concurrently, as on hardware.
/// (Codelets must not rely on any order.)
#[test]
fn multivertex_workers_are_separate_jobs() {
    assert_eq!(field(&run("worker_order", 1).unwrap(), "seen"), "1,2,3,4,5,6");
    let out = run("worker_order", 2).unwrap();
    let seen = field(&out, "seen");
    assert!(seen.split(',').all(|v| v != "0"), "every worker ran: {seen}");
}

#[test]
fn repeat_while_true_stops_on_device_computed_predicate() {
    let s = run("repeat_while", 0).unwrap();
    assert_eq!(field(&s, "counter"), "7");
    assert_eq!(field(&s, "body_runs"), "6");
    assert_eq!(field(&s, "steps"), "13"); // 7 condition + 6 body Executes
}

#[test]
fn host_write_read_round_trip_through_views() {
    let s = run("host_round_trip", 0).unwrap();
    let input: Vec<i32> = (0..15).map(|i| i * i - 40).collect();
    assert_eq!(field(&s, "out"), join(&input));
    let cols: Vec<i32> = (0..3).flat_map(|r| [input[r * 5 + 1], input[r * 5 + 2]]).collect();
    assert_eq!(field(&s, "cols"), join(&cols));
    assert_eq!(field(&s, "host_calls"), "3");
}

#[test]
fn tensor_views_select_the_right_elements() {
    let s = run("views", 0).unwrap();
    assert_eq!(field(&s, "slice_dim1"), "1,2,5,6,9,10");
    assert_eq!(field(&s, "concat_dim1"), "0,3,4,7,8,11");
    assert_eq!(field(&s, "row2"), "8,9,10,11");
    assert_eq!(field(&s, "reshape_row1"), "3,4,5");
    assert_eq!(field(&s, "flat_slice"), "5,6");
    assert_eq!(field(&s, "concat_dim0"), "8,9,10,11,0,1,2,3");
}

#[test]
fn half_codelet_arithmetic_and_conversions() {
    assert_eq!(field(&run("half_scale", 0).unwrap(), "half"), "0.5,1.5,32752,0.0499878,-1.25");
    let s = run("half_bits", 0).unwrap();
    // ties to even at 1+2^-11 and 1+3*2^-11; 65519 -> max; 65520 -> inf; 2^-25 ties to 0;
    // 1.5*2^-25 and 2^-24 -> smallest subnormal; 2^-14 smallest normal; -0; 0.1; -max.
    let want = [0x3c00, 0x3c02, 0x7bff, 0x7c00, 0, 1, 1, 0x0400, 0x8000, 0x2e66, 0xfbff];
    assert_eq!(field(&s, "bits"), join(&want));
    assert_eq!(field(&s, "floats"), "0.333251953,5.96046448e-08,65504,-inf");
}

#[test]
fn payload_half_conversions_agree_with_the_portable_ones() {
    let s = run("foam_half", 0).unwrap();
    assert_eq!(field(&s, "h2f_mismatches"), "0");
    assert_eq!(field(&s, "f2h_mismatches"), "0");
    // The payload saturates: +-65504 (0x7bff) past the largest half, infinities too.
    assert_eq!(field(&s, "saturating_mismatches"), "0");
    assert_eq!(field(&s, "saturated"), join(&[0x7bff, 0x7bff, 0x7bff, 0x7bff, 0xfbff, 0xfbff]));
    // build.rs turns F16C on for a native build on a machine that has it.
    #[cfg(target_arch = "x86_64")]
    assert_eq!(field(&s, "f16c"), if std::arch::is_x86_feature_detected!("f16c") { "1" } else { "0" });
}

#[test]
fn the_marchs_rounding_and_an_injectors_primary_rays_and_fixed_search_match_the_payload_and_the_loop() {
    let s = run("ray_round", 0).unwrap();
    assert_eq!(field(&s, "rays"), "120000");
    assert_eq!(field(&s, "round_mismatches"), "0");
    assert_eq!(field(&s, "primaries"), "12000");
    assert_eq!(field(&s, "primary_mismatches"), "0");
    assert_ne!(field(&s, "finds"), "0");
    assert_eq!(field(&s, "find_mismatches"), "0");
}

/// With floating-point exceptions trapping (as on the IPU), neither a zeroed camera
/// nor a payload without depth crossing an empty cell below the quantile divides by
/// zero; the first gives a zero direction, the second leaves depth unset.
#[test]
fn marching_divides_by_no_zero() {
    assert_eq!(run("march_traps", 0).unwrap(), "direction=0,0,0;end=1;cells=2;T=0.3;depth=-1");
}

/// A ray's class among a replicated shard's tiles (foam_replica_class, the pick of
/// the routers and of the side links) splits every block of pixels evenly over the
/// tiles, within 6 standard deviations of a fair split, and nests (the class among
/// twice the tiles halves it), which lets the side links follow the classes; the
/// steps a pixel word carries do not change it.
#[test]
fn replica_classes_split_evenly_and_nest() {
    let s = run("replica_picks", 0).unwrap();
    let worst: u32 = field(&s, "split_sd_x100").parse().unwrap();
    assert!(worst < 600, "{s}");
    assert_eq!(field(&s, "unnested"), "0", "{s}");
    assert_eq!(field(&s, "cases"), "16", "four blocks, 2 to 16 tiles: {s}");
}

/// The routers' share arithmetic divides by one f32 multiply and a correction
/// (foam/divide.h): the quotient is the integer one on every divisor up to 2^17
/// and on random ones up to 2^30, at the edges of each quotient and remainder
/// range, and on a router's own products. Without the correction (the truncated
/// product alone) one check in seven was wrong.
#[test]
fn divisor_quotients_are_exact() {
    let s = run("divisor_exact", 0).unwrap();
    assert_eq!(field(&s, "wrong"), "0", "{s}");
    assert!(field(&s, "checks").parse::<u64>().unwrap() > 5_000_000, "{s}");
}

#[test]
fn device_manager_and_target_facts() {
    assert_eq!(run("device_manager", 0).unwrap(), "ipu=0;model_tiles=2944;bytes=638976;workers=6;half=2");
}

#[test]
fn over_budget_tile_is_an_out_of_memory_error_naming_the_tile() {
    let e = err("over_budget");
    assert_mentions(&e, &["Out of memory on tile 3", "700000 bytes", "638976", "big_buffer"]);
}

#[test]
fn unmapped_tensor_is_an_error() {
    assert_mentions(&err("unmapped"), &["half_mapped", "[4, 10)", "no tile mapping"]);
}

#[test]
fn copy_size_and_type_mismatch_are_errors() {
    assert_mentions(&err("copy_mismatch"), &["src10", "dst8", "10 vs 8"]);
    assert_mentions(&err("copy_type_mismatch"), &["floats", "ints", "float vs int"]);
    assert_mentions(&err("overlapping_dst"), &["more than once", "tile 1"]);
}

#[test]
fn field_connection_errors() {
    assert_mentions(&err("unconnected_field"), &["'seen'", "not connected"]);
    assert_mentions(&err("wrong_type_field"), &["'x'", "unsigned int", "float_scalar", "float"]);
}

#[test]
fn failing_vertex_reports_the_lowest_tile_whatever_the_thread_count() {
    for threads in [1, 2, 5] {
        let e = run("vertex_false", threads).unwrap_err().to_string();
        assert_mentions(&e, &["TestFailIf", "tile 5", "returned false"]);
    }
}

#[test]
fn codelets_must_be_compiled_in_and_added() {
    assert_mentions(&err("unknown_codelets"), &["not_there.cpp", "runtime_test_codelets.cpp"]);
    assert_mentions(&err("codelets_not_added"), &["TestIncrement", "runtime_test_codelets.cpp", "addCodelets"]);
}

#[test]
fn host_buffer_size_must_match() {
    assert_mentions(&err("bad_host_buffer"), &["'x'", "12 bytes", "16"]);
}

/// Runs under the environment set by `foam_threads_environment_variable` (ignored otherwise).
#[test]
#[ignore]
fn engine_under_env() {
    match run("reduction", 0) {
        Ok(s) => println!("RESULT {}", field(&s, "total_bits")),
        Err(e) => println!("ERROR {e}"),
    }
}

#[test]
fn foam_threads_environment_variable() {
    let under = |v: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "engine_under_env", "--nocapture", "--test-threads=1"])
            .env("FOAM_THREADS", v)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // libtest may print "test engine_under_env ... " on the same line first.
        let at = text.find("RESULT").or_else(|| text.find("ERROR")).unwrap_or(text.len());
        text[at..].lines().next().unwrap_or("").to_string()
    };
    let want = format!("RESULT {}", expected_reduction_bits());
    assert_eq!(under("1"), want);
    assert_eq!(under("4"), want);
    let e = under("zero");
    assert!(e.contains("FOAM_THREADS must be a positive integer, got 'zero'"), "{e}");
}

/// Variables, a constant copied into a 2-D slice, FIFOs both ways over host ring
/// buffers, and prints, from an engine built of a graph that is gone before it runs.
#[test]
fn data_streams_and_printed_tensors() {
    let s = run("streams_and_prints", 0).unwrap();
    assert_eq!(
        field(&s, "printed"),
        "grid: [[0 0 0 0]|       [0 7 8 0]|       [0 9 10 0]]|dst-0: [100 101 102 103]|\
         dst-2: [108 109 110 111]|[100 101 102 103]|"
    );
    // The ring of 12 ints gave 100.., 104.., 108.., then 100.. again; the device sent
    // the first and third back.
    assert_eq!(field(&s, "out"), "100,101,102,103,108,109,110,111");
    assert_eq!(field(&s, "stream_bytes"), (6 * 16).to_string());
}

/// Fields connected to data on other tiles, or spread over several: the runtime
/// inserts the exchange (in before the compute set, out after) as Poplar does,
/// gives each such field a buffer on its vertex's tile and counts the bytes per
/// compute set.
#[test]
fn implicit_exchange_for_fields_elsewhere() {
    let s = run("implicit_exchange", 0).unwrap();
    // rows[t] . weights with rows[i] = i % 7 - 2 and weights[j] = (j + 1) / 2.
    let dots: Vec<String> = (0..4)
        .map(|t| {
            let d: f32 = (0..6)
                .map(|j| ((t * 6 + j) % 7) as f32 - 2.0)
                .zip((1..=6).map(|j| 0.5 * j as f32))
                .map(|(a, b)| a * b)
                .sum();
            d.to_string()
        })
        .collect();
    assert_eq!(field(&s, "dots"), dots.join(","));
    // Accumulated twice into a tensor on tile 3 from a vertex on tile 0.
    assert_eq!(field(&s, "total"), "12,24,36,48");
    // dot: four 6-float weight vectors in, four floats out; accumulate: 4 ints in,
    // 4 ints in and out again.
    assert_eq!(field(&s, "cs_dot"), format!("1x{}", 4 * (6 * 4 + 4)));
    assert_eq!(field(&s, "cs_accumulate"), format!("2x{}", 4 * 4 + 2 * 4 * 4));
    assert_eq!(field(&s, "implicit"), (112 + 2 * 48).to_string());
    // The buffers are in the tiles' memory (with any alignment padding before them).
    for t in 0..4 {
        assert!(s.contains(&format!("buffer_{t}=<exchange> TestDot.b:")), "{s}");
    }
    assert!(s.contains("buffer_0=<exchange> TestAccumulate.acc:"), "{s}");
    let summary = run("profile_summary", 0).unwrap();
    for line in [
        "Implicit exchange (fields connected to data on other tiles): 208 bytes",
        "dot: 4 vertices on 4 tiles, 1 execution(s), 13 estimated cycles each, 112 bytes of implicit exchange each",
        "accumulate: 1 vertices on 1 tiles, 2 execution(s), 0 estimated cycles each, 48 bytes of implicit exchange each",
    ] {
        assert!(summary.contains(line), "{summary}");
    }
}

#[test]
fn two_vertices_of_a_compute_set_may_not_write_the_same_memory() {
    for name in ["write_conflict", "write_conflict_tiles"] {
        assert_mentions(&err(name), &["'fill'", "TestFill' #0", "TestFill' #1", "[4, 5)", "shared_out"]);
    }
}

#[test]
fn a_vertex_may_not_write_what_another_of_its_compute_set_reads() {
    assert_mentions(
        &err("read_write_conflict"),
        &["'fill'", "TestFill' #0", "'out'", "TestCountBelow' #1", "'limit'", "[4, 5)", "shared_out", "reads"],
    );
}

#[test]
fn engine_load_refuses_another_target() {
    assert_mentions(&err("load_refused_type"), &["compiled for an IPU ipu2", "device is an IPU_MODEL"]);
    assert_mentions(&err("load_refused_tiles"), &["x 8 tiles", "x 4 tiles"]);
    assert_mentions(&err("load_refused_arch"), &["IPU_MODEL ipu1", "IPU_MODEL ipu2"]);
}

#[test]
fn data_stream_misuse_is_an_error() {
    assert_mentions(&err("stream_direction"), &["stream 'in'", "goes to the device"]);
    assert_mentions(&err("stream_size"), &["'three'", "3 float", "4 float"]);
    assert_mentions(&err("stream_unconnected"), &["'in'", "not connected"]);
    assert_mentions(&err("stream_ring"), &["'in'", "24 bytes", "16 bytes per transfer"]);
}

#[test]
fn tile_mapping_and_contiguity_of_views() {
    assert_eq!(run("tile_mapping", 0).unwrap(), "tile0=[0,1)[3,6)[8,9);tile1=[9,10);tile2=[1,3)[6,8);contiguous=10");
}
