//! Worker stack and code bytes of every vertex type, measured on the host objects of
//! the codelets: GCC's call graph with frame sizes (`-fcallgraph-info=su`, next to
//! each object as `.ci`) and the function sizes in the object's ELF symbol table.
//! The host runtime scales them to the IPU (poplar_host/Report.hpp) and counts them
//! in each tile's memory.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Flags that make GCC write the call graph this module reads.
pub const FLAGS: [&str; 2] = ["-fstack-usage", "-fcallgraph-info=su"];

/// Frame allowed for a callee outside the object (memcpy, expf, ...): a leaf library
/// routine, whose frame GCC cannot see.
pub const EXTERNAL_FRAME: u64 = 64;

/// One vertex type's measured costs on the host build.
pub struct Cost {
    pub vertex: String,
    /// Deepest stack of one worker: its entry's frame plus the deepest chain of callees.
    pub stack: u64,
    /// Its entry (compute() inlined or called) and every function of the object it reaches.
    pub code: u64,
}

struct Node {
    name: String,
    frame: Option<u64>,
}

/// The costs of the vertex types whose compute() is in `object`. Errors name the
/// object and what could not be measured.
pub fn measure(object: &Path) -> Result<Vec<Cost>, String> {
    let ci = object.with_extension("ci");
    let text = fs::read_to_string(&ci).map_err(|e| format!("{}: {e}", ci.display()))?;
    let (nodes, edges) = parse_callgraph(&text);
    let sizes = elf_function_sizes(&fs::read(object).map_err(|e| format!("{}: {e}", object.display()))?)
        .ok_or_else(|| format!("{}: not a 64-bit little-endian ELF object", object.display()))?;
    let mut costs = Vec::new();
    for (title, node) in &nodes {
        let Some(vertex) = entry_vertex(&node.name) else { continue };
        let mut memo = BTreeMap::new();
        let stack = deepest(title, &nodes, &edges, &mut memo, &mut Vec::new())
            .map_err(|e| format!("{}: {vertex}: {e}", ci.display()))?;
        let mut reached = BTreeSet::new();
        reach(title, &nodes, &edges, &mut reached);
        let mut code = 0;
        for t in &reached {
            let symbol = t.rsplit(':').next().unwrap_or(t);
            code += sizes.get(symbol).copied().ok_or_else(|| format!("{}: no symbol {symbol}", object.display()))?;
        }
        costs.push(Cost { vertex: vertex.to_string(), stack, code });
    }
    Ok(costs)
}

/// The vertex type whose worker entry this is: the host runtime runs one worker of
/// a vertex through `poplar_host::runWorker<V>` (registry.hpp), which calls or
/// inlines V::compute, so its call tree is what one worker runs.
fn entry_vertex(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("bool poplar_host::runWorker(void*, unsigned int) [with V = ")?;
    rest.strip_suffix(']').filter(|v| !v.is_empty())
}

type Edges = BTreeMap<String, Vec<String>>;

fn parse_callgraph(text: &str) -> (BTreeMap<String, Node>, Edges) {
    let mut nodes = BTreeMap::new();
    let mut edges: Edges = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with("node:") {
            let (Some(title), Some(label)) = (quoted(line, "title: "), quoted(line, "label: ")) else { continue };
            let name = label.split("\\n").next().unwrap_or("").to_string();
            // "... \n2480 bytes (static)"; a dynamic frame has no fixed size.
            let frame =
                label.rsplit("\\n").next().and_then(|l| l.strip_suffix(" bytes (static)")).and_then(|n| n.parse().ok());
            nodes.insert(title.to_string(), Node { name, frame });
        } else if line.starts_with("edge:")
            && let (Some(s), Some(t)) = (quoted(line, "sourcename: "), quoted(line, "targetname: "))
        {
            edges.entry(s.to_string()).or_default().push(t.to_string());
        }
    }
    (nodes, edges)
}

fn quoted<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(key)? + key.len() + 1;
    let end = start + line[start..].find('"')?;
    Some(&line[start..end])
}

fn is_external(title: &str, nodes: &BTreeMap<String, Node>) -> bool {
    // Functions defined in the object have a "path:symbol" title and a frame size.
    nodes.get(title).is_none_or(|n| n.frame.is_none() && !title.contains(':'))
}

fn deepest(
    title: &str,
    nodes: &BTreeMap<String, Node>,
    edges: &Edges,
    memo: &mut BTreeMap<String, u64>,
    path: &mut Vec<String>,
) -> Result<u64, String> {
    if is_external(title, nodes) {
        return Ok(EXTERNAL_FRAME);
    }
    if let Some(&d) = memo.get(title) {
        return Ok(d);
    }
    if path.iter().any(|p| p == title) {
        return Err(format!("recursion through {}: no stack bound", nodes[title].name));
    }
    let node = &nodes[title];
    let frame = node.frame.ok_or_else(|| format!("{} has a dynamic stack frame", node.name))?;
    path.push(title.to_string());
    let mut callees = 0;
    for t in edges.get(title).map(Vec::as_slice).unwrap_or(&[]) {
        callees = callees.max(deepest(t, nodes, edges, memo, path)?);
    }
    path.pop();
    memo.insert(title.to_string(), frame + callees);
    Ok(frame + callees)
}

fn reach(title: &str, nodes: &BTreeMap<String, Node>, edges: &Edges, seen: &mut BTreeSet<String>) {
    if is_external(title, nodes) || !seen.insert(title.to_string()) {
        return;
    }
    for t in edges.get(title).map(Vec::as_slice).unwrap_or(&[]) {
        reach(t, nodes, edges, seen);
    }
}

/// Sizes of the function symbols of a relocatable ELF64 little-endian object.
fn elf_function_sizes(b: &[u8]) -> Option<BTreeMap<String, u64>> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
    if b.get(0..4)? != b"\x7fELF" || b[4] != 2 || b[5] != 1 {
        return None;
    }
    let (shoff, shentsize, shnum) = (u64_at(0x28)? as usize, u16_at(0x3a)? as usize, u16_at(0x3c)? as usize);
    let section = |i: usize| shoff + i * shentsize;
    let mut sizes = BTreeMap::new();
    for i in 0..shnum {
        let sh = section(i);
        if u32_at(sh + 4)? != 2 {
            continue; // SHT_SYMTAB
        }
        let (off, size, link, entsize) = (
            u64_at(sh + 24)? as usize,
            u64_at(sh + 32)? as usize,
            u32_at(sh + 40)? as usize,
            u64_at(sh + 56)? as usize,
        );
        let strtab = u64_at(section(link) + 24)? as usize;
        for s in (off..off + size).step_by(entsize.max(24)) {
            if b.get(s + 4)? & 0xf != 2 {
                continue; // STT_FUNC
            }
            let name_at = strtab + u32_at(s)? as usize;
            let end = name_at + b.get(name_at..)?.iter().position(|&c| c == 0)?;
            let name = String::from_utf8_lossy(&b[name_at..end]).into_owned();
            sizes.insert(name, u64_at(s + 16)?);
        }
    }
    Some(sizes)
}
